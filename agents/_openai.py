"""`OpenAIChatModel`: any OpenAI-compatible endpoint through `openai.AsyncOpenAI`.

Two decision protocols: native tool calls (`tools`), and schema-constrained JSON decisions (`json`,
see `_decisions`) for servers that cannot call tools. `auto` starts native and switches to JSON for
good when the server rejects a request with tools. Under native calls, a call the model wrote as
text (fenced JSON, `<tool_call>` tags: see `_textcalls`) is recovered into a real tool call. How an
endpoint's calls arrive (`tools`, `text` or `json`) is found out at the first call, logged once as
`model_protocol`, kept in `calls_arrive`, and stamped on every `ModelResponse`; `auto` settles on
it: native calls stay native, calls written as text move to JSON decisions (a model that ignores
its template's tool format follows a grammar better), unless the server refuses those.

Retries live here and nowhere else: the `openai` client's own retries are off. Rate limits (429,
honouring Retry-After), 408/409, 5xx, timeouts and dropped connections are retried with bounded,
jittered backoff; 400/401/403/404 are not. Every attempt runs under an anyio deadline, the reading
of the reply included, and no reply is read past `max_response_bytes` (see `_http`).

A server on this machine (`local=True`: the embedded llama.cpp, or one at a loopback address) is
read differently, because one request there can take minutes of a busy CPU and every second of
it is progress. The reply is streamed, and `timeout` bounds the silence between its bytes, not
the whole: a reply is never cut while tokens (or the server's keep-alive pings, sent while it
reads a long prompt) still arrive. A request that met the timeout once the server took it (its
headers came) is not sent again: the server went silent while working on it, and would take a
copy only behind the one it has, or restart it from the first prompt token (one that timed out
still waiting for a slot is retried: see `_idle_timed`). A streamed reply that has come to only repeat itself is cut there
and raises `MalformedResponse` (see `_streaming.Repeats`), and every request carries a completion
bound fitted to its purpose (`_completion.OUTPUT_TOKENS`).

An endpoint that answers something other than the API (a captive portal's page, a proxy's error
page, text, broken JSON) fails with a one-line `ModelError` naming it and what it answered, on
every path, the ping included (see `_bodies`). The endpoint is only ever shown through
`redact_url`: credentials in a base URL stay out of errors, logs and `repr`.
"""

from __future__ import annotations

import json
import os
import random
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import urlsplit

import anyio
import httpx2

from agents._admission import Admission
from agents._bodies import check_json, is_event_stream, read_reply, reply_error
from agents._chunks import Chunks
from agents._completion import Completion, completion_of, output_tokens, usage_of
from agents._decisions import parse_decision
from agents._errors import (
    ConfigurationError,
    MalformedResponse,
    ModelError,
    ModelRequestError,
    ModelRetryableError,
)
from agents._hedge import Hedging
from agents._http import DEFAULT_MAX_RESPONSE_BYTES, ResponseTooLarge, new_client
from agents._lazy import lazy_module
from agents._model import ModelRequest, ModelResponse, WireProtocol
from agents._streaming import Streamed, chunk_taker, live_sink
from agents._textcalls import recover_calls
from agents._tracing import logger, redact_url
from agents._warm import CacheWarming
from agents._wire import DirectPost, json_kwargs, to_wire, tools_kwargs
from memory import AssistantMessage, ToolCall

if TYPE_CHECKING:
    import openai
else:
    openai = lazy_module("openai")  # about half a second of import: on first use (`_lazy`)

__all__ = ["DecisionProtocol", "OpenAIChatModel", "block_model_requests", "to_wire"]

DecisionProtocol = Literal["auto", "tools", "json"]
"""How the model states its decisions: native tool calls, JSON decisions, or `auto` (settled
once per endpoint)."""
_LOCAL_HOSTS = frozenset({"127.0.0.1", "localhost", "::1", "[::1]"})
_PROPS_WAIT_S = 5.0
_log = logger("paor.model")
_blocked: list[frozenset[str]] = []


@contextmanager
def block_model_requests(allow_hosts: frozenset[str] = _LOCAL_HOSTS) -> Iterator[None]:
    """Make every `OpenAIChatModel` request to a host outside `allow_hosts` fail (for tests).

    While active, a request to any other host raises `ModelRequestError` before it is sent.
    """
    _blocked.append(allow_hosts)
    try:
        yield
    finally:
        _blocked.pop()


class OpenAIChatModel:
    """A chat model behind an OpenAI-compatible HTTP API.

    Args:
        model: The model name; defaults to `$PAOR_MODEL`, then "gpt-4.1-mini".
        base_url: The endpoint; defaults to `$OPENAI_BASE_URL`, then OpenAI's.
        api_key: The key; defaults to `$OPENAI_API_KEY` (local servers need none). Never logged.
        client: A ready `AsyncOpenAI` client (then base_url, api_key and max_response_bytes are
            ignored: its HTTP client is the caller's, unbounded unless they bound it).
        protocol: "tools" (native tool calls), "json" (JSON decisions) or "auto".
        timeout: Seconds allowed for one attempt; with `local`, the most seconds without a byte
            of the reply.
        max_retries: Retries after the first attempt, for retryable failures only.
        backoff: Base delay in seconds (doubles per retry, jittered) when no Retry-After is given.
        max_backoff: The longest wait between attempts, Retry-After included.
        temperature: Sampling temperature, if set.
        max_output_tokens: Default completion cap per request.
        max_string_chars: In the JSON protocol, bound every string of the schema to this many
            characters (keeps small grammar-constrained models from running on).
        max_response_bytes: The most bytes one reply body may hold, decoded (default 8 MiB, a
            hundred times a long completion). A longer one, such as a body that never ends, fails
            with `ModelRequestError` as soon as it passes the limit.
        admission: Keep requests within the endpoint's rate limits (`Admission`): True (the
            default) gives this model its own, shared by every agent that uses the model; pass one
            `Admission` to share it between models of one endpoint, or False for none. Limits are
            learned from the `x-ratelimit-*` headers and 429s (with your own `client`, from 429s
            only).
        hedge: Send a late request again and take the first answer (`Hedging`: True for its
            defaults, late being twice the median of its kind). Off by default and never under
            an endpoint's rate limits nor for replies streamed to a live sink; a hedged answer's
            usage counts twice.
        max_in_flight: The most requests sent at once (the HTTP pool's connections, 1,000, by
            default); the others wait before their request is built, holding nothing but their
            agent's state, and the wait does not count against `timeout`.
        warm_cache: Hold requests that share a long prefix not yet in the provider's cache
            until the first of them is answered, so that they read it cached (`CacheWarming`:
            True for its defaults, OpenAI's 1,024 tokens). Off by default: the first wave of a
            fan-out then waits for one request.
        local: The server runs on this machine (llama.cpp): replies are streamed and `timeout`
            is an idle timeout; a timed-out request is not sent again, nor hedged (see the
            module docstring).

    Raises:
        ConfigurationError: An option is out of range.
    """

    def __init__(
        self,
        model: str | None = None,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        client: openai.AsyncOpenAI | None = None,
        protocol: DecisionProtocol = "auto",
        timeout: float = 60.0,
        max_retries: int = 3,
        backoff: float = 0.5,
        max_backoff: float = 30.0,
        temperature: float | None = None,
        max_output_tokens: int | None = None,
        max_string_chars: int | None = None,
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
        admission: Admission | bool = True,
        hedge: Hedging | bool = False,
        max_in_flight: int = 1000,
        warm_cache: CacheWarming | bool = False,
        local: bool = False,
    ) -> None:
        if timeout <= 0 or max_retries < 0 or backoff < 0:
            raise ConfigurationError("timeout must be positive; max_retries and backoff >= 0")
        if max_in_flight < 1:
            raise ConfigurationError("max_in_flight must be at least 1")
        if max_response_bytes < 1:
            raise ConfigurationError("max_response_bytes must be at least 1")
        self.model = model or os.environ.get("PAOR_MODEL") or "gpt-4.1-mini"
        self.admission: Admission | None = (
            admission
            if isinstance(admission, Admission)
            else Admission(max_hold_s=max_backoff)
            if admission
            else None
        )
        # paor's own client shows the admission every answer's headers; a caller's, only 429s.
        self._sees_headers = client is None and self.admission is not None
        self._direct: DirectPost | None = None
        if client is None:
            key = api_key or os.environ.get("OPENAI_API_KEY") or "not-needed"
            client, http = new_client(
                base_url or os.environ.get("OPENAI_BASE_URL") or None,
                key,
                timeout=timeout,
                max_response_bytes=max_response_bytes,
                admission=self.admission,
            )
            # A caller's own client keeps all its settings; paor's is used past its machinery,
            # through its own httpx2 client (`_wire`).
            headers = {**client.default_headers, "Authorization": f"Bearer {key}"}
            url = str(client.base_url)
            self._direct = DirectPost(http, url, headers, redact_url(url))
        self._client = client
        self.protocol: DecisionProtocol = protocol
        self.calls_arrive: WireProtocol | None = None
        self._auto = protocol == "auto"
        self._refused: set[DecisionProtocol] = set()
        self.timeout = timeout
        self.max_retries = max_retries
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.temperature = temperature
        self.max_output_tokens = max_output_tokens
        self.max_string_chars = max_string_chars
        self.local = local
        # A hedge is a second copy of a request: a local server's slot is all it has to give.
        hedging = hedge if isinstance(hedge, Hedging) else Hedging() if hedge else None
        self.hedging = None if local else hedging
        self._in_flight = anyio.CapacityLimiter(max_in_flight)
        self.warming = (
            warm_cache
            if isinstance(warm_cache, CacheWarming)
            else CacheWarming()
            if warm_cache
            else None
        )

    @property
    def name(self) -> str:
        """The model name."""
        return self.model

    @property
    def base_url(self) -> str:
        """The endpoint URL, its credentials masked (`redact_url`): safe to print or store."""
        return redact_url(str(self._client.base_url))

    def __repr__(self) -> str:
        return f"OpenAIChatModel(model={self.model!r}, base_url={self.base_url!r}, protocol={self.protocol!r})"

    async def ping(self, wait_s: float = 10.0) -> None:
        """Check that the endpoint answers, as the API does: any HTTP status counts, with a JSON
        body or none (its list of models is not read).

        Raises:
            ModelRetryableError: Nothing answered at the base URL within `wait_s` seconds, or
                what answered was not the API, with a status worth retrying (a proxy's 502 page).
            ModelRequestError: What answered was not the API (an HTML page, text: see `_bodies`).
        """
        self._check_allowed()
        try:
            with anyio.fail_after(wait_s):
                response = await self._client.get("/models", cast_to=httpx2.Response)
        except openai.APIStatusError as exc:
            response = exc.response
        except ResponseTooLarge:
            return
        except (openai.APIConnectionError, TimeoutError) as exc:
            raise ModelRetryableError(
                f"cannot reach the model endpoint at {self.base_url}"
            ) from exc
        check_json(self.base_url, response.status_code, response.headers, _body(response))

    async def aclose(self) -> None:
        """Close the underlying HTTP client."""
        await self._client.close()

    async def complete(self, request: ModelRequest) -> ModelResponse:
        """Answer one request, retrying transient failures a bounded number of times.

        Raises:
            ModelRetryableError: Still failing after every retry (a local server's timeout
                after the first: see the module docstring).
            ModelRequestError: Refused by the endpoint (or blocked by `block_model_requests`).
            MalformedResponse: The reply could not be parsed, or only repeated itself.
        """
        self._check_allowed()
        attempt = 0
        streamed = live_sink()
        while True:
            try:
                # 10,000 sub-agents: a request built and queued in the pool costs about 14 KiB
                # more than one waiting here (S7 over HTTP: 56 against 42 KiB per sub-agent).
                async with self._in_flight:
                    return await self._attempt(request)
            except _Silent as exc:
                # Not sent again. The server went silent while working on the request (no
                # token, no keep-alive ping, for `timeout` seconds): a copy would wait behind it
                # in its slot, or make it start over from the first prompt token.
                raise ModelRetryableError(str(exc)) from None
            except ModelRetryableError as exc:
                if attempt >= self.max_retries:
                    raise
                if streamed is not None:
                    streamed.retrying()
                delay = self._delay(attempt, exc.retry_after)
                _log.warning(
                    "model_retry", attempt=attempt + 1, delay_s=round(delay, 3), error=str(exc)
                )
                attempt += 1
                await anyio.sleep(delay)

    async def _attempt(self, request: ModelRequest) -> ModelResponse:
        protocol: DecisionProtocol = "json" if self.protocol == "json" else "tools"
        try:
            return await self._send_within_deadline(request, protocol)
        except ModelRequestError as exc:
            other: DecisionProtocol = "tools" if protocol == "json" else "json"
            if not self._auto or not request.tools or exc.status != 400 or other in self._refused:
                raise
            # Refused for good: the server cannot take this protocol, so auto never returns to it.
            self._refused.add(protocol)
            _log.warning("model_protocol_fallback", protocol=other, error=str(exc))
            self.protocol = other
            return await self._send_within_deadline(request, other)

    async def _send_within_deadline(self, request: ModelRequest, protocol: str) -> ModelResponse:
        kwargs = (
            json_kwargs(request, self.max_string_chars)
            if protocol == "json"
            else tools_kwargs(request)
        )
        if self.temperature is not None:
            kwargs["temperature"] = self.temperature
        kwargs["max_tokens"] = output_tokens(request, self.max_output_tokens)
        body = {"model": self.model, **kwargs}
        if self.warming is None:
            return await self._send_admitted(request, protocol, body)
        async with self.warming.turn(body):  # held before admission: its wait is not the endpoint's
            return await self._send_admitted(request, protocol, body)

    async def _send_admitted(
        self, request: ModelRequest, protocol: str, body: dict[str, Any]
    ) -> ModelResponse:
        admission = self.admission
        if admission is None or (admission.answered and not admission.limited):
            return await self._within_deadline(request, protocol, body)
        async with admission.first_contact():
            return await self._admitted(admission, request, protocol, body)

    async def _admitted(
        self, admission: Admission, request: ModelRequest, protocol: str, body: dict[str, Any]
    ) -> ModelResponse:
        if not admission.limited:
            return await self._within_deadline(request, protocol, body)
        # Waiting for the endpoint's limits is not the attempt's time: the deadline starts after.
        chars = len(json.dumps(body, separators=(",", ":")))
        estimated = admission.estimate(chars)
        await admission.admit(estimated)
        try:
            response = await self._within_deadline(request, protocol, body)
        except ModelRetryableError as exc:
            if exc.status == 429:  # refused: the endpoint counted no tokens for it
                admission.refund(estimated)
            raise
        usage = response.usage
        admission.settle(estimated, chars, usage.prompt_tokens, usage.completion_tokens)
        return response

    async def _within_deadline(
        self, request: ModelRequest, protocol: str, body: dict[str, Any]
    ) -> ModelResponse:
        hedging, admission = self.hedging, self.admission
        if hedging is None or live_sink() is not None or (admission and admission.limited):
            return await self._timed(request, protocol, body)
        attempt = partial(self._timed, request, protocol, body)
        response, hedged = await hedging.send(request.purpose, attempt)
        # The copy that lost is billed too, up to where it was cancelled: count it as much.
        return (
            response.model_copy(update={"usage": response.usage + response.usage})
            if hedged
            else response
        )

    async def _timed(
        self, request: ModelRequest, protocol: str, body: dict[str, Any]
    ) -> ModelResponse:
        if self.local:
            return await self._idle_timed(request, protocol, body)
        try:
            with anyio.fail_after(self.timeout):
                return await self._send(request, protocol, body, None)
        except TimeoutError:
            raise ModelRetryableError(f"no reply within {self.timeout:g}s") from None

    async def _idle_timed(
        self, request: ModelRequest, protocol: str, body: dict[str, Any]
    ) -> ModelResponse:
        """An attempt against a local server: `timeout` bounds each silence, not the whole.

        llama.cpp sends a reply's headers when a slot takes the request, then a token or a ping
        at least every 2 s (the embedded server; 30 s is llama.cpp's own default). Before
        the headers the request waits for a slot (one still finishing a request whose client
        hung up): that wait timing out is retried, since the server drops a queued request
        once its client is gone. After them, a timeout means the server stopped serving it:
        `_Silent`, not retried.
        """
        started = False

        def alive() -> None:  # a byte came: the idle deadline starts again
            nonlocal started
            started = True
            scope.deadline = anyio.current_time() + self.timeout

        try:
            with anyio.fail_after(self.timeout) as scope:
                return await self._send(request, protocol, body, alive)
        except TimeoutError:
            if not started:
                raise ModelRetryableError(
                    f"the local server did not take the request within {self.timeout:g}s "
                    "(its slots were busy)"
                ) from None
            raise _Silent(
                f"the local server sent nothing for {self.timeout:g}s (the request timeout); "
                "not sent again, as it may still be working on it"
            ) from None

    async def _send(
        self,
        request: ModelRequest,
        protocol: str,
        body: dict[str, Any],
        alive: Callable[[], None] | None,
    ) -> ModelResponse:
        streamed = live_sink() if protocol == "tools" else None
        sizes: tuple[int, ...] = ()
        try:
            if alive is not None:
                data, sizes = await self._streamed_locally(body, streamed, alive)
            # The body is built and validated here already, and only a few fields of the answer
            # are read: the client's generic `post` sends the one and returns the other as it
            # came, read here as JSON (`_bodies`). Its typed `chat.completions.create` transforms
            # every request field and builds a model of every response field, 1-3 ms of CPU per
            # request that a run of many agents pays on its critical path. Status errors, auth and
            # connection handling are the same.
            elif streamed is None and self._direct is not None:
                data = await self._direct.post(body)  # the same, without the SDK's CPU (`_wire`)
            elif streamed is None:
                raw = await self._client.post(
                    "/chat/completions", body=body, cast_to=httpx2.Response
                )
                data = read_reply(self.base_url, raw.status_code, raw.headers, raw.content)
            else:
                data, sizes = await self._streamed(body, streamed)
        except openai.APIStatusError as exc:
            if self.admission is not None and not self._sees_headers:
                self.admission.observe(exc.response.headers, exc.status_code)
            raise self._classify(exc) from exc
        except openai.APIConnectionError as exc:
            cause = type(exc.__cause__ or exc).__name__
            raise ModelRetryableError(f"connection failed to {self.base_url}: {cause}") from exc
        except ResponseTooLarge as exc:
            # Not retried: a body past the limit is a broken server (an endless stream) or a
            # reply no retry will shrink, and each try would cost the limit in bytes again.
            raise ModelRequestError(f"{exc} (max_response_bytes)", status=exc.status) from None
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            # An event of a stream that is not JSON (whole bodies are read by `_bodies`): a
            # truncated or garbled event is a transport fault, not something the model said.
            raise ModelRetryableError(
                f"{self.base_url.rstrip('/')} answered broken JSON in its event stream: {_reason(exc)}"
            ) from exc
        except RecursionError:
            raise MalformedResponse("the response body nests too deep to read", raw="") from None
        response = self._response(completion_of(data), request, protocol)
        if sizes and sum(sizes) == len(response.message.content or ""):
            response = response.model_copy(update={"text_chunks": sizes})
        return response

    async def _streamed(
        self,
        body: dict[str, Any],
        streamed: Streamed | None,
        alive: Callable[[], None] | None = None,
    ) -> tuple[Any, tuple[int, ...]]:
        """The completion, asked for as a stream: each piece of text goes to `streamed` as it
        arrives; the pieces put together are read as a plain body."""
        body = {**body, "stream": True, "stream_options": {"include_usage": True}}
        stream = await self._client.post(
            "/chat/completions", body=body, cast_to=object, stream=True,
            stream_cls=openai.AsyncStream[object],
        )  # fmt: skip
        parts = Chunks()
        take = chunk_taker(parts, streamed)
        seen = alive or _nothing
        seen()  # the headers came
        async with stream:
            reply = stream.response
            if not is_event_stream(reply.headers):  # no stream: an error page, or a whole reply
                whole = await reply.aread()
                return read_reply(self.base_url, reply.status_code, reply.headers, whole), ()
            async for chunk in stream:
                seen()
                await take(chunk)
        return parts.body(), parts.sizes

    async def _streamed_locally(
        self, body: dict[str, Any], streamed: Streamed | None, alive: Callable[[], None]
    ) -> tuple[Any, tuple[int, ...]]:
        """The completion from a local server, streamed whatever the protocol, so that its idle
        deadline sees it at work (`alive`) and a reply in a loop is cut early."""
        if self._direct is None:  # a caller's own client: the SDK's stream, no pings seen
            return await self._streamed(body, streamed, alive)
        parts = Chunks()
        whole = await self._direct.post_streamed(body, chunk_taker(parts, streamed), alive)
        if whole is not None:  # a server that answered without streaming
            return whole, ()
        return parts.body(), parts.sizes

    async def fit_slots(self) -> int | None:
        """Send no more requests at once than a llama.cpp server has slots (`total_slots` in
        its GET /props), and return that number; None for any other server, which keeps
        `max_in_flight`.

        A request such a server must queue gets no byte, not even its headers, until a slot is
        free: to a local endpoint's idle timeout it would look dead. Waiting here instead costs
        nothing and does not count against the timeout.
        """
        self._check_allowed()
        root = str(self._client.base_url).rstrip("/").removesuffix("/v1")
        try:
            with anyio.fail_after(_PROPS_WAIT_S):
                props = await self._client.get(f"{root}/props", cast_to=object)
        except (openai.APIError, ResponseTooLarge, TimeoutError, ValueError, RecursionError):
            return None
        slots = props.get("total_slots") if isinstance(props, dict) else None
        if not isinstance(slots, int) or isinstance(slots, bool) or slots < 1:
            return None
        self._in_flight.total_tokens = min(slots, self._in_flight.total_tokens)
        _log.info("model_slots", slots=slots, model=self.model)
        return slots

    def _response(
        self, completion: Completion, request: ModelRequest, protocol: str
    ) -> ModelResponse:
        wire = completion.choices[0].message
        text = wire.content or ""
        how: WireProtocol = "json" if protocol == "json" else "tools"
        if protocol == "json" and request.output is None:
            message = parse_decision(text)
        else:
            calls = tuple(
                ToolCall(
                    id=c.id or "", name=c.function.name, arguments=c.function.arguments or "{}"
                )
                for c in (wire.tool_calls or ())
            )
            message = AssistantMessage(content=wire.content, tool_calls=calls)
            if not calls and request.tools and request.output is None and text.strip():
                recovered = recover_calls(text, {t.name for t in request.tools})
                if recovered is not None and recovered.tool_calls:
                    message, how = recovered, "text"
                elif recovered is not None:
                    message = recovered
        if request.tools and (message.tool_calls or how == "json"):
            self._settle(how)
        return ModelResponse(
            message=message,
            usage=usage_of(completion.usage),
            model=completion.model or "",
            protocol=how,
            finish_reason=completion.choices[0].finish_reason,
            response_id=completion.id,
        )

    def _settle(self, how: WireProtocol) -> None:
        """Note, once per endpoint, how its tool calls come back, and settle `auto` on it.

        Native calls keep the native protocol. Calls written as text mean the model does not
        follow its template's tool format: JSON decisions (grammar-constrained) then serve it
        better, unless the server refused them, in which case calls stay recovered from text.
        """
        if self.calls_arrive is not None:
            return
        self.calls_arrive = how
        if self._auto and self.protocol == "auto":
            self.protocol = "json" if how != "tools" and "json" not in self._refused else "tools"
        _log.info("model_protocol", calls=how, protocol=self.protocol, model=self.model)

    def _classify(self, exc: openai.APIStatusError) -> ModelError:
        """The error an error status the SDK raised stands for (`_bodies.reply_error`)."""
        reply = exc.response
        return reply_error(self.base_url, exc.status_code, reply.headers, _body(reply))

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        """Seconds to wait before retry `attempt + 1`: always finite, in [0, max_backoff]."""
        if retry_after is not None and retry_after >= 0:  # False for NaN too
            return min(retry_after, self.max_backoff)
        return min(self.backoff * 2.0**attempt * random.uniform(0.5, 1.0), self.max_backoff)

    def _check_allowed(self) -> None:
        if not _blocked:
            return
        host = urlsplit(str(self._client.base_url)).hostname or ""
        if host not in _blocked[-1]:
            raise ModelRequestError(
                f"model requests to {host!r} are blocked (block_model_requests)"
            )


def _nothing() -> None:
    pass


class _Silent(Exception):
    """A local server sent nothing for the whole idle timeout (`complete` says so, unretried)."""


def _body(response: httpx2.Response) -> bytes:
    """A response's body, as read (b"" if it was closed unread)."""
    try:
        return response.content
    except httpx2.ResponseNotRead:
        return b""


def _reason(exc: json.JSONDecodeError | UnicodeDecodeError) -> str:
    """What a JSON or Unicode decoding error says went wrong, in a few words."""
    return exc.msg if isinstance(exc, json.JSONDecodeError) else exc.reason
