"""`FakeOpenAIServer` itself: routes, keep-alive, script bookkeeping, and shutdown."""

from __future__ import annotations

import json
import re
from typing import Any

import anyio
import pytest
from anyio.streams.buffered import BufferedByteReceiveStream

from agents import OpenAIChatModel
from agents.errors import ModelRetryableError
from agents.models import ModelRequest
from agents.testing import FakeOpenAIServer, ServerAction, TokenUsage
from memory import UserMessage

pytestmark = pytest.mark.anyio

HELLO = ModelRequest(messages=(UserMessage(content="hello"),))


async def exchange(port: int, *requests: bytes) -> list[tuple[str, Any]]:
    """Send raw HTTP requests over one connection; return each status line and JSON body."""
    replies = []
    async with await anyio.connect_tcp("127.0.0.1", port) as stream:
        reader = BufferedByteReceiveStream(stream)
        for request in requests:
            await stream.send(request)
            head = (await reader.receive_until(b"\r\n\r\n", 65536)).decode("latin-1")
            found = re.search(r"Content-Length: (\d+)", head)
            assert found is not None
            body = await reader.receive_exactly(int(found.group(1)))
            replies.append((head.split("\r\n")[0], json.loads(body)))
    return replies


def model_for(server: FakeOpenAIServer) -> OpenAIChatModel:
    """A model on `server` (each request sent once: no retries)."""
    return OpenAIChatModel(base_url=server.base_url, api_key="test")


async def test_health_and_models_share_one_keep_alive_connection() -> None:
    """GET /health and GET /v1/models answer in turn on a single connection."""
    get = "GET {} HTTP/1.1\r\nHost: fake\r\n\r\n"
    async with FakeOpenAIServer([]) as server:
        health, models = await exchange(
            server.port, get.format("/health").encode(), get.format("/v1/models").encode()
        )
    assert health == ("HTTP/1.1 200 OK", {"status": "ok"})
    assert models[1]["data"][0]["id"] == "fake-model"
    assert server.requests == []


async def test_unknown_route_is_a_404() -> None:
    """A path the server does not serve gets an OpenAI-style 404 error."""
    async with FakeOpenAIServer([]) as server:
        ((line, body),) = await exchange(server.port, b"GET /v2/x HTTP/1.1\r\nHost: f\r\n\r\n")
    assert line == "HTTP/1.1 404 Not Found"
    assert "no route" in body["error"]["message"]


async def test_running_out_of_script_answers_500_and_is_recorded() -> None:
    """A request past the end of the script gets a 500 and fails assert_complete."""
    async with FakeOpenAIServer([ServerAction.text("one")]) as server:
        model = model_for(server)
        await model.complete(HELLO)
        with pytest.raises(ModelRetryableError, match="script ended") as caught:
            await model.complete(HELLO)
        await model.aclose()
    assert caught.value.status == 500
    assert len(server.requests) == 2
    with pytest.raises(AssertionError, match="came after the script ended"):
        server.assert_complete()


async def test_unplayed_actions_fail_assert_complete() -> None:
    """assert_complete names the scripted actions that were never played."""
    async with FakeOpenAIServer([ServerAction.text("a"), ServerAction.text("b")]) as server:
        model = model_for(server)
        await model.complete(HELLO)
        await model.aclose()
    assert server.remaining == 1
    with pytest.raises(AssertionError, match="1 scripted actions were never played"):
        server.assert_complete()


@pytest.mark.parametrize("is_async", [False, True])
async def test_a_script_function_decides_from_the_request(is_async: bool) -> None:
    """A sync or async script function sees each request body and chooses the answer."""

    def decide(body: dict[str, Any]) -> ServerAction:
        return ServerAction.text(f"{len(body['messages'])} messages")

    async def decide_async(body: dict[str, Any]) -> ServerAction:
        await anyio.lowlevel.checkpoint()
        return decide(body)

    async with FakeOpenAIServer(decide_async if is_async else decide) as server:
        model = model_for(server)
        response = await model.complete(HELLO)
        await model.aclose()
    server.assert_complete()
    assert response.message.content == "1 messages"


async def test_a_failing_script_function_is_a_recorded_500() -> None:
    """An exception in the script function becomes a 500 and a recorded failure."""

    def broken(body: dict[str, Any]) -> ServerAction:
        raise KeyError("oops")

    async with FakeOpenAIServer(broken) as server:
        model = model_for(server)
        with pytest.raises(ModelRetryableError, match="script function raised"):
            await model.complete(HELLO)
        await model.aclose()
    assert server.failures == ["the script function raised KeyError('oops')"]


async def test_leaving_the_server_cancels_a_hung_reply() -> None:
    """Exiting the server ends a hung reply: the waiting client sees a dropped connection."""
    asked = anyio.Event()
    errors: list[ModelRetryableError] = []

    def stall(body: dict[str, Any]) -> ServerAction:
        asked.set()
        return ServerAction.hang()

    async def ask(model: OpenAIChatModel) -> None:
        try:
            await model.complete(HELLO)
        except ModelRetryableError as exc:
            errors.append(exc)
        finally:
            await model.aclose()

    async with anyio.create_task_group() as tg, FakeOpenAIServer(stall) as server:
        tg.start_soon(ask, model_for(server))
        await asked.wait()
    (error,) = errors
    assert "connection failed" in str(error)


async def test_completions_are_openai_shaped() -> None:
    """A completion carries ids, the requested model, finish_reason and cached-token usage."""
    usage = TokenUsage(prompt_tokens=50, cached_tokens=32)
    script = [
        ServerAction.tool_calls([("f", {"x": 1})], usage=usage),
        ServerAction.json_content({"a": 1}),
        ServerAction.status(418),
    ]
    async with FakeOpenAIServer(script) as server:
        post = "POST /v1/chat/completions HTTP/1.1\r\nHost: f\r\nContent-Length: {}\r\n\r\n{}"
        body = json.dumps({"model": "m1", "messages": [{"role": "user", "content": "x" * 400}]})
        request = post.format(len(body), body).encode()
        (_, calls), (_, answer), (teapot, error) = await exchange(server.port, *[request] * 3)
    server.assert_complete()
    assert calls["object"] == "chat.completion"
    assert calls["model"] == "m1"
    assert calls["choices"][0]["finish_reason"] == "tool_calls"
    assert calls["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"] == '{"x": 1}'
    assert calls["usage"]["prompt_tokens"] == 50
    assert calls["usage"]["prompt_tokens_details"] == {"cached_tokens": 32}
    assert answer["choices"][0]["message"]["content"] == '{"a": 1}'
    assert answer["usage"]["prompt_tokens"] > 100
    assert teapot == "HTTP/1.1 418 I'm a Teapot"
    assert error["error"]["type"] == "invalid_request_error"


async def test_base_url_needs_a_running_server() -> None:
    """Asking for base_url outside the `async with` raises RuntimeError."""
    server = FakeOpenAIServer([])
    with pytest.raises(RuntimeError, match="not running"):
        _ = server.base_url
