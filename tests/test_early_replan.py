"""A sub-agent's `report_issue(invalidates)` replans as it arrives, not after the agent's answer.

The replan and the reporting agent's last turn overlap: the planner is asked while the agent
still writes its answer, the agent is kept, and what the replan adds after it waits for that
answer. One finding is one replan; a run that may not replan sends nothing to its loop; and a
journal replays such a run offline, without drift.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from agents.events import IssueReported
from agents.models import ModelRequest
from agents.testing import ScriptedModel, call
from memory import AssistantMessage, Journal
from orchestrator import Event, Limits, Orchestrator, Plan, RunConfig, RunResult, Subtask
from orchestrator._drafts import removable_ids
from orchestrator.events import Replanned, SubtaskFinished, SubtaskStarted
from tests._team import PLANNER, Team, lookup, opening, plan, script, sub

pytestmark = pytest.mark.anyio

GUARD_S = 10  # a deadlock guard, not a timing claim
REASON = "the premise is false"


def team_of(replanned: anyio.Event | None) -> Team:
    """a reports that the plan's premise is false; its answer waits for `replanned` (set when the
    replan is seen), so a run that replanned only after the answer would never finish. The
    replan adds c after a."""

    async def a(request: ModelRequest) -> Any:
        step = sum(isinstance(m, AssistantMessage) for m in request.messages)
        if step == 0:
            return call("report_issue", kind="invalidates", reason=REASON)
        if replanned is not None:
            await replanned.wait()
        return "A: the premise is false."

    return Team(
        [plan(sub("a"), sub("b"))],
        {"a": a, "b": script(call("lookup", key="b"), "B"), "c": script("C")},
        replans=[{"remove": [], "add": [sub("c", "a")], "rationale": "route around it"}],
    )


async def run_streamed(
    orchestrator: Orchestrator, replanned: anyio.Event
) -> tuple[list[Event], RunResult]:
    """Run "goal", setting `replanned` as the first `Replanned` event goes by."""
    seen: list[Event] = []
    async with orchestrator.stream("goal") as events:
        async for event in events:
            seen.append(event)
            if isinstance(event, Replanned):
                replanned.set()
    return seen, events.result


async def test_the_replan_starts_while_the_reporting_agent_writes_its_answer() -> None:
    replanned = anyio.Event()
    team = team_of(replanned)
    with anyio.fail_after(GUARD_S):
        events, result = await run_streamed(Orchestrator(team.model, [lookup]), replanned)

    kinds = [(type(e).__name__, getattr(e, "subtask_id", None)) for e in events]
    (issue,) = [e for e in events if isinstance(e, IssueReported)]
    assert (issue.agent_id, issue.kind, issue.reason) == ("a", "invalidates", REASON)
    (replan,) = [e for e in events if isinstance(e, Replanned)]
    assert replan.diff.trigger == "a"
    assert REASON in replan.diff.reason
    assert replan.diff.kept == ("a", "b")  # the reporting agent goes on: it is not removable
    # The replan came before a's answer; c, after a, started only once a had finished.
    assert kinds.index(("Replanned", None)) < kinds.index(("SubtaskFinished", "a"))
    assert kinds.index(("SubtaskFinished", "a")) < kinds.index(("SubtaskStarted", "c"))
    assert "Result (done): A: the premise is false." in opening(team.of("c")[0])
    prompt = opening(team.of(PLANNER)[1])
    assert (
        f"Subtask a reported a problem: its result invalidates the plan's assumptions: {REASON}"
        in prompt
    )
    assert "- a [running]" in prompt
    assert len(team.of(PLANNER)) == 2  # one finding, one replan: a's report asks for no other
    finished = {e.subtask_id for e in events if isinstance(e, SubtaskFinished)}
    assert finished == {"a", "b", "c"}
    assert result.status == "complete", result.reason
    team.assert_clean()


async def test_a_run_that_may_not_replan_offers_no_report_issue() -> None:
    """With no replans allowed no one would act on an issue, so the tool is not on the menu: a
    model that calls it anyway is told it does not exist and goes on; nothing is replanned."""
    team = team_of(None)
    orchestrator = Orchestrator(
        team.model, [lookup], config=RunConfig(limits=Limits(max_replans=0))
    )
    with anyio.fail_after(GUARD_S):
        result = await orchestrator.run("goal")

    assert result.diffs == ()
    assert len(team.of(PLANNER)) == 1
    (a_report,) = [r for r in result.reports if r.agent_id == "a"]
    assert a_report.invalidates is None
    assert not any(isinstance(e, IssueReported) for e in result.events)
    assert [e.subtask_id for e in result.events if isinstance(e, SubtaskStarted)] == ["a", "b"]
    offered = {spec.name for r in team.of("a") for spec in r.tools}
    assert "report_issue" not in offered


async def test_a_run_replanned_on_an_issue_replays_without_drift(tmp_path: Path) -> None:
    replanned = anyio.Event()
    team = team_of(replanned)
    with anyio.fail_after(GUARD_S):
        async with Journal(tmp_path / "journal.db") as journal:
            _, recorded = await run_streamed(
                Orchestrator(team.model, [lookup], journal=journal), replanned
            )
            offline = ScriptedModel([])  # any request would fail: the replay asks nothing
            replaying = Orchestrator(offline, [lookup], journal=journal)
            report = await replaying.replay(recorded.run_id)

    assert report.ok, report.drift
    assert report.result is not None
    assert report.result.diffs == recorded.diffs
    assert report.result.reports == recorded.reports
    assert report.result.answer == recorded.answer
    assert offline.requests == []


def test_a_replan_never_removes_its_trigger() -> None:
    """Even when its finding lets a replan stop other running work, the trigger (still running
    while it writes its answer) is not removable."""
    current = Plan(
        subtasks=(
            Subtask(id="a", goal="Find a."),
            Subtask(id="b", goal="Find b."),
            Subtask(id="c", goal="Find c.", depends_on=("a",)),
        )
    )
    status = {"a": "running", "b": "running", "c": "pending"}
    assert removable_ids(current, status, "a", invalidated=True) == {"b", "c"}
    assert removable_ids(current, status, "a", invalidated=False) == {"c"}
