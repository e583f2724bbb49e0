"""Durable pauses: a journaled run whose approver leaves decisions to later pauses once nothing
but approvals is left; the process exits, and another process decides and continues the run with
nothing completed repeated (counted at the model and at the tools). Two people deciding one pause:
one wins. A decision for what a run does not wait for is refused in one line. The time a run
waits for people does not count against its deadline."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import pytest

from agents.approvals import PAUSE, Approver, Decision
from agents.events import ApprovalDecided, ApprovalRequested
from memory import Journal
from memory.journal import JournalError
from orchestrator import Limits, Orchestrator
from orchestrator.cli import main
from orchestrator.events import RunPaused
from tests._pause_child import APPROVER, RUN_ID, orchestrator, team

pytestmark = pytest.mark.anyio

ROOT = Path(__file__).resolve().parent.parent
GUARD_S = 45  # a guard against a hung child, not a timing claim


async def _child(mode: str, tmp: Path, out: str, *decisions: str) -> dict[str, Any]:
    command = [
        sys.executable, "-m", "tests._pause_child", mode, str(tmp / "journal.db"),
        str(tmp / "ledger"), str(tmp / out), *decisions,
    ]  # fmt: skip
    with anyio.fail_after(GUARD_S):
        done = await anyio.run_process(command, cwd=ROOT, check=False)
    assert done.returncode == 0, done.stderr.decode()[-3000:]
    data: dict[str, Any] = json.loads((tmp / out).read_text())
    return data


def _ledger(tmp: Path) -> list[str]:
    return (tmp / "ledger").read_text().splitlines()


async def test_a_paused_run_goes_on_in_other_processes_repeating_nothing(tmp_path: Path) -> None:
    """Plan review, then a tool approval: each pause ends its process; each decision comes from
    a new one; every model request and tool call happens once across the three."""
    first = await _child("run", tmp_path, "1.json")
    assert (first["status"], first["waiting"], first["kinds"]) == ("paused", ["run#4"], ["plan"])
    assert first["asked"] == {"planner": 1, "writer": 0, "a": 0, "b": 0}

    second = await _child("resume", tmp_path, "2.json", "run#4=approve")
    assert (second["status"], second["kinds"]) == ("paused", ["tool"])
    (waits,) = second["waiting"]
    assert waits.startswith("b#")
    assert second["asked"]["planner"] == 0  # the plan is not asked for again
    assert "transfer 40" not in _ledger(tmp_path)

    third = await _child("resume", tmp_path, "3.json", f"{waits}=approve")
    assert third["status"] == "complete"
    # Where each process stopped depends on the machine's speed (a pause waits until only
    # approvals are left); what is guaranteed is the whole: every request and call once.
    asked = {who: sum(r["asked"][who] for r in (first, second, third)) for who in first["asked"]}
    assert asked == {"planner": 1, "writer": 1, "a": 2, "b": 2}
    assert sorted(_ledger(tmp_path)) == ["lookup a", "transfer 40"]


async def _paused_run(tmp_path: Path, **limits: Any) -> tuple[Journal, Orchestrator]:
    journal = await Journal(tmp_path / "journal.db").open()
    orch = orchestrator(team(), journal, tmp_path / "ledger")
    if limits:
        orch = orch.clone(config=orch.config.model_copy(update={"limits": Limits(**limits)}))
    with anyio.fail_after(GUARD_S):
        result = await orch.run("Pay what is owed.", run_id=RUN_ID, approver=APPROVER)
    assert result.status == "paused"
    return journal, orch


async def test_what_waits_is_journaled_and_listed(tmp_path: Path) -> None:
    """The paused run's status, what it waits for (the plan, drawn), and the RunPaused event."""
    journal, orch = await _paused_run(tmp_path)
    async with journal:
        info = await journal.run(RUN_ID)
        assert info is not None
        assert info.status == "paused"
        assert not info.finished
        (waiting,) = await journal.waiting()
        assert (waiting.run_id, waiting.approval_id) == (RUN_ID, "run#4")
        assert waiting.request["kind"] == "plan"
        assert "- [b] Pay the invoice." in waiting.request["description"]
        assert waiting.decision is None
        result = await orch.resume(
            RUN_ID, decisions={"run#4": Decision.approve()}, approver=APPROVER
        )
        paused = [e for e in result.events if isinstance(e, RunPaused)]
        assert [w.kind for w in paused[-1].waiting] == ["tool"]
        assert [w.kind for w in result.waiting] == ["tool"]


async def test_of_two_people_deciding_one_pause_one_wins(tmp_path: Path) -> None:
    """The second decision is refused, naming the first; the run goes on with the first."""
    journal, orch = await _paused_run(tmp_path)
    async with journal:
        await journal.decide(RUN_ID, "run#4", Decision.approve().model_dump(mode="json"))
        with pytest.raises(
            JournalError, match=r"run#4 of run paused was already decided \(approve"
        ):
            await journal.decide(RUN_ID, "run#4", Decision.deny("no").model_dump(mode="json"))
        with pytest.raises(JournalError, match="already decided"):
            await orch.resume(RUN_ID, decisions={"run#4": Decision.deny("no")}, approver=APPROVER)
        # The decision taken first is the one that counts.
        result = await orch.resume(RUN_ID, approver=APPROVER)
        assert [w.kind for w in result.waiting] == ["tool"]


async def test_a_decision_for_what_the_run_does_not_wait_for_is_one_line(tmp_path: Path) -> None:
    """An unknown approval id names what the run does wait for; a run that is not paused says so."""
    journal, orch = await _paused_run(tmp_path)
    async with journal:
        with pytest.raises(JournalError, match="does not wait for b#9; it waits for: run#4"):
            await orch.resume(RUN_ID, decisions={"b#9": Decision.approve()}, approver=APPROVER)
        with pytest.raises(JournalError, match="no run nobody"):
            await journal.decide("nobody", "run#4", Decision.approve().model_dump(mode="json"))
        await orch.resume(RUN_ID, decisions={"run#4": Decision.approve()}, approver=APPROVER)
        result = await orch.resume(
            RUN_ID,
            decisions={result_id(await journal.waiting()): Decision.approve()},
            approver=APPROVER,
        )
        assert result.status == "complete"
        with pytest.raises(JournalError, match="is not waiting for a decision"):
            await journal.decide(RUN_ID, "run#4", Decision.approve().model_dump(mode="json"))


def result_id(waiting: list[Any]) -> str:
    (only,) = waiting
    return str(only.approval_id)


async def test_time_spent_paused_does_not_count_against_the_deadline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run with a 30 s deadline paused for an hour still has its time when it goes on."""
    journal, orch = await _paused_run(tmp_path, deadline_s=30)
    real = time.time
    monkeypatch.setattr(time, "time", lambda: real() + 3600)  # the decision comes an hour later
    async with journal:
        await orch.resume(RUN_ID, decisions={"run#4": Decision.approve()}, approver=APPROVER)
        waits = result_id(await journal.waiting())
        result = await orch.resume(RUN_ID, decisions={waits: Decision.approve()}, approver=APPROVER)
    assert result.status == "complete", result.reason
    assert result.waited_s >= 3600


async def test_the_caller_decides_while_the_run_streams(tmp_path: Path) -> None:
    """With no journal to pause in, a PAUSE approver's requests are answered through the
    stream; the denied call never runs and the model reads why."""
    ledger = tmp_path / "ledger"
    ledger.touch()
    the_team = team()
    orch = orchestrator(the_team, journal=None, ledger=ledger)  # type: ignore[arg-type]
    assert APPROVER is PAUSE
    with anyio.fail_after(GUARD_S):
        async with orch.stream("Pay what is owed.", approver=APPROVER) as stream:
            assert stream.approver is PAUSE
            async for event in stream:
                if isinstance(event, ApprovalRequested):
                    answer = (
                        Decision.approve()
                        if event.kind == "plan"
                        else Decision.deny("not this month")
                    )
                    assert stream.decide(event.approval_id, answer)
                    assert not stream.decide(event.approval_id, answer)  # decided already
    assert stream.result.status == "complete"
    assert _ledger(tmp_path) == ["lookup a"]
    told = [str(m.content) for m in the_team.of("b")[-1].messages if m.role == "tool"]
    assert told == [
        "[OBSERVE] transfer(40) failed (rejected)\n"
        "Error: transfer Denied by a person: not this month."
    ]


async def test_a_finished_paused_run_replays_without_asking_anyone(tmp_path: Path) -> None:
    """Every decision is recorded: the replay of the run meets them all, with no drift."""
    journal, orch = await _paused_run(tmp_path)
    async with journal:
        await orch.resume(RUN_ID, decisions={"run#4": Decision.approve()}, approver=APPROVER)
        await orch.resume(
            RUN_ID,
            decisions={result_id(await journal.waiting()): Decision.approve()},
            approver=APPROVER,
        )
        report = await orch.replay(RUN_ID, approver=APPROVER)
    assert report.ok, report.drift


async def test_an_approval_timeout_counts_from_when_it_was_first_asked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A paused approval whose timeout passed while the run was paused gets the default
    decision when the run goes on, with no one asked."""
    journal = await Journal(tmp_path / "journal.db").open()
    timed = Approver(timeout=60, default=Decision.approve())
    orch = orchestrator(team(), journal, tmp_path / "ledger")
    async with journal:
        with anyio.fail_after(GUARD_S):
            paused = await orch.run("Pay what is owed.", run_id=RUN_ID, approver=timed)
            assert paused.status == "paused"
            real = time.time
            monkeypatch.setattr(time, "time", lambda: real() + 3600)
            result = await orch.resume(RUN_ID, approver=timed)
    decided = [e for e in result.events if isinstance(e, ApprovalDecided)]
    assert next((d.kind, d.by, d.action) for d in decided) == ("plan", "timeout", "approve")
    assert [w.kind for w in result.waiting] == ["tool"]  # asked now: its own minute starts


async def test_paor_show_says_what_a_paused_run_waits_for(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The run's status is paused, and the trace ends with what waits and how to decide."""
    journal, _orch = await _paused_run(tmp_path)
    await journal.aclose()
    assert (
        await anyio.to_thread.run_sync(
            main, ["show", RUN_ID, "--journal", str(tmp_path / "journal.db")]
        )
        == 0
    )
    shown = capsys.readouterr().out
    assert shown.startswith(f"run {RUN_ID}: paused\n")
    assert "waits: run#4: plan v1\ndecide with: paor approve paused" in shown


async def test_a_resumed_run_that_crashes_keeps_its_decisions_and_its_clock(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Decided an hour later, then cut off right after the decision (the caller left): the next
    resume neither asks for the plan again nor counts the hour against the 30 s deadline."""
    journal, orch = await _paused_run(tmp_path, deadline_s=30)
    real = time.time
    monkeypatch.setattr(time, "time", lambda: real() + 3600)
    async with journal:
        with anyio.fail_after(GUARD_S):
            async with orch.stream_resume(
                RUN_ID, decisions={"run#4": Decision.approve()}, approver=APPROVER
            ) as events:
                async for event in events:
                    if isinstance(event, ApprovalDecided):
                        break  # leaving the block abandons the run: as after a crash
            info = await journal.run(RUN_ID)
            assert info is not None
            assert info.status == "crashed"
            again = await orch.resume(RUN_ID, approver=APPROVER)
            assert [w.kind for w in again.waiting] == ["tool"]  # the plan stays approved
            done = await orch.resume(
                RUN_ID,
                decisions={result_id(await journal.waiting()): Decision.approve()},
                approver=APPROVER,
            )
    assert done.status == "complete", done.reason
    assert done.waited_s >= 3600
