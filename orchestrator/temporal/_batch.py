"""`batch_on_temporal`: `paor batch` with its goals spread over workflows of up to 100 goals each.

One workflow per chunk keeps every history small (a goal adds a few events; thousands in one history
would near Temporal's limits). Inside a chunk each goal is run by a plain `Executor` whose model and
tool calls are activities, its agent id the task's key and its run id the workflow's id; a
`CapacityLimiter` bounds the goals running at once. A chunk returns its output records, and the
caller appends them as each chunk finishes, so the output file is the same as in process and a
re-run skips every id already in it.

A chunk's workflow id derives from the output file and the chunk's task ids (chunks are cut from the
whole task file, in order): a re-run while a chunk is still running waits for that workflow instead
of starting its goals again.

A batch's deadline is one instant for every chunk. Its token budget is split evenly among the
chunks it starts (each chunk's goals share their part, as a batch's goals do in process; a chunk
cannot lend what it leaves unspent), so the whole never spends more than it was given. A goal that
cannot start because its chunk's budget is spent is not written: a re-run does it.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field
from temporalio import workflow
from temporalio.client import Client
from temporalio.common import WorkflowIDConflictPolicy

with workflow.unsafe.imports_passed_through():
    import anyio
    import anyio.to_thread

    from agents import AgentLimits, Budget, ConfigurationError, Executor, Usage
    from orchestrator._batch import (
        BatchSummary,
        BatchTask,
        append_line,
        exclusive_output,
        finished_ids,
        record,
        run_prefix,
        unwrapped,
    )
    from orchestrator._batch_files import repair_tail
    from orchestrator._research import RESEARCH_AGENT, grounding
    from orchestrator.temporal._activities import DEFAULT_TASK_QUEUE, RESEARCH_TOOLS, registry_for
    from orchestrator.temporal._effects import ActivityModel, TemporalEffects

__all__ = ["CHUNK_SIZE", "BatchInput", "BatchWorkflow", "ChunkResult", "batch_on_temporal"]

CHUNK_SIZE = 100
"""Goals per workflow: small enough for a short history, large enough for few workflows."""


class BatchInput(BaseModel):
    """What one chunk of a batch on Temporal is given.

    Attributes:
        tasks: The chunk's goals.
        concurrency: Goals running at once in this chunk.
        model: The model's name in the workers' registry.
        tools: The tools' names in the workers' registry.
        instructions: The agents' system prompt.
        limits: Each agent's limits.
        heartbeat_timeout: Seconds without a heartbeat before a tool's worker is taken for dead.
        max_tokens: The tokens this chunk's goals may spend together, or None.
        deadline: When every goal must be over (absolute clock time), or None.
        grounded: Each agent starts from a search for its goal and must cite what it found
            (`orchestrator._research.grounding`).
    """

    model_config = ConfigDict(frozen=True)

    tasks: tuple[BatchTask, ...]
    concurrency: int = 4
    model: str = "default"
    tools: tuple[str, ...] = RESEARCH_TOOLS
    instructions: str = RESEARCH_AGENT
    limits: AgentLimits = AgentLimits()
    heartbeat_timeout: float = 30.0
    max_tokens: int | None = Field(default=None, ge=1)
    deadline: float | None = None
    grounded: bool = True


class ChunkResult(BaseModel):
    """What one chunk did.

    Attributes:
        records: The output records of its goals, in the order they finished.
        not_started: Goals it did not start because its budget was spent.
    """

    model_config = ConfigDict(frozen=True)

    records: tuple[dict[str, Any], ...] = ()
    not_started: int = 0


@workflow.defn(name="paor.Batch")
class BatchWorkflow:
    """One chunk of a batch: every goal run by its own executor, a few at a time."""

    @workflow.run
    async def run(self, given: BatchInput) -> ChunkResult:
        """Run every goal the chunk's budget allows; return their records in finishing order."""
        registry = registry_for(workflow.info().task_queue)
        executor = Executor(
            ActivityModel(given.model),
            [registry.tool(name) for name in given.tools],
            instructions=given.instructions,
            limits=given.limits,
            effects=TemporalEffects(heartbeat_timeout=given.heartbeat_timeout),
            signals=False,  # no planner reads a batch task's issue (see `research_executor`)
            **grounding(given.grounded),
        )
        run_id = workflow.info().workflow_id
        budget = Budget(max_tokens=given.max_tokens, deadline=given.deadline)
        limiter = anyio.CapacityLimiter(given.concurrency)
        records: list[dict[str, Any]] = []
        not_started = 0

        async def one(task: BatchTask) -> None:
            nonlocal not_started
            async with limiter:
                if budget.exhausted(workflow.now().timestamp()):
                    not_started += 1
                    return
                report = await executor.run(
                    task.goal, run_id=run_id, agent_id=task.key(), budget=budget
                )
            records.append(record(task, report))

        async with anyio.create_task_group() as tg:
            for task in given.tasks:
                tg.start_soon(one, task)
        return ChunkResult(records=tuple(records), not_started=not_started)


async def batch_on_temporal(
    client: Client,
    tasks: Iterable[BatchTask],
    *,
    out: Path,
    concurrency: int = 4,
    chunk_size: int = CHUNK_SIZE,
    limits: AgentLimits | None = None,
    max_tokens: int | None = None,
    deadline_s: float | None = None,
    task_queue: str = DEFAULT_TASK_QUEUE,
    on_result: Callable[[str, str], None] | None = None,
    tools: Sequence[str] = (),
    grounded: bool = True,
) -> BatchSummary:
    """Run every task not already in `out` on the workers of `task_queue`, a chunk per workflow.

    Args:
        client: A client made by `connect`.
        tasks: The goals.
        out: The JSON Lines output, appended to as each chunk finishes.
        concurrency: Goals running at once in each chunk.
        chunk_size: Goals per workflow.
        limits: Each agent's limits.
        max_tokens: Tokens the whole batch may spend (split evenly among its chunks).
        deadline_s: Seconds from now by which every goal must be over.
        task_queue: The workers' queue (they serve the model "default" and the research tools).
        on_result: Called with each task's id and status as its chunk finishes.
        tools: More tools for the agents, beside the research tools (names the workers serve).
        grounded: Each agent starts from a search for its goal and must cite what it found.

    Raises:
        ConfigurationError: `concurrency` or `chunk_size` is below 1.
    """
    if min(concurrency, chunk_size) < 1:
        raise ConfigurationError(
            f"concurrency and chunk size must be at least 1, not {concurrency}, {chunk_size}"
        )
    tasks = list(tasks)
    # One writer per output file, as in process: the lock is taken before anything is read.
    with exclusive_output(out) as sink:
        done = finished_ids(out)
        repair_tail(out)
        summary = BatchSummary(skipped=len(done & {t.key() for t in tasks}))
        prefix = run_prefix(out)
        lock = anyio.Lock()
        parts = [tasks[start : start + chunk_size] for start in range(0, len(tasks), chunk_size)]
        parts = [part for part in parts if any(t.key() not in done for t in part)]
        share = None if max_tokens is None else max(1, max_tokens // max(1, len(parts)))
        deadline = None if deadline_s is None else time.time() + deadline_s

        async def chunk(chunk_id: str, part: Sequence[BatchTask]) -> None:
            todo = tuple(t for t in part if t.key() not in done)
            given = BatchInput(
                tasks=todo,
                concurrency=concurrency,
                tools=(*RESEARCH_TOOLS, *tools),
                limits=limits or AgentLimits(),
                max_tokens=share,
                deadline=deadline,
                grounded=grounded,
            )
            handle = await client.start_workflow(
                BatchWorkflow.run,
                given,
                id=chunk_id,
                task_queue=task_queue,
                id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
            )
            # A chunk still running from an earlier attempt may hold ids written since.
            result = await handle.result()
            records = [r for r in result.records if r["id"] not in done]
            summary.not_started += result.not_started
            lines = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
            async with lock:
                await anyio.to_thread.run_sync(append_line, sink, lines)
            for r in records:
                summary.statuses[r["status"]] += 1
                summary.tokens += Usage.model_validate(r["usage"]).total_tokens
                if on_result is not None:
                    on_result(r["id"], r["status"])

        with unwrapped():
            async with anyio.create_task_group() as tg:
                for part in parts:
                    tg.start_soon(chunk, _chunk_id(prefix, part), part)
    return summary


def _chunk_id(prefix: str, part: Sequence[BatchTask]) -> str:
    """The same for the same chunk of the same output file, so a re-run finds a running chunk.

    Chunks are cut from the whole task list, done ids included: a chunk's records are written
    together, so after a crash the chunks still running keep their place and their ids.
    """
    keys = "\n".join(t.key() for t in part)
    return f"{prefix}-{hashlib.sha1(keys.encode()).hexdigest()[:12]}"
