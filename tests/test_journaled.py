"""Journaled runs: record then replay, drift, resume after a crash, in-flight tool calls."""

from __future__ import annotations

import sqlite3
from collections import Counter, defaultdict
from collections.abc import AsyncIterator, Sequence
from contextlib import closing
from functools import partial
from pathlib import Path
from typing import Any

import anyio
import pytest

import agents
from agents import ConfigurationError, Tool, ToolContext, tool
from agents._own_text import own_text
from agents.errors import ModelRetryableError
from agents.models import ModelRequest
from agents.testing import ScriptedModel, call
from memory import Journal, ToolMessage
from memory.journal import JournalError, RunLocked
from orchestrator import Event, Limits, Orchestrator, RunConfig, RunResult
from orchestrator.events import (
    BudgetExhausted,
    BudgetWarning,
    PlanCreated,
    Replanned,
    RunFinished,
    SubtaskCancelled,
    SubtaskFailed,
    SubtaskFinished,
    SubtaskInvalidated,
)
from tests._team import WRITER, Team, opening, plan, script, sub

SYNTHESIS = RunConfig().synthesis_instructions

pytestmark = pytest.mark.anyio

# A guard against deadlocks, not a timing claim.
GUARD_S = 10
LOOP_EVENTS = (
    PlanCreated, SubtaskFinished, SubtaskFailed, SubtaskCancelled, SubtaskInvalidated, Replanned,
    BudgetWarning, BudgetExhausted, RunFinished,
)  # fmt: skip


class EchoTeam(Team):
    """A team whose writer answers with every result it was given, so equal answers mean equal
    results from every sub-agent."""

    async def _decide(self, request: ModelRequest) -> Any:
        if request.output is None and request.messages[0].content == SYNTHESIS:
            self.asked[WRITER].append(request)
            # Every result, without the prompt's layout (a copy of that is refused as paor's own).
            return "\n".join(line for line in opening(request).splitlines() if not own_text(line))
        return await super()._decide(request)


def shape(events: Sequence[Event]) -> tuple[list[tuple[str, str | None]], dict[str, list[str]]]:
    """A run's events as the loop emitted them (in order), and each agent's own events (in
    order). Sub-agents run concurrently, so how their events interleave is scheduling, not
    behaviour: it is the one thing compared per agent."""
    loop: list[tuple[str, str | None]] = [
        (e.type, e.subtask_id) for e in events if isinstance(e, LOOP_EVENTS)
    ]
    per_agent: defaultdict[str, list[str]] = defaultdict(list)
    for event in events:
        who = getattr(event, "agent_id", None) or getattr(event, "subtask_id", None)
        if who:
            per_agent[who].append(event.type)
    return loop, dict(per_agent)


def counting(counts: Counter[str], name: str = "lookup") -> Tool:
    """A lookup tool that counts its completed calls by key."""

    @tool(name=name)
    async def lookup(key: str) -> str:
        """Look a fact up.

        Args:
            key: What to look up.
        """
        counts[key] += 1
        return f"the value of {key}"

    return lookup


@pytest.fixture
async def journal(tmp_path: Path) -> AsyncIterator[Journal]:
    """An open, empty journal."""
    async with Journal(tmp_path / "journal.db") as opened:
        yield opened


def replan_team(counts: Counter[str]) -> tuple[Team, list[Tool]]:
    """Plan a, b (after a), c, d (after c). c calls `hold`, which never returns; once c is in
    it, b reports that the plan's premise is false; the replan drops c and d and adds e."""
    c_waiting = anyio.Event()

    @tool(timeout=None)
    async def hold(key: str) -> str:
        """Wait for something that never comes.

        Args:
            key: What to wait for.
        """
        c_waiting.set()
        await anyio.sleep_forever()
        raise AssertionError("unreachable")

    async def b(request: ModelRequest) -> Any:
        await c_waiting.wait()  # c is in flight before b's surprise arrives
        issue = call("report_issue", kind="invalidates", reason="the premise is false")
        return script(issue, "B: the premise is false")(request)

    team = Team(
        [plan(sub("a"), sub("b", "a"), sub("c"), sub("d", "c"))],
        {
            "a": script(call("lookup", key="a"), "A"),
            "b": b,
            "c": script(call("hold", key="c")),
            "e": script(call("lookup", key="e"), "E"),
        },
        replans=[{"remove": ["c", "d"], "add": [sub("e", "a")], "rationale": "c is moot"}],
    )
    return team, [counting(counts), hold]


async def test_replay_reproduces_a_run_with_a_replan_and_a_cancelled_subtask(
    journal: Journal,
) -> None:
    """A recorded run with a replan and an obsolete subtask stopped mid-call replays offline
    (no model, no tool) to the same answer, reports and events, with no drift."""
    counts: Counter[str] = Counter()
    team, tools = replan_team(counts)
    with anyio.fail_after(GUARD_S):
        recorded = await Orchestrator(team.model, tools, journal=journal).run("goal")
        offline = ScriptedModel([])  # any request would fail: the replay asks nothing
        report = await Orchestrator(offline, tools, journal=journal).replay(recorded.run_id)

    assert (recorded.diffs[0].cancelled, recorded.diffs[0].removed) == (("c",), ("d",))
    assert report.ok, report.drift
    assert report.result is not None
    assert report.result.answer == recorded.answer
    assert report.result.reports == recorded.reports
    assert report.result.diffs == recorded.diffs
    assert shape(report.result.events) == shape(recorded.events)
    assert sorted(e.type for e in report.result.events) == sorted(e.type for e in recorded.events)
    assert counts == {"a": 1, "e": 1}  # the replay ran no tool
    assert offline.requests == []


async def test_resume_stops_an_obsolete_subtask_whose_stop_was_not_recorded(
    journal: Journal,
) -> None:
    """A crash right after the replan was recorded, before c's cut was: on resume c's
    interrupted call runs live again, and the replan's stop still reaches it (its live exits
    are armed once only live work is left), so the run ends as the recorded one did."""
    counts: Counter[str] = Counter()
    team, tools = replan_team(counts)
    recorded = await Orchestrator(team.model, tools, journal=journal).run("goal")
    with closing(sqlite3.connect(journal.path)) as conn, conn:
        (replan,) = conn.execute(
            "SELECT max(rowid) FROM effects WHERE agent_id = 'planner' AND kind = 'model' "
            "AND payload_json LIKE '%remove%'"
        ).fetchone()
        conn.execute("DELETE FROM effects WHERE rowid > ?", (replan,))
        conn.execute("UPDATE runs SET status = 'running', owner = NULL, result_json = NULL")

    fresh, _ = replan_team(counts)
    with anyio.fail_after(GUARD_S):
        resumed = await Orchestrator(fresh.model, tools, journal=journal).resume(recorded.run_id)

    assert resumed.answer == recorded.answer
    assert [(r.agent_id, r.status, r.stop_reason) for r in resumed.reports] == [
        (r.agent_id, r.status, r.stop_reason) for r in recorded.reports
    ]
    assert counts == {"a": 1, "e": 2}  # e had not run when the journal was cut; a did


async def test_replay_reports_drift_when_the_code_asks_something_else(journal: Journal) -> None:
    """Replaying with different agent instructions (a configuration given to the replay wins
    over the recorded one): the first sub-agent request differs from the recorded one, the
    replay stops there and says where."""
    counts: Counter[str] = Counter()
    team = Team([plan(sub("a"))], {"a": script(call("lookup", key="a"), "A")})
    recorded = await Orchestrator(team.model, [counting(counts)], journal=journal).run("goal")

    changed = Orchestrator(ScriptedModel([]), [counting(counts)], journal=journal)
    report = await changed.replay(recorded.run_id, config=RunConfig(instructions="Be brief."))

    assert not report.ok
    assert report.result is None
    (drift,) = report.drift
    assert (drift.agent_id, drift.kind) == ("a", "model")
    assert drift.expected != drift.got
    assert drift.describe().startswith(f"a#{drift.seq}: asked for model ")
    assert counts == {"a": 1}


async def test_a_recorded_model_error_replays_as_the_same_error(journal: Journal) -> None:
    """A model failure is part of the recording: the replayed sub-agent meets the same error
    class and message, and ends the same way."""
    failing = ModelRetryableError("HTTP 503 from upstream", status=503, retry_after=2.0)
    team = Team([plan(sub("a"))], {"a": script(failing)})
    limits = Limits(max_replans=0)
    recorded = await Orchestrator(team.model, journal=journal, config=RunConfig(limits=limits)).run(
        "goal"
    )

    replayer = Orchestrator(ScriptedModel([]), journal=journal, config=RunConfig(limits=limits))
    report = await replayer.replay(recorded.run_id)

    assert report.ok, report.drift
    assert report.result is not None
    (replayed,) = report.result.reports
    assert replayed.status == "failed"
    assert replayed == recorded.reports[0]
    assert "model error: HTTP 503 from upstream" in replayed.notes


async def test_a_sub_agent_cut_by_its_deadline_replays_as_cut_by_its_deadline(
    journal: Journal,
) -> None:
    """A tool that outlives its agent's deadline is cut when recorded; the replay cuts the agent
    at the same call, for the same reason, without waiting for any clock."""

    @tool(timeout=None)
    async def stall(key: str) -> str:
        """Take forever.

        Args:
            key: What to wait for.
        """
        await anyio.sleep_forever()
        raise AssertionError("unreachable")

    team = Team([plan(sub("a"))], {"a": script(call("stall", key="a"))})
    limits = Limits(max_replans=0, agent=agents.AgentLimits(deadline_s=0.2))
    with anyio.fail_after(GUARD_S):
        recorded = await Orchestrator(
            team.model, [stall], journal=journal, config=RunConfig(limits=limits)
        ).run("g")
        replayer = Orchestrator(
            ScriptedModel([]), [stall], journal=journal, config=RunConfig(limits=limits)
        )
        report = await replayer.replay(recorded.run_id)

    (cut,) = recorded.reports
    assert cut.stop_reason == "deadline"
    assert report.ok, report.drift
    assert report.result is not None
    assert report.result.reports == recorded.reports
    assert shape(report.result.events) == shape(recorded.events)


async def _crash_when(
    orch: Orchestrator, entered: anyio.Event, run_id: str = "crashed-run"
) -> None:
    """Run `orch` and cancel the whole run the moment `entered` is set (a simulated crash)."""
    with anyio.fail_after(GUARD_S):
        async with anyio.create_task_group() as tg:
            tg.start_soon(partial(orch.run, "goal", run_id=run_id))
            await entered.wait()
            tg.cancel_scope.cancel()


def _chain_team(gate: str) -> EchoTeam:
    """a, then b (which looks up, then calls `gate`), then c, each citing its lookup."""
    return EchoTeam(
        [plan(sub("a"), sub("b", "a"), sub("c", "b"))],
        {
            "a": script(call("lookup", key="a"), "A found [lookup]"),
            "b": script(call("lookup", key="b"), call(gate, key="b"), "B found"),
            "c": script(call("lookup", key="c"), "C found"),
        },
    )


async def test_resume_after_a_crash_runs_no_completed_tool_again(journal: Journal) -> None:
    """A run cancelled mid-way (b's second tool in flight) is resumed: completed tool calls are
    served from the journal, the interrupted side-effecting call that takes a ToolContext runs
    again with the same idempotency key, and the answer equals an uninterrupted run's."""
    counts: Counter[str] = Counter()
    keys: list[str] = []
    entered = anyio.Event()
    crash = True

    @tool(timeout=None, side_effects=True)
    async def send(key: str, ctx: ToolContext) -> str:
        """Send something, once.

        Args:
            key: What to send.
        """
        keys.append(ctx.idempotency_key)
        if crash:
            entered.set()
            await anyio.sleep_forever()
        counts[f"send {key}"] += 1
        return f"sent {key}"

    tools = [counting(counts), send]
    await _crash_when(Orchestrator(_chain_team("send").model, tools, journal=journal), entered)
    info = await journal.run("crashed-run")
    assert info is not None
    assert info.status == "crashed"
    assert counts == {"a": 1, "b": 1}

    crash = False
    resumer = _chain_team("send")
    with anyio.fail_after(GUARD_S):
        resumed = await Orchestrator(resumer.model, tools, journal=journal).resume("crashed-run")
    assert counts == {"a": 1, "b": 1, "send b": 1, "c": 1}
    assert len(keys) == 2
    assert keys[0] == keys[1]
    assert resumer.of("a") == []  # a was served whole from the journal
    assert len(resumer.of("b")) == 1  # only b's turn after the interrupted call was asked

    fresh: Counter[str] = Counter()
    uninterrupted = await Orchestrator(_chain_team("send").model, [counting(fresh), send]).run(
        "goal"
    )
    assert resumed.answer == uninterrupted.answer
    assert "B found" in resumed.answer
    assert [r.status for r in resumed.reports] == ["done", "done", "done"]
    assert isinstance(resumed.events[0], PlanCreated)  # the resumed run's events are the whole run
    info = await journal.run("crashed-run")
    assert info is not None
    assert (info.status, info.owner) == ("complete", None)
    assert info.result is not None
    assert RunResult.model_validate(info.result).answer == resumed.answer


async def test_an_interrupted_side_effecting_call_without_a_key_is_not_repeated(
    journal: Journal,
) -> None:
    """A side-effecting tool with no ToolContext that was in flight at the crash is not run
    again on resume: the model is told its outcome is unverified."""
    counts: Counter[str] = Counter()
    attempts: list[str] = []
    entered = anyio.Event()

    @tool(timeout=None, side_effects=True)
    async def charge(key: str) -> str:
        """Charge a card.

        Args:
            key: What to charge for.
        """
        attempts.append(key)
        entered.set()
        await anyio.sleep_forever()
        raise AssertionError("unreachable")

    tools = [counting(counts), charge]
    await _crash_when(Orchestrator(_chain_team("charge").model, tools, journal=journal), entered)
    resumer = _chain_team("charge")
    with anyio.fail_after(GUARD_S):
        resumed = await Orchestrator(resumer.model, tools, journal=journal).resume("crashed-run")

    assert attempts == ["b"]
    assert counts == {"a": 1, "b": 1, "c": 1}
    (asked,) = resumer.of("b")
    result = asked.messages[-1]
    assert isinstance(result, ToolMessage)
    assert not result.ok
    assert "unverified: in flight when the run crashed; not repeated" in result.content
    assert resumed.status == "complete"


async def test_resume_refuses_a_held_run_and_a_finished_one(
    journal: Journal, tmp_path: Path
) -> None:
    """A second resumer of a run another live process holds gets RunLocked; a finished run
    cannot be resumed (only replayed)."""
    counts: Counter[str] = Counter()
    team = Team([plan(sub("a"))], {"a": script(call("lookup", key="a"), "A")})
    recorded = await Orchestrator(team.model, [counting(counts)], journal=journal).run("goal")
    await journal.begin("held", "goal")  # running, held by this live journal

    async with Journal(tmp_path / "journal.db") as other:
        orch = Orchestrator(ScriptedModel([]), [counting(counts)], journal=other)
        with pytest.raises(RunLocked, match="run held is held by another live process"):
            await orch.resume("held")
        with pytest.raises(JournalError, match=f"run {recorded.run_id} already ended"):
            await orch.resume(recorded.run_id)
        with pytest.raises(JournalError, match="no run nope"):
            await orch.replay("nope")


async def test_resume_and_replay_need_a_journal() -> None:
    """Without a journal there is nothing to resume or replay: a configuration error."""
    orch = Orchestrator(ScriptedModel([]))
    with pytest.raises(ConfigurationError, match=r"resume\(\) needs Orchestrator\(journal=...\)"):
        orch.stream_resume("x")
    with pytest.raises(ConfigurationError, match=r"replay\(\) needs Orchestrator\(journal=...\)"):
        await orch.replay("x")
