"""`Transport`: how `OpenAIChatModel` reaches its endpoint, sends a body and reads the reply.

The model (`_openai`) decides what to ask (protocol, output mode, completion bound); this
module sends it once and reads what came back, under a deadline that covers the reading of the
reply, with no more than `max_in_flight` requests at the endpoint and no reply read past
`max_response_bytes`. What is worth retrying (429, 408/409, 5xx, timeouts, dropped connections)
raises `ModelRetryableError`, the rest `ModelRequestError`.

A server on this machine (`local=True`: the embedded llama.cpp, or one at a loopback address) is
read differently, because one request there can take minutes of a busy CPU and every second of
it is progress. The reply is streamed, and the timeout bounds the silence between its bytes, not
the whole: a reply is never cut while tokens (or the server's keep-alive pings, sent while it
reads a long prompt) still arrive. A request that met the timeout once the server took it (its
headers came) is marked not to be sent again (`resend=False`): the server went silent while
working on it, and would take a copy only behind the one it has, or restart it from the first
prompt token (one that timed out still waiting for a slot may be retried: see `_idle_timed`). A
streamed reply that has come to only repeat itself is cut there and raises `MalformedResponse`
(see `_streaming.Repeats`). A request a hedge is timing (`HedgedModel`) is streamed too, through
paor's own client, so that the hedge sees when its reply begins (`_hedge.first_token`).

An endpoint that answers something other than the API (a captive portal's page, a proxy's error
page, text, broken JSON) fails with a one-line `ModelError` naming it and what it answered, on
every path, the ping included (see `_bodies`). The endpoint is only ever shown through
`redact_url`: credentials in a base URL stay out of errors, logs and `repr`.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import anyio
import httpx2

from agents._errors import MalformedResponse, ModelError, ModelRequestError, ModelRetryableError
from agents._lazy import lazy_module
from agents._streaming import Streamed, chunk_taker, live_sink
from agents._tracing import logger, redact_url
from agents.models._admission import Admission
from agents.models._bodies import (
    check_json,
    decode_reason,
    is_event_stream,
    read_reply,
    reply_error,
)
from agents.models._chunks import Chunks
from agents.models._hedge import first_token
from agents.models._http import ResponseTooLarge, body_of, check_allowed, new_client
from agents.models._wire import DirectPost

if TYPE_CHECKING:
    import openai
else:
    openai = lazy_module("openai")  # about half a second of import: on first use (`_lazy`)

__all__ = ["Reply", "Transport"]

Reply = tuple[Any, tuple[int, ...]]
"""A reply's JSON body, and the sizes of its text's streamed pieces (empty when not streamed)."""
_PROPS_WAIT_S = 5.0
_log = logger("paor.model")


class Transport:
    """One OpenAI-compatible endpoint, through an `AsyncOpenAI` client (paor's own, or the
    caller's: see `OpenAIChatModel` for what each argument means)."""

    def __init__(
        self,
        *,
        base_url: str | None,
        api_key: str,
        client: openai.AsyncOpenAI | None,
        timeout: float,
        max_response_bytes: int,
        rate_limits: Admission | None,
        max_in_flight: int,
        local: bool,
    ) -> None:
        self.timeout = timeout
        self.local = local
        self.rate_limits = rate_limits
        # paor's own client shows the admission every answer's headers; a caller's, only 429s.
        self._sees_headers = client is None and rate_limits is not None
        self._direct: DirectPost | None = None
        if client is None:
            client, http = new_client(
                base_url,
                api_key,
                timeout=timeout,
                max_response_bytes=max_response_bytes,
                admission=rate_limits,
            )
            # A caller's own client keeps all its settings; paor's is used past its machinery,
            # through its own httpx2 client (`_wire`).
            headers = {**client.default_headers, "Authorization": f"Bearer {api_key}"}
            url = str(client.base_url)
            self._direct = DirectPost(http, url, headers, redact_url(url))
        self.client = client
        self.in_flight = anyio.CapacityLimiter(max_in_flight)

    @property
    def base_url(self) -> str:
        """The endpoint URL, its credentials masked (`redact_url`): safe to print or store."""
        return redact_url(str(self.client.base_url))

    def check_allowed(self) -> None:
        """Raise `ModelRequestError` when model requests are blocked (`block_model_requests`)."""
        check_allowed(str(self.client.base_url))

    async def aclose(self) -> None:
        """Close the underlying HTTP client."""
        await self.client.close()

    async def ping(self, wait_s: float) -> None:
        """See `OpenAIChatModel.ping`."""
        self.check_allowed()
        try:
            with anyio.fail_after(wait_s):
                response = await self.client.get("/models", cast_to=httpx2.Response)
        except openai.APIStatusError as exc:
            response = exc.response
        except ResponseTooLarge:
            return
        except (openai.APIConnectionError, TimeoutError) as exc:
            raise ModelRetryableError(
                f"cannot reach the model endpoint at {self.base_url}"
            ) from exc
        check_json(self.base_url, response.status_code, response.headers, body_of(response))

    async def fit_slots(self) -> int | None:
        """See `OpenAIChatModel.fit_slots`."""
        self.check_allowed()
        root = str(self.client.base_url).rstrip("/").removesuffix("/v1")
        try:
            with anyio.fail_after(_PROPS_WAIT_S):
                props = await self.client.get(f"{root}/props", cast_to=object)
        except (openai.APIError, ResponseTooLarge, TimeoutError, ValueError, RecursionError):
            return None
        slots = props.get("total_slots") if isinstance(props, dict) else None
        if not isinstance(slots, int) or isinstance(slots, bool) or slots < 1:
            return None
        self.in_flight.total_tokens = min(slots, self.in_flight.total_tokens)
        return slots

    async def send(self, body: dict[str, Any], *, live: bool) -> Reply:
        """Send `body` once and read its reply within `timeout` seconds (with `local`, the most
        seconds without a byte); with `live`, its text goes to the run's live sink as it
        streams."""
        timeout = self.timeout
        if self.local:
            return await self._idle_timed(body, live)
        try:
            with anyio.fail_after(timeout):
                return await self._send(body, live, None)
        except TimeoutError:
            raise ModelRetryableError(f"no reply within {timeout:g}s") from None

    async def _idle_timed(self, body: dict[str, Any], live: bool) -> Reply:
        """An attempt against a local server: `timeout` bounds each silence, not the whole.

        llama.cpp sends a reply's headers when a slot takes the request, then a token or a ping
        at least every 2 s (the embedded server; 30 s is llama.cpp's own default). Before
        the headers the request waits for a slot (one still finishing a request whose client
        hung up): that wait timing out is retried, since the server drops a queued request
        once its client is gone. After them, a timeout means the server stopped serving it:
        marked not to be sent again (`resend=False`).
        """
        started = False
        timeout = self.timeout

        def alive() -> None:  # a byte came: the idle deadline starts again
            nonlocal started
            started = True
            scope.deadline = anyio.current_time() + timeout

        try:
            with anyio.fail_after(timeout) as scope:
                return await self._send(body, live, alive)
        except TimeoutError:
            if not started:
                raise ModelRetryableError(
                    f"the local server did not take the request within {timeout:g}s "
                    "(its slots were busy)"
                ) from None
            raise ModelRetryableError(
                f"the local server sent nothing for {timeout:g}s (the request timeout); "
                "not sent again, as it may still be working on it",
                resend=False,
            ) from None

    async def _send(
        self, body: dict[str, Any], live: bool, alive: Callable[[], None] | None
    ) -> Reply:
        streamed = live_sink() if live else None
        began = first_token() if self._direct is not None else None
        try:
            if alive is not None or began is not None:  # a local server, or a hedge timing it
                return await self._streamed_directly(body, streamed, alive or _nothing, began)
            # The body is built and validated already, and only a few fields of the answer are
            # read: the client's generic `post` sends the one and returns the other as it came,
            # read here as JSON (`_bodies`). Its typed `chat.completions.create` transforms every
            # request field and builds a model of every response field, 1-3 ms of CPU per
            # request that a run of many agents pays on its critical path. Status errors, auth and
            # connection handling are the same.
            if streamed is None and self._direct is not None:
                return await self._direct.post(body), ()  # without the SDK's CPU (`_wire`)
            if streamed is None:
                raw = await self.client.post(
                    "/chat/completions", body=body, cast_to=httpx2.Response
                )
                return read_reply(self.base_url, raw.status_code, raw.headers, raw.content), ()
            return await self._streamed(body, streamed)
        except openai.APIStatusError as exc:
            raise self._status_error(exc) from exc
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

    def _status_error(self, exc: openai.APIStatusError) -> ModelError:
        """The error an error status the SDK raised stands for (`_bodies.reply_error`), shown to
        the admission when paor's own client did not show it already."""
        reply = exc.response
        error = reply_error(self.base_url, exc.status_code, reply.headers, body_of(reply))
        if self.rate_limits is not None:
            if not self._sees_headers:
                self.rate_limits.observe(reply.headers, exc.status_code)
            if isinstance(error, ModelRetryableError):
                error.reported = True
        return error

    async def _streamed(
        self,
        body: dict[str, Any],
        streamed: Streamed | None,
        alive: Callable[[], None] | None = None,
    ) -> Reply:
        """The completion, asked for as a stream: each piece of text goes to `streamed` as it
        arrives; the pieces put together are read as a plain body."""
        body = {**body, "stream": True, "stream_options": {"include_usage": True}}
        stream = await self.client.post(
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

    async def _streamed_directly(
        self,
        body: dict[str, Any],
        streamed: Streamed | None,
        alive: Callable[[], None],
        began: Callable[[], None] | None,
    ) -> Reply:
        """The completion streamed whatever the protocol: a local server's idle deadline sees it
        at work (`alive`), a hedge sees its first event (`began`: `agents.models._hedge`), and
        a reply in a loop is cut early."""
        if self._direct is None:  # a caller's own client: the SDK's stream, no pings seen
            return await self._streamed(body, streamed, alive)
        parts = Chunks()
        take = chunk_taker(parts, streamed)
        if began is not None:
            take = _signalling(take, began)
        whole = await self._direct.post_streamed(body, take, alive)
        if whole is not None:  # a server that answered without streaming
            return whole, ()
        return parts.body(), parts.sizes


def _nothing() -> None:
    pass


def _signalling(
    take: Callable[[object], Awaitable[None]], began: Callable[[], None]
) -> Callable[[object], Awaitable[None]]:
    """`take`, telling `began` of each chunk first (the hedge notes only the first)."""

    async def signalled(chunk: object) -> None:
        began()
        await take(chunk)

    return signalled
