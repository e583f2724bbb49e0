"""`OpenAIChatModel(max_in_flight=N)`: at most N requests at the endpoint at once, the others held
before their request is built, and that wait not counted against the request timeout."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from agents import ConfigurationError, OpenAIChatModel
from agents.models import ModelRequest
from agents.testing import FakeOpenAIServer, ServerAction
from memory import UserMessage

pytestmark = pytest.mark.anyio

ASK = ModelRequest(messages=(UserMessage(content="hi"),))


async def test_no_more_than_max_in_flight_requests_reach_the_endpoint_at_once() -> None:
    now = most = 0
    release = anyio.Event()

    async def decide(body: dict[str, Any]) -> ServerAction:
        nonlocal now, most
        if "warm" in str(body["messages"]):
            return ServerAction.text("ok")
        now += 1
        most = max(most, now)
        if most >= 2:
            release.set()  # two are in: let them all go, the rest must still come two by two
        await release.wait()
        await anyio.sleep(0.01)
        now -= 1
        return ServerAction.text("ok")

    async with FakeOpenAIServer(decide) as server:
        model = OpenAIChatModel(base_url=server.base_url, api_key="k", max_in_flight=2)
        # Until the endpoint has answered once, admission sends one request at a time.
        await model.complete(ModelRequest(messages=(UserMessage(content="warm"),)))
        with anyio.fail_after(10):
            async with anyio.create_task_group() as tg:
                for _ in range(6):
                    tg.start_soon(model.complete, ASK)
        await model.aclose()
    assert most == 2


async def test_waiting_for_a_slot_does_not_count_against_the_timeout() -> None:
    """One slot, a 0.3 s timeout, and a first request that takes 0.5 s: the second waits for
    the slot longer than its timeout and still gets its answer."""

    async def decide(body: dict[str, Any]) -> ServerAction:
        if "slow" in str(body["messages"]):
            await anyio.sleep(0.5)
        return ServerAction.text("ok")

    slow = ModelRequest(messages=(UserMessage(content="slow"),))
    answers: list[str | None] = []

    async def ask(request: ModelRequest) -> None:
        answers.append((await model.complete(request)).message.content)

    async with FakeOpenAIServer(decide) as server:
        model = OpenAIChatModel(base_url=server.base_url, api_key="k", timeout=1.0, max_in_flight=1)
        with anyio.fail_after(10):
            async with anyio.create_task_group() as tg:
                tg.start_soon(ask, slow)
                await anyio.sleep(0.05)
                model.timeout = 0.3  # the second request's own allowance, shorter than its wait
                tg.start_soon(ask, ASK)
        await model.aclose()
    assert answers == ["ok", "ok"]


def test_max_in_flight_below_one_is_refused() -> None:
    with pytest.raises(ConfigurationError, match="max_in_flight"):
        OpenAIChatModel(base_url="http://127.0.0.1:9", api_key="k", max_in_flight=0)
