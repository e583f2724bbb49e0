"""Batch runs: many independent goals, one concurrency limit, one budget, resumable.

Each goal is run by its own executor sub-agent. A pool of `concurrency` workers takes the goals
from one stream, fed from the tasks as workers come free: a batch holds only the goals it is
running, so its memory, and how soon the first result comes, do not grow with the number of goals
(`read_tasks` reads a task file the same way, a line at a time; the file is
checked whole first, by `check_tasks`, so a bad line stops the batch before anything runs).

Results are appended to a JSON Lines file the moment each one finishes (flushed and synced), so a
crash loses at most the goals in flight; a re-run skips every id already in the output. A line is
written whole or not at all, in one `write` ending with its newline: a write that fails (a full
disk) is cut back to where the line began and raises `WriteFailed` (an `OSError`), so the file
holds only whole records. A line torn all the same (the machine crashed mid-write) is moved aside
to `OUT.torn` when the batch starts again, and its goal runs again (`orchestrator.batch`). A goal that cannot
start because the budget is spent is not written, so a re-run with a fresh budget does it; once
one goal has found the budget spent, the rest are counted as not started without being handed out.

With a journal, each task is a journaled run whose id comes from the output file and the task id.
A re-run then resumes a task that was in flight from its records (its finished tool calls do not
run again), and takes the result of a task that finished but whose line was lost from the journal.

With an executor whose approver pauses (`agents.approvals.PAUSE`) and a journal, the batch pauses
once every goal still running waits for a decision: what waits is journaled, each such task's run
is left paused, no further goal is started, and the summary says so (`BatchSummary.waiting`).
Decisions are taken in the journal (`Journal.decide`, `paor approve`); the next run of the batch
resumes those tasks with them.

One batch at a time writes an output file: `run_batch` holds an exclusive lock on it (`flock`, so
it goes with the process, however that ends), and a second batch gets `OutputLocked` at once.
`check_output` refuses an output that is the task file itself.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

import anyio
import anyio.lowlevel
import anyio.to_thread
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from agents import AgentReport, Budget, ConfigurationError, Executor
from agents.approvals import ApprovalRequest, Decision, RunWaits
from agents.effects import EffectSite, JournaledEffects
from memory import Journal
from memory.journal import RunStatus
from orchestrator._batch_files import (
    BatchTask,
    OutputLocked,
    check_output,
    load_tasks,
    repair_tail,
)
from orchestrator._durable import hold_lease
from orchestrator._files import WriteFailed
from orchestrator._limits import Limits
from orchestrator._run_stream import PAUSE_SETTLE_S  # a batch pauses as a run does

__all__ = ["BatchSummary", "BatchTask", "OutputLocked", "check_output", "load_tasks", "run_batch"]
# Also shared with the Temporal batch: finished_ids, run_prefix, append_line, record,
# exclusive_output.


BATCH_AGENT = "batch"  # the address of the batch's own clock read (its deadline's start)
_RUN_STATUS: dict[str, RunStatus] = {
    "done": "complete", "partial": "incomplete", "blocked": "incomplete", "failed": "failed"
}  # fmt: skip


@dataclass(kw_only=True, slots=True)
class BatchSummary:
    """What a batch run did."""

    statuses: Counter[str] = field(default_factory=Counter)
    skipped: int = 0
    not_started: int = 0
    tokens: int = 0
    cost: float = 0.0
    waiting: list[ApprovalRequest] = field(default_factory=list)
    torn: Path | None = None  # where the output's torn last line was moved, if it had one

    def line(self) -> str:
        """A one-line summary."""
        parts = [f"{n} {status}" for status, n in sorted(self.statuses.items())]
        parts.append(f"{self.skipped} skipped (already done)")
        if self.not_started:
            parts.append(f"{self.not_started} not started (budget spent)")
        if self.waiting:
            parts.append(f"{len({w.run_id for w in self.waiting})} paused (waiting for decisions)")
        torn = "" if self.torn is None else f"; a torn last line was moved to {self.torn}"
        cost = f" (${self.cost:.4f})" if self.cost >= 0.00005 else ""
        return f"batch: {', '.join(parts)}; {self.tokens} tokens{cost}{torn}"


def finished_ids(path: Path) -> set[str]:
    """Ids already in an output file; a torn last line (a crash mid-write) is ignored."""
    if not path.exists():
        return set()
    done = set()
    # A crash can tear a line inside a multi-byte character: that line must not fail the read.
    # The file is read a line at a time: a long batch's output need not fit in memory twice.
    with path.open(encoding="utf-8", errors="replace") as lines:
        for line in lines:
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(record, dict) and isinstance(record.get("id"), str):
                done.add(record["id"])
    return done


async def run_batch(
    tasks: Iterable[BatchTask],
    *,
    executor: Executor,
    out: Path,
    concurrency: int,
    budget: Budget | None = None,
    limits: Limits | None = None,
    on_result: Callable[[str, AgentReport], None] | None = None,
    journal: Journal | None = None,
) -> BatchSummary:
    """Run every task not already in `out`, appending each result as it finishes.

    `tasks` is read as goals are started, never all at once: it may be an iterator over a file
    of any length (`read_tasks`). Its ids should be distinct
    (`check_tasks` and `load_tasks` make sure).

    An error raised while the tasks run stops the batch and comes out as itself, not as an
    `ExceptionGroup` (several of one kind, from tasks that failed together: the first of them).

    Args:
        tasks: The goals.
        executor: Runs each goal.
        out: The JSON Lines output, appended to; locked against other batches while this runs.
        concurrency: Goals running at once.
        budget: The one ledger every goal charges (or give `limits`).
        limits: The whole batch's limits instead: its deadline counts from now, read on the
            executor's effect clock; its token, request and tool-call limits are shared by
            every goal. (Each goal's own steps are the executor's `AgentLimits`.)
        on_result: Called with each task's id and report as it finishes.
        journal: Journal each task's run here (resumable from its records on a re-run).

    Raises:
        ConfigurationError: `concurrency` is below 1, or a dollar cap cannot price the model.
        OutputLocked: Another batch is writing `out`.
        RunLocked: Another live process is running one of the tasks with this journal.
        JournalError: A task's records could not be written (its run is left resumable).
    """
    if concurrency < 1:
        raise ConfigurationError(f"concurrency must be at least 1, not {concurrency}")
    if (budget is None) == (limits is None):
        raise ConfigurationError("run_batch takes a budget or limits, one of the two")
    if journal is None and executor.approver is not None and executor.approver.pauses:
        raise ConfigurationError("an executor with approver=PAUSE needs run_batch(journal=...)")
    if budget is None:
        assert limits is not None
        budget = await _ledger(executor, limits)
    budget.check_priced(executor.model.name)
    with exclusive_output(out) as sink:
        torn = repair_tail(out)  # before the ids are read: a torn line's goal runs again
        batch = _Batch(
            executor=executor, budget=budget, journal=journal, prefix=run_prefix(out),
            sink=sink, on_result=on_result, done=finished_ids(out),
        )  # fmt: skip
        batch.summary.torn = torn
        goals = iter(tasks)
        with unwrapped(), RunWaits.shared(batch.waits):
            await batch.run(goals, concurrency)
        batch.skip_rest(goals)  # a pause leaves goals unread
        await batch.paused()
    return batch.summary


PASSED_OVER_SLICE = 100
"""Goals the feed may pass over (done already, or not started) before it lets the goals in flight
go on: a re-run of a long, mostly finished file must not hold up the few goals it runs."""


@dataclass(kw_only=True, slots=True)
class _Batch:
    """One batch run: what its goals share, and what they did."""

    executor: Executor
    budget: Budget
    journal: Journal | None
    prefix: str
    sink: TextIO
    on_result: Callable[[str, AgentReport], None] | None
    done: set[str]  # the ids in the output when the batch began
    summary: BatchSummary = field(default_factory=BatchSummary)
    spent: bool = False  # a goal found the budget spent: no later goal can start either
    writing: anyio.Lock = field(default_factory=anyio.Lock)
    waits: RunWaits = field(default_factory=RunWaits)  # one clock and "always" for the batch
    held: list[tuple[ApprovalRequest, float]] = field(default_factory=list)

    async def run(self, goals: Iterator[BatchTask], concurrency: int) -> None:
        """Run `goals` on `concurrency` workers until every one has ended, or until every goal
        still running waits for a decision (a pausing approver)."""
        send, receive = anyio.create_memory_object_stream[BatchTask]()
        approver = self.executor.approver
        async with anyio.create_task_group() as tg:
            if self.journal is not None and approver is not None and approver.pauses:
                tg.start_soon(self.pause_when_quiet, tg.cancel_scope)
            async with anyio.create_task_group() as pool:
                pool.start_soon(self.feed, goals, send)
                with receive:  # the workers' clones keep it open while any of them reads
                    for _ in range(concurrency):
                        pool.start_soon(self.work, receive.clone())
            tg.cancel_scope.cancel()  # the pause watcher, if any

    async def feed(
        self, goals: Iterator[BatchTask], send: MemoryObjectSendStream[BatchTask]
    ) -> None:
        """Hand each goal to the next free worker (the stream holds none: a goal is read only
        when a worker can take it), passing over those not to run; then close the stream."""
        async with send:
            for read, task in enumerate(goals, 1):
                if not self.passed_over(task):
                    await send.send(task)
                elif read % PASSED_OVER_SLICE == 0:
                    await anyio.lowlevel.checkpoint()

    def passed_over(self, task: BatchTask) -> bool:
        """Count `task` as skipped (done already) or not started (the budget is spent), and say
        whether it was: if not, it is to run."""
        if task.key() in self.done:
            self.summary.skipped += 1
        elif self.spent:
            self.summary.not_started += 1
        else:
            return False
        return True

    def skip_rest(self, goals: Iterator[BatchTask]) -> None:
        """Count the goals left unread that are done already (those a pause left are neither)."""
        self.summary.skipped += sum(task.key() in self.done for task in goals)

    async def work(self, goals: MemoryObjectReceiveStream[BatchTask]) -> None:
        """Run goals one at a time until the stream is closed and empty."""
        async with goals:
            async for task in goals:
                await self.one(task)

    async def pause_when_quiet(self, batch: anyio.CancelScope) -> None:
        """Once every running goal waits for a decision (nothing in flight), stop them all."""
        await self.waits.until_quiet(PAUSE_SETTLE_S)
        self.held = [
            (p.request, p.asked) for p in self.waits.pending.values() if p.decision is None
        ]
        batch.cancel()

    async def paused(self) -> None:
        """Journal what the paused goals wait for; their runs are left paused."""
        if not self.held or self.journal is None:
            return
        with anyio.CancelScope(shield=True):
            for request, asked in self.held:
                row = (request.approval_id, request.model_dump(mode="json"), asked)
                await self.journal.pause(request.run_id, [row], status=True)
        self.summary.waiting = [request for request, _ in self.held]

    async def one(self, task: BatchTask) -> None:
        """Run `task` (unless the budget is spent), append its line, and count it."""
        if self.spent or await _spent(self.executor, self.budget, task):
            self.spent = True
            self.summary.not_started += 1
            return
        report = await _run(self, task)
        line = json.dumps(record(task, report), ensure_ascii=False) + "\n"
        async with self.writing:
            await anyio.to_thread.run_sync(append_line, self.sink, line)
        self.summary.statuses[report.status] += 1
        self.summary.tokens += report.usage.total_tokens
        self.summary.cost += report.usage.cost
        if self.on_result is not None:
            self.on_result(task.key(), report)


@contextmanager
def exclusive_output(out: Path) -> Iterator[TextIO]:
    """`out` open for appending, locked against every other batch until the block ends.

    Raises:
        OutputLocked: Another batch (in this process or another) holds the lock.
        WriteFailed: `out` cannot be opened for appending.
    """
    try:
        opened = out.open("a", encoding="utf-8")
    except OSError as exc:
        raise WriteFailed(out, exc) from exc
    with opened as sink:
        try:
            # Non-blocking: a second writer is refused at once, never queued behind the first.
            fcntl.flock(sink.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise OutputLocked(
                f"{out} is being written by another batch; wait for it to end or choose "
                "another output file"
            ) from None
        yield sink  # closing the file releases the lock


@contextmanager
def unwrapped() -> Iterator[None]:
    """Raise a task group's failure as the exception itself: its only one, or the first of
    several of one kind (tasks that met the same trouble at once). Mixed kinds stay a group."""
    try:
        yield
    except ExceptionGroup as group:
        leaves = _leaves(group)
        if len({type(leaf) for leaf in leaves}) != 1:
            raise
        first = leaves[0]
        if len(leaves) > 1:
            first.add_note(f"({len(leaves) - 1} more tasks failed the same way)")
        raise first from first.__cause__  # hide the group, keep the exception's own cause


def _leaves(group: BaseExceptionGroup[Exception]) -> list[Exception]:
    """The exceptions of `group` and of the groups inside it."""
    found: list[Exception] = []
    for inner in group.exceptions:
        found.extend(_leaves(inner) if isinstance(inner, BaseExceptionGroup) else [inner])
    return found


def run_prefix(out: Path) -> str:
    """Stable across re-runs of a batch, distinct from other batches' tasks of the same id."""
    return "batch-" + hashlib.sha1(str(out.resolve()).encode()).hexdigest()[:8]


async def _run(batch: _Batch, task: BatchTask) -> AgentReport:
    executor, budget, journal = batch.executor, batch.budget, batch.journal
    if journal is None:
        return await executor.run(task.goal, agent_id=task.key(), budget=budget)
    run_id = f"{batch.prefix}-{task.key()}"
    info = await journal.run(run_id)
    if info is not None and info.finished and info.result is not None:
        return AgentReport.model_validate(info.result)  # done before its line could be written
    if info is None:
        await journal.begin(run_id, task.goal, meta={"command": "batch", "id": task.key()})
        effects = JournaledEffects(executor.effects, journal, run_id)
    else:
        await journal.claim(run_id)
        records = await journal.load(run_id)
        batch.waits.give(await _decisions(journal, run_id))
        effects = JournaledEffects(
            executor.effects, journal, run_id, mode="resume", records=records
        )
    agent = executor.with_effects(effects)

    async def body() -> AgentReport:
        return await agent.run(task.goal, run_id=run_id, agent_id=task.key(), budget=budget)

    return await hold_lease(journal, run_id, body, _ended)


async def _decisions(journal: Journal, run_id: str) -> dict[str, Decision]:
    """The decisions taken while the task's run was paused."""
    return {
        w.approval_id: Decision.model_validate(w.decision)
        for w in await journal.waits_of(run_id)
        if w.decision is not None
    }


def _ended(report: AgentReport) -> tuple[RunStatus, dict[str, Any]]:
    return _RUN_STATUS[report.status], report.model_dump(mode="json")


async def _ledger(executor: Executor, limits: Limits) -> Budget:
    """The batch's shared ledger from its limits, the deadline read on the effect clock."""
    site = EffectSite(run_id="batch", agent_id=BATCH_AGENT, seq=0, step=0)
    now = await executor.effects.now(site)
    return Budget.from_limits(limits, now=now, prices=limits.prices)


async def _spent(executor: Executor, budget: Budget, task: BatchTask) -> bool:
    """Whether the shared budget ran out before `task` could start."""
    site = EffectSite(run_id="batch", agent_id=task.key(), seq=0, step=0)
    return budget.exhausted(await executor.effects.now(site)) is not None


def append_line(sink: TextIO, line: str) -> None:
    """Append `line` (one or more whole records, each ended by a newline) and make it durable
    before going on.

    The bytes go to the file in one `write` (again for the rest only if the system took part of
    them), past the text layer's buffer. If writing fails, the file is cut back to where the
    line began, so no torn record is left: what a re-run reads is whole.

    Raises:
        ValueError: `line` does not end with a newline.
        WriteFailed: The line could not be written (a full disk); the file is as it was.
    """
    if line and not line.endswith("\n"):
        raise ValueError("append_line writes whole lines: end each with a newline")
    fd = sink.fileno()
    sink.flush()  # nothing should wait there: every record goes through here
    start = os.fstat(fd).st_size
    data = memoryview(line.encode("utf-8"))
    try:
        while data:
            data = data[os.write(fd, data) :]
        os.fsync(fd)
    except OSError as exc:
        with suppress(OSError):  # if even this fails, `finished_ids` skips the torn line
            os.ftruncate(fd, start)
        raise WriteFailed(sink.name, exc) from exc


def record(task: BatchTask, report: AgentReport) -> dict[str, Any]:
    """The output line of `task` (a JSON object), from its report: `sources` are the gathered
    sources its answer cites, `searched` the others it gathered, and `reason` why it is not
    done (the last problem noted), when it is not."""
    gathered = list(dict.fromkeys(e.source for e in report.evidence))
    cited = report.cited if report.status == "done" else set[str]()
    line: dict[str, Any] = {
        "id": task.key(),
        "goal": task.goal,
        "status": report.status,
        "answer": report.answer,
        "sources": [g for g in gathered if g in cited],
        "searched": [g for g in gathered if g not in cited],
        "stop_reason": report.stop_reason,
        "steps": report.steps,
        "usage": report.usage.model_dump(),
    }
    if report.output is not None:  # the answer as data, when the batch asks for a schema's
        line["output"] = report.output
    if report.status != "done":
        line["reason"] = report.notes[-1] if report.notes else report.stop_reason
    return line
