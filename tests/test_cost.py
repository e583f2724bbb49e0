"""A budget in dollars: every model call priced from a price table, `Limits(max_cost=...)` as an
exit like tokens and requests, and `result.usage.cost` saying what a run cost."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from agents import AgentLimits, Budget, ConfigurationError, Executor, Usage
from agents.models import PRICES, ModelResponse, Price
from agents.testing import ScriptedModel, call, reply
from orchestrator import BatchTask, Limits, Orchestrator, RunConfig, run_batch
from orchestrator.events import BudgetExhausted, BudgetWarning
from orchestrator.temporal._inputs import Allowance
from tests._team import Team, lookup, plan, script, sub

pytestmark = pytest.mark.anyio

GUARD_S = 10.0
MINI = PRICES["gpt-4.1-mini"]  # 0.40 in, 0.10 cached, 1.60 out per million


def priced_reply(text: str, prompt: int, completion: int, *, model: str = "") -> ModelResponse:
    """A final answer with stated tokens and, optionally, the model the endpoint says answered."""
    return reply(text, prompt_tokens=prompt, completion_tokens=completion).model_copy(
        update={"model": model}
    )


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("gpt-4.1-mini", "gpt-4.1-mini"),
        ("gpt-4.1-mini-2025-04-14", "gpt-4.1-mini"),  # a dated snapshot: its family's price
        ("gpt-4o-mini-2024-07-18", "gpt-4o-mini"),  # the longest match, not "gpt-4o"
        ("openai/gpt-4.1-nano", "gpt-4.1-nano"),  # a routed name: its last part
        ("GPT-4.1", "gpt-4.1"),
    ],
)
def test_a_model_is_priced_by_its_family_in_the_table(name: str, expected: str) -> None:
    assert Price.of(name) == PRICES[expected]


@pytest.mark.parametrize("name", ["qwen2.5-coder-0.5b", "gpt-4.1x", "", "o3mini"])
def test_a_model_the_table_does_not_know_has_no_price(name: str) -> None:
    assert Price.of(name) is None


def test_cached_prompt_tokens_are_billed_at_the_cached_price() -> None:
    # 1M prompt tokens, 600k of them cached, and 100k completion tokens
    dollars = MINI.dollars(1_000_000, 600_000, 100_000)
    assert dollars == pytest.approx(0.4 * 0.40 + 0.6 * 0.10 + 0.1 * 1.60)
    assert Price(input=1.0, output=2.0).dollars(1_000_000, 500_000, 0) == pytest.approx(1.0)


def test_a_price_cannot_be_negative() -> None:
    with pytest.raises(ValueError, match="greater than or equal to 0"):
        Price(input=-1.0, output=1.0)


def test_a_ledger_prices_by_the_answering_model_then_the_sender() -> None:
    budget = Budget(prices={"House": Price(input=1.0, output=1.0)})  # any case
    answered = priced_reply("x", 1_000_000, 0, model="gpt-4.1-2025-04-14")
    assert budget.priced_usage(answered.usage, answered.model, "house").cost == pytest.approx(2.00)
    unnamed = priced_reply("x", 1_000_000, 0)
    assert budget.priced_usage(unnamed.usage, unnamed.model, "house").cost == pytest.approx(1.0)
    nobody = priced_reply("x", 1_000_000, 0, model="unknown-model")
    assert budget.priced_usage(nobody.usage, nobody.model, "also-unknown").cost == 0.0


def test_a_child_ledger_prices_with_its_parents_table_and_is_capped_by_its_dollars() -> None:
    parent = Budget(max_cost=0.5, prices={"house": Price(input=1.0, output=1.0)})
    child = Budget(parent=parent)
    child.charged(priced_reply("x", 300_000, 0), "house")
    assert child.exhausted(now=0.0) is None
    assert child.cost_left() == pytest.approx(0.2)
    child.charged(priced_reply("x", 200_000, 0), "house")
    assert child.exhausted(now=0.0) == "cost"
    assert parent.used.cost == pytest.approx(0.5)


async def test_a_run_reports_what_its_calls_cost() -> None:
    """Planner, sub-agents and writer are each priced, cached tokens at the cached rate."""
    team = Team(
        [plan(sub("a"))],
        {"a": script(reply("A", prompt_tokens=2_000, completion_tokens=500))},
        planner_tokens=(1_000, 200),
        synthesis=reply("The answer.", prompt_tokens=3_000, completion_tokens=300),
    )
    prices = {"team": Price(input=2.0, output=8.0)}
    config = RunConfig(limits=Limits(prices=prices))
    with anyio.fail_after(GUARD_S):
        result = await Orchestrator(team.model, config=config).run("goal")
    expected = (1_000 + 2_000 + 3_000) * 2.0 / 1e6 + (200 + 500 + 300) * 8.0 / 1e6
    assert result.usage.cost == pytest.approx(expected)
    assert sum(r.usage.cost for r in result.reports) == pytest.approx(
        (2_000 * 2.0 + 500 * 8.0) / 1e6
    )


async def test_a_spent_dollar_budget_ends_the_run_with_a_partial_answer() -> None:
    """Like tokens or requests: nothing new starts, and the run synthesises what it has."""
    team = Team(
        [plan(sub("a"), sub("b", "a"))],
        {
            "a": script(reply("A's answer", prompt_tokens=1_000, completion_tokens=100)),
            "b": script(reply("B", prompt_tokens=1_000, completion_tokens=100)),
        },
        planner_tokens=(1_000, 100),
        synthesis="Partial: A's answer.",
    )
    # 1 dollar per thousand tokens: the planner's call spends 1.1 of 2.0, the first answer the rest
    limits = Limits(max_cost=2.0, prices={"team": Price(input=1_000.0, output=1_000.0)})
    with anyio.fail_after(GUARD_S):
        result = await Orchestrator(team.model, config=RunConfig(limits=limits)).run("goal")
    (exhausted,) = [e for e in result.events if isinstance(e, BudgetExhausted)]
    assert exhausted.reason == "cost"
    assert [e.resource for e in result.events if isinstance(e, BudgetWarning)] == ["cost"]
    assert result.status == "incomplete"
    assert result.reason is not None
    assert "the cost budget ran out" in result.reason
    assert result.answer == "Partial: A's answer."
    assert not team.of("b")
    assert result.usage.cost >= 2.0


@pytest.mark.parametrize(
    "limits",
    [Limits(max_cost=1.0), Limits(agent=AgentLimits(max_cost=1.0))],
    ids=["run", "sub-agents"],
)
async def test_a_dollar_cap_on_a_model_without_a_price_fails_before_the_run(
    limits: Limits,
) -> None:
    """A cap that could never be reached is a configuration error, said at once, in one line."""
    model = ScriptedModel([], name="qwen2.5-coder-0.5b")
    orch = Orchestrator(model, config=RunConfig(limits=limits))
    with pytest.raises(ConfigurationError, match="has none") as raised:
        await orch.run("goal")
    assert "qwen2.5-coder-0.5b" in str(raised.value)
    assert "Limits(prices=" in str(raised.value)
    assert "\n" not in str(raised.value)
    assert model.requests == []
    priced = limits.model_copy(update={"prices": {"qwen2.5-coder": Price(input=0, output=0)}})
    priced.check_priced(model.name)  # a price of one's own: the run may start


async def test_an_agent_stops_when_its_dollars_are_spent() -> None:
    model = ScriptedModel(
        [
            call("lookup", key="a").model_copy(update={"model": "gpt-4.1"}),
            call("lookup", key="b"),
            reply("never reached"),
        ],
        name="gpt-4.1-mini",
    )
    executor = Executor(model, [lookup], limits=AgentLimits(max_cost=0.000_001))
    with anyio.fail_after(GUARD_S):
        report = await executor.run("Find a and b.")
    assert report.stop_reason == "cost"
    assert report.status in {"partial", "blocked"}
    assert report.usage.cost > 0
    assert len(model.requests) <= 2


async def test_an_agent_with_a_dollar_cap_and_no_price_says_so() -> None:
    executor = Executor(ScriptedModel([], name="house-model"), limits=AgentLimits(max_cost=1.0))
    with pytest.raises(ConfigurationError, match="'house-model'"):
        await executor.run("task")


async def test_a_batch_shares_one_dollar_budget(tmp_path: Path) -> None:
    """Tasks stop starting once the batch's dollars are spent; the rest stay to run again."""
    turns = [priced_reply(f"answer {i}", 1_000, 0) for i in range(5)]
    executor = Executor(ScriptedModel(turns, name="gpt-4.1-mini"))
    tasks = [BatchTask(id=f"t{i}", goal=f"goal {i}") for i in range(5)]
    limits = Limits(max_cost=0.0008)  # each answer costs 1,000 × $0.40/M = $0.0004
    with anyio.fail_after(GUARD_S):
        summary = await run_batch(
            tasks, executor=executor, out=tmp_path / "out.jsonl", limits=limits, concurrency=1
        )
    assert summary.statuses["done"] == 2
    assert summary.not_started == 3
    assert summary.cost == pytest.approx(0.0008)
    assert "($0.0008)" in summary.line()


def test_a_temporal_child_gets_the_dollars_its_run_has_left() -> None:
    prices = {"house": Price(input=1.0, output=1.0)}
    run = Budget(max_cost=1.0, prices=prices)
    run.charge(Usage(cost=0.25))
    allowance = Allowance.model_validate_json(Allowance.of(run).model_dump_json())
    child = allowance.budget()
    assert child.cost_left() == pytest.approx(0.75)
    assert child.priced_usage(priced_reply("x", 1_000_000, 0).usage, "house").cost == 1.0
    assert Allowance.of(Budget()).prices is None


def test_usage_adds_cost() -> None:
    assert (Usage(cost=0.5) + Usage(cost=0.25)).cost == 0.75
