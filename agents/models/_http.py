"""The HTTP client behind `OpenAIChatModel`: the `openai` defaults, with a bound on reply size.

A chat completion is a few kilobytes; a broken server can stream a body forever, and the client
would hold all of it in memory before parsing a byte. `bounded_http_client` builds the `openai`
SDK's default `httpx2` client with one response hook that wraps every body in `_LimitedBody`,
which raises `ResponseTooLarge` as soon as the body passes its limit. A hook, not a transport: it
sees every response, whichever transport (a proxy from the environment included) carried it.

The limit counts decoded bytes, because a small gzip body can inflate a thousandfold. The client
asks for uncompressed replies; a server that compresses anyway has gzip and deflate decoded here,
within the limit (httpx2 would inflate all of it first), and any other coding refused.

`new_client` puts it under an `AsyncOpenAI` client with no retries of its own.
"""

from __future__ import annotations

import zlib
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

import httpx2

from agents._errors import ConfigurationError, ModelRequestError
from agents._lazy import lazy_module
from agents._tracing import redact_url
from agents.models._admission import Admission

if TYPE_CHECKING:
    import openai
else:
    openai = lazy_module("openai")  # about half a second of import: on first use (`_lazy`)

__all__ = [
    "DEFAULT_MAX_RESPONSE_BYTES",
    "ResponseHook",
    "ResponseTooLarge",
    "block_model_requests",
    "body_of",
    "bounded_http_client",
    "check_allowed",
    "new_client",
]

DEFAULT_MAX_RESPONSE_BYTES = 8 * 1024 * 1024
ResponseHook = Callable[[httpx2.Response], Awaitable[None]]
# zlib window bits: a gzip wrapper, or the zlib wrapper that HTTP's "deflate" names.
_WBITS = {"gzip": zlib.MAX_WBITS | 16, "x-gzip": zlib.MAX_WBITS | 16, "deflate": zlib.MAX_WBITS}


class ResponseTooLarge(Exception):
    """A response body passed its byte limit (or said it would, in Content-Length).

    Args:
        limit: The limit in bytes.
        status: The response's HTTP status.
    """

    def __init__(self, limit: int, status: int) -> None:
        super().__init__(f"the HTTP {status} response body is over {limit} bytes")
        self.limit = limit
        self.status = status


def bounded_http_client(
    max_bytes: int, timeout: float, *, on_response: ResponseHook | None = None
) -> httpx2.AsyncClient:
    """The `openai` SDK's default async HTTP client, with bodies bounded to `max_bytes`.

    Args:
        max_bytes: The most bytes a response body may hold, decoded.
        timeout: The client's own timeout in seconds (a backstop to the caller's deadline).
        on_response: Also shown every response (its status and headers; the body is unread).
    """

    async def limit(response: httpx2.Response) -> None:
        _limit_body(response, max_bytes)

    hooks = [limit] if on_response is None else [on_response, limit]
    return openai.DefaultAsyncHttpxClient(
        timeout=timeout,
        headers={"Accept-Encoding": "identity"},
        event_hooks={"response": hooks},
    )


def new_client(
    base_url: str | None,
    api_key: str,
    *,
    timeout: float,
    max_response_bytes: int,
    admission: Admission | None,
) -> tuple[openai.AsyncOpenAI, httpx2.AsyncClient]:
    """paor's `AsyncOpenAI` client (no retries of its own, replies bounded: `_http`), and the
    HTTP client under it.

    Raises:
        ConfigurationError: The base URL is not an http(s) URL with a host and a valid port.
    """
    try:
        # The client's own timeout is a backstop only: the anyio deadline around each attempt
        # is what bounds it, body included (a slow drip resets an HTTP read timeout forever).
        http = bounded_http_client(
            max_response_bytes,
            timeout + 5.0,
            on_response=None if admission is None else _observing(admission),
        )
        client = openai.AsyncOpenAI(
            base_url=base_url,
            api_key=api_key,
            max_retries=0,
            timeout=timeout + 5.0,
            http_client=http,
        )
        url = client.base_url
        usable = url.scheme in ("http", "https") and bool(url.host) and (url.port or 0) < 65536
    except (ValueError, httpx2.InvalidURL) as exc:
        raise ConfigurationError(f"the base URL {_shown(base_url)} is invalid: {exc}") from None
    if not usable:
        raise ConfigurationError(
            f"the base URL {_shown(base_url)} is not an http(s) URL with a host and a valid port"
        )
    return client, http


def _shown(url: str | None) -> str:
    """`url` as an error message quotes it: credentials masked, on one line, not too long."""
    return repr(redact_url(url or ""))[:200]


def _observing(admission: Admission) -> ResponseHook:
    async def observe(response: httpx2.Response) -> None:
        admission.observe(response.headers, response.status_code)

    return observe


def _limit_body(response: httpx2.Response, max_bytes: int) -> None:
    """Put `response`'s body behind the limit, to be decoded here if it is compressed."""
    if _declared_over(response.headers.get("content-length", ""), max_bytes):
        raise ResponseTooLarge(max_bytes, response.status_code)
    coding = response.headers.get("content-encoding", "identity").strip().lower()
    if coding != "identity" and coding not in _WBITS:
        raise httpx2.DecodingError(f"unsupported Content-Encoding {coding[:40]!r}")
    assert isinstance(response.stream, httpx2.AsyncByteStream)
    response.stream = _LimitedBody(
        response.stream, max_bytes, status=response.status_code, wbits=_WBITS.get(coding)
    )
    # Decoded here, within the limit: httpx2 must not decode it a second time.
    response.headers.pop("content-encoding", None)


def _declared_over(length: str, max_bytes: int) -> bool:
    """Whether a Content-Length announces more than `max_bytes` (no need to read them first)."""
    if not (length.isascii() and length.isdigit()):
        return False
    # A long digit string is over any limit (and `int` refuses strings past 4,300 digits).
    return len(length) > 18 or int(length) > max_bytes


class _LimitedBody(httpx2.AsyncByteStream):
    """A response body that raises `ResponseTooLarge` once more than `limit` bytes came out.

    Args:
        raw: The body as it arrives.
        limit: The most bytes it may yield.
        status: The response's HTTP status, for the error.
        wbits: zlib's window bits to inflate the body with, or None if it is not compressed.
    """

    def __init__(
        self, raw: httpx2.AsyncByteStream, limit: int, *, status: int, wbits: int | None
    ) -> None:
        self._raw = raw
        self._limit = limit
        self._status = status
        self._seen = 0
        self._inflater = None if wbits is None else zlib.decompressobj(wbits)

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self._raw:
            for piece in self._decoded(chunk):
                yield self._counted(piece)
        if self._inflater is not None:
            # What zlib still holds once the input is spent: a few bytes of a last match.
            yield self._counted(self._inflater.flush())

    async def aclose(self) -> None:
        """Close the underlying body."""
        await self._raw.aclose()

    def _counted(self, piece: bytes) -> bytes:
        self._seen += len(piece)
        if self._seen > self._limit:
            raise ResponseTooLarge(self._limit, self._status)
        return piece

    def _decoded(self, chunk: bytes) -> Iterator[bytes]:
        """`chunk` decoded, lazily: each piece is counted before the next is inflated."""
        if self._inflater is None:
            yield chunk
            return
        while chunk:
            try:
                # At most one byte past what is left, so an inflating body never sits in memory.
                piece = self._inflater.decompress(chunk, self._limit - self._seen + 1)
            except zlib.error as exc:
                raise httpx2.DecodingError(f"cannot decompress the body: {exc}") from None
            yield piece
            chunk = self._inflater.unconsumed_tail


_LOCAL_HOSTS = frozenset({"127.0.0.1", "localhost", "::1", "[::1]"})
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


def check_allowed(url: str) -> None:
    """Refuse a request to `url` while `block_model_requests` blocks its host.

    Raises:
        ModelRequestError: The host is blocked.
    """
    if not _blocked:
        return
    host = urlsplit(url).hostname or ""
    if host not in _blocked[-1]:
        raise ModelRequestError(f"model requests to {host!r} are blocked (block_model_requests)")


def body_of(response: httpx2.Response) -> bytes:
    """A response's body, as read (b"" if it was closed unread)."""
    try:
        return response.content
    except httpx2.ResponseNotRead:
        return b""
