"""`OpenAIChatModel` over real HTTP: the real `openai` client against `FakeOpenAIServer`."""

from __future__ import annotations

import gzip
import json
import math
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager, suppress
from typing import Any

import anyio
import anyio.abc
import openai
import pytest
from anyio.streams.buffered import BufferedByteReceiveStream
from structlog.testing import capture_logs

import agents._streaming
import agents.models._wrappers
from agents import ConfigurationError, Executor, OpenAIChatModel, Usage, tool
from agents.errors import (
    MalformedResponse,
    ModelError,
    ModelRequestError,
    ModelRetryableError,
)
from agents.models import ModelRequest, OutputSchema, RetryingModel, ToolSpec
from agents.models._completion import OUTPUT_TOKENS
from agents.testing import (
    FakeOpenAIServer,
    ScriptedModel,
    ServerAction,
    TokenUsage,
    block_model_requests,
    call,
    observation,
    reply,
)
from agents.testing._actions import MalformedBody, Status
from agents.testing._loopback import LoopbackServer
from memory import AssistantMessage, SystemMessage, ToolCall, ToolMessage, UserMessage

pytestmark = pytest.mark.anyio

LOOKUP = ToolSpec(
    name="lookup",
    description="Look up the weather in a city.",
    parameters={"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)
ASK = ModelRequest(
    messages=(SystemMessage(content="Be brief."), UserMessage(content="Weather in Paris?")),
    tools=(LOOKUP,),
)


class SleepSpy:
    """Stands in for `anyio` in `agents.models._wrappers`: records each retry delay, skips the wait."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(anyio, name)

    async def sleep(self, delay: float) -> None:
        """Record the delay the retry loop asked for."""
        self.delays.append(delay)
        await anyio.lowlevel.checkpoint()


@pytest.fixture
def sleeps(monkeypatch: pytest.MonkeyPatch) -> SleepSpy:
    """Record the retry delays `RetryingModel` waits, without waiting for them."""
    spy = SleepSpy()
    monkeypatch.setattr(agents.models._wrappers, "anyio", spy)
    return spy


MiB = 1024 * 1024
# What an "endless" body sends at most: far past any limit under test, small enough that the
# test ends (and fails plainly) if the client never stops reading.
ENDLESS_BYTES = 128 * MiB
Reply = Callable[["RawServer", anyio.abc.SocketStream], Awaitable[None]]


class RawServer(LoopbackServer):
    """An HTTP server on 127.0.0.1 that answers every request with `reply`, counting bytes sent.

    `sent` is an upper bound on what the client read: bytes handed to the socket, in flight or not.
    """

    def __init__(self, reply: Reply) -> None:
        self._reply = reply
        self.sent = 0
        self.requests = 0
        super().__init__()

    async def send(self, stream: anyio.abc.SocketStream, data: bytes) -> None:
        """Send `data` to the client, counting it."""
        self.sent += len(data)
        await stream.send(data)

    async def _serve(self, stream: anyio.abc.SocketStream) -> None:
        reader = BufferedByteReceiveStream(stream)
        async with stream:
            with suppress(anyio.BrokenResourceError, anyio.EndOfStream, anyio.IncompleteRead):
                head = (await reader.receive_until(b"\r\n\r\n", 65536)).decode("latin-1")
                length = next(
                    (
                        int(v)
                        for k, _, v in (h.partition(":") for h in head.split("\r\n"))
                        if k.lower() == "content-length"
                    ),
                    0,
                )
                await reader.receive_exactly(length)
                self.requests += 1
                await self._reply(self, stream)


def head(code: int, *headers: str) -> bytes:
    """A response head that closes the connection after the body."""
    lines = [f"HTTP/1.1 {code} X", "Content-Type: application/json", "Connection: close", *headers]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def endless(framing: str, code: int = 200) -> Reply:
    """A reply that streams JSON whitespace, fast, as long as the client reads (to ENDLESS_BYTES)."""
    headers = {"chunked": ("Transfer-Encoding: chunked",), "length": (f"Content-Length: {10**12}",)}
    chunk = b" " * 65536
    framed = b"%x\r\n%s\r\n" % (len(chunk), chunk) if framing == "chunked" else chunk

    async def reply(server: RawServer, stream: anyio.abc.SocketStream) -> None:
        await server.send(stream, head(code, *headers.get(framing, ())))
        while server.sent < ENDLESS_BYTES:
            await server.send(stream, framed)

    return reply


async def drip(server: RawServer, stream: anyio.abc.SocketStream) -> None:
    """A reply whose body arrives one byte at a time, slowly, forever."""
    await server.send(stream, head(200, "Transfer-Encoding: chunked"))
    while True:
        await server.send(stream, b"1\r\n \r\n")
        await anyio.sleep(0.05)


def gzipped(body: bytes) -> Reply:
    """A reply whose body is gzip-compressed (whatever the client asked for)."""
    packed = gzip.compress(body)

    async def reply(server: RawServer, stream: anyio.abc.SocketStream) -> None:
        headers = ("Content-Encoding: gzip", f"Content-Length: {len(packed)}")
        await server.send(stream, head(200, *headers) + packed)

    return reply


@asynccontextmanager
async def chat_model(
    server: FakeOpenAIServer | RawServer, **options: Any
) -> AsyncIterator[OpenAIChatModel]:
    """An `OpenAIChatModel` pointed at `server` (each request sent once), closed on exit."""
    model = OpenAIChatModel("fake-model", base_url=server.base_url, api_key="test", **options)
    try:
        yield model
    finally:
        await model.aclose()


@asynccontextmanager
async def retrying(
    server: FakeOpenAIServer | RawServer,
    *,
    max_retries: int = 3,
    backoff: float = 0.01,
    max_backoff: float = 30.0,
    **options: Any,
) -> AsyncIterator[RetryingModel]:
    """`chat_model(server, **options)` retried by `RetryingModel` (3 retries by default, as
    `stack` and `open_model` give)."""
    async with chat_model(server, **options) as model:
        yield RetryingModel(
            model, max_retries=max_retries, backoff=backoff, max_backoff=max_backoff
        )


def answered(request: ModelRequest, reply: AssistantMessage, *results: str) -> ModelRequest:
    """The next turn's request: the reply appended, each of its calls answered in order."""
    tools = tuple(
        ToolMessage(tool_call_id=c.id, name=c.name, content=r)
        for c, r in zip(reply.tool_calls, results, strict=True)
    )
    return request.model_copy(update={"messages": (*request.messages, reply, *tools)})


async def test_native_tool_call_sends_tools_and_returns_the_result_next_turn() -> None:
    """A native tool call parses; the next turn carries the assistant call and its result."""
    script = [
        ServerAction.tool_calls([("lookup", {"city": "Paris"})]),
        ServerAction.text("Sunny in Paris."),
    ]
    async with FakeOpenAIServer(script) as server, chat_model(server, protocol="tools") as model:
        first = await model.complete(ASK)
        second = await model.complete(answered(ASK, first.message, "sunny, 21C"))
    server.assert_complete()
    (call,) = first.message.tool_calls
    assert (call.name, json.loads(call.arguments)) == ("lookup", {"city": "Paris"})
    assert server.requests[0]["tools"] == [{"type": "function", "function": LOOKUP.model_dump()}]
    *_, assistant, result = server.requests[1]["messages"]
    assert assistant["tool_calls"][0]["id"] == call.id
    assert assistant["tool_calls"][0]["function"] == {"name": "lookup", "arguments": call.arguments}
    assert result == {"role": "tool", "tool_call_id": call.id, "content": "sunny, 21C"}
    assert second.message.content == "Sunny in Paris."


async def test_several_tool_calls_in_one_turn_keep_their_order() -> None:
    """Every call of a multi-call turn comes back, in order, with distinct ids."""
    calls = [("lookup", {"city": city}) for city in ("Paris", "Oslo", "Rome")]
    async with (
        FakeOpenAIServer([ServerAction.tool_calls(calls)]) as server,
        chat_model(server) as model,
    ):
        response = await model.complete(ASK)
    server.assert_complete()
    got = [(c.name, json.loads(c.arguments)) for c in response.message.tool_calls]
    assert got == calls
    assert len({c.id for c in response.message.tool_calls}) == 3


async def test_json_decisions_send_the_schema_and_become_tool_calls() -> None:
    """protocol="json" sends a json_schema decision format and parses calls, then an answer."""
    decision = {"kind": "tool_calls", "calls": [{"tool": "lookup", "arguments": {"city": "Oslo"}}]}
    script = [
        ServerAction.json_content(decision),
        ServerAction.json_content({"kind": "final", "answer": "Snow in Oslo."}),
    ]
    async with FakeOpenAIServer(script) as server, chat_model(server, protocol="json") as model:
        first = await model.complete(ASK)
        second = await model.complete(answered(ASK, first.message, "snow, -3C"))
    server.assert_complete()
    sent = server.requests[0]
    assert "tools" not in sent
    assert sent["response_format"]["type"] == "json_schema"
    assert sent["response_format"]["json_schema"]["name"] == "decision"
    assert "lookup" in sent["messages"][0]["content"]
    (call,) = first.message.tool_calls
    assert (call.name, json.loads(call.arguments)) == ("lookup", {"city": "Oslo"})
    result = {"role": "user", "content": "Result of lookup:\nsnow, -3C"}
    assert server.requests[1]["messages"][-1] == result
    assert second.message == AssistantMessage(content="Snow in Oslo.")


@pytest.mark.parametrize("content", ["not json at all", '{"kind": "tool_calls", "calls": []}'])
async def test_malformed_json_decision_raises_malformed_response(content: str) -> None:
    """A reply that is not JSON, or not a valid decision, raises MalformedResponse unretried."""
    async with (
        FakeOpenAIServer([ServerAction.text(content)]) as server,
        chat_model(server, protocol="json") as model,
    ):
        with pytest.raises(MalformedResponse) as caught:
            await model.complete(ASK)
    assert caught.value.raw == content
    assert len(server.requests) == 1


@pytest.mark.parametrize("protocol", ["tools", "json"])
async def test_structured_output_sends_its_schema_and_returns_the_json(protocol: str) -> None:
    """ModelRequest.output is sent as the response_format; the JSON answer comes back verbatim."""
    schema = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
    request = ModelRequest(messages=ASK.messages, output=OutputSchema(name="place", schema_=schema))
    async with (
        FakeOpenAIServer([ServerAction.json_content({"city": "Paris"})]) as server,
        chat_model(server, protocol=protocol) as model,
    ):
        response = await model.complete(request)
    sent = server.requests[0]["response_format"]
    assert sent == {
        "type": "json_schema",
        "json_schema": {"name": "place", "schema": schema, "strict": False},
    }
    assert json.loads(response.message.content or "") == {"city": "Paris"}
    assert not response.message.tool_calls


@pytest.mark.parametrize(
    ("headers", "expected"), [({"Retry-After": "0.2"}, 0.2), ({"retry-after-ms": "150"}, 0.15)]
)
async def test_rate_limit_waits_as_long_as_retry_after_says(
    sleeps: SleepSpy, headers: dict[str, str], expected: float
) -> None:
    """A 429 is retried after the server's Retry-After delay, not the (much longer) backoff."""
    script = [ServerAction.status(429, headers=headers), ServerAction.text("ok")]
    async with FakeOpenAIServer(script) as server, retrying(server, backoff=5.0) as model:
        response = await model.complete(ASK)
    server.assert_complete()
    assert response.message.content == "ok"
    assert len(server.requests) == 2
    assert sleeps.delays == [pytest.approx(expected)]


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({"Retry-After": "nan"}, None),
        ({"Retry-After-Ms": "nan"}, None),
        ({"Retry-After-Ms": "nan", "Retry-After": "0.2"}, 0.2),
        ({"Retry-After": "-5"}, None),
        ({"Retry-After-Ms": "-1"}, None),
        ({"Retry-After": "inf"}, 2.0),
        ({"Retry-After": "1e400"}, 2.0),
        ({"Retry-After": "99999999"}, 2.0),
        ({"Retry-After-Ms": "1e300"}, 2.0),
    ],
)
async def test_unusable_retry_after_values_fall_back_or_are_clamped(
    sleeps: SleepSpy, headers: dict[str, str], expected: float | None
) -> None:
    """A NaN or negative Retry-After is ignored (jittered backoff instead); an infinite or absurd
    one waits max_backoff."""
    script = [ServerAction.status(429, headers=headers), ServerAction.text("ok")]
    async with (
        FakeOpenAIServer(script) as server,
        retrying(server, backoff=0.5, max_backoff=2.0) as model,
    ):
        response = await model.complete(ASK)
    assert response.message.content == "ok"
    (delay,) = sleeps.delays
    assert math.isfinite(delay)
    if expected is None:
        assert 0.25 <= delay <= 0.5
    else:
        assert delay == pytest.approx(expected)


async def test_a_nan_retry_after_is_retried_with_the_real_sleep() -> None:
    """Retry-After: nan on a 429 does not crash anyio.sleep: the request is retried and answers."""
    script = [ServerAction.status(429, headers={"Retry-After": "nan"}), ServerAction.text("ok")]
    async with FakeOpenAIServer(script) as server, retrying(server) as model:
        response = await model.complete(ASK)
    server.assert_complete()
    assert response.message.content == "ok"


async def test_server_error_is_retried_with_backoff(sleeps: SleepSpy) -> None:
    """A 500 is retried after a jittered backoff delay, and the retry's answer is returned."""
    script = [ServerAction.status(500), ServerAction.text("recovered")]
    async with FakeOpenAIServer(script) as server, retrying(server, backoff=2.0) as model:
        response = await model.complete(ASK)
    server.assert_complete()
    assert response.message.content == "recovered"
    assert len(server.requests) == 2
    (delay,) = sleeps.delays
    assert 1.0 <= delay <= 2.0


async def test_retries_are_bounded(sleeps: SleepSpy) -> None:
    """Retryable failures stop after max_retries retries with ModelRetryableError."""
    script = [ServerAction.status(503), ServerAction.status(502), ServerAction.status(500)]
    async with FakeOpenAIServer(script) as server, retrying(server, max_retries=2) as model:
        with pytest.raises(ModelRetryableError) as caught:
            await model.complete(ASK)
    server.assert_complete()
    assert caught.value.status == 500
    assert len(sleeps.delays) == 2


@pytest.mark.parametrize("code", [400, 401])
async def test_client_errors_are_not_retried(sleeps: SleepSpy, code: int) -> None:
    """400 and 401 raise ModelRequestError after exactly one request."""
    async with (
        FakeOpenAIServer([ServerAction.status(code)]) as server,
        retrying(server, protocol="tools") as model,
    ):
        with pytest.raises(ModelRequestError) as caught:
            await model.complete(ASK)
    assert caught.value.status == code
    assert len(server.requests) == 1
    assert sleeps.delays == []


async def test_a_servers_multi_line_error_is_one_line() -> None:
    """A 400 whose message has line breaks becomes a one-line error."""
    body = {"error": {"message": "bad\nrequest\r\n  really"}}
    async with (
        FakeOpenAIServer([ServerAction.status(400, body)]) as server,
        chat_model(server, protocol="tools") as model,
    ):
        with pytest.raises(ModelRequestError) as caught:
            await model.complete(ASK)
    assert "\n" not in str(caught.value)
    assert "bad request really" in str(caught.value)


async def test_hung_response_hits_the_attempt_deadline() -> None:
    """A server that never answers fails the attempt at `timeout` with ModelRetryableError."""
    async with (
        FakeOpenAIServer([ServerAction.hang()]) as server,
        chat_model(server, timeout=0.3) as model,
    ):
        with pytest.raises(ModelRetryableError, match=r"no reply within 0\.3s"):
            await model.complete(ASK)
    assert len(server.requests) == 1


@pytest.mark.parametrize(
    ("framing", "code"), [("chunked", 200), ("close", 200), ("length", 200), ("chunked", 500)]
)
async def test_an_endless_body_stops_at_max_response_bytes(
    sleeps: SleepSpy, framing: str, code: int
) -> None:
    """A body that never ends fails with ModelRequestError, unretried, once it passes the limit:
    the client reads about the limit, not what the server would send."""
    async with (
        RawServer(endless(framing, code)) as server,
        retrying(server, max_response_bytes=256 * 1024, timeout=15.0) as model,
    ):
        with pytest.raises(ModelRequestError, match="max_response_bytes") as caught:
            await model.complete(ASK)
    assert server.sent < 32 * MiB
    assert server.requests == 1
    assert sleeps.delays == []
    assert "\n" not in str(caught.value)


async def test_a_compressed_body_is_bounded_after_decompression() -> None:
    """A small gzip body that inflates past the limit fails with ModelRequestError."""
    bomb = gzipped(b" " * (64 * MiB))
    async with (
        RawServer(bomb) as server,
        chat_model(server, max_response_bytes=256 * 1024) as model,
    ):
        with pytest.raises(ModelRequestError, match="max_response_bytes"):
            await model.complete(ASK)
    assert server.sent < MiB


async def test_a_compressed_reply_within_the_limit_is_read() -> None:
    """A server that gzips its reply anyway is still understood."""
    body = {"choices": [{"index": 0, "message": {"role": "assistant", "content": "zipped"}}]}
    async with (
        RawServer(gzipped(json.dumps(body).encode())) as server,
        chat_model(server) as model,
    ):
        response = await model.complete(ASK)
    assert response.message.content == "zipped"


async def test_a_slow_drip_body_hits_the_attempt_deadline() -> None:
    """A body that keeps arriving, a byte at a time, fails the attempt at `timeout`."""
    async with RawServer(drip) as server, chat_model(server, timeout=0.5) as model:
        with pytest.raises(ModelRetryableError, match=r"no reply within 0\.5s"):
            await model.complete(ASK)
    assert server.requests == 1


@pytest.mark.parametrize("limit", [0, -1])
def test_max_response_bytes_must_be_positive(limit: int) -> None:
    """A response limit below one byte is a ConfigurationError."""
    with pytest.raises(ConfigurationError, match="max_response_bytes"):
        OpenAIChatModel(max_response_bytes=limit)


async def test_a_supplied_client_is_used_as_given() -> None:
    """client= sends through that AsyncOpenAI client, and base_url names its endpoint."""
    async with FakeOpenAIServer([ServerAction.text("ok")]) as server:
        client = openai.AsyncOpenAI(base_url=server.base_url, api_key="test", max_retries=0)
        model = OpenAIChatModel("fake-model", client=client)
        try:
            response = await model.complete(ASK)
            assert model.base_url.startswith(server.base_url)
        finally:
            await model.aclose()
    assert response.message.content == "ok"
    assert len(server.requests) == 1


async def test_malformed_body_is_a_retryable_failure(sleeps: SleepSpy) -> None:
    """A 200 whose body is not JSON is retried like a dropped connection."""
    script = [ServerAction.malformed_body(), ServerAction.text("fine now")]
    async with FakeOpenAIServer(script) as server, retrying(server) as model:
        response = await model.complete(ASK)
    server.assert_complete()
    assert response.message.content == "fine now"
    assert len(sleeps.delays) == 1


async def test_a_body_in_no_unicode_encoding_is_a_retryable_failure(sleeps: SleepSpy) -> None:
    """A 200 body that cannot be decoded as text at all is retried like a garbled one."""
    script = [MalformedBody(body=b"\x00\x00\x00\x00\x00"), ServerAction.text("fine now")]
    async with FakeOpenAIServer(script) as server, retrying(server) as model:
        response = await model.complete(ASK)
    server.assert_complete()
    assert response.message.content == "fine now"
    assert len(sleeps.delays) == 1


@pytest.mark.parametrize(
    "url",
    [
        "http://ann:hunter2@[::1",
        "http://ann:hunter2@127.0.0.1:99999/v1",
        "ftp://ann:hunter2@127.0.0.1:8000/",
        "127.0.0.1:8000",
    ],
)
def test_a_base_url_it_cannot_use_is_a_configuration_error(url: str) -> None:
    """A base URL that is not http(s), or has a bad host or port, is refused at construction,
    on one line and without its password."""
    with pytest.raises(ConfigurationError, match="base URL") as caught:
        OpenAIChatModel(base_url=url)
    assert "hunter2" not in str(caught.value)
    assert "\n" not in str(caught.value)


async def test_a_body_that_is_no_completion_raises_malformed_response() -> None:
    """A 200 of JSON that is not a chat completion raises MalformedResponse, not an
    AttributeError."""
    async with (
        FakeOpenAIServer([ServerAction.status(200, {"object": "list", "data": []})]) as server,
        chat_model(server) as model,
    ):
        with pytest.raises(MalformedResponse, match="no choices"):
            await model.complete(ASK)


PORTAL = b"<!DOCTYPE html>\n<html><head><title>Hotel WiFi:\n sign in</title></head><body/></html>"
LIES = {
    "portal": (
        ServerAction.malformed_body(PORTAL, content_type="text/html; charset=utf-8"),
        ModelRequestError,
        "answered HTML, not the OpenAI API (status 200, text/html): 'Hotel WiFi: sign in'",
    ),
    "proxy-502": (
        ServerAction.malformed_body(b"<html><title>502 Bad Gateway</title></html>", code=502),
        ModelRetryableError,
        "answered HTML, not the OpenAI API (status 502, application/json): '502 Bad Gateway'",
    ),
    "text-404": (
        ServerAction.malformed_body(b"Not Found\n", code=404, content_type="text/plain"),
        ModelRequestError,
        "answered plain text, not the OpenAI API (status 404, text/plain): 'Not Found'",
    ),
    "truncated": (
        ServerAction.malformed_body(),
        ModelRetryableError,
        "answered broken JSON (status 200, application/json)",
    ),
    "bytes-200": (
        ServerAction.malformed_body(b"\x00\x01\x02", content_type="application/octet-stream"),
        ModelRequestError,
        "answered a body that is not JSON, not the OpenAI API (status 200, "
        "application/octet-stream)",
    ),
}
PATHS = ["complete", "own-client", "stream", "local-stream"]


async def sink(_text: str, _restart: bool) -> None:
    """Takes streamed text and drops it."""


async def complete_by(path: str, server: FakeOpenAIServer) -> None:
    """`ASK` sent along one of the model's paths: a plain completion (paor's own client, or the
    caller's through the SDK), a completion streamed to a live sink, or a local server's stream."""
    options: dict[str, Any] = {"local": path == "local-stream"}
    if path == "own-client":
        options["client"] = openai.AsyncOpenAI(
            base_url=server.base_url, api_key="test", max_retries=0
        )
    model = OpenAIChatModel("fake-model", base_url=server.base_url, api_key="test", **options)
    try:
        if path == "stream":
            with agents._streaming.text_to(sink):
                await model.complete(ASK)
        else:
            await model.complete(ASK)
    finally:
        await model.aclose()


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("lie", list(LIES))
async def test_a_body_that_is_not_json_names_the_endpoint_and_what_it_answered(
    lie: str, path: str
) -> None:
    """HTML, plain text, bytes or broken JSON, at 200 or an error status, on every path, is one
    line naming the endpoint and what it answered; retryable only if its status or a transport
    fault says so."""
    action, kind, said = LIES[lie]
    async with FakeOpenAIServer([action]) as server:
        url = server.base_url
        with pytest.raises(ModelError) as caught:
            await complete_by(path, server)
    assert type(caught.value) is kind
    assert str(caught.value) == f"{url} {said}"
    assert len(server.requests) == 1


async def test_a_broken_event_in_a_stream_names_the_endpoint() -> None:
    """A streamed reply with an event that is not JSON is a retryable one-line error."""
    broken = ServerAction.malformed_body(
        b'data: {"id": "x", "choi\n\n', content_type="text/event-stream"
    )
    async with FakeOpenAIServer([broken]) as server:
        url = server.base_url
        with pytest.raises(ModelRetryableError) as caught:
            await complete_by("local-stream", server)
    assert str(caught.value).startswith(f"{url} answered broken JSON in its event stream")
    assert "\n" not in str(caught.value)


async def test_a_portal_page_is_not_retried(sleeps: SleepSpy) -> None:
    """A 200 page that is not the API is asked for once: a retry would meet the same page."""
    portal = ServerAction.malformed_body(PORTAL, content_type="text/html")
    async with (
        FakeOpenAIServer([portal, ServerAction.text("never")]) as server,
        retrying(server) as model,
    ):
        with pytest.raises(ModelRequestError, match="answered HTML"):
            await model.complete(ASK)
    assert len(server.requests) == 1
    assert sleeps.delays == []


@pytest.mark.parametrize("lie", ["portal", "proxy-502", "text-404"])
async def test_ping_refuses_an_endpoint_that_is_not_the_api(lie: str) -> None:
    """`ping` raises the one-line error of a models list that is HTML or text, at any status."""
    action, kind, said = LIES[lie]
    assert isinstance(action, MalformedBody)
    async with FakeOpenAIServer([], models=action) as server, chat_model(server) as model:
        url = server.base_url
        with pytest.raises(ModelError) as caught:
            await model.ping()
    assert type(caught.value) is kind
    assert str(caught.value) == f"{url} {said}"


@pytest.mark.parametrize(
    "models",
    [
        None,
        ServerAction.status(404),
        ServerAction.malformed_body(b"", code=405, content_type="text/plain"),
    ],
    ids=["models", "json-404", "bare-405"],
)
async def test_ping_takes_any_status_with_json_or_no_body(
    models: Status | MalformedBody | None,
) -> None:
    """An endpoint without a models list still answers: a JSON error or a bare status pass."""
    async with FakeOpenAIServer([], models=models) as server, chat_model(server) as model:
        await model.ping()


async def test_auto_protocol_falls_back_to_json_after_a_400_on_tools() -> None:
    """protocol="auto" retries a tools request rejected with 400 as a JSON decision, for good."""
    final = ServerAction.json_content({"kind": "final", "answer": "done"})
    script = [ServerAction.status(400, headers={}), final, final]
    async with FakeOpenAIServer(script) as server, chat_model(server) as model:
        first = await model.complete(ASK)
        await model.complete(ASK)
    server.assert_complete()
    assert first.message.content == "done"
    assert model.protocol == "json"
    assert "tools" in server.requests[0]
    for later in server.requests[1:]:
        assert "tools" not in later
        assert later["response_format"]["json_schema"]["name"] == "decision"


async def test_fallback_attempt_is_bounded_by_the_deadline_too() -> None:
    """A hung JSON fallback after a 400 raises ModelRetryableError, not a bare TimeoutError."""
    async with (
        FakeOpenAIServer([ServerAction.status(400), ServerAction.hang()]) as server,
        chat_model(server, timeout=0.3) as model,
    ):
        with pytest.raises(ModelRetryableError, match="no reply within"):
            await model.complete(ASK)
    assert len(server.requests) == 2


async def test_usage_reports_prompt_completion_and_cached_tokens() -> None:
    """Token counts, cached tokens included, and the reported model name reach the response."""
    counts = TokenUsage(prompt_tokens=1200, completion_tokens=40, cached_tokens=1024)
    async with (
        FakeOpenAIServer([ServerAction.text("hi", usage=counts)]) as server,
        chat_model(server) as model,
    ):
        response = await model.complete(ASK)
    assert response.usage == Usage(
        requests=1, prompt_tokens=1200, completion_tokens=40, cached_tokens=1024
    )
    assert response.model == "fake-model"


@pytest.mark.parametrize(
    ("message", "where"),
    [
        (
            {"content": None, "tool_calls": [{"id": "c1", "function": {}}]},
            "message.tool_calls.0.function.name",
        ),
        ({"content": ["not", "text"]}, "message.content"),
    ],
)
async def test_a_completion_of_the_wrong_shape_raises_malformed_response(
    message: dict[str, Any], where: str
) -> None:
    """A 200 chat completion whose fields have the wrong shape raises MalformedResponse saying
    where, with the body quoted, and is not retried."""
    body = {"choices": [{"index": 0, "message": {"role": "assistant", **message}}]}
    async with (
        FakeOpenAIServer([ServerAction.status(200, body)]) as server,
        retrying(server) as model,
    ):
        with pytest.raises(MalformedResponse, match=f"malformed at choices.0.{where}") as caught:
            await model.complete(ASK)
    assert json.loads(caught.value.raw) == body
    assert len(server.requests) == 1


async def test_the_request_body_is_the_built_one_and_unknown_reply_fields_are_ignored() -> None:
    """The body on the wire is exactly model, messages, tools and the step's completion bound; a
    reply with fields paor does not read (logprobs, refusal, a system fingerprint) still parses."""
    reply = {
        "id": "x",
        "object": "chat.completion",
        "model": "m-2",
        "system_fingerprint": "fp",
        "choices": [
            {
                "index": 0,
                "logprobs": None,
                "finish_reason": "stop",
                "message": {"role": "assistant", "content": "sunny", "refusal": None},
            }
        ],
        "usage": {"prompt_tokens": 7, "completion_tokens": 1, "total_tokens": 8},
    }
    async with (
        FakeOpenAIServer([ServerAction.status(200, reply)]) as server,
        chat_model(server) as model,
    ):
        response = await model.complete(ASK)
    assert (response.message, response.model) == (AssistantMessage(content="sunny"), "m-2")
    assert response.usage == Usage(requests=1, prompt_tokens=7, completion_tokens=1)
    assert server.requests[0] == {
        "model": "fake-model",
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Weather in Paris?"},
        ],
        "tools": [{"type": "function", "function": LOOKUP.model_dump()}],
        "max_tokens": OUTPUT_TOKENS["step"],
    }


async def test_request_options_are_sent() -> None:
    """The model name, temperature and max_tokens are on the wire."""
    async with (
        FakeOpenAIServer([ServerAction.text("ok")]) as server,
        chat_model(server, temperature=0.2, max_output_tokens=64) as model,
    ):
        await model.complete(ASK)
    sent = server.requests[0]
    assert (sent["model"], sent["temperature"], sent["max_tokens"]) == ("fake-model", 0.2, 64)


async def test_block_model_requests_stops_non_loopback_hosts() -> None:
    """Under block_model_requests, a remote base_url fails before any request is sent."""
    model = OpenAIChatModel(base_url="http://api.example.com/v1", api_key="test")
    try:
        with block_model_requests(), pytest.raises(ModelRequestError, match="blocked"):
            await model.complete(ASK)
    finally:
        await model.aclose()


async def test_block_model_requests_can_block_the_loopback_too() -> None:
    """With no allowed hosts, even the local server is never contacted."""
    async with (
        FakeOpenAIServer([ServerAction.text("unused")]) as server,
        chat_model(server) as model,
    ):
        with block_model_requests(frozenset()), pytest.raises(ModelRequestError, match="blocked"):
            await model.complete(ASK)
    assert server.requests == []


async def test_credentials_in_the_base_url_are_masked_wherever_it_is_shown() -> None:
    """repr, base_url, ping and connection errors and retry logs name the server, never its
    password or key."""
    url = "http://ann:hunter2@127.0.0.1:1/v1?api_key=k3y"
    model = OpenAIChatModel("m", base_url=url)
    retried = RetryingModel(model, max_retries=1, backoff=0.01)
    try:
        with capture_logs() as logs:
            with pytest.raises(ModelRetryableError) as pinged:
                await model.ping(wait_s=5.0)
            with pytest.raises(ModelRetryableError) as failed:
                await retried.complete(ASK)
    finally:
        await model.aclose()
    assert [log["event"] for log in logs].count("model_retry") == 1
    shown = [
        repr(model),
        repr(retried),
        model.base_url,
        str(pinged.value),
        str(failed.value),
        repr(logs),
    ]
    assert [s for s in shown if "hunter2" in s or "k3y" in s] == []
    assert model.base_url.startswith("http://ann:***@127.0.0.1:1/v1")
    assert "127.0.0.1:1/v1" in str(pinged.value)
    assert "127.0.0.1:1/v1" in str(failed.value)


@tool
def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: The first term.
        b: The second term.
    """
    return a + b


@tool
def weather(city: str) -> str:
    """Today's weather in a city.

    Args:
        city: The city name.
    """
    return {"Paris": "sunny, 21C", "Oslo": "snow, -3C"}.get(city, "unknown")


async def test_malformed_tool_arguments_come_back_as_a_failed_result() -> None:
    """Unparseable arguments never reach the tool: the model reads the error on its next turn."""
    script = [
        ServerAction.tool_calls([("add", '{"a": 1,')]),
        ServerAction.tool_calls([("add", {"a": 1, "b": 2})]),
        ServerAction.text("3"),
    ]
    async with FakeOpenAIServer(script) as server, chat_model(server) as model:
        report = await Executor(model, tools=[add]).run("Add 1 and 2.")
    server.assert_complete()
    assert report.ok
    assert report.answer == "3"
    failed = server.requests[1]["messages"][-1]
    assert failed["role"] == "tool"
    assert failed["tool_call_id"] == server.requests[1]["messages"][-2]["tool_calls"][0]["id"]
    assert "not valid JSON" in failed["content"]
    assert observation(server.requests[2]["messages"][-1]["content"]) == "3"


async def test_executor_finishes_a_multi_step_task_over_http() -> None:
    """An Executor on OpenAIChatModel runs two tool turns, then answers, all over HTTP."""
    script = [
        ServerAction.tool_calls([("weather", {"city": "Paris"}), ("weather", {"city": "Oslo"})]),
        ServerAction.tool_calls([("add", {"a": 21, "b": -3})]),
        ServerAction.text("Paris is sunny (21C), Oslo snowy (-3C); together 18C."),
    ]
    async with FakeOpenAIServer(script) as server, chat_model(server) as model:
        report = await Executor(model, tools=[weather, add]).run("Compare Paris and Oslo.")
    server.assert_complete()
    assert report.status == "done"
    assert report.answer.endswith("together 18C.")
    assert report.steps == 3
    assert report.usage.requests == 3
    assert report.usage.tool_calls == 3
    offered = {t["function"]["name"] for t in server.requests[0]["tools"]}
    assert {"weather", "add"} <= offered
    first_results = [
        observation(m["content"]) for m in server.requests[1]["messages"] if m["role"] == "tool"
    ]
    assert first_results == ["sunny, 21C", "snow, -3C"]
    assert observation(server.requests[2]["messages"][-1]["content"]) == "18"
    assert {e.tool for e in report.evidence} == {"weather", "add"}


async def test_assistant_tool_calls_are_sent_in_wire_shape() -> None:
    """An assistant turn with tool calls is sent with null content and typed function calls."""
    call = ToolCall(id="c1", name="lookup", arguments='{"city": "X"}')
    reply = AssistantMessage(tool_calls=(call,))
    async with FakeOpenAIServer([ServerAction.text("ok")]) as server, chat_model(server) as model:
        await model.complete(answered(ASK, reply, "unknown"))
    function = {"name": "lookup", "arguments": call.arguments}
    assert server.requests[0]["messages"][-2] == {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": "c1", "type": "function", "function": function}],
    }


async def test_a_tool_call_written_as_fenced_json_runs_as_a_native_call() -> None:
    """A call the model wrote as fenced JSON in its text runs as that tool call; the next request
    holds it as a proper assistant tool call with its result; replies say calls came as text."""
    fenced = '```json\n{"name": "weather", "arguments": {"city": "Paris"}}\n```'
    script = [ServerAction.text(fenced), ServerAction.text("Paris is sunny, 21C.")]
    events: list[Any] = []

    async def sink(event: Any) -> None:
        events.append(event)

    async with FakeOpenAIServer(script) as server, chat_model(server, protocol="tools") as model:
        report = await Executor(model, tools=[weather]).run("Weather in Paris?", events=sink)
        assert (model.calls_arrive, model.protocol) == ("text", "tools")
    server.assert_complete()
    assert report.status == "done"
    assert report.answer == "Paris is sunny, 21C."
    assert [e.tool for e in report.evidence] == ["weather"]
    sent = server.requests[1]["messages"]
    (turn,) = [m for m in sent if m["role"] == "assistant"]
    assert turn["content"] is None
    [wire_call] = turn["tool_calls"]
    assert wire_call["function"] == {"name": "weather", "arguments": '{"city": "Paris"}'}
    (result,) = [m for m in sent if m["role"] == "tool"]
    assert (result["tool_call_id"], observation(result["content"])) == (
        wire_call["id"],
        "sunny, 21C",
    )
    protocols = [e.protocol for e in events if e.type == "model_called"]
    assert protocols == ["text", "tools"]


@pytest.mark.parametrize(
    "content",
    [
        '<tool_call>{"name": "weather", "arguments": {"city": ',
        '{"name": "weather", "arguments": {"city": "Paris"',
    ],
)
async def test_a_tool_call_text_that_cannot_be_read_is_fed_back_not_answered(content: str) -> None:
    """Text that looks like a call but is broken is answered as malformed, never as the answer."""
    script = [
        ServerAction.text(content),
        ServerAction.tool_calls([("weather", {"city": "Paris"})]),
        ServerAction.text("Sunny [weather]."),
    ]
    async with FakeOpenAIServer(script) as server, chat_model(server, protocol="tools") as model:
        report = await Executor(model, tools=[weather]).run("Weather in Paris?")
    server.assert_complete()
    assert report.answer == "Sunny [weather]."
    feedback = server.requests[1]["messages"][-1]
    assert feedback["role"] == "user"
    assert "looks like a tool call but cannot be read" in feedback["content"]


async def test_json_decisions_make_the_final_answer_cite_a_gathered_source() -> None:
    """With citable sources, the final branch requires `cites` from exactly those ids, and the
    sources named are cited in the answer text."""
    request = ASK.model_copy(update={"citable": ("python/yield", "python/types")})
    final = {"kind": "final", "answer": "It pauses.", "cites": ["python/yield"]}
    async with (
        FakeOpenAIServer([ServerAction.json_content(final)]) as server,
        chat_model(server, protocol="json") as model,
    ):
        response = await model.complete(request)
    schema = server.requests[0]["response_format"]["json_schema"]["schema"]
    final_branch = schema["anyOf"][1]
    assert final_branch["required"] == ["kind", "answer", "cites"]
    assert final_branch["properties"]["cites"]["items"] == {
        "enum": ["python/yield", "python/types"]
    }
    assert response.message.content == "It pauses. [python/yield]"


async def test_a_citing_executor_names_what_it_gathered_in_each_request() -> None:
    """Executor(cite=True) sends the sources gathered so far; none before the first result."""
    model = ScriptedModel([call("weather", city="Paris"), reply("Sunny [weather].")])
    await Executor(model, tools=[weather], cite=True).run("Weather in Paris?")
    assert [r.citable for r in model.requests] == [(), ('weather({"city": "Paris"})',)]


async def test_a_json_answer_cut_by_its_length_bound_loses_the_broken_sentence() -> None:
    """An answer ending mid-sentence (the schema bound cut it) keeps its whole sentences and then
    the sources it names, once each."""
    request = ASK.model_copy(update={"citable": ("python/yield",)})
    final = {
        "kind": "final",
        "answer": "Generators pause at yield [python/yield]. They resume when next() is cal",
        "cites": ["python/yield", "python/yield"],
    }
    async with (
        FakeOpenAIServer([ServerAction.json_content(final)]) as server,
        chat_model(server, protocol="json", max_string_chars=50) as model,
    ):
        response = await model.complete(request)
    schema = server.requests[0]["response_format"]["json_schema"]["schema"]
    assert schema["anyOf"][1]["properties"]["answer"]["maxLength"] == 200
    assert response.message.content == "Generators pause at yield [python/yield]."


async def test_auto_moves_to_json_decisions_once_calls_come_as_text() -> None:
    """protocol="auto": a call written as text is run, and the endpoint's next requests are JSON
    decisions (a grammar holds such a model better than its template)."""
    fenced = '```json\n{"name": "weather", "arguments": {"city": "Paris"}}\n```'
    final = ServerAction.json_content({"kind": "final", "answer": "Paris is sunny, 21C."})
    async with (
        FakeOpenAIServer([ServerAction.text(fenced), final]) as server,
        chat_model(server) as model,
    ):
        report = await Executor(model, tools=[weather]).run("Weather in Paris?")
        assert (model.calls_arrive, model.protocol) == ("text", "json")
    server.assert_complete()
    assert report.answer == "Paris is sunny, 21C."
    first, second = server.requests
    assert "tools" in first
    assert "response_format" not in first
    assert "tools" not in second
    assert second["response_format"]["json_schema"]["name"] == "decision"


async def test_auto_keeps_text_calls_when_the_server_refuses_json_decisions() -> None:
    """If JSON decisions are refused (400) after calls came as text, auto goes back to native
    requests with calls recovered from text, for good, in the same attempt."""
    fenced = '{"name": "weather", "arguments": {"city": "Paris"}}'
    script = [
        ServerAction.text(fenced),
        ServerAction.status(400),
        ServerAction.text("Sunny, 21C."),
        ServerAction.text("Still sunny."),
    ]
    async with FakeOpenAIServer(script) as server, chat_model(server) as model:
        report = await Executor(model, tools=[weather]).run("Weather in Paris?")
        assert model.protocol == "tools"
        again = await model.complete(ASK)
    assert report.answer == "Sunny, 21C."
    assert again.message.content == "Still sunny."
    assert ["tools" in r for r in server.requests] == [True, False, True, True]
