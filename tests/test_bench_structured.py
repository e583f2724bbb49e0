"""S13 (structured work) and what the suite measures of reading: the parallel agent is no oracle,
every lookup's fact is checked to the final answer, and a framework that reads less shows it."""

from __future__ import annotations

import json

import pytest

from benchmarks._catalogue import SCENARIOS, s13
from benchmarks._facts import Reading, fact_of, facts_in, restate
from benchmarks._figures import reading
from benchmarks._paor import run_orchestrator
from benchmarks._react import run_parallel
from benchmarks._scenarios import Replan, Scenario, Sub
from benchmarks._sim import SimRequest, classify, tool_text
from orchestrator._plan_checks import same_question
from orchestrator._prompts import CHAINS_FIRST

pytestmark = pytest.mark.anyio


def test_the_parallel_agent_starts_what_a_later_result_invalidates() -> None:
    """S5: b's one lookup invalidates c, e and f; the agent cannot know that before b's result,
    so its first turn starts c as well, and the replacements start only after it."""
    assert SCENARIOS["S5"].par_turns == (
        ("a.0", "b.0", "c.0"),
        ("a.1", "e2.0"),
        ("a.2", "e2.1"),
        ("d.0",),
        ("f2.0",),
    )


def test_a_replan_added_by_a_replan_applies_once_its_own_trigger_finishes() -> None:
    scenario = Scenario(
        name="T",
        title="t",
        plan=(Sub(id="a", steps=2, invalidates="x"), Sub(id="x", steps=4)),
        replans=(
            Replan(trigger="a", remove=("x",), add=(Sub(id="b", deps=("a",), invalidates="y"),)),
            Replan(trigger="b", add=(Sub(id="c", deps=("b",)),)),
        ),
    )
    assert scenario.par_turns == (("a.0", "x.0"), ("a.1", "x.1"), ("b.0",), ("c.0",))


def test_s13_is_ten_uneven_branches_of_long_results_and_a_join_over_all_of_them() -> None:
    scenario = s13()
    branches = [s for s in scenario.plan if s.id != "join"]
    assert sorted(s.steps for s in branches) == [1, 1, 2, 2, 3, 3, 4, 4, 5, 5]
    (join,) = [s for s in scenario.plan if s.id == "join"]
    assert (join.steps, set(join.deps)) == (2, {s.id for s in branches})
    assert (scenario.tool_tokens, scenario.context_window) == (800, 128_000)
    assert (scenario.latency.jitter, scenario.facts) == (0.5, True)
    assert scenario.latency.prefill_s > 0
    assert scenario.result_text("b3.1").endswith(fact_of("b3.1"))
    variant = s13(invalidating=True)
    assert variant.removed == {"b9", "join"}
    assert "b9.0" in variant.par_turns[0]  # started before b0's result says otherwise
    assert "b9.1" not in {k for turn in variant.par_turns for k in turn}


def test_a_restating_reply_says_exactly_the_facts_its_prompt_carried() -> None:
    texts = [f"result {fact_of('a.0')}", f"{fact_of('b.1')} and fact:c.2=v1"]  # c.2's is forged
    assert facts_in(texts) == {"a.0", "b.1"}
    assert restate("Facts: {facts}.", {"b.1", "a.0"}) == (
        f"Facts: {fact_of('a.0')}; {fact_of('b.1')}."
    )
    assert restate("Facts: {facts}.", ()) == "Facts: no facts."


def test_the_read_share_is_the_longest_run_of_each_result_any_prompt_carried() -> None:
    whole, cut = tool_text("a.0", 100), tool_text("b.0", 100)
    reading_ = Reading()
    reading_.observe(SimRequest(messages=[{"role": "tool", "content": whole}]).texts())
    reading_.observe([f"[OBSERVE] lookup ok\n{cut[: len(cut) // 2]}"])
    assert reading_.share({"a.0": whole}) == 1.0
    assert reading_.share({"b.0": cut}) == pytest.approx(0.5, abs=0.02)
    assert reading_.share({"c.0": tool_text("c.0", 100)}) == 0.0  # never looked up: never read
    assert reading_.share({}) is None


async def test_every_fact_reaches_the_final_answer_when_results_are_read_whole() -> None:
    """paor (lookups behind a 128k window: tool results and results handed on uncut) and the
    parallel agent both carry every looked-up fact to the final answer's prompt."""
    scenario = s13(invalidating=True)
    for record in (await run_orchestrator(scenario, http=False), await run_parallel(scenario)):
        assert record.error is None, record.error
        found = reading(record, scenario)
        assert found["facts_reached"] == found["facts_needed"] == len(scenario.mono_keys)
        assert found["read_share"] == 1.0


async def test_s13s_join_asks_the_goal_after_every_branch_so_paor_writes_no_synthesis() -> None:
    """The join is the plan's last step and asks the goal itself: its answer is the run's, and
    it carries every fact (the test above); the parallel agent's last turn writes it alike."""
    for scenario in (s13(), s13(invalidating=True)):
        record = await run_orchestrator(scenario, http=False)
        assert record.error is None, record.error
        joins = [s for s in scenario.subs.values() if s.asks]
        assert [s.id for s in joins] == (["join", "join2"] if scenario.replans else ["join"])
        assert all(same_question(s.goal, scenario.goal) for s in joins)
        assert [e for e in record.log if e.who.kind == "synthesis"] == []


def test_a_planner_asked_for_the_longest_chains_first_writes_them_first() -> None:
    """The subtasks that need no other, by the steps of the longest chain each begins, then the
    rest as planned; the simulated planner writes that order when paor's prompt asks for it."""
    assert [s.id for s in SCENARIOS["S3"].chains_first] == ["l3", "l2", "l4", "l1", "c1", "c2", "f"]
    order = [s.id for s in s13().chains_first]
    assert order[:2] == ["b8", "b9"]
    assert order[-3:] == ["b0", "b1", "join"]
    plan_format = {"type": "json_schema", "json_schema": {"name": "plan", "schema": {}}}
    for asked, expected in ((f"Goal: g\n\n{CHAINS_FIRST}", "l3"), ("Goal: g", "l1")):
        request = SimRequest(
            messages=[{"role": "user", "content": asked}], response_format=plan_format
        )
        who = classify(request)
        reply = SCENARIOS["S3"].script().reply(who)
        assert json.loads(reply.content or "")["subtasks"][0]["id"] == expected


async def test_a_framework_that_cuts_results_is_seen_to_lose_facts() -> None:
    """The same run with paor's default cuts (S13 without its window: tool results at 2,000
    characters, results handed on at 1,500) loses facts: the check can fail."""
    scenario = Scenario(
        name="S13-cut", title="t", plan=s13().plan, tool_tokens=800, latency=s13().latency,
        facts=True,
    )  # fmt: skip
    record = await run_orchestrator(scenario, http=False)
    found = reading(record, scenario)
    assert found["facts_reached"] < found["facts_needed"]
    assert found["read_share"] < 1.0
