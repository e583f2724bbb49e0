"""A reply that cannot be read was still made and billed: its tokens and its request are charged
to the budget like any reply's, over HTTP, in the journal and on replay."""

from __future__ import annotations

from pathlib import Path

import pytest

from agents import AgentLimits, Executor, OpenAIChatModel, Usage, tool
from agents.errors import MalformedResponse
from agents.models import PRICES
from agents.testing import (
    FakeOpenAIServer,
    FunctionModel,
    ServerAction,
    by_purpose,
    call,
    reply,
)
from agents.testing._actions import TokenUsage
from memory import Journal
from orchestrator import Limits, Orchestrator, RunConfig
from orchestrator.testing import plan_reply, subtask, synthesis_reply

pytestmark = pytest.mark.anyio

UNREADABLE = '<tool_call>{"name": "population", "arguments": {"city": '  # cut off mid-call


@tool
async def population(city: str) -> int:
    """The population of a city.

    Args:
        city: The city's name.
    """
    return 522_250


async def test_an_unreadable_reply_is_charged_like_any_reply() -> None:
    """Its request and tokens count, and its dollars at the model's price."""
    script = [
        ServerAction.text(UNREADABLE, usage=TokenUsage(prompt_tokens=100, completion_tokens=20)),
        ServerAction.text(
            "Lyon has 522,250 people.", usage=TokenUsage(prompt_tokens=150, completion_tokens=10)
        ),
    ]
    async with FakeOpenAIServer(script) as server:
        model = OpenAIChatModel("gpt-4.1-mini", base_url=server.base_url, api_key="test")
        try:
            report = await Executor(model, tools=[population]).run("How many people live in Lyon?")
        finally:
            await model.aclose()
    usage = report.usage
    assert (usage.requests, usage.prompt_tokens, usage.completion_tokens) == (2, 250, 30)
    assert usage.cost == pytest.approx(PRICES["gpt-4.1-mini"].dollars(250, 0, 30))


async def test_unreadable_replies_count_against_the_token_limit() -> None:
    """Tokens spent on replies that could not be read end the loop when they reach the limit."""
    script = [
        ServerAction.text(UNREADABLE, usage=TokenUsage(prompt_tokens=180, completion_tokens=40)),
        ServerAction.text(
            "Lyon has 522,250 people.", usage=TokenUsage(prompt_tokens=10, completion_tokens=5)
        ),
        ServerAction.text(
            "Lyon has 522,250 people.", usage=TokenUsage(prompt_tokens=10, completion_tokens=5)
        ),
    ]
    async with FakeOpenAIServer(script) as server:
        model = OpenAIChatModel("gpt-4.1-mini", base_url=server.base_url, api_key="test")
        executor = Executor(model, tools=[population], limits=AgentLimits(max_tokens=200))
        try:
            report = await executor.run("How many people live in Lyon?")
        finally:
            await model.aclose()
    assert report.stop_reason == "tokens"
    assert report.usage.total_tokens >= 220


async def test_the_charge_of_an_unreadable_reply_is_journaled_and_replayed(tmp_path: Path) -> None:
    """The journal keeps what the unreadable reply cost, so a replay spends the same."""
    spent = Usage(requests=1, prompt_tokens=100, completion_tokens=20)
    model = FunctionModel(
        by_purpose(
            plan=plan_reply(subtask("a", "Find the population of Lyon.")),
            step=[
                MalformedResponse("cannot be read", raw=UNREADABLE, usage=spent),
                call("population", city="Lyon"),
                reply("522,250"),
            ],
            synthesis=synthesis_reply("Lyon has 522,250 people."),
        )
    )
    async with Journal(tmp_path / "journal.db") as journal:
        config = RunConfig(limits=Limits(max_replans=0))
        recorded = await Orchestrator(model, [population], journal=journal, config=config).run(
            "How many people live in Lyon?"
        )
        replayer = Orchestrator(FunctionModel(by_purpose()), [population], journal=journal)
        replay = await replayer.replay(recorded.run_id)
    assert replay.ok, replay.drift
    assert replay.result is not None
    (report,) = recorded.reports
    assert report.usage.prompt_tokens >= 100  # the unreadable reply's tokens are in
    assert replay.result.usage == recorded.usage
