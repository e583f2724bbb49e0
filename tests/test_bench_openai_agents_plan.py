"""The OpenAI Agents SDK's parallel pattern as a benchmark peer, over HTTP against the simulator.

Runs only where the peer environment (benchmarks/.peer-venv) is already installed and works; the test
never installs it.
"""

from __future__ import annotations

import pytest

from benchmarks import _openai_agents as oa
from benchmarks._catalogue import SCENARIOS
from benchmarks._run import RunRecord
from benchmarks._scenarios import Scenario
from benchmarks._sim import Exchange, Who

pytestmark = pytest.mark.anyio


async def _require_peer() -> None:
    if not oa.PYTHON.exists():
        pytest.skip(f"no peer environment at {oa.VENV}")
    if not await oa.peer_ready():
        pytest.skip(f"the peer environment at {oa.VENV} does not import {oa.PIN}")


def _agent(record: RunRecord, sub_id: str) -> list[Exchange]:
    return [e for e in record.log if e.who.kind == "agent" and e.who.name == sub_id]


def _blocked(scenario: Scenario) -> set[str]:
    """Removed subtasks that wait, directly or not, on a replan's trigger: they never start."""
    triggers = {r.trigger for r in scenario.replans}
    found: set[str] = set()
    changed = True
    while changed:
        changed = False
        for sub in scenario.subs.values():
            waits = any(d in triggers or d in found for d in sub.deps)
            if sub.id in scenario.removed and sub.id not in found and waits:
                found.add(sub.id)
                changed = True
    return found


@pytest.mark.parametrize(("name", "warmup"), [("S3", 0), ("S5", 1)])
async def test_plan_peer_runs_every_surviving_subtask(name: str, warmup: int) -> None:
    await _require_peer()
    scenario = SCENARIOS[name]
    record = await oa.run_openai_agents_plan(scenario, warmup=warmup)

    assert record.error is None
    assert record.framework == "openai-agents-plan"
    assert record.answer == scenario.script().reply(Who("synthesis", "", 0)).content
    assert record.wall_s > 0
    assert not [e for e in record.log if e.fault]
    kinds = [e.who.kind for e in record.log]
    # The SDK names every output schema "final_output": the simulator knows plans by their title.
    assert kinds.count("plan") == 1
    assert kinds.count("replan") == len(scenario.replans)
    assert kinds.count("synthesis") == 1
    assert "mono" not in kinds

    survivors = [s for s in scenario.subs.values() if s.id not in scenario.removed]
    for sub in survivors:
        steps = sorted(e.who.step for e in _agent(record, sub.id))
        assert steps == list(range(len(sub.turns()))), sub.id
    for sub_id in _blocked(scenario):
        assert not _agent(record, sub_id), f"{sub_id} started though its trigger was replanned"

    (plan,) = [e for e in record.log if e.who.kind == "plan"]
    (synthesis,) = [e for e in record.log if e.who.kind == "synthesis"]
    work = [e for sub in survivors for e in _agent(record, sub.id)]
    work += [e for e in record.log if e.who.kind == "replan"]
    assert all(plan.answered <= e.received for e in work)
    assert all(e.answered <= synthesis.received for e in work)


async def test_plan_peer_starts_dependents_after_their_dependencies() -> None:
    await _require_peer()
    scenario = SCENARIOS["S3"]
    record = await oa.run_openai_agents_plan(scenario)

    assert record.error is None
    for sub in scenario.plan:
        if not sub.deps:
            continue
        first = min(e.received for e in _agent(record, sub.id))
        for dep in sub.deps:
            last = max(e.answered for e in _agent(record, dep))
            assert last <= first, f"{sub.id} asked before {dep} answered"
