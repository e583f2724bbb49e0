"""A model on this machine makes progress: streamed replies under an idle timeout, no re-sent
timeouts, no more requests than the server has slots, completion bounds by purpose, and a reply
that only repeats itself cut early. Over real HTTP on 127.0.0.1, against scripted servers."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager, suppress
from typing import Any

import anyio
import anyio.abc
import anyio.lowlevel
import pytest
from anyio.streams.buffered import BufferedByteReceiveStream

from agents import ConfigurationError, OpenAIChatModel
from agents._streaming import Repeats, looping, text_to
from agents.errors import MalformedResponse, ModelRequestError, ModelRetryableError
from agents.models import ModelRequest, RetryingModel
from agents.models._completion import OUTPUT_TOKENS
from agents.models._endpoint import on_this_machine
from agents.models._model import RequestPurpose
from agents.testing import FakeOpenAIServer, ServerAction
from agents.testing._loopback import LoopbackServer
from memory import SystemMessage, UserMessage

pytestmark = pytest.mark.anyio

ASK = ModelRequest(
    messages=(SystemMessage(content="Be brief."), UserMessage(content="How do generators work?")),
)
# Short enough for a quick test, long against the scripted gaps (a twentieth of a second).
IDLE_S = 0.5
LOOP = "Generators pause at each yield and resume on next. "


@asynccontextmanager
async def local_model(server: LoopbackServer, **options: Any) -> AsyncIterator[OpenAIChatModel]:
    """A local-endpoint model on `server`, with a short idle timeout (each request sent once)."""
    settings: dict[str, Any] = {"timeout": IDLE_S, "local": True, **options}
    model = OpenAIChatModel(base_url=server.base_url, api_key="test", **settings)
    try:
        yield model
    finally:
        await model.aclose()


def retrying(model: OpenAIChatModel, max_retries: int = 3) -> RetryingModel:
    """`model` retried by `RetryingModel`, at once (no backoff)."""
    return RetryingModel(model, max_retries=max_retries, backoff=0.0)


Reply = Callable[["SseServer", anyio.abc.SocketStream], Awaitable[None]]


class SseServer(LoopbackServer):
    """A llama.cpp-like server on 127.0.0.1: each chat completion is answered by `reply`, which
    writes a chunked event stream; GET /props says how many slots it has.

    Attributes:
        requests: Every chat completion request body, parsed.
        sent: Events written (keep-alive pings aside), over all replies.
        hung_up: Replies whose client went away before they ended.
        gone: Set when a client first went away mid-reply.
    """

    def __init__(self, reply: Reply, *, slots: int | None = None) -> None:
        self._reply = reply
        self._slots = slots
        self.requests: list[dict[str, Any]] = []
        self.sent = 0
        self.hung_up = 0
        self.gone = anyio.Event()
        super().__init__()

    async def event(self, stream: anyio.abc.SocketStream, data: dict[str, Any]) -> None:
        """Send one `data:` event."""
        self.sent += 1
        await _chunk(stream, f"data: {json.dumps(data)}\n\n".encode())

    async def _serve(self, stream: anyio.abc.SocketStream) -> None:
        reader = BufferedByteReceiveStream(stream)
        async with stream:
            with suppress(anyio.EndOfStream, anyio.IncompleteRead):
                head = (await reader.receive_until(b"\r\n\r\n", 65536)).decode("latin-1")
                lines = head.split("\r\n")
                sizes = [
                    v
                    for k, _, v in (h.partition(":") for h in lines)
                    if k.lower() == "content-length"
                ]
                body = await reader.receive_exactly(int(sizes[0])) if sizes else b""
                if lines[0].startswith("GET /props"):
                    await stream.send(_props(self._slots))
                    return
                self.requests.append(json.loads(body))
                try:
                    await self._reply(self, stream)
                except anyio.BrokenResourceError:
                    self.hung_up += 1
                    self.gone.set()

    async def client_gone(self) -> None:
        """Wait until a client hung up mid-reply (its next write failed)."""
        with anyio.fail_after(10):
            await self.gone.wait()


async def _chunk(stream: anyio.abc.SocketStream, data: bytes) -> None:
    await stream.send(b"%x\r\n%s\r\n" % (len(data), data))


def _props(slots: int | None) -> bytes:
    if slots is None:
        return b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    body = json.dumps({"total_slots": slots}).encode()
    head = f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n"
    return head.encode() + b"Connection: close\r\n\r\n" + body


SSE_HEAD = (
    b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n"
    b"Connection: close\r\n\r\n"
)


def delta(content: str) -> dict[str, Any]:
    """A chunk of a streamed completion carrying `content`."""
    return {"id": "c1", "model": "m", "choices": [{"index": 0, "delta": {"content": content}}]}


def finished() -> dict[str, Any]:
    """The last chunk: the finish reason."""
    return {"id": "c1", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}


async def pings_then_answer(server: SseServer, stream: anyio.abc.SocketStream) -> None:
    """Keep-alive comments only, for three idle timeouts (a long prompt being read), then a reply."""
    await stream.send(SSE_HEAD)
    for _ in range(round(3 * IDLE_S / 0.05)):
        await _chunk(stream, b":\n\n")
        await anyio.sleep(0.05)
    await server.event(stream, delta("Generators pause at yield."))
    await server.event(stream, finished())
    await _chunk(stream, b"data: [DONE]\n\n")
    await stream.send(b"0\r\n\r\n")


WORDS = [f"word{n} " for n in range(round(3 * IDLE_S / 0.05))]


def drip(words: list[str]) -> Reply:
    """A reply that streams `words`, one every twentieth of a second (a model at 20 tokens/s)."""

    async def reply(server: SseServer, stream: anyio.abc.SocketStream) -> None:
        await stream.send(SSE_HEAD)
        for word in words:
            await server.event(stream, delta(word))
            await anyio.sleep(0.05)
        await server.event(stream, finished())
        await _chunk(stream, b"data: [DONE]\n\n")
        await stream.send(b"0\r\n\r\n")

    return reply


def endless(pieces: Callable[[int], str]) -> Reply:
    """A reply that streams `pieces(n)` for n = 0, 1, ... until the client hangs up (at most
    100,000 events: the test then ends, and fails plainly, if nothing cut it)."""

    async def reply(server: SseServer, stream: anyio.abc.SocketStream) -> None:
        await stream.send(SSE_HEAD)
        for n in range(100_000):
            await server.event(stream, delta(pieces(n)))
            if n % 50 == 0:
                await anyio.lowlevel.checkpoint()

    return reply


# -- the idle timeout ----------------------------------------------------------------------------


async def test_a_local_reply_is_not_cut_while_tokens_arrive() -> None:
    """A reply a token every twentieth of a second, over three idle timeouts, is read whole from
    a local server; a hosted endpoint's total timeout cuts the same reply."""
    async with SseServer(drip(WORDS)) as server:
        async with local_model(server) as model:
            response = await model.complete(ASK)
        remote = OpenAIChatModel(base_url=server.base_url, api_key="t", timeout=IDLE_S)
        with pytest.raises(ModelRetryableError, match="no reply within"):
            await remote.complete(ASK)
        await remote.aclose()
    assert response.message.content == "".join(WORDS)
    assert server.requests[0]["stream"] is True


async def test_keep_alive_pings_keep_a_local_request_alive() -> None:
    """A local server that only pings while it reads a long prompt is waited for, past several
    idle timeouts, and its reply is read."""
    async with SseServer(pings_then_answer) as server, local_model(server) as model:
        response = await model.complete(ASK)
    assert response.message.content == "Generators pause at yield."
    assert len(server.requests) == 1


async def test_a_local_server_that_goes_silent_mid_reply_is_not_asked_again() -> None:
    """A local server that took the request (its headers came) and then sends nothing fails it
    at the idle timeout, once: the request is not sent again on top of the one it still holds."""

    async def silent(server: SseServer, stream: anyio.abc.SocketStream) -> None:
        await stream.send(SSE_HEAD)
        await server.event(stream, delta("Generators"))
        await anyio.sleep_forever()

    async with SseServer(silent) as server, local_model(server) as model:
        with pytest.raises(ModelRetryableError, match="not sent again") as caught:
            await retrying(model, max_retries=3).complete(ASK)
    assert not caught.value.resend
    assert len(server.requests) == 1


async def test_a_request_no_slot_took_is_sent_again() -> None:
    """A local server that has not even sent headers (every slot still busy) has not started
    the request: it is sent again, and the next answer is read."""
    async with FakeOpenAIServer([ServerAction.hang(), ServerAction.text("late")]) as server:
        async with local_model(server) as model:
            response = await retrying(model, max_retries=1).complete(ASK)
        assert response.message.content == "late"
        assert len(server.requests) == 2


async def test_a_hosted_endpoint_still_retries_a_timeout() -> None:
    """Against a hosted endpoint a timed-out attempt is sent again, as before."""
    async with FakeOpenAIServer([ServerAction.hang(), ServerAction.text("done")]) as server:
        model = OpenAIChatModel(base_url=server.base_url, api_key="t", timeout=IDLE_S)
        response = await retrying(model).complete(ASK)
        await model.aclose()
    assert response.message.content == "done"
    assert len(server.requests) == 2


async def test_other_transient_failures_of_a_local_server_are_retried() -> None:
    """A 503 (a server still loading its model) is retried against a local server too."""
    async with (
        FakeOpenAIServer([ServerAction.status(503), ServerAction.text("ready")]) as server,
        local_model(server) as model,
    ):
        response = await retrying(model).complete(ASK)
    assert response.message.content == "ready"
    assert len(server.requests) == 2


async def test_a_local_server_that_answers_without_streaming_is_read_whole() -> None:
    """A server that ignores `stream` and sends one JSON body is read as a plain completion."""
    reply = {"id": "x", "model": "m", "choices": [{"message": {"content": "whole"}}]}
    async with (
        FakeOpenAIServer([ServerAction.status(200, reply)]) as server,
        local_model(server) as model,
    ):
        response = await model.complete(ASK)
    assert response.message.content == "whole"


async def test_an_error_event_in_a_local_stream_is_a_model_error() -> None:
    """An error event in the stream raises the error of its code, on one line."""

    async def failing(server: SseServer, stream: anyio.abc.SocketStream) -> None:
        await stream.send(SSE_HEAD)
        await server.event(stream, {"error": {"code": 400, "message": "the context\nis full"}})

    async with SseServer(failing) as server, local_model(server) as model:
        with pytest.raises(ModelRequestError, match="the context is full"):
            await model.complete(ASK)


async def test_a_local_stream_is_still_bounded_by_max_response_bytes() -> None:
    """A local stream that never ends (and never repeats) stops at `max_response_bytes`."""
    async with (
        SseServer(endless(lambda n: f"word{n} ")) as server,
        local_model(server, max_response_bytes=64 * 1024) as model,
    ):
        with pytest.raises(ModelRequestError, match="max_response_bytes"):
            await model.complete(ASK)
        await server.client_gone()
    assert server.sent < 10_000


# -- slots --------------------------------------------------------------------------------------


async def test_no_more_requests_go_at_once_than_the_server_has_slots() -> None:
    """After `fit_slots`, requests beyond the server's one slot wait in paor, not at the server
    (where a queued request gets no byte and would look idle)."""
    at_once = {"now": 0, "most": 0}

    async def answer(server: SseServer, stream: anyio.abc.SocketStream) -> None:
        at_once["now"] += 1
        at_once["most"] = max(at_once["most"], at_once["now"])
        await stream.send(SSE_HEAD)
        await anyio.sleep(0.05)
        await server.event(stream, delta("ok"))
        await _chunk(stream, b"data: [DONE]\n\n")
        await stream.send(b"0\r\n\r\n")
        at_once["now"] -= 1

    async with SseServer(answer, slots=1) as server, local_model(server) as model:
        assert await model.fit_slots() == 1
        async with anyio.create_task_group() as tg:
            for _ in range(3):
                tg.start_soon(model.complete, ASK)
    assert (len(server.requests), at_once["most"]) == (3, 1)


async def test_a_server_without_slots_keeps_max_in_flight() -> None:
    """A server with no GET /props (not llama.cpp) leaves the model as configured."""
    async with SseServer(pings_then_answer) as server, local_model(server) as model:
        assert await model.fit_slots() is None


# -- completion bounds --------------------------------------------------------------------------


@pytest.mark.parametrize("purpose", sorted(OUTPUT_TOKENS))
async def test_each_request_carries_its_purposes_completion_bound(purpose: RequestPurpose) -> None:
    """A request with no bound of its own is sent with its purpose's (`OUTPUT_TOKENS`)."""
    async with FakeOpenAIServer([ServerAction.text("ok")]) as server, local_model(server) as model:
        await model.complete(ASK.model_copy(update={"purpose": purpose}))
    assert server.requests[0]["max_tokens"] == OUTPUT_TOKENS[purpose]


async def test_a_requests_own_bound_then_the_models_win_over_the_purpose() -> None:
    """The request's `max_output_tokens` wins; without it, the model's configured one does."""
    own = ASK.model_copy(update={"max_output_tokens": 77, "purpose": "synthesis"})
    async with (
        FakeOpenAIServer([ServerAction.text("a"), ServerAction.text("b")]) as server,
        local_model(server, max_output_tokens=99) as model,
    ):
        await model.complete(own)
        await model.complete(ASK)
    assert [body["max_tokens"] for body in server.requests] == [77, 99]


# -- replies that only repeat themselves --------------------------------------------------------


@pytest.mark.parametrize("protocol", ["tools", "json"])
async def test_a_reply_that_only_repeats_itself_is_cut_early_and_unusable(protocol: str) -> None:
    """A stream that says one sentence over and over is cut within a few kilobytes (the server
    sees the client go) and raises MalformedResponse naming the repeat, never an answer."""
    async with (
        SseServer(endless(lambda n: LOOP)) as server,
        local_model(server, protocol=protocol) as model,
    ):
        with pytest.raises(MalformedResponse, match="only repeated 'Generators pause") as caught:
            await retrying(model, max_retries=3).complete(ASK)
        await server.client_gone()
    assert "\n" not in str(caught.value)
    assert caught.value.raw.startswith(LOOP)
    assert server.sent < 200  # of 100,000
    assert len(server.requests) == 1


async def test_a_hosted_stream_to_a_live_reader_is_cut_in_a_loop_too() -> None:
    """A reply streamed from a hosted endpoint to a live reader is watched the same way."""

    async def sink(piece: str, restart: bool) -> None:
        pass

    async with SseServer(endless(lambda n: LOOP)) as server:
        model = OpenAIChatModel(base_url=server.base_url, api_key="t", timeout=30)
        with text_to(sink), pytest.raises(MalformedResponse, match="only repeated"):
            await model.complete(ASK)
        await model.aclose()
        await server.client_gone()
    assert server.sent < 200


async def test_a_long_reply_that_moves_on_is_not_cut() -> None:
    """A long reply of distinct sentences, streamed, is read to its end."""
    long = " ".join(f"Point {n}: generators keep frame {n} alive between calls." for n in range(80))
    async with (
        FakeOpenAIServer([ServerAction.json_content({"answer": long})]) as server,
        local_model(server, protocol="json") as model,
    ):
        response = await model.complete(ASK)
    assert response.message.content == long


@pytest.mark.parametrize(
    "reply",
    [
        LOOP * 12,
        "python generators " * 80,
        "{" + " " * 600,
        "An intro that says what follows. " + "The same line again and again here. " * 40,
    ],
)
def test_looping_names_what_a_reply_repeats(reply: str) -> None:
    """A sentence, a phrase or a run of wordless text repeated to the end is a loop."""
    assert looping(reply) is not None


@pytest.mark.parametrize(
    "reply",
    [
        "Generators pause at yield. They resume on next(). The frame is kept. " * 1,
        # Three subtasks that depend on one: a line said thrice among others.
        '{"subtasks": [\n{"id": "s1", "goal": "Find how generators work"},\n'
        '{"id": "s2", "goal": "Find send", "depends_on": ["s1"]},\n'
        '{"id": "s3", "goal": "Find throw", "depends_on": ["s1"]},\n'
        '{"id": "s4", "goal": "Find close", "depends_on": ["s1"]}]}',
        "Yes. It is so. " * 3 + "But there is more to say about each of the other parts here. " * 4,
    ],
)
def test_looping_leaves_replies_that_move_on(reply: str) -> None:
    """A reply that repeats a line among other things is not a loop."""
    assert looping(reply) is None


def test_repeats_looks_only_every_few_hundred_characters() -> None:
    """`Repeats` finds the loop as the text grows, once enough new text came."""
    watch = Repeats()
    found = [watch.add(LOOP) for _ in range(12)]
    assert found[0] is None
    assert found[-1] == LOOP.strip()


# -- which endpoints are local ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "local"),
    [
        ("http://127.0.0.1:8080/v1", True),
        ("http://127.1.2.3:8080/v1", True),
        ("http://localhost:11434/v1", True),
        ("http://[::1]:8080/v1", True),
        ("https://api.openai.com/v1", False),
        ("http://10.0.0.5:8080/v1", False),
        ("http://[::1", False),
        (None, False),
    ],
)
def test_on_this_machine_means_a_loopback_host(url: str | None, local: bool) -> None:
    """Loopback addresses and localhost are local endpoints; anything else is hosted."""
    assert on_this_machine(url) is local


def test_a_local_model_needs_a_positive_timeout() -> None:
    """A timeout of zero is refused at construction."""
    with pytest.raises(ConfigurationError):
        OpenAIChatModel(base_url="http://127.0.0.1:1/v1", timeout=0, local=True)
