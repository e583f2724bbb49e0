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
(`agents._wrappers`). What is worth retrying (429, 408/409, 5xx, timeouts, dropped connections)
raises `ModelRetryableError`, the rest `ModelRequestError`. Every request runs under an anyio
deadline, the reading of the reply included, and no reply is read past `max_response_bytes`.

A server on this machine (`local=True`: the embedded llama.cpp, or one at a loopback address) is
read differently, because one request there can take minutes of a busy CPU and every second of
it is progress. The reply is streamed, and `timeout` bounds the silence between its bytes, not
the whole: a reply is never cut while tokens (or the server's keep-alive pings, sent while it
reads a long prompt) still arrive. A request that met the timeout once the server took it (its
headers came) is marked not to be sent again (`resend=False`): the server went silent while
working on it, and would take a copy only behind the one it has, or restart it from the first
prompt token (one that timed out still waiting for a slot may be retried: see `_idle_timed`). A streamed reply that has come to only repeat itself is cut there
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
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal

import anyio
import httpx2

from agents._admission import Admission
from agents._bodies import check_json, decode_reason, is_event_stream, read_reply, reply_error
from agents._chunks import Chunks
from agents._completion import Completion, completion_of, message_of, output_tokens, usage_of
from agents._errors import (
    ConfigurationError,
    MalformedResponse,
    ModelError,
    ModelRequestError,
    ModelRetryableError,
)
from agents._http import (
    DEFAULT_MAX_RESPONSE_BYTES,
    ResponseTooLarge,
    body_of,
    check_allowed,
    new_client,
)
from agents._lazy import lazy_module
from agents._model import ModelRequest, ModelResponse, WireProtocol
from agents._streaming import Streamed, chunk_taker, live_sink
from agents._tracing import logger, redact_url
from agents._wire import (
    DirectPost,
    OutputMode,
    json_kwargs,
    output_kwargs,
    to_wire,
    tools_kwargs,
)

if TYPE_CHECKING:
    import openai
else:
    openai = lazy_module("openai")  # about half a second of import: on first use (`_lazy`)

__all__ = ["DecisionProtocol", "OpenAIChatModel", "to_wire"]

DecisionProtocol = Literal["auto", "tools", "json"]
"""How the model states its decisions: native tool calls, JSON decisions, or `auto` (settled
once per endpoint)."""
_PROPS_WAIT_S = 5.0
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
            request with status 400 is not asked that way again). See `OutputMode`.
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
        self.rate_limits = rate_limits
        # paor's own client shows the admission every answer's headers; a caller's, only 429s.
        self._sees_headers = client is None and rate_limits is not None
        self._direct: DirectPost | None = None
        if client is None:
            key = api_key or os.environ.get("OPENAI_API_KEY") or "not-needed"
            client, http = new_client(
                base_url or os.environ.get("OPENAI_BASE_URL") or None,
                key,
                timeout=timeout,
                max_response_bytes=max_response_bytes,
                admission=rate_limits,
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
        self.output_mode: OutputMode = output_mode
        self._outputs_refused: set[OutputMode] = set()
        self.timeout = timeout
        self.temperature = temperature
        self.max_output_tokens = max_output_tokens
        self.max_string_chars = max_string_chars
        self.local = local
        self._in_flight = anyio.CapacityLimiter(max_in_flight)

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
        check_allowed(str(self._client.base_url))
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
        check_json(self.base_url, response.status_code, response.headers, body_of(response))

    async def aclose(self) -> None:
        """Close the underlying HTTP client."""
        await self._client.close()

    async def complete(self, request: ModelRequest) -> ModelResponse:
        """Answer one request, sent once (see `agents.models.RetryingModel` for retries).

        Raises:
            ModelRetryableError: A transient failure (`resend=False`: a local server went
                silent while working on it; see the module docstring).
            ModelRequestError: Refused by the endpoint (or blocked by `block_model_requests`).
            MalformedResponse: The reply could not be parsed, or only repeated itself.
        """
        check_allowed(str(self._client.base_url))
        # 10,000 sub-agents: a request built and queued in the pool costs about 14 KiB more
        # than one waiting here (S7 over HTTP: 56 against 42 KiB per sub-agent).
        async with self._in_flight:
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
        return await self._timed(request, protocol, body)

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
        marked not to be sent again (`resend=False`).
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
            raise ModelRetryableError(
                f"the local server sent nothing for {self.timeout:g}s (the request timeout); "
                "not sent again, as it may still be working on it",
                resend=False,
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
            error = self._classify(exc)
            if self.rate_limits is not None:
                if not self._sees_headers:
                    self.rate_limits.observe(exc.response.headers, exc.status_code)
                if isinstance(error, ModelRetryableError):
                    error.reported = True
            raise error from exc
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
                f"{self.base_url.rstrip('/')} answered broken JSON in its event stream: {decode_reason(exc)}"
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
        check_allowed(str(self._client.base_url))
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
        message, how = message_of(completion, request, protocol)
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
        return reply_error(self.base_url, exc.status_code, reply.headers, body_of(reply))


def _nothing() -> None:
    pass
