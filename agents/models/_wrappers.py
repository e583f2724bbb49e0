"""Model wrappers: retries, admission, hedging and cache warming around any `ChatModel`.

Each wrapper takes a `ChatModel` and is one, so they compose in any order, around paor's own
`OpenAIChatModel`, a scripted model or a user's own. `stack` builds the usual order, outermost
first:

```
  RetryingModel ── CacheWarmingModel ── AdmittedModel ── HedgedModel ── the protocol model
  (each try goes   (held until its      (within the      (a late try
   through all      prefix is warm)      endpoint's        sent again)
   the rest)                              limits)
```

A run on Temporal leaves the retrying wrapper out (`without_retries`): Temporal retries the
activity itself. The protocol model underneath is `unwrapped(model)`.
"""

from __future__ import annotations

import json
import random
from typing import Any

import anyio

from agents._errors import ConfigurationError, ModelRetryableError
from agents._streaming import live_sink
from agents._tracing import logger
from agents.models._admission import Admission
from agents.models._hedge import Hedging
from agents.models._model import ChatModel, ModelRequest, ModelResponse
from agents.models._warm import CacheWarming
from memory import SystemMessage

__all__ = [
    "AdmittedModel",
    "CacheWarmingModel",
    "HedgedModel",
    "ModelWrapper",
    "RetryingModel",
    "stack",
    "unwrapped",
    "without_retries",
]

_log = logger("paor.model")


class ModelWrapper:
    """A `ChatModel` around another (`inner`): its name is the inner model's, and `complete`
    passes the request through unless a subclass does more."""

    def __init__(self, inner: ChatModel) -> None:
        self.inner = inner

    @property
    def name(self) -> str:
        """The inner model's name."""
        return self.inner.name

    async def complete(self, request: ModelRequest) -> ModelResponse:
        """Answer through the inner model."""
        return await self.inner.complete(request)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.inner!r})"


class RetryingModel(ModelWrapper):
    """Retries transient failures (`ModelRetryableError`) with bounded, jittered backoff.

    A server's Retry-After is honoured up to `max_backoff`; a failure the model marks as not to
    be sent again (`resend=False`: a local server that went silent while working on the
    request) is raised at once. Refused requests and malformed replies are never retried.

    Args:
        inner: The model.
        max_retries: Retries after the first attempt.
        backoff: Base delay in seconds (doubles per retry, jittered) when no Retry-After is given.
        max_backoff: The longest wait between attempts, Retry-After included.

    Raises:
        ConfigurationError: A negative retry count or delay.
    """

    def __init__(
        self,
        inner: ChatModel,
        *,
        max_retries: int = 3,
        backoff: float = 0.5,
        max_backoff: float = 30.0,
    ) -> None:
        if max_retries < 0 or backoff < 0 or max_backoff < 0:
            raise ConfigurationError("max_retries, backoff and max_backoff must be >= 0")
        super().__init__(inner)
        self.max_retries = max_retries
        self.backoff = backoff
        self.max_backoff = max_backoff

    async def complete(self, request: ModelRequest) -> ModelResponse:
        """Answer, retrying transient failures up to `max_retries` times.

        Raises:
            ModelRetryableError: Still failing after every retry.
        """
        attempt = 0
        streamed = live_sink()
        while True:
            try:
                return await self.inner.complete(request)
            except ModelRetryableError as exc:
                if not exc.resend or attempt >= self.max_retries:
                    raise
                if streamed is not None:
                    streamed.retrying()
                delay = self.delay(attempt, exc.retry_after)
                _log.warning(
                    "model_retry", attempt=attempt + 1, delay_s=round(delay, 3), error=str(exc)
                )
                attempt += 1
                await anyio.sleep(delay)

    def delay(self, attempt: int, retry_after: float | None) -> float:
        """Seconds to wait before retry `attempt + 1`: always finite, in [0, max_backoff]."""
        if retry_after is not None and retry_after >= 0:  # False for NaN too
            return min(retry_after, self.max_backoff)
        return min(self.backoff * 2.0**attempt * random.uniform(0.5, 1.0), self.max_backoff)


class AdmittedModel(ModelWrapper):
    """Sends requests only within the rate limits the endpoint has shown (`Admission`).

    The first request goes alone; once the endpoint has shown limits (its `x-ratelimit-*`
    headers, which `OpenAIChatModel(rate_limits=admission)` reports, or a 429), each request
    waits for its estimated tokens, and its real usage settles the estimate. Waiting here is not
    an attempt's time.

    Args:
        inner: The model.
        admission: The limits, shared by every model of one endpoint.
    """

    def __init__(self, inner: ChatModel, admission: Admission) -> None:
        super().__init__(inner)
        self.admission = admission

    async def complete(self, request: ModelRequest) -> ModelResponse:
        """Answer once admitted."""
        admission = self.admission
        if admission.answered and not admission.limited:
            return await self._observed(request)
        async with admission.first_contact():
            if not admission.limited:
                return await self._observed(request)
            chars = _chars(request)
            estimated = admission.estimate(chars)
            await admission.admit(estimated)
            try:
                response = await self._observed(request)
            except ModelRetryableError as exc:
                if exc.status == 429:  # refused: the endpoint counted no tokens for it
                    admission.refund(estimated)
                raise
            usage = response.usage
            admission.settle(estimated, chars, usage.prompt_tokens, usage.completion_tokens)
            return response

    async def _observed(self, request: ModelRequest) -> ModelResponse:
        """The inner answer; a 429 the inner model did not report holds the callers."""
        try:
            return await self.inner.complete(request)
        except ModelRetryableError as exc:
            if exc.status == 429 and not exc.reported:
                after = {} if exc.retry_after is None else {"retry-after": f"{exc.retry_after}"}
                self.admission.observe(after, 429)
            raise


class HedgedModel(ModelWrapper):
    """Sends a late request again and takes the first answer (see `agents.models._hedge`); the
    copy that lost is billed too, so the answer's usage counts twice. It keeps its own recent
    latencies, by what each request is for; `hedged` counts the requests sent twice. Late means
    no token yet where the model says when its first came (`OpenAIChatModel` with its own
    client streams such requests), else no answer yet.

    Never for text streamed to a live display, nor while `admission` (if given) says the
    endpoint has shown limits: a copy would spend what the others wait for. Not for a local
    server either (`stack` leaves it out there): a copy would wait behind the first in its slot.

    Args:
        inner: The model.
        factor: Hedge once a request has taken this many times the median latency of its kind.
        min_samples: Answers of a kind seen before any request of that kind is hedged.
        window: How many recent answers of each kind the median is taken over.
        max_share: The most of all requests that may be hedged.
        admission: The endpoint's limits, if it has any.

    Raises:
        ValueError: factor is not above 1, min_samples is not between 1 and window, or
            max_share is not in (0, 1].
    """

    def __init__(
        self,
        inner: ChatModel,
        *,
        factor: float = 2.0,
        min_samples: int = 5,
        window: int = 50,
        max_share: float = 0.1,
        admission: Admission | None = None,
    ) -> None:
        super().__init__(inner)
        self.hedging = Hedging(
            factor=factor, min_samples=min_samples, window=window, max_share=max_share
        )
        self.admission = admission

    @property
    def hedged(self) -> int:
        """How many requests were sent twice."""
        return self.hedging.hedged

    async def complete(self, request: ModelRequest) -> ModelResponse:
        """Answer, hedged when late."""
        admission = self.admission
        if live_sink() is not None or (admission is not None and admission.limited):
            return await self.inner.complete(request)

        async def attempt() -> ModelResponse:
            return await self.inner.complete(request)

        response, hedged = await self.hedging.send(request.purpose, attempt)
        if not hedged:
            return response
        return response.model_copy(update={"usage": response.usage + response.usage})


class CacheWarmingModel(ModelWrapper):
    """Holds requests that share a long prompt prefix not yet in the provider's cache until the
    first of them is answered, so that they read it cached (`CacheWarming`).

    Args:
        inner: The model.
        warming: Which prefixes wait, and for how long.
    """

    def __init__(self, inner: ChatModel, warming: CacheWarming) -> None:
        super().__init__(inner)
        self.warming = warming

    async def complete(self, request: ModelRequest) -> ModelResponse:
        """Answer once the request's prefix is warm, or as the one that warms it."""
        async with self.warming.turn(_prefix_body(self.inner.name, request)):
            return await self.inner.complete(request)


def stack(
    model: ChatModel,
    *,
    max_retries: int = 3,
    backoff: float = 0.5,
    max_backoff: float = 30.0,
    admission: Admission | None = None,
    hedging: bool = False,
    warming: CacheWarming | None = None,
) -> ChatModel:
    """`model` in the usual wrappers, outermost first: retries (none with `max_retries=0`),
    cache warming, admission, hedging (`HedgedModel`'s default settings; build one for others);
    those not asked for are left out.

    ```python
    admission = Admission()
    model = stack(OpenAIChatModel("gpt-4.1-mini", rate_limits=admission), admission=admission)
    ```

    Raises:
        ConfigurationError: A negative retry count or delay.
    """
    wrapped = model
    if hedging:
        wrapped = HedgedModel(wrapped, admission=admission)
    if admission is not None:
        wrapped = AdmittedModel(wrapped, admission)
    if warming is not None:
        wrapped = CacheWarmingModel(wrapped, warming)
    if max_retries:
        wrapped = RetryingModel(
            wrapped, max_retries=max_retries, backoff=backoff, max_backoff=max_backoff
        )
    return wrapped


def unwrapped(model: ChatModel) -> ChatModel:
    """The model underneath every wrapper."""
    while isinstance(model, ModelWrapper):
        model = model.inner
    return model


def without_retries(model: ChatModel) -> ChatModel:
    """`model` with its retrying wrappers left out (another layer retries: Temporal)."""
    if isinstance(model, RetryingModel):
        return without_retries(model.inner)
    if isinstance(model, ModelWrapper):
        rebuilt = _copy(model)
        rebuilt.inner = without_retries(model.inner)
        return rebuilt
    return model


def _copy(model: ModelWrapper) -> ModelWrapper:
    clone = object.__new__(type(model))
    clone.__dict__.update(model.__dict__)
    return clone


def _prefix_body(model: str, request: ModelRequest) -> dict[str, Any]:
    """What `model`'s cache sees first of `request`, in the shape `CacheWarming` reads: the
    tools, the reply format and the leading system messages (each model has its own cache)."""
    leading = []
    for message in request.messages:
        if not isinstance(message, SystemMessage):
            break
        leading.append({"role": "system", "content": message.content})
    return {
        "model": model,
        "tools": [t.model_dump(mode="json") for t in request.tools] or None,
        "response_format": None if request.output is None else request.output.schema_,
        "messages": leading,
    }


def _chars(request: ModelRequest) -> int:
    """The request's size in characters, as sent (the estimate admission starts from)."""
    return len(json.dumps(request.model_dump(mode="json"), separators=(",", ":")))
