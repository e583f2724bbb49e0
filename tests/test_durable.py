"""Durable runs: a journal another process locks mid-run leaves the run resumable, its lease
released and the error told once."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from agents import Budget, Executor
from agents.models import ModelRequest
from agents.testing import FunctionModel
from memory import Journal
from memory.journal import EffectRecord, JournalError
from orchestrator import Orchestrator
from orchestrator._batch import BatchTask, run_batch, run_prefix
from tests._team import Team, plan, sub
from tests.test_journal import LockHolder

pytestmark = pytest.mark.anyio

GUARD_S = 20  # a deadlock guard, not a timing claim


@pytest.fixture
async def holder(tmp_path: Path) -> AsyncIterator[LockHolder]:
    """Another process that can lock `journal.db`; it lets go at the end of the test."""
    async with LockHolder(path=tmp_path / "journal.db") as locker:
        yield locker


class ReleasingJournal(Journal):
    """A journal that gives another process's lock back right after a record could not be
    written because of it: the rest of the run finds the file free again."""

    def __init__(self, path: Path, holder: LockHolder) -> None:
        super().__init__(path, timeout=0.2)
        self.holder = holder
        self.failed: list[EffectRecord] = []

    async def append(self, run_id: str, record: EffectRecord) -> None:
        """Append; on failure, note the record and release the lock."""
        try:
            await super().append(run_id, record)
        except JournalError:
            self.failed.append(record)
            await self.holder.release()
            raise


class LockingTeam(Team):
    """One subtask, a. With `locked`, a's reply is sent only once another process has locked
    the journal, so its record cannot be written (the loop then sees a failed a, and plans
    b instead)."""

    def __init__(self, holder: LockHolder, *, locked: bool) -> None:
        super().__init__(
            [plan(sub("a"))],
            {"a": self._a, "b": lambda request: "B"},
            replans=[{"add": [sub("b")], "rationale": "a failed"}],
            synthesis="All done.",
        )
        self.holder = holder
        self.locked = locked

    async def _a(self, request: ModelRequest) -> Any:
        if self.locked:
            await self.holder.hold()
        return "A"


async def test_a_record_lost_to_a_locked_journal_leaves_the_run_crashed_and_resumable(
    tmp_path: Path, holder: LockHolder
) -> None:
    """A sub-agent's record that cannot be written (the file locked past the journal's
    patience) ends the run with that one JournalError, even though the loop went on: the run
    is not stored as failed, its lease is released, and it resumes to its end."""
    path = tmp_path / "journal.db"
    async with ReleasingJournal(path, holder) as journal:
        team = LockingTeam(holder, locked=True)
        with anyio.fail_after(GUARD_S), pytest.raises(JournalError, match="database is locked"):
            await Orchestrator(team.model, journal=journal).run("goal", run_id="r1")
        assert [(r.agent_id, r.kind) for r in journal.failed] == [("a", "model")]

        info = await journal.run("r1")
        assert info is not None
        assert (info.status, info.owner) == ("crashed", None)
        resumer = LockingTeam(holder, locked=False)
        with anyio.fail_after(GUARD_S):
            result = await Orchestrator(resumer.model, journal=journal).resume("r1")

    assert result.status == "complete"
    assert result.answer == "All done."
    assert [r.status for r in result.reports] == ["done"]
    assert len(resumer.of("a")) == 1  # only the lost reply was asked again


async def test_a_journal_still_locked_when_the_run_ends_leaves_it_resumable(
    tmp_path: Path, holder: LockHolder
) -> None:
    """If the lock outlasts the run, so that even the lease cannot be given back, the run
    still ends with one JournalError and is resumable once its lease lapses."""
    path = tmp_path / "journal.db"
    async with Journal(path, timeout=0.2) as journal:
        orch = Orchestrator(LockingTeam(holder, locked=True).model, journal=journal)
        with anyio.fail_after(GUARD_S), pytest.raises(JournalError, match="database is locked"):
            await orch.run("goal", run_id="r1")
    await holder.release()

    # lease_s=0: a lease this live process could not give back counts as lapsed.
    async with Journal(path, lease_s=0) as later:
        info = await later.run("r1")
        assert info is not None
        assert info.status == "crashed"
        resumer = LockingTeam(holder, locked=False)
        with anyio.fail_after(GUARD_S):
            result = await Orchestrator(resumer.model, journal=later).resume("r1")

    assert result.status == "complete"


async def test_a_journal_error_in_a_batch_is_one_error_and_the_task_resumes(
    tmp_path: Path, holder: LockHolder
) -> None:
    """In a journaled batch, a task whose record cannot be written stops the batch with that
    one JournalError (no ExceptionGroup, no line written); its run is crashed, not failed, and
    the re-run resumes it."""
    out = tmp_path / "out.jsonl"
    locked = True

    async def decide(request: ModelRequest) -> str:
        if locked:
            await holder.hold()
        return "A"

    async with ReleasingJournal(tmp_path / "journal.db", holder) as journal:

        async def batch() -> None:
            await run_batch(
                [BatchTask(id="a", goal="Goal a")], executor=Executor(FunctionModel(decide)),
                out=out, concurrency=1, budget=Budget(), journal=journal,
            )  # fmt: skip

        with anyio.fail_after(GUARD_S), pytest.raises(JournalError, match="database is locked"):
            await batch()
        info = await journal.run(f"{run_prefix(out)}-a")
        assert info is not None
        assert (info.status, info.owner) == ("crashed", None)
        assert out.read_text(encoding="utf-8") == ""

        locked = False
        with anyio.fail_after(GUARD_S):
            await batch()
        info = await journal.run(f"{run_prefix(out)}-a")

    assert info is not None
    assert info.status == "complete"
    assert '"answer": "A"' in out.read_text(encoding="utf-8")
