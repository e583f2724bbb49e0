"""paor's own HTTP/1.1 client for the chat completions it POSTs: one origin, connections kept alive.

httpx2 spends about half a millisecond of CPU on each request (its request and response models,
h11's checks of every header, httpcore's pool bookkeeping); the bytes themselves cost about 50 µs.
A run of many agents pays that once per model call, on its critical path. A chat completion is
the plainest HTTP there is: a POST of a known length, answered by a reply framed by Content-Length
or by chunks (or, from an old server, by closing the connection). `H1Pool` speaks just that over
anyio streams, with TLS from the SSL context httpx2 would build (`httpx2.create_ssl_context`: the
same trust store, `SSL_CERT_FILE` included), and keeps connections alive as the `openai` client's
pool does (at most 100 idle, each for at most 5 s).

Left to httpx2 (`H1Pool.for_endpoint` says None): an endpoint a proxy from the environment may
cover, headers that are not plain ASCII, and in `agents._wire` streamed replies and a caller's own
client. Not spoken: HTTP/2, and redirects (a 3xx is a status like any other, as with the SDK's
client, which follows none). Informational (1xx) replies are skipped.

A kept-alive connection the server closed while it sat idle fails before a byte of the reply
arrives: the request then goes once more on a new connection, as httpcore and urllib3 do. Any
other failure closes the connection; one cut off mid-reply, or by cancellation, is never reused.
"""

from __future__ import annotations

import ssl
import time
import urllib.request
import zlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import anyio
import anyio.abc
import httpx2
from anyio.streams.buffered import BufferedByteReceiveStream

from agents._http import WBITS, ResponseTooLarge

__all__ = ["H1_FAILURES", "H1Pool", "H1Reply", "ProtocolError"]

IDLE_S = 5.0  # the `openai` client's keep-alive expiry
MAX_IDLE = 100  # and its most kept-alive connections
_MAX_HEAD = 64 * 1024  # a status line and headers; a chunk-size line is far shorter
_MAX_LINE = 1024
_MAX_INFORMATIONAL = 8  # 1xx replies before the real one (servers send one 100 Continue at most)
_NO_BODY = frozenset({204, 304})

HeadersSeen = Callable[[Mapping[str, str], int], None]


class ProtocolError(Exception):
    """The server's reply is not HTTP/1.1 as spoken here (a status line, header or chunk)."""


@dataclass(frozen=True, slots=True)
class H1Reply:
    """A whole reply: its status, its headers (names in lower case, repeats joined by ", "), and
    its body, decoded if it came compressed."""

    status: int
    headers: Mapping[str, str]
    body: bytes


# What a request over `H1Pool` may raise besides `ResponseTooLarge`: each means the connection,
# or what came over it, failed (a retryable fault, as httpx2's transport errors are).
H1_FAILURES = (
    OSError,  # refused, reset, unreachable, name not found, TLS failures (ssl.SSLError)
    anyio.BrokenResourceError,
    anyio.EndOfStream,
    anyio.IncompleteRead,
    anyio.DelimiterNotFound,  # a head or a chunk-size line past its bound
    ProtocolError,
)


@dataclass(kw_only=True, slots=True)
class _Connection:
    stream: anyio.abc.ByteStream
    reader: BufferedByteReceiveStream
    idle_since: float = 0.0
    reused: bool = False


class _Stale(Exception):
    """A reused connection failed before its reply began: the server had closed it."""


class H1Pool:
    """POST bodies to one URL over kept-alive HTTP/1.1 connections.

    Args:
        url: The URL every request goes to.
        head: The request's head up to its Content-Length value (see `for_endpoint`).
        max_bytes: The most bytes a reply body may hold, as sent and decoded.
        on_headers: Shown each reply's headers and status as they arrive, before its body.
    """

    def __init__(
        self, url: httpx2.URL, head: bytes, *, max_bytes: int, on_headers: HeadersSeen | None
    ) -> None:
        self._host = url.host
        self._port = url.port or (443 if url.scheme == "https" else 80)
        self._tls = url.scheme == "https"
        self._ssl: ssl.SSLContext | None = None
        self._head = head
        self._max = max_bytes
        self._on_headers = on_headers
        self._idle: list[_Connection] = []
        self._closed = False

    @classmethod
    def for_endpoint(
        cls,
        url: httpx2.URL,
        headers: Mapping[str, str],
        *,
        max_bytes: int,
        on_headers: HeadersSeen | None = None,
    ) -> H1Pool | None:
        """A pool for `url` sending `headers` with every request, or None where httpx2 must
        carry the requests: a proxy set in the environment, or a header it cannot send as is."""
        if url.scheme not in ("http", "https") or not url.host or _proxied():
            return None
        lines = [f"POST {url.raw_path.decode('ascii')} HTTP/1.1", f"Host: {_host_header(url)}"]
        lines += [f"{name}: {value}" for name, value in headers.items()]
        lines.append("Content-Length: ")
        if not all(line.isascii() and line.isprintable() for line in lines):
            return None  # a line break or control character would split the head
        head = "\r\n".join(lines).encode("ascii")
        return cls(url, head, max_bytes=max_bytes, on_headers=on_headers)

    async def post(self, content: bytes) -> H1Reply:
        """Send `content` and return the whole reply.

        Raises:
            ResponseTooLarge: The body passed `max_bytes` (or its Content-Length said it would).
            One of `H1_FAILURES`: The connection or the reply failed.
        """
        request = b"%s%d\r\n\r\n%s" % (self._head, len(content), content)
        connection = await self._idle_connection()
        if connection is not None:
            try:
                return await self._exchange(connection, request)
            except _Stale:
                pass  # the server closed it while it sat idle: once more on a new connection
        return await self._exchange(await self._connect(), request)  # a new one is never stale

    async def aclose(self) -> None:
        """Close the idle connections; those in use close when their request ends."""
        self._closed = True
        while self._idle:
            await anyio.aclose_forcefully(self._idle.pop().stream)

    async def _exchange(self, connection: _Connection, request: bytes) -> H1Reply:
        keep = False
        try:
            try:
                await connection.stream.send(request)
                head = await connection.reader.receive_until(b"\r\n\r\n", _MAX_HEAD)
            except (
                OSError,
                anyio.BrokenResourceError,
                anyio.EndOfStream,
                anyio.IncompleteRead,
            ) as exc:
                if connection.reused and not connection.reader.buffer:
                    raise _Stale from exc
                raise
            reply, keep = await self._reply(connection.reader, head)
            return reply
        finally:
            if keep and not self._closed and len(self._idle) < MAX_IDLE:
                connection.idle_since, connection.reused = time.monotonic(), True
                self._idle.append(connection)
            else:
                await anyio.aclose_forcefully(connection.stream)

    async def _reply(self, reader: BufferedByteReceiveStream, head: bytes) -> tuple[H1Reply, bool]:
        """The reply whose head is `head`, and whether its connection may carry another."""
        status, version, headers = _parse_head(head)
        seen = 0
        while 100 <= status < 200:  # informational: the real reply follows
            seen += 1
            if status == 101 or seen > _MAX_INFORMATIONAL:
                raise ProtocolError(f"no real reply after an informational {status}")
            status, version, headers = _parse_head(
                await reader.receive_until(b"\r\n\r\n", _MAX_HEAD)
            )
        if self._on_headers is not None:
            self._on_headers(headers, status)
        body, framed = await self._body(reader, headers, status)
        closing = "close" in headers.get("connection", "").lower()
        keep = framed and version == b"HTTP/1.1" and not closing
        coding = headers.get("content-encoding", "identity")
        return H1Reply(status, headers, _decoded(body, coding, self._max, status)), keep

    async def _body(
        self, reader: BufferedByteReceiveStream, headers: Mapping[str, str], status: int
    ) -> tuple[bytes, bool]:
        """The body as sent, and whether it was framed (its end known without a closed
        connection)."""
        if status in _NO_BODY:
            return b"", True
        coding = headers.get("transfer-encoding")
        if coding is not None:
            if coding.strip().lower() != "chunked":
                raise ProtocolError(f"unsupported Transfer-Encoding {coding[:40]!r}")
            return await self._chunked(reader, status), True
        length = headers.get("content-length")
        if length is not None:
            size = _content_length(length)
            if size > self._max:
                raise ResponseTooLarge(self._max, status)
            return await reader.receive_exactly(size), True
        return await self._until_closed(reader, status), False

    async def _chunked(self, reader: BufferedByteReceiveStream, status: int) -> bytes:
        parts: list[bytes] = []
        total = 0
        while size := _chunk_size(await reader.receive_until(b"\r\n", _MAX_LINE)):
            total += size
            if total > self._max:
                raise ResponseTooLarge(self._max, status)
            parts.append(await reader.receive_exactly(size))
            if await reader.receive_exactly(2) != b"\r\n":
                raise ProtocolError("a chunk does not end where its size says")
        trailers = 0
        while line := await reader.receive_until(b"\r\n", _MAX_HEAD):
            trailers += len(line)
            if trailers > _MAX_HEAD:
                raise ProtocolError("the trailers are too long")
        return b"".join(parts)

    async def _until_closed(self, reader: BufferedByteReceiveStream, status: int) -> bytes:
        parts: list[bytes] = []
        total = 0
        while True:
            try:
                part = await reader.receive()
            except anyio.EndOfStream:
                return b"".join(parts)
            total += len(part)
            if total > self._max:
                raise ResponseTooLarge(self._max, status)
            parts.append(part)

    async def _idle_connection(self) -> _Connection | None:
        """The newest idle connection still within its keep-alive; older ones are closed."""
        while self._idle:
            connection = self._idle.pop()
            if time.monotonic() - connection.idle_since < IDLE_S:
                return connection
            await anyio.aclose_forcefully(connection.stream)
        return None

    async def _connect(self) -> _Connection:
        stream: anyio.abc.ByteStream
        if self._tls:
            if self._ssl is None:  # tens of milliseconds to load the trust store: once, when needed
                self._ssl = httpx2.create_ssl_context()
                self._ssl.set_alpn_protocols(["http/1.1"])
            # Not standard-compatible: HTTP frames its own bodies, and servers often close
            # without TLS's close_notify.
            stream = await anyio.connect_tcp(
                self._host, self._port, ssl_context=self._ssl, tls_standard_compatible=False
            )
        else:
            stream = await anyio.connect_tcp(self._host, self._port)
        return _Connection(stream=stream, reader=BufferedByteReceiveStream(stream))


def _proxied() -> bool:
    """Whether the environment names a proxy for HTTP (httpx2 then decides, NO_PROXY and all)."""
    found = urllib.request.getproxies()
    return any(found.get(scheme) for scheme in ("http", "https", "all"))


def _host_header(url: httpx2.URL) -> str:
    # The netloc less any credentials: the host (bracketed if IPv6) and a non-default port.
    host = f"[{url.host}]" if ":" in url.host else url.host
    return host if url.port is None else f"{host}:{url.port}"


def _parse_head(head: bytes) -> tuple[int, bytes, dict[str, str]]:
    """The status, HTTP version and headers of a reply's head (its lines, less the blank one)."""
    status_line, *lines = head.split(b"\r\n")
    version, _, rest = status_line.partition(b" ")
    code = rest[:3]
    if not version.startswith(b"HTTP/1.") or not (code.isdigit() and len(code) == 3):
        raise ProtocolError(f"not an HTTP/1.1 status line: {status_line[:60]!r}")
    headers: dict[str, str] = {}
    for line in lines:
        name, colon, value = line.partition(b":")
        if not colon or not name or name[-1:].isspace() or name[:1].isspace():
            raise ProtocolError(f"a malformed header line: {line[:60]!r}")
        key, text = name.decode("latin-1").lower(), value.strip().decode("latin-1")
        headers[key] = f"{headers[key]}, {text}" if key in headers else text
    return int(code), version, headers


def _content_length(value: str) -> int:
    """The length a Content-Length states (repeats must agree)."""
    found = {v.strip() for v in value.split(",")}
    text = found.pop() if len(found) == 1 else ""
    if not (text.isascii() and text.isdigit()) or len(text) > 18:
        raise ProtocolError(f"an unusable Content-Length {value[:40]!r}")
    return int(text)


def _chunk_size(line: bytes) -> int:
    text = line.split(b";", 1)[0].strip()
    if not text or len(text) > 15 or text.strip(b"0123456789abcdefABCDEF"):
        raise ProtocolError(f"an unusable chunk size {line[:40]!r}")
    return int(text, 16)


def _decoded(body: bytes, coding: str, limit: int, status: int) -> bytes:
    """`body` inflated if it came compressed (the client asks for none), within `limit`."""
    coding = coding.strip().lower()
    if coding == "identity":
        return body
    wbits = WBITS.get(coding)
    if wbits is None:
        raise ProtocolError(f"unsupported Content-Encoding {coding[:40]!r}")
    inflater = zlib.decompressobj(wbits)
    try:
        # At most one byte past the limit: an inflating body never sits in memory whole.
        out = inflater.decompress(body, limit + 1)
        if len(out) <= limit and not inflater.unconsumed_tail:
            out += inflater.flush()
    except zlib.error as exc:
        raise ProtocolError(f"cannot decompress the body: {exc}") from None
    if len(out) > limit or inflater.unconsumed_tail:
        raise ResponseTooLarge(limit, status)
    return out
