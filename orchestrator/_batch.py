"""Batch runs: many independent goals, one concurrency limit, one budget, resumable.

Each goal is run by its own executor sub-agent. Results are appended to a JSON Lines file the
moment each one finishes (flushed and synced), so a crash loses at most the goals in flight; a
re-run skips every id already in the output. A goal that cannot start because the budget is spent
is not written, so a re-run with a fresh budget does it. Input is validated completely before
anything runs.

With a journal, each task is a journaled run whose id comes from the output file and the task id.
A re-run then resumes a task that was in flight from its records (its finished tool calls do not
run again), and takes the result of a task that finished but whose line was lost from the journal.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

import anyio
import anyio.to_thread
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agents import AgentReport, Budget, ConfigurationError, EffectSite, Executor, JournaledEffects
from memory import Journal, RunStatus
from orchestrator._durable import hold_lease

__all__ = ["BatchSummary", "BatchTask", "load_tasks", "run_batch"]
# Also shared with the Temporal batch: finished_ids, run_prefix, repair_tail, append_line, record.


_RUN_STATUS: dict[str, RunStatus] = {
    "done": "complete", "partial": "incomplete", "blocked": "incomplete", "failed": "failed"
}  # fmt: skip


class BatchTask(BaseModel):
    """One line of a batch file: `{"id": "...", "goal": "..."}` (id optional)."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    id: str = ""
    goal: str = Field(min_length=1)

    def key(self) -> str:
        """The id, or a stable one derived from the goal."""
        return self.id or "goal-" + hashlib.sha1(self.goal.encode()).hexdigest()[:12]


@dataclass(kw_only=True, slots=True)
class BatchSummary:
    """What a batch run did."""

    statuses: Counter[str] = field(default_factory=Counter)
    skipped: int = 0
    not_started: int = 0
    tokens: int = 0

    def line(self) -> str:
        """A one-line summary."""
        parts = [f"{n} {status}" for status, n in sorted(self.statuses.items())]
        parts.append(f"{self.skipped} skipped (already done)")
        if self.not_started:
            parts.append(f"{self.not_started} not started (budget spent)")
        return f"batch: {', '.join(parts)}; {self.tokens} tokens"


def load_tasks(path: Path) -> list[BatchTask]:
    """Read and validate a batch file; raise `ConfigurationError` naming the first bad line."""
    if not path.is_file():
        raise ConfigurationError(f"batch file not found: {path}")
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigurationError(f"cannot read batch file {path}: {exc}") from None
    tasks: list[BatchTask] = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            tasks.append(BatchTask.model_validate_json(line))
        except ValidationError as exc:
            problem = exc.errors()[0]["msg"]
            raise ConfigurationError(
                f"{path}:{number}: not a valid task line ({problem})"
            ) from None
    duplicates = sorted(k for k, n in Counter(t.key() for t in tasks).items() if n > 1)
    if duplicates:
        raise ConfigurationError(f"{path}: duplicate task ids: {', '.join(duplicates[:5])}")
    return tasks


def finished_ids(path: Path) -> set[str]:
    """Ids already in an output file; a torn last line (a crash mid-write) is ignored."""
    if not path.exists():
        return set()
    done = set()
    # A crash can tear a line inside a multi-byte character: that line must not fail the read.
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
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
    budget: Budget,
    on_result: Callable[[str, AgentReport], None] | None = None,
    journal: Journal | None = None,
) -> BatchSummary:
    """Run every task not already in `out`, appending each result as it finishes.

    Args:
        tasks: The goals.
        executor: Runs each goal.
        out: The JSON Lines output, appended to.
        concurrency: Goals running at once.
        budget: The one ledger every goal charges.
        on_result: Called with each task's id and report as it finishes.
        journal: Journal each task's run here (resumable from its records on a re-run).

    Raises:
        ConfigurationError: `concurrency` is below 1.
        RunLocked: Another live process is running one of the tasks with this journal.
    """
    if concurrency < 1:
        raise ConfigurationError(f"concurrency must be at least 1, not {concurrency}")
    done = finished_ids(out)
    todo = [t for t in tasks if t.key() not in done]
    summary = BatchSummary(skipped=len(done & {t.key() for t in tasks}))
    limiter = anyio.CapacityLimiter(concurrency)
    prefix = run_prefix(out)
    lock = anyio.Lock()
    repair_tail(out)
    with out.open("a", encoding="utf-8") as sink:

        async def one(task: BatchTask) -> None:
            async with limiter:
                if await _spent(executor, budget, task):
                    summary.not_started += 1
                    return
                report = await _run(executor, task, budget, journal, prefix)
            line = json.dumps(record(task, report), ensure_ascii=False) + "\n"
            async with lock:
                await anyio.to_thread.run_sync(append_line, sink, line)
            summary.statuses[report.status] += 1
            summary.tokens += report.usage.total_tokens
            if on_result is not None:
                on_result(task.key(), report)

        async with anyio.create_task_group() as tg:
            for task in todo:
                tg.start_soon(one, task)
    return summary


def run_prefix(out: Path) -> str:
    """Stable across re-runs of a batch, distinct from other batches' tasks of the same id."""
    return "batch-" + hashlib.sha1(str(out.resolve()).encode()).hexdigest()[:8]


async def _run(
    executor: Executor, task: BatchTask, budget: Budget, journal: Journal | None, prefix: str
) -> AgentReport:
    if journal is None:
        return await executor.run(task.goal, agent_id=task.key(), budget=budget)
    run_id = f"{prefix}-{task.key()}"
    info = await journal.run(run_id)
    if info is not None and info.finished and info.result is not None:
        return AgentReport.model_validate(info.result)  # done before its line could be written
    if info is None:
        await journal.begin(run_id, task.goal, meta={"command": "batch", "id": task.key()})
        effects = JournaledEffects(executor.effects, journal, run_id)
    else:
        await journal.claim(run_id)
        records = await journal.load(run_id)
        effects = JournaledEffects(
            executor.effects, journal, run_id, mode="resume", records=records
        )
    agent = executor.with_effects(effects)

    async def body() -> AgentReport:
        return await agent.run(task.goal, run_id=run_id, agent_id=task.key(), budget=budget)

    return await hold_lease(journal, run_id, body, _ended)


def _ended(report: AgentReport) -> tuple[RunStatus, dict[str, Any]]:
    return _RUN_STATUS[report.status], report.model_dump(mode="json")


async def _spent(executor: Executor, budget: Budget, task: BatchTask) -> bool:
    """Whether the shared budget ran out before `task` could start."""
    site = EffectSite(run_id="batch", agent_id=task.key(), seq=0, step=0)
    return budget.exhausted(await executor.effects.now(site)) is not None


def append_line(sink: TextIO, line: str) -> None:
    """Append `line` (one or more whole records) and make it durable before going on."""
    sink.write(line)
    sink.flush()
    os.fsync(sink.fileno())


def repair_tail(out: Path) -> None:
    """End a file torn mid-line with a newline, so the next record starts on its own line."""
    if out.exists() and out.stat().st_size:
        with out.open("rb") as existing:
            existing.seek(-1, os.SEEK_END)
            torn = existing.read(1) != b"\n"
        if torn:
            with out.open("a", encoding="utf-8") as sink:
                sink.write("\n")


def record(task: BatchTask, report: AgentReport) -> dict[str, Any]:
    """The output line of `task` (a JSON object), from its report."""
    return {
        "id": task.key(),
        "goal": task.goal,
        "status": report.status,
        "answer": report.answer,
        "sources": list(dict.fromkeys(e.source for e in report.evidence)),
        "stop_reason": report.stop_reason,
        "steps": report.steps,
        "usage": report.usage.model_dump(),
    }
