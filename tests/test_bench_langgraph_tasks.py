"""LangGraph's functional-API plan-and-execute shape ("tasks") against the simulator, over HTTP.

Each subtask must start when its own dependencies are done (no superstep barrier), and an
invalidation must be replanned while the other workers run.
"""

from __future__ import annotations

import pytest

pytest.importorskip("langgraph")

from benchmarks._catalogue import SCENARIOS
from benchmarks._langgraph import run_langgraph
from benchmarks._run import RunRecord
from benchmarks._scenarios import Scenario, Sub
from benchmarks._sim import Who

pytestmark = pytest.mark.anyio


def _spans(record: RunRecord) -> tuple[dict[str, float], dict[str, float]]:
    """Each subtask's first request and last answer, by id."""
    first: dict[str, float] = {}
    last: dict[str, float] = {}
    for e in record.log:
        if e.who.kind == "agent":
            first[e.who.name] = min(first.get(e.who.name, e.received), e.received)
            last[e.who.name] = max(last.get(e.who.name, e.answered), e.answered)
    return first, last


def _surviving_keys(scenario: Scenario) -> set[str]:
    return {
        Who("agent", s.id, step).key
        for s in scenario.subs.values()
        if s.id not in scenario.removed
        for step in range(len(s.turns()))
    }


def _scripted(scenario: Scenario, sub: Sub) -> float:
    """The subtask's own latency (model calls and lookups) in the scenario's latency model."""
    lat = scenario.latency
    model = sum(
        lat.model_call(Who("agent", sub.id, i).key, t.completion_tokens)
        for i, t in enumerate(sub.turns())
    )
    return model + sum(lat.tool_call(k, sub.slow) for k in sub.lookups())


async def _run(name: str) -> tuple[Scenario, RunRecord]:
    scenario = SCENARIOS[name]
    record = await run_langgraph(scenario, shape="tasks")
    assert record.framework == "langgraph-tasks"
    assert record.error is None, record.error
    assert record.answer.startswith(f"Final answer for {name}")
    kinds = [e.who.kind for e in record.log]
    assert kinds[0] == "plan"
    assert kinds[-1] == "synthesis"
    assert all(e.fault is None for e in record.log)
    keys = {e.who.key for e in record.log}
    assert _surviving_keys(scenario) <= keys
    return scenario, record


async def test_s3_each_subtask_starts_on_its_own_dependencies() -> None:
    """On S3 a dependent starts after its own deps' last answers, and c1 (l1, l2) before l3 ends."""
    scenario, record = await _run("S3")
    first, last = _spans(record)
    assert set(first) == set(scenario.subs)
    for sub in scenario.subs.values():
        for dep in sub.deps:
            assert first[sub.id] >= last[dep], (sub.id, dep)
    # The check below means something: l3 alone outlasts l1 and l2 by tens of milliseconds.
    subs = scenario.subs
    margin = _scripted(scenario, subs["l3"]) - max(
        _scripted(scenario, subs["l1"]), _scripted(scenario, subs["l2"])
    )
    assert margin > 0.05
    assert first["c1"] < last["l3"]  # no barrier: c1 did not wait for its sibling wave
    assert first["c1"] - max(last["l1"], last["l2"]) < margin


async def test_s5_replans_while_workers_run_and_drops_removed_subtasks() -> None:
    """On S5, b's invalidation is replanned while a and c still run; c is cancelled, e and f never
    start, and e2 waits for the replan."""
    scenario, record = await _run("S5")
    (replan,) = [e for e in record.log if e.who.kind == "replan"]
    first, last = _spans(record)
    assert replan.received >= last["b"]
    assert replan.received < last["a"]  # a was still running: the replan did not wait for it
    assert "e" not in first
    assert "f" not in first
    assert all(e.received < replan.answered for e in record.log if e.who.name == "c")
    assert len([e for e in record.log if e.who.name == "c"]) < len(scenario.subs["c"].turns())
    assert first["e2"] >= replan.answered
    assert first["f2"] >= max(last["d"], last["e2"])


def test_the_workers_history_hook_masks_old_results_and_never_the_latest_turn() -> None:
    """S10's user-written `pre_model_hook`: the oldest tool results give way while the history is
    over its budget; the task, every call and the latest turn's results stay."""
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

    from benchmarks._langgraph import mask_old_results

    messages: list[object] = [HumanMessage("Task: [sub:a] read")]
    for i in range(3):
        call = {"name": "lookup", "args": {"key": f"a.{i}"}, "id": f"c{i}"}
        messages += [
            AIMessage("", tool_calls=[call]),
            ToolMessage("x" * 4000, tool_call_id=f"c{i}"),
        ]
    hook = mask_old_results(max_tokens=1500)  # 3,000 tokens of results: two must go
    shown = hook({"messages": messages})["llm_input_messages"]
    assert [m.content for m in shown if isinstance(m, ToolMessage)] == [
        "[old tool result elided]", "[old tool result elided]", "x" * 4000,
    ]  # fmt: skip
    assert shown[0] == messages[0]
    assert [m for m in shown if isinstance(m, AIMessage)] == messages[1::2]
    assert mask_old_results(max_tokens=10_000)({"messages": messages})["llm_input_messages"] == (
        messages
    )
