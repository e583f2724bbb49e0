"""Durable runs: opening a run in the journal, holding its lease, and what a replay reports.

A recorded run registers its row (owned by this process) before its first effect; a resumed run
claims the lease of a crashed one and is fed its records; a replay only reads. While a run is
live its owner refreshes the lease's heartbeat. When the run ends, the lease is released and the
status and result are stored. A run that is cancelled or killed, or whose journal could not be
written, keeps the status "running" with no live owner, which reads as crashed: it can be resumed.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import anyio
from pydantic import BaseModel, ConfigDict

from agents.effects import Drift, Effects, JournaledEffects, JournalMode
from agents.telemetry import logger
from memory import Journal
from memory.journal import JournalError, RunStatus
from orchestrator._state import RunResult

__all__ = ["ReplayReport", "hold_lease", "open_run", "run_ended"]

T = TypeVar("T")
_log = logger("paor.journal")


class ReplayReport(BaseModel):
    """What replaying a recorded run gave.

    Attributes:
        run_id: The run.
        result: The replayed result (None if the replay stopped at drift, or the recording ends
            before the run did).
        drift: Where the code asked for something other than what was recorded.
    """

    model_config = ConfigDict(frozen=True)

    run_id: str
    result: RunResult | None = None
    drift: tuple[Drift, ...] = ()

    @property
    def ok(self) -> bool:
        """Whether the run replayed to its end without drift."""
        return self.result is not None and not self.drift


async def open_run(
    journal: Journal,
    inner: Effects,
    run_id: str,
    *,
    mode: JournalMode,
    goal: str,
    meta: dict[str, Any] | None,
    config: dict[str, Any] | None = None,
) -> tuple[str, JournaledEffects, dict[str, Any] | None]:
    """Register (record), claim (resume) or read (replay) the run; returns its goal, its effects
    and the configuration it was recorded with (None for a run recorded before runs kept one).

    Raises:
        JournalError: The run is unknown, already ended (resume), or its id is taken (record).
        RunLocked: Another live process holds the run.
    """
    if mode == "record":
        await journal.begin(run_id, goal, meta=meta, config=config)
        return goal, JournaledEffects(inner, journal, run_id), config
    info = await journal.run(run_id)
    if info is None:
        raise JournalError(f"no run {run_id} in the journal {journal.path}")
    if mode == "resume":
        if info.finished:
            raise JournalError(f"run {run_id} already ended ({info.status}); replay it instead")
        await journal.claim(run_id)
    records = await journal.load(run_id)
    effects = JournaledEffects(inner, journal, run_id, mode=mode, records=records)
    return info.goal, effects, info.config


async def hold_lease(
    journal: Journal,
    run_id: str,
    body: Callable[[], Awaitable[T]],
    ended: Callable[[T], tuple[RunStatus, dict[str, Any]]],
) -> T:
    """Run `body` holding the run's lease; store how it ended (`ended` of its result: the status
    and the result as JSON data), then release the lease.

    A run that raises is stored as failed, unless a record of it could not be written: then, as
    after a crash or a cancellation, it is left resumable. A record lost while the loop went on
    (a sub-agent's failure is not the run's) still ends the run, with that `JournalError`.

    Raises:
        JournalError: A record of the run, or how it ended, could not be written.
    """
    async with anyio.create_task_group() as tg:
        tg.start_soon(_heartbeat, journal, run_id)
        try:
            result = await body()
            lost = journal.take_write_error(run_id)
            if lost is not None:
                raise lost
        except BaseException as exc:
            tg.cancel_scope.cancel()
            lost = journal.take_write_error(run_id)
            await _give_back(journal, run_id, None if lost or _resumable(exc) else "failed")
            raise
        tg.cancel_scope.cancel()
        status, stored = ended(result)
        # Shielded: a run cancelled now has ended all the same.
        with anyio.CancelScope(shield=True):
            await journal.finish(run_id, status, stored)
    return result


def run_ended(result: RunResult) -> tuple[RunStatus, dict[str, Any]]:
    """How an orchestrated run ended, for `hold_lease`."""
    return result.status, result.model_dump(mode="json")


async def _give_back(journal: Journal, run_id: str, status: RunStatus | None) -> None:
    """Release the lease of a run that raised, keeping its error the one that is raised."""
    # Shielded: a cancelled run must still give its lease back (and stays resumable).
    with anyio.CancelScope(shield=True):
        try:
            await journal.finish(run_id, status)
        except JournalError as exc:
            # The lease lapses by itself: the heartbeat has stopped, and this pid will end.
            _log.warning("lease_not_released", run_id=run_id, error=str(exc))


def _resumable(exc: BaseException) -> bool:
    """Whether a run that raised `exc` is left to resume: a cancellation, an interrupt, or a
    journal that could not be written (anywhere in a group)."""
    if isinstance(exc, BaseExceptionGroup):
        return any(_resumable(inner) for inner in exc.exceptions)
    return isinstance(exc, JournalError) or not isinstance(exc, Exception)


async def _heartbeat(journal: Journal, run_id: str) -> None:
    # No exit of its own: it lives exactly as long as the run, whose end cancels it.
    while True:
        await anyio.sleep(journal.lease_s / 3)
        try:
            held = await journal.heartbeat(run_id)
        except JournalError as exc:
            _log.warning("heartbeat_failed", run_id=run_id, error=str(exc))
            continue
        if not held:
            _log.warning("lease_lost", run_id=run_id)
            return
