"""A raw HTTP server on 127.0.0.1 for the fuzz suite: it answers with whatever bytes it is told.

`FakeOpenAIServer` speaks well-formed HTTP and OpenAI-shaped JSON; this one is for the replies a
broken or hostile endpoint sends: any status with any body, headers nobody should send, a body
shorter than its Content-Length, a body that never ends, a dropped connection, no answer at all.

```python
async with FuzzServer(lambda body: Wire(status=429, headers=(("Retry-After", "nan"),))) as srv:
    model = OpenAIChatModel(base_url=srv.base_url, api_key="test")
```

Every connection is answered once and closed (`Connection: close`), so each request is one
exchange however the client pools. Leaving the `async with` cancels every connection still open,
hung and endless ones included.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass
from typing import Any, Literal

import anyio
import anyio.abc
from anyio.streams.buffered import BufferedByteReceiveStream

from agents.testing._loopback import LoopbackServer

__all__ = ["FuzzServer", "Shape", "Wire"]

Shape = Literal["whole", "short", "drop", "hang", "endless"]
"""How a reply goes out: whole; a body cut short of its Content-Length; the connection dropped
before any answer; no answer until the server stops; a chunked body that never ends."""

_MAX_HEAD = 64 * 1024
_MAX_BODY = 64 * 1024 * 1024
# An endless body trickles (16 KiB every 5 ms, about 3 MB/s): enough to keep a reader busy,
# too little to exhaust memory before the suite's guard ends the test.
_TRICKLE = b"[" * 16384
_TRICKLE_S = 0.005
_DISCONNECTED = (
    anyio.EndOfStream,
    anyio.IncompleteRead,
    anyio.BrokenResourceError,
    anyio.ClosedResourceError,
    anyio.DelimiterNotFound,
    ValueError,
)
_MODELS = json.dumps({"object": "list", "data": [{"id": "fuzz", "object": "model"}]}).encode()


@dataclass(frozen=True, slots=True, kw_only=True)
class Wire:
    """One raw answer to a chat completion request.

    Attributes:
        status: The HTTP status code.
        headers: Extra header lines (name, value), sent as given (latin-1, unknown bytes as "?").
        body: The body bytes.
        shape: How the answer goes out (see `Shape`).
    """

    status: int = 200
    headers: tuple[tuple[str, str], ...] = ()
    body: bytes = b""
    shape: Shape = "whole"


Responder = Callable[[Any], Wire]
"""Picks the answer to a chat completion request from its body (decoded JSON, or None)."""


class FuzzServer(LoopbackServer):
    """A server on 127.0.0.1 that answers `POST .../chat/completions` with `respond(body)`.

    Any GET (the CLI's reachability check lists the models) gets a small models list.

    Args:
        respond: Picks each answer.

    Attributes:
        requests: Every chat completion request body, decoded (None if it was not JSON).
    """

    def __init__(self, respond: Responder) -> None:
        self._respond = respond
        self.requests: list[Any] = []
        super().__init__()

    async def _serve(self, stream: anyio.abc.SocketStream) -> None:
        async with stream:
            with suppress(*_DISCONNECTED):
                method, body = await _read_request(BufferedByteReceiveStream(stream))
                if method != "POST":
                    await stream.send(_head(200, (), len(_MODELS)) + _MODELS)
                    return
                try:
                    decoded = json.loads(body)
                except ValueError:
                    decoded = None
                self.requests.append(decoded)
                await _send(stream, self._respond(decoded))


async def _read_request(reader: BufferedByteReceiveStream) -> tuple[str, bytes]:
    head = (await reader.receive_until(b"\r\n\r\n", _MAX_HEAD)).decode("latin-1")
    method = head.split(" ", 1)[0]
    length = 0
    for line in head.split("\r\n")[1:]:
        name, _, value = line.partition(":")
        if name.strip().lower() == "content-length":
            length = min(int(value.strip()), _MAX_BODY)
    return method, (await reader.receive_exactly(length) if length else b"")


async def _send(stream: anyio.abc.SocketStream, wire: Wire) -> None:
    match wire.shape:
        case "drop":
            return
        case "hang":
            await anyio.sleep_forever()
        case "short":
            await stream.send(_head(wire.status, wire.headers, len(wire.body) + 100) + wire.body)
        case "endless":
            await stream.send(_head(wire.status, wire.headers, None) + _chunk(wire.body))
            while True:
                await stream.send(_chunk(_TRICKLE))
                await anyio.sleep(_TRICKLE_S)
        case "whole":
            await stream.send(_head(wire.status, wire.headers, len(wire.body)) + wire.body)


def _head(status: int, headers: tuple[tuple[str, str], ...], length: int | None) -> bytes:
    framing = "Transfer-Encoding: chunked" if length is None else f"Content-Length: {length}"
    lines = [
        f"HTTP/1.1 {status} Fuzz",
        "Content-Type: application/json",
        framing,
        "Connection: close",
        *(f"{name}: {value}" for name, value in headers),
    ]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1", errors="replace")


def _chunk(data: bytes) -> bytes:
    return f"{len(data):x}\r\n".encode() + data + b"\r\n" if data else b""
