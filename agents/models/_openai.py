"""`OpenAIChatModel`: any OpenAI-compatible endpoint through `openai.AsyncOpenAI`.

Two decision protocols: native tool calls (`tools`), and schema-constrained JSON decisions (`json`,
see `_decisions`) for servers that cannot call tools. `auto` starts native and switches to JSON for
good when the server rejects a request with tools. Under native calls, a call the model wrote as
text (fenced JSON, `<tool_call>` tags: see `_textcalls`) is recovered into a real tool call. How an
endpoint's calls arrive (`tools`, `text` or `json`) is found out at the first call, logged once as
`model_protocol`, kept in `calls_arrive`, and stamped on every `ModelResponse`; `auto` settles on
it: native calls stay native, calls written as text move to JSON decisions (a model that ignores
its template's tool format follows a grammar better), unless the server refuses those.

The model speaks the protocol and sends each request once (the `openai` client's retries are
off): retries, admission, hedging and cache warming are wrappers around any `ChatModel`
(`_wrappers`). Sending and reading, under a deadline, with every unhappy reply named in one line,
is `_transport`; every request carries a completion bound fitted to its purpose
(`_completion.OUTPUT_TOKENS`).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Literal

from agents._errors import ConfigurationError, MalformedResponse, ModelRequestError
from agents._tracing import logger
from agents.models._admission import Admission
from agents.models._completion import Completion, completion_of, message_of, output_tokens, usage_of
from agents.models._http import DEFAULT_MAX_RESPONSE_BYTES
from agents.models._model import ModelRequest, ModelResponse, WireProtocol
from agents.models._transport import Transport
from agents.models._wire import OutputMode, json_kwargs, output_kwargs, to_wire, tools_kwargs

if TYPE_CHECKING:
    import openai

__all__ = ["DecisionProtocol", "OpenAIChatModel", "to_wire"]

DecisionProtocol = Literal["auto", "tools", "json"]
"""How the model states its decisions: native tool calls, JSON decisions, or `auto` (settled
once per endpoint)."""
_log = logger("paor.model")


class OpenAIChatModel:
    """A chat model behind an OpenAI-compatible HTTP API.

    Args:
        model: The model name; defaults to `$PAOR_MODEL`, then "gpt-4.1-mini".
        base_url: The endpoint; defaults to `$OPENAI_BASE_URL`, then OpenAI's.
        api_key: The key; defaults to `$OPENAI_API_KEY` (local servers need none). Never logged.
        client: A ready `AsyncOpenAI` client (then base_url, api_key and max_response_bytes are
            ignored: its HTTP client is the caller's, unbounded unless they bound it).
        protocol: "tools" (native tool calls), "json" (JSON decisions) or "auto".
        output_mode: How a typed answer is asked for: "schema" (a JSON-schema
            `response_format`), "tool" (a final tool's arguments), "text" (JSON in the reply's
            text), or "auto": the first of these the endpoint accepts (one that refuses a
            request with status 400 is not asked that way again).
        timeout: Seconds allowed for one request; with `local`, the most seconds without a byte
            of the reply.
        temperature: Sampling temperature, if set.
        max_output_tokens: Default completion cap per request.
        max_string_chars: In the JSON protocol, bound every string of the schema to this many
            characters (keeps small grammar-constrained models from running on).
        max_response_bytes: The most bytes one reply body may hold, decoded (default 8 MiB, a
            hundred times a long completion). A longer one, such as a body that never ends, fails
            with `ModelRequestError` as soon as it passes the limit.
        rate_limits: Show every answer's rate-limit headers (`x-ratelimit-*`, and 429s) to this
            `Admission`, which an `AdmittedModel` around this model (or around several models
            of one endpoint) keeps requests within (with your own `client`, 429s only).
        max_in_flight: The most requests sent at once (the HTTP pool's connections, 1,000, by
            default); the others wait before their request is built, holding nothing but their
            agent's state, and the wait does not count against `timeout`.
        local: The server runs on this machine (llama.cpp): replies are streamed and `timeout`
            is an idle timeout; a request that timed out once the server took it is marked not
            to be sent again (see the module docstring).

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
        output_mode: OutputMode = "auto",
        timeout: float = 60.0,
        temperature: float | None = None,
        max_output_tokens: int | None = None,
        max_string_chars: int | None = None,
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
        rate_limits: Admission | None = None,
        max_in_flight: int = 1000,
        local: bool = False,
    ) -> None:
        if timeout <= 0:
            raise ConfigurationError("timeout must be positive")
        if max_in_flight < 1:
            raise ConfigurationError("max_in_flight must be at least 1")
        if max_response_bytes < 1:
            raise ConfigurationError("max_response_bytes must be at least 1")
        self.model = model or os.environ.get("PAOR_MODEL") or "gpt-4.1-mini"
        self._transport = Transport(
            base_url=base_url or os.environ.get("OPENAI_BASE_URL") or None,
            api_key=api_key or os.environ.get("OPENAI_API_KEY") or "not-needed",
            client=client,
            timeout=timeout,
            max_response_bytes=max_response_bytes,
            rate_limits=rate_limits,
            max_in_flight=max_in_flight,
            local=local,
        )
        self.rate_limits = rate_limits
        self.protocol: DecisionProtocol = protocol
        self.calls_arrive: WireProtocol | None = None
        self._auto = protocol == "auto"
        self._refused: set[DecisionProtocol] = set()
        self.output_mode: OutputMode = output_mode
        self._outputs_refused: set[OutputMode] = set()
        self.temperature = temperature
        self.max_output_tokens = max_output_tokens
        self.max_string_chars = max_string_chars

    @property
    def name(self) -> str:
        """The model name."""
        return self.model

    @property
    def timeout(self) -> float:
        """Seconds allowed for one request (with `local`, the most seconds without a byte)."""
        return self._transport.timeout

    @timeout.setter
    def timeout(self, seconds: float) -> None:
        self._transport.timeout = seconds

    @property
    def local(self) -> bool:
        """The server runs on this machine: replies are streamed, `timeout` is an idle timeout."""
        return self._transport.local

    @property
    def base_url(self) -> str:
        """The endpoint URL, its credentials masked (`redact_url`): safe to print or store."""
        return self._transport.base_url

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
        await self._transport.ping(wait_s)

    async def aclose(self) -> None:
        """Close the underlying HTTP client."""
        await self._transport.aclose()

    async def complete(self, request: ModelRequest) -> ModelResponse:
        """Answer one request, sent once (see `agents.models.RetryingModel` for retries).

        Raises:
            ModelRetryableError: A transient failure (`resend=False`: a local server went
                silent while working on it; see the module docstring).
            ModelRequestError: Refused by the endpoint (or blocked by `block_model_requests`).
            MalformedResponse: The reply could not be parsed, or only repeated itself.
        """
        self._transport.check_allowed()
        # 10,000 sub-agents: a request built and queued in the pool costs about 14 KiB more
        # than one waiting here (S7 over HTTP: 56 against 42 KiB per sub-agent).
        async with self._transport.in_flight:
            return await self._attempt(request)

    async def _attempt(self, request: ModelRequest) -> ModelResponse:
        protocol: DecisionProtocol = "json" if self.protocol == "json" else "tools"
        if request.output is not None:
            return await self._typed(request, protocol)
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

    async def _typed(self, request: ModelRequest, protocol: DecisionProtocol) -> ModelResponse:
        """A request for a typed answer, in this endpoint's output mode; with "auto", a mode the
        endpoint refuses (status 400) gives way to the next, for good."""
        while True:
            mode = self._output_mode()
            try:
                response = await self._send_within_deadline(request, protocol, mode)
            except ModelRequestError as exc:
                if self.output_mode != "auto" or exc.status != 400 or mode == "text":
                    raise
                self._outputs_refused.add(mode)
                _log.warning("model_output_fallback", refused=mode, error=str(exc))
                continue
            if self.output_mode == "auto":
                self.output_mode = mode
                _log.info("model_output_mode", mode=mode, model=self.model)
            return response

    def _output_mode(self) -> OutputMode:
        if self.output_mode != "auto":
            return self.output_mode
        modes: tuple[OutputMode, ...] = ("schema", "tool", "text")
        return next(m for m in modes if m not in self._outputs_refused)

    async def _send_within_deadline(
        self, request: ModelRequest, protocol: str, output_mode: OutputMode = "schema"
    ) -> ModelResponse:
        if output_mode == "tool" or output_mode == "text":
            kwargs = output_kwargs(request, output_mode, self.max_string_chars)
        elif protocol == "json":
            kwargs = json_kwargs(request, self.max_string_chars)
        else:
            kwargs = tools_kwargs(request)
        if self.temperature is not None:
            kwargs["temperature"] = self.temperature
        kwargs["max_tokens"] = output_tokens(request, self.max_output_tokens)
        body = {"model": self.model, **kwargs}
        data, sizes = await self._transport.send(body, live=protocol == "tools")
        response = self._response(completion_of(data), request, protocol)
        if sizes and sum(sizes) == len(response.message.content or ""):
            response = response.model_copy(update={"text_chunks": sizes})
        return response

    async def fit_slots(self) -> int | None:
        """Send no more requests at once than a llama.cpp server has slots (`total_slots` in
        its GET /props), and return that number; None for any other server, which keeps
        `max_in_flight`.

        A request such a server must queue gets no byte, not even its headers, until a slot is
        free: to a local endpoint's idle timeout it would look dead. Waiting here instead costs
        nothing and does not count against the timeout.
        """
        slots = await self._transport.fit_slots()
        if slots is not None:
            _log.info("model_slots", slots=slots, model=self.model)
        return slots

    def _response(
        self, completion: Completion, request: ModelRequest, protocol: str
    ) -> ModelResponse:
        usage = usage_of(completion.usage)
        try:
            message, how = message_of(completion, request, protocol)
        except MalformedResponse as exc:
            exc.usage = usage  # the reply was made, and is billed, though it cannot be read
            raise
        if request.tools and (message.tool_calls or how == "json"):
            self._settle(how)
        return ModelResponse(
            message=message,
            usage=usage,
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
