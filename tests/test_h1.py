"""paor's own HTTP/1.1 connections (`agents._h1`) against raw servers on 127.0.0.1: framing,
keep-alive, stale and broken connections, bounds, TLS, and when httpx2 carries the request."""

from __future__ import annotations

import json
import ssl
import subprocess
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager, suppress
from pathlib import Path

import anyio
import anyio.abc
import httpx2
import pytest
from anyio.streams.buffered import BufferedByteReceiveStream
from anyio.streams.tls import TLSStream

import agents._h1
from agents import OpenAIChatModel
from agents._h1 import H1_FAILURES, H1Pool, ProtocolError
from agents._http import ResponseTooLarge
from agents.errors import ModelRetryableError
from agents.models import ModelRequest
from agents.testing import LoopbackServer
from memory import UserMessage

pytestmark = pytest.mark.anyio

COMPLETION = json.dumps(
    {
        "id": "c1",
        "object": "chat.completion",
        "created": 0,
        "model": "m",
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": "hi"}, "finish_reason": "stop"}
        ],
        "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4},
    }
).encode()
CLOSE = b""  # in a connection's script: close it without a word


@pytest.fixture(autouse=True)
def no_proxy_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """The tests start with no proxy set, whatever the machine's environment says."""
    for name in ("http_proxy", "https_proxy", "all_proxy", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.upper(), raising=False)


def framed(body: bytes = b"{}", *headers: str, code: int = 200) -> bytes:
    """A reply with a Content-Length."""
    lines = [f"HTTP/1.1 {code} X", *headers, f"Content-Length: {len(body)}"]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


def chunked(*parts: bytes, trailer: str = "") -> bytes:
    """A chunked reply of `parts`, the sizes written with an extension, and an optional trailer."""
    out = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
    out += b"".join(b"%x;ext=1\r\n%s\r\n" % (len(p), p) for p in parts)
    return out + b"0\r\n" + (f"{trailer}\r\n" if trailer else "").encode() + b"\r\n"


class ScriptServer(LoopbackServer):
    """Answers each connection's requests with its script's replies in order; a reply of
    `CLOSE` closes the connection unanswered, and the script's end closes it after the last.

    Args:
        scripts: One list of replies per connection, in the order connections arrive.
        tls: Serve TLS with this context.
        hold: Keep each connection open after its script, until the server stops.
    """

    def __init__(
        self,
        scripts: Sequence[Sequence[bytes]],
        *,
        tls: ssl.SSLContext | None = None,
        hold: bool = False,
    ) -> None:
        super().__init__()
        self.scripts = list(scripts)
        self.tls = tls
        self.hold = hold
        self.connections = 0
        self.requests: list[bytes] = []

    async def _serve(self, stream: anyio.abc.SocketStream) -> None:
        script = self.scripts[self.connections]
        self.connections += 1
        async with stream:
            served: anyio.abc.ByteStream = stream
            if self.tls is not None:
                try:
                    served = await TLSStream.wrap(
                        stream, server_side=True, ssl_context=self.tls, standard_compatible=False
                    )
                except (ssl.SSLError, OSError, anyio.BrokenResourceError, anyio.EndOfStream):
                    return  # a client that does not trust the certificate
            reader = BufferedByteReceiveStream(served)
            with suppress(anyio.BrokenResourceError, anyio.EndOfStream, anyio.IncompleteRead):
                for reply in script:
                    head = await reader.receive_until(b"\r\n\r\n", 65536)
                    length = int(head.lower().split(b"content-length: ")[1].split(b"\r\n")[0])
                    self.requests.append(head + b"\r\n\r\n" + await reader.receive_exactly(length))
                    if reply is CLOSE:
                        return
                    await served.send(reply)
                if self.hold:
                    await anyio.sleep_forever()


@asynccontextmanager
async def pool(
    server: LoopbackServer, *, max_bytes: int = 1 << 20, seen: Callable[..., None] | None = None
) -> AsyncIterator[H1Pool]:
    """A pool posting to `server`'s chat completions, closed on exit."""
    url = httpx2.URL(server.base_url + "/chat/completions")
    found = H1Pool.for_endpoint(
        url, {"Authorization": "Bearer t"}, max_bytes=max_bytes, on_headers=seen
    )
    assert found is not None
    try:
        yield found
    finally:
        await found.aclose()


async def test_a_kept_alive_connection_carries_the_next_request() -> None:
    """Two requests in a row share one connection, each sent whole with its length."""
    replies = [framed(b'{"a":1}'), framed(b'{"a":2}')]
    async with ScriptServer([replies]) as server, pool(server) as h1:
        first, second = await h1.post(b'{"q":1}'), await h1.post(b'{"q":22}')
    assert (first.status, first.body, second.body) == (200, b'{"a":1}', b'{"a":2}')
    assert server.connections == 1
    assert server.requests[1].startswith(b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1:")
    assert server.requests[1].endswith(b"Content-Length: 8\r\n\r\n" + b'{"q":22}')
    assert b"Authorization: Bearer t\r\n" in server.requests[0]


async def test_a_chunked_reply_is_read_whole_with_its_extensions_and_trailers() -> None:
    """Chunk extensions are ignored, trailers read past, and the connection reused after."""
    replies = [chunked(b'{"a":', b"1}", trailer="X-T: 1"), chunked(b"{}")]
    async with ScriptServer([replies]) as server, pool(server) as h1:
        assert (await h1.post(b"{}")).body == b'{"a":1}'
        assert (await h1.post(b"{}")).body == b"{}"
    assert server.connections == 1


async def test_a_reply_that_closes_is_not_reused() -> None:
    """`Connection: close`, HTTP/1.0 and a body ended by closing each leave the connection."""
    until_closed = b"HTTP/1.1 200 OK\r\n\r\n{}"
    replies = [framed(b"{}", "Connection: close"), framed(b"{}").replace(b"1.1", b"1.0", 1)]
    scripts = [[r] for r in (*replies, until_closed)]
    async with ScriptServer(scripts) as server, pool(server) as h1:
        bodies = [(await h1.post(b"{}")).body for _ in range(3)]
    assert bodies == [b"{}"] * 3
    assert server.connections == 3


async def test_a_connection_the_server_closed_while_idle_is_replaced_silently() -> None:
    """A kept-alive connection found closed before any reply: the request goes again, once, on
    a new connection, and is answered."""
    async with ScriptServer([[framed(b"1")], [framed(b"2")]]) as server, pool(server) as h1:
        await h1.post(b"{}")
        assert (await h1.post(b"{}")).body == b"2"
    assert server.connections == 2


async def test_a_connection_idle_past_its_keep_alive_is_not_used(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Past the keep-alive expiry a connection is closed, not tried."""
    monkeypatch.setattr(agents._h1, "IDLE_S", 0.0)
    async with ScriptServer([[framed(), framed()], [framed()]]) as server, pool(server) as h1:
        await h1.post(b"{}")
        await h1.post(b"{}")
    assert server.connections == 2
    assert len(server.requests) == 2


@pytest.mark.parametrize(
    ("reply", "error"),
    [
        (b"SPDY/3 200 OK\r\n\r\n", ProtocolError),
        (b"HTTP/1.1 2x0 OK\r\n\r\n", ProtocolError),
        (b"HTTP/1.1 200 OK\r\nno colon here\r\n\r\n", ProtocolError),
        (b"HTTP/1.1 200 OK\r\n folded: x\r\n\r\n", ProtocolError),
        (b"HTTP/1.1 200 OK\r\nContent-Length: 5, 6\r\n\r\n12345", ProtocolError),
        (b"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", ProtocolError),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n", ProtocolError),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", ProtocolError),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabcd", ProtocolError),
        (b"HTTP/1.1 200 OK\r\nContent-Encoding: br\r\nContent-Length: 2\r\n\r\n{}", ProtocolError),
        (
            b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: 2\r\n\r\n{}",
            ProtocolError,
        ),
        (b"HTTP/1.1 101 Switching\r\n\r\n", ProtocolError),
        (b"HTTP/1.1 100 Continue\r\n\r\n" * 9, ProtocolError),
        (b"HTTP/1.1 200 OK\r\nX: " + b"y" * 70000, anyio.DelimiterNotFound),
        (b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n{}", anyio.IncompleteRead),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab", anyio.IncompleteRead),
        (b"HTTP/1.1 20", anyio.IncompleteRead),
    ],
)
async def test_a_broken_reply_raises_a_failure_and_the_connection_is_dropped(
    reply: bytes, error: type[Exception]
) -> None:
    """Each way a reply can be broken raises its own error, one of `H1_FAILURES`; the next
    request opens a new connection."""
    assert issubclass(error, H1_FAILURES)
    async with ScriptServer([[reply], [framed()]]) as server, pool(server) as h1:
        with pytest.raises(error):
            await h1.post(b"{}")
        assert (await h1.post(b"{}")).status == 200
    assert server.connections == 2


async def test_a_reply_over_the_limit_is_refused_before_it_is_read() -> None:
    """A Content-Length over the limit fails at once; a chunked or closing body once past it."""
    big = b"x" * 2000
    replies = [
        b"HTTP/1.1 200 OK\r\nContent-Length: 10000000000\r\n\r\n{}",
        chunked(big, big),
        b"HTTP/1.1 200 OK\r\n\r\n" + big * 2,
    ]
    scripts = [[r] for r in replies]
    async with ScriptServer(scripts) as server, pool(server, max_bytes=3000) as h1:
        for _ in replies:
            with pytest.raises(ResponseTooLarge, match="over 3000 bytes"):
                await h1.post(b"{}")


async def test_informational_replies_are_skipped_and_headers_seen_before_the_body() -> None:
    """Up to eight 100 Continues are passed over; the hook sees the real reply's status and
    headers, with repeated names joined."""
    seen: list[tuple[dict[str, str], int]] = []
    reply = b"HTTP/1.1 100 Continue\r\n\r\n" * 8 + framed(
        b"{}", "X-RateLimit-Limit-Requests: 9", "Via: a", "via: b", code=429
    )
    async with (
        ScriptServer([[reply]]) as server,
        pool(server, seen=lambda headers, status: seen.append((dict(headers), status))) as h1,
    ):
        found = await h1.post(b"{}")
    assert found.status == 429
    assert seen == [
        ({"x-ratelimit-limit-requests": "9", "via": "a, b", "content-length": "2"}, 429)
    ]


async def test_a_request_cancelled_mid_reply_closes_its_connection() -> None:
    """A cancelled request's connection is never reused: its reply may still be on the way."""
    slow = b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n{}"
    async with ScriptServer([[slow], [framed(b"ok")]], hold=True) as server, pool(server) as h1:
        with anyio.move_on_after(0.5) as scope:
            await h1.post(b"{}")
        assert scope.cancelled_caught
        assert (await h1.post(b"{}")).body == b"ok"
    assert server.connections == 2


def test_a_proxy_in_the_environment_or_an_unsendable_header_leaves_it_to_httpx2(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With a proxy set, or a header holding a line break or non-ASCII text, no pool is made."""
    url = httpx2.URL("http://127.0.0.1:1/v1/chat/completions")
    assert H1Pool.for_endpoint(url, {"A": "b"}, max_bytes=1) is not None
    assert H1Pool.for_endpoint(url, {"A": "b\r\nX-Injected: 1"}, max_bytes=1) is None
    assert H1Pool.for_endpoint(url, {"A": "é"}, max_bytes=1) is None
    monkeypatch.setenv("HTTPS_PROXY", "http://127.0.0.1:3")
    assert H1Pool.for_endpoint(url, {"A": "b"}, max_bytes=1) is None


async def test_behind_a_proxy_setting_httpx2_carries_the_completion(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With HTTP_PROXY set and the host in NO_PROXY, the model still answers, through httpx2."""
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    async with ScriptServer([[framed(COMPLETION, "Content-Type: application/json")]]) as server:
        model = OpenAIChatModel("m", base_url=server.base_url, api_key="t", max_retries=0)
        try:
            answer = await model.complete(ModelRequest(messages=(UserMessage(content="hi"),)))
        finally:
            await model.aclose()
    assert answer.message.content == "hi"
    assert b"connection: keep-alive" in server.requests[0].lower()  # httpx2's header, not paor's


@pytest.mark.parametrize(("retries", "answered"), [(1, True), (0, False)])
async def test_a_connection_cut_mid_reply_is_a_retryable_model_error(
    retries: int, answered: bool
) -> None:
    """Through `OpenAIChatModel`, a reply cut short is a retryable failure on one line: retried,
    the retry is answered; with no retry left, it is raised."""
    cut = b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{"
    ok = framed(COMPLETION, "Content-Type: application/json")
    asked = ModelRequest(messages=(UserMessage(content="hi"),))
    async with ScriptServer([[cut], [ok]]) as server:
        model = OpenAIChatModel("m", base_url=server.base_url, api_key="t", max_retries=retries)
        try:
            if answered:
                assert (await model.complete(asked)).message.content == "hi"
            else:
                with pytest.raises(
                    ModelRetryableError, match=r"connection failed to .*IncompleteRead"
                ):
                    await model.complete(asked)
        finally:
            await model.aclose()
    assert server.connections == 1 + retries


@pytest.fixture
def certificate(tmp_path: Path) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 and its key, made by the openssl command."""
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    made = subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
         "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
         "-keyout", str(key), "-out", str(cert)],
        capture_output=True, check=False,
    )  # fmt: skip
    if made.returncode:
        pytest.skip(f"openssl could not make a certificate: {made.stderr[-200:]!r}")
    return cert, key


async def test_https_is_spoken_with_the_trust_store_httpx2_would_use(
    certificate: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Over TLS a completion is answered when SSL_CERT_FILE trusts the server, as httpx2 would
    trust it; a server nothing trusts is a connection failure."""
    cert, key = certificate
    tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    tls.load_cert_chain(cert, key)
    ok = framed(COMPLETION, "Content-Type: application/json")
    async with ScriptServer([[], [ok, ok]], tls=tls) as server:
        url = server.base_url.replace("http://", "https://")
        asked = ModelRequest(messages=(UserMessage(content="hi"),))
        untrusted = OpenAIChatModel("m", base_url=url, api_key="t", max_retries=0)
        try:
            with pytest.raises(ModelRetryableError, match="connection failed"):
                await untrusted.complete(asked)
        finally:
            await untrusted.aclose()
        monkeypatch.setenv("SSL_CERT_FILE", str(cert))
        model = OpenAIChatModel("m", base_url=url, api_key="t", max_retries=0)
        try:
            answers = [await model.complete(asked) for _ in range(2)]
        finally:
            await model.aclose()
    assert [a.message.content for a in answers] == ["hi", "hi"]
    assert server.connections == 2  # the refused handshake, then one kept-alive connection
