"""Completions POSTed through the SDK's own httpx2 client (`agents.models._wire`), against raw servers on
127.0.0.1: kept-alive and stale connections, broken replies as one-line retryable errors, reply
bounds, headers seen before the body, proxies from the environment, and TLS."""

from __future__ import annotations

import json
import ssl
import subprocess
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager, suppress
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import pytest
from anyio.streams.buffered import BufferedByteReceiveStream
from anyio.streams.tls import TLSStream

from agents import OpenAIChatModel
from agents.errors import ModelRequestError, ModelRetryableError
from agents.models import Admission, ModelRequest, RetryingModel
from agents.testing._loopback import LoopbackServer
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
ASK = ModelRequest(messages=(UserMessage(content="hi"),))


@pytest.fixture(autouse=True)
def no_proxy_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """The tests start with no proxy set, whatever the machine's environment says."""
    for name in ("http_proxy", "https_proxy", "all_proxy", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.upper(), raising=False)


def framed(body: bytes = COMPLETION, *headers: str, code: int = 200) -> bytes:
    """A JSON reply with a Content-Length."""
    lines = [f"HTTP/1.1 {code} X", "Content-Type: application/json", *headers]
    lines.append(f"Content-Length: {len(body)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


def chunked(*parts: bytes) -> bytes:
    """A chunked JSON reply of `parts`."""
    out = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
    return out + b"".join(b"%x\r\n%s\r\n" % (len(p), p) for p in parts) + b"0\r\n\r\n"


class ScriptServer(LoopbackServer):
    """Answers each connection's requests with its script's replies in order, then closes it
    (or, with `hold`, keeps it open until the server stops).

    Args:
        scripts: One list of replies per connection, in the order connections arrive.
        tls: Serve TLS with this context.
        hold: Keep each connection open after its script.
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
        self.closed = anyio.Event()

    async def _serve(self, stream: anyio.abc.SocketStream) -> None:
        script = self.scripts[self.connections]
        self.connections += 1
        try:
            async with stream:
                await self._answer(stream, script)
        finally:
            self.closed.set()

    async def _answer(self, stream: anyio.abc.SocketStream, script: Sequence[bytes]) -> None:
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
                await served.send(reply)
            if self.hold:
                await anyio.sleep_forever()


@asynccontextmanager
async def chat_model(url: str, **options: Any) -> AsyncIterator[OpenAIChatModel]:
    """An `OpenAIChatModel` at `url` (each request sent once), closed on exit."""
    model = OpenAIChatModel("m", base_url=url, api_key="t", **options)
    try:
        yield model
    finally:
        await model.aclose()


async def test_a_kept_alive_connection_carries_the_next_request() -> None:
    """Two completions in a row share one connection, each POSTed whole with the SDK's headers."""
    async with ScriptServer([[framed(), framed()]]) as server, chat_model(server.base_url) as model:
        answers = [(await model.complete(ASK)).message.content for _ in range(2)]
    assert answers == ["hi", "hi"]
    assert server.connections == 1
    head, _, body = server.requests[1].partition(b"\r\n\r\n")
    assert head.startswith(b"POST /v1/chat/completions HTTP/1.1\r\n")
    assert b"\r\nauthorization: bearer t\r\n" in head.lower()
    assert json.loads(body)["messages"] == [{"role": "user", "content": "hi"}]


async def test_a_connection_the_server_closed_while_idle_is_not_reused() -> None:
    """A kept-alive connection the server closed between requests: the next request goes on a
    new connection and is answered, with no retry of paor's."""
    async with ScriptServer([[framed()], [framed()]]) as server, chat_model(server.base_url) as m:
        await m.complete(ASK)
        await server.closed.wait()
        assert (await m.complete(ASK)).message.content == "hi"
    assert server.connections == 2


@pytest.mark.parametrize(
    "reply",
    [
        b"SPDY/3 200 OK\r\n\r\n",
        b"HTTP/1.1 2x0 OK\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nno colon here\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nContent-Length: 5, 6\r\n\r\n12345",
        b"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabcd",
        b"HTTP/1.1 200 OK\r\nContent-Encoding: br\r\nContent-Length: 2\r\n\r\n{}",
        b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: 2\r\n\r\n{}",
        b"HTTP/1.1 100 Continue\r\n\r\n" * 9,
        b"HTTP/1.1 200 OK\r\nX: " + b"y" * 70000,
        b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n{}",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab",
        b"HTTP/1.1 20",
        b"",
    ],
)
async def test_a_broken_reply_is_a_one_line_retryable_error_and_its_connection_dropped(
    reply: bytes,
) -> None:
    """Each way a reply can be broken is a retryable connection failure on one line; the next
    request opens a new connection and is answered."""
    async with (
        ScriptServer([[reply], [framed()]]) as server,
        chat_model(server.base_url) as model,
    ):
        with pytest.raises(ModelRetryableError, match=r"^connection failed to ") as caught:
            await model.complete(ASK)
        assert (await model.complete(ASK)).message.content == "hi"
    assert "\n" not in str(caught.value)
    assert server.connections == 2


@pytest.mark.parametrize("retries", [1, 0])
async def test_a_reply_cut_short_is_retried_by_the_model(retries: int) -> None:
    """A reply cut short is retried once a retry is allowed, and the retry answered."""
    cut = b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{"
    async with (
        ScriptServer([[cut], [framed()]]) as server,
        chat_model(server.base_url) as model,
    ):
        retried = RetryingModel(model, max_retries=retries, backoff=0.01)
        if retries:
            assert (await retried.complete(ASK)).message.content == "hi"
        else:
            with pytest.raises(ModelRetryableError, match=r"connection failed to .*Protocol"):
                await retried.complete(ASK)
    assert server.connections == 1 + retries


@pytest.mark.parametrize(
    "reply",
    [
        b"HTTP/1.1 200 OK\r\nContent-Length: 10000000000\r\n\r\n{}",
        chunked(b" " * 2000, b" " * 2000),
        b"HTTP/1.1 200 OK\r\n\r\n" + b" " * 4000,
    ],
)
async def test_a_reply_over_the_limit_is_refused_unretried(reply: bytes) -> None:
    """A Content-Length over max_response_bytes fails before the body is read (the server holds
    the connection open); a chunked or closing body, once past it: one ModelRequestError."""
    async with (
        ScriptServer([[reply]], hold=True) as server,
        chat_model(server.base_url, max_response_bytes=3000) as model,
    ):
        with pytest.raises(ModelRequestError, match=r"over 3000 bytes \(max_response_bytes\)$"):
            await RetryingModel(model, max_retries=2).complete(ASK)
    assert server.connections == 1


class Seen(Admission):
    """An admission that records each reply's headers and status as it is shown them."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[tuple[dict[str, str], int]] = []

    def observe(self, headers: Mapping[str, str], status: int) -> None:
        """Record, then learn as any admission does."""
        self.seen.append((dict(headers), status))
        super().observe(headers, status)


async def test_the_admission_sees_each_replys_headers_before_its_body() -> None:
    """A reply whose body is never read whole (over the limit) was still shown to the admission,
    its status and headers as they came."""
    over = b"HTTP/1.1 200 OK\r\nX-RateLimit-Limit-Requests: 9\r\nContent-Length: 99999\r\n\r\n"
    admission = Seen()
    async with (
        ScriptServer([[over]], hold=True) as server,
        chat_model(server.base_url, max_response_bytes=3000, rate_limits=admission) as model,
    ):
        with pytest.raises(ModelRequestError, match="max_response_bytes"):
            await model.complete(ASK)
    ((headers, status),) = admission.seen
    assert (status, headers["x-ratelimit-limit-requests"]) == (200, "9")


async def test_a_request_cut_by_its_deadline_does_not_reuse_the_connection() -> None:
    """A reply still on the way when the attempt's deadline passes leaves its connection: the
    next request opens a new one and is answered."""
    slow = b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n{}"
    async with (
        ScriptServer([[slow], [framed()]], hold=True) as server,
        chat_model(server.base_url, timeout=0.5) as model,
    ):
        with pytest.raises(ModelRetryableError, match="no reply within"):
            await model.complete(ASK)
        assert (await model.complete(ASK)).message.content == "hi"
    assert server.connections == 2


async def test_a_proxy_from_the_environment_carries_the_completion(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With HTTP_PROXY set, the request goes to the proxy in absolute form; with the host in
    NO_PROXY as well, it goes straight to the endpoint."""
    async with ScriptServer([[framed()], [framed()]]) as proxy:
        monkeypatch.setenv("HTTP_PROXY", proxy.base_url.removesuffix("/v1"))
        async with chat_model("http://127.0.0.1:9/v1") as model:
            assert (await model.complete(ASK)).message.content == "hi"
        assert proxy.requests[0].startswith(b"POST http://127.0.0.1:9/v1/chat/completions ")
        monkeypatch.setenv("NO_PROXY", "127.0.0.1")
        async with chat_model(proxy.base_url) as model:
            assert (await model.complete(ASK)).message.content == "hi"
        assert proxy.requests[1].startswith(b"POST /v1/chat/completions ")


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


async def test_https_trusts_what_ssl_cert_file_names(
    certificate: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Over TLS a completion is answered when SSL_CERT_FILE trusts the server; a server nothing
    trusts is a connection failure."""
    cert, key = certificate
    tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    tls.load_cert_chain(cert, key)
    async with ScriptServer([[], [framed(), framed()]], tls=tls) as server:
        url = server.base_url.replace("http://", "https://")
        async with chat_model(url) as untrusted:
            with pytest.raises(ModelRetryableError, match="connection failed"):
                await untrusted.complete(ASK)
        monkeypatch.setenv("SSL_CERT_FILE", str(cert))
        async with chat_model(url) as model:
            answers = [(await model.complete(ASK)).message.content for _ in range(2)]
    assert answers == ["hi", "hi"]
    assert server.connections == 2  # the refused handshake, then one kept-alive connection
