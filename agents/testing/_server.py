"""A fake OpenAI-compatible HTTP server, for integration tests and benchmarks.

It speaks just enough HTTP/1.1 (Content-Length bodies, keep-alive) for the real `openai` client
and answers `POST /v1/chat/completions` from a script: a list of actions played in order, or a
function of the request body. It records every request body, so a test can assert on what the model
was asked.

```python
script = [ServerAction.tool_calls([("search", {"query": "x"})]),
          ServerAction.status(429, headers={"Retry-After": "0.1"}),
          ServerAction.text("done")]
async with FakeOpenAIServer(script) as server:
    model = OpenAIChatModel(base_url=server.base_url, api_key="test")
    ...
server.assert_complete()
assert server.requests[0]["tools"]
```

Everything runs in a task group the server owns: leaving the `async with` cancels open connections
and hung responses alike, so a `ServerAction.hang()` never delays shutdown.
"""

from __future__ import annotations

import inspect
import itertools
import json
from collections import deque
from contextlib import suppress
from dataclasses import dataclass
from typing import Any

import anyio
import anyio.abc
from anyio.streams.buffered import BufferedByteReceiveStream

from agents.testing._actions import (
    Completion,
    Hang,
    MalformedBody,
    ServerAction,
    ServerScript,
    Status,
    completion_body,
    error_body,
    reason_phrase,
)
from agents.testing._loopback import LoopbackServer
from agents.testing._sse import sse_body, sse_events

__all__ = ["FakeOpenAIServer"]

_MAX_HEAD = 64 * 1024
_MAX_BODY = 64 * 1024 * 1024
# A peer that goes away mid-exchange (a client deadline, a closed pool) ends its connection quietly.
_DISCONNECTED = (
    anyio.EndOfStream,
    anyio.IncompleteRead,
    anyio.BrokenResourceError,
    anyio.ClosedResourceError,
)


@dataclass(kw_only=True, slots=True)
class _Request:
    method: str
    path: str
    keep_alive: bool
    body: bytes


_SSE = "text/event-stream; charset=utf-8"


@dataclass(kw_only=True, slots=True)
class _Reply:
    code: int
    body: bytes
    headers: tuple[tuple[str, str], ...] = ()
    content_type: str = "application/json"
    paced: tuple[list[bytes], float] | None = None  # events sent this many seconds apart


class _BadRequest(ValueError):
    """The bytes on the wire are not a request this server can read."""


class FakeOpenAIServer(LoopbackServer):
    """A scripted OpenAI-compatible server on 127.0.0.1, as an async context manager.

    Endpoints: `POST /v1/chat/completions` (scripted), `GET /v1/models`, `GET /health`.

    Args:
        script: The actions to play in order, or a function of each request body.
        model: The model name reported when a request names none.
        models: The answer to every `GET /v1/models` (a `Status` or a `MalformedBody`, such as
            a captive portal's page), instead of the list of `model`.

    Attributes:
        requests: Every chat completion request body, parsed, in arrival order.
        failures: Problems a test should know about: requests after the script ended, errors
            raised by a script function, unreadable bodies. Each was answered with an error status.
    """

    def __init__(
        self,
        script: ServerScript,
        *,
        model: str = "fake-model",
        models: Status | MalformedBody | None = None,
    ) -> None:
        self._decide = script if callable(script) else None
        self._pending: deque[ServerAction] = deque(() if callable(script) else script)
        self.model = model
        self._models = models
        self.requests: list[dict[str, Any]] = []
        self.failures: list[str] = []
        self._ids = itertools.count(1)
        super().__init__()

    @property
    def remaining(self) -> int:
        """Scripted actions not played yet (0 for a script function)."""
        return len(self._pending)

    def assert_complete(self) -> None:
        """Fail unless every scripted action was played and nothing went wrong.

        Raises:
            AssertionError: Actions were left, or `failures` is not empty.
        """
        problems = list(self.failures)
        if self._pending:
            problems.append(f"{len(self._pending)} scripted actions were never played")
        if problems:
            raise AssertionError("fake OpenAI server: " + "; ".join(problems))

    async def _serve(self, stream: anyio.abc.SocketStream) -> None:
        reader = BufferedByteReceiveStream(stream)
        async with stream:
            with suppress(*_DISCONNECTED):
                while True:
                    try:
                        request = await _read_request(reader)
                    except (_BadRequest, anyio.DelimiterNotFound) as exc:
                        await stream.send(_encode(_error(400, str(exc)), keep_alive=False))
                        return
                    reply = await self._route(request)
                    if reply is None:
                        return
                    if reply.paced is None:
                        await stream.send(_encode(reply, keep_alive=request.keep_alive))
                    else:
                        await _send_paced(stream, reply, *reply.paced, request.keep_alive)
                    if not request.keep_alive:
                        return

    async def _route(self, request: _Request) -> _Reply | None:
        match request.method, request.path:
            case "POST", "/v1/chat/completions":
                return await self._chat(request.body)
            case "GET", "/v1/models" if self._models is not None:
                return _reply_of(self._models)
            case "GET", "/v1/models":
                models = [{"id": self.model, "object": "model", "created": 0, "owned_by": "paor"}]
                return _json(200, {"object": "list", "data": models})
            case "GET", "/health":
                return _json(200, {"status": "ok"})
        return _error(404, f"no route for {request.method} {request.path}")

    async def _chat(self, raw: bytes) -> _Reply | None:
        try:
            body = json.loads(raw)
        except ValueError as exc:
            self.failures.append(f"a request body was not valid JSON ({exc})")
            return _error(400, f"the request body is not valid JSON: {exc}")
        self.requests.append(body)
        action = await self._next_action(body)
        match action:
            case Hang(seconds=seconds):
                await anyio.sleep(seconds)
                return None
            case MalformedBody() | Status():
                return _reply_of(action)
            case Completion():
                reply = completion_body(action, body, ids=self._ids, model=self.model)
                if body.get("stream") is True and action.stream_s > 0:
                    events = sse_events(reply, body)
                    paced = (events, action.stream_s / max(1, len(events) - 1))
                    return _Reply(
                        code=200, body=b"", headers=action.headers, content_type=_SSE, paced=paced
                    )
                if body.get("stream") is True:
                    streamed = sse_body(reply, body)
                    return _Reply(
                        code=200, body=streamed, headers=action.headers, content_type=_SSE
                    )
                return _Reply(code=200, body=json.dumps(reply).encode(), headers=action.headers)
        return _status_reply(self._fail(f"the script gave {action!r}, not a server action"))

    async def _next_action(self, body: dict[str, Any]) -> ServerAction:
        if self._decide is not None:
            try:
                action = self._decide(body)
                return await action if inspect.isawaitable(action) else action
            except Exception as exc:  # reported in `failures` and answered with a 500
                return self._fail(f"the script function raised {exc!r}")
        if not self._pending:
            return self._fail(f"request {len(self.requests)} came after the script ended")
        return self._pending.popleft()

    def _fail(self, problem: str) -> Status:
        self.failures.append(problem)
        return ServerAction.status(500, error_body(500, f"fake OpenAI server: {problem}"))


async def _read_request(reader: BufferedByteReceiveStream) -> _Request:
    head = (await reader.receive_until(b"\r\n\r\n", _MAX_HEAD)).decode("latin-1")
    request_line, *lines = head.split("\r\n")
    try:
        method, target, version = request_line.split(" ")
    except ValueError:
        raise _BadRequest(f"bad request line {request_line[:80]!r}") from None
    headers = {}
    for line in lines:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    if "transfer-encoding" in headers:
        raise _BadRequest("only Content-Length bodies are supported")
    length = headers.get("content-length", "0")
    if not length.isdigit() or int(length) > _MAX_BODY:
        raise _BadRequest(f"bad Content-Length {length[:20]!r}")
    body = await reader.receive_exactly(int(length)) if int(length) else b""
    keep_alive = version == "HTTP/1.1" and headers.get("connection", "").lower() != "close"
    return _Request(method=method, path=target.partition("?")[0], keep_alive=keep_alive, body=body)


def _reply_of(action: Status | MalformedBody) -> _Reply:
    if isinstance(action, MalformedBody):
        return _Reply(code=action.code, body=action.body, content_type=action.content_type)
    return _status_reply(action)


def _status_reply(action: Status) -> _Reply:
    if isinstance(action.body, str):
        body, content_type = action.body.encode(), "text/plain; charset=utf-8"
    else:
        payload = error_body(action.code) if action.body is None else action.body
        body, content_type = json.dumps(payload).encode(), "application/json"
    return _Reply(code=action.code, body=body, headers=action.headers, content_type=content_type)


def _error(code: int, message: str) -> _Reply:
    return _json(code, error_body(code, message))


def _json(code: int, payload: Any) -> _Reply:
    return _Reply(code=code, body=json.dumps(payload).encode())


async def _send_paced(
    stream: anyio.abc.SocketStream, reply: _Reply, events: list[bytes], gap: float, keep_alive: bool
) -> None:
    """Send `reply` with a chunked body, one event every `gap` seconds: each at its own time
    from the first, so a late wake-up delays one event and never the ones after it."""
    head = [
        f"HTTP/1.1 {reply.code} {reason_phrase(reply.code)}",
        f"Content-Type: {reply.content_type}",
        "Transfer-Encoding: chunked",
        f"Connection: {'keep-alive' if keep_alive else 'close'}",
        *(f"{name}: {value}" for name, value in reply.headers),
    ]
    await stream.send(("\r\n".join(head) + "\r\n\r\n").encode("latin-1"))
    start = anyio.current_time()
    for n, event in enumerate(events):
        wait = start + n * gap - anyio.current_time()
        if wait > 0:
            await anyio.sleep(wait)
        await stream.send(f"{len(event):x}\r\n".encode() + event + b"\r\n")
    await stream.send(b"0\r\n\r\n")


def _encode(reply: _Reply, *, keep_alive: bool) -> bytes:
    lines = [
        f"HTTP/1.1 {reply.code} {reason_phrase(reply.code)}",
        f"Content-Type: {reply.content_type}",
        f"Content-Length: {len(reply.body)}",
        f"Connection: {'keep-alive' if keep_alive else 'close'}",
        *(f"{name}: {value}" for name, value in reply.headers),
    ]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + reply.body
