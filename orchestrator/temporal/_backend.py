"""`TemporalBackend`: the Python API's way to say "on Temporal" instead of "in this process".

```python
backend = TemporalBackend(client=await connect("127.0.0.1:7233"))
report = await research(topic, corpus=corpus, backend=backend)   # on the workers
result = await backend.run("goal", tools=["search_docs"])
summary = await backend.batch(tasks, out=Path("results.jsonl"))
async with await backend.start(RunInput(goal="goal", run_id="r1")) as run:  # its events
    ...
recent = await backend.runs()
```
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from temporalio.client import Client

from agents import AgentLimits as AgentLimits
from agents.models import OutputSchema, OutputSpec
from agents.toolkits import Corpus
from orchestrator._batch import BatchSummary, BatchTask
from orchestrator._config import RunConfig
from orchestrator._events import Event
from orchestrator._limits import Limits
from orchestrator._research import ResearchReport
from orchestrator._state import RunResult
from orchestrator.temporal._activities import DEFAULT_TASK_QUEUE
from orchestrator.temporal._batch import CHUNK_SIZE, batch_on_temporal
from orchestrator.temporal._client import (
    WorkflowRun,
    config_with,
    list_runs,
    new_run_id,
    start,
    start_workflow,
)
from orchestrator.temporal._inputs import RunInput
from orchestrator.temporal._remote import RemoteRun, run_result
from orchestrator.temporal._research import research_on_temporal

__all__ = ["TemporalBackend"]


@dataclass(frozen=True, slots=True, kw_only=True)
class TemporalBackend:
    """Runs go to the workers of `task_queue` on `client`'s server: the Python API of paor on
    Temporal (and a `research` backend).

    Attributes:
        client: A client made by `connect`.
        task_queue: The workers' queue.
        execution_timeout: Seconds a run's workflow may take (no limit if None).
        heartbeat_timeout: Seconds without a heartbeat before a tool's worker is taken for dead,
            for the runs `run` makes (`start` takes its `RunInput`'s; `research` and `batch` use
            30).
    """

    client: Client
    task_queue: str = DEFAULT_TASK_QUEUE
    execution_timeout: float | None = None
    heartbeat_timeout: float = 30.0

    async def run(
        self,
        goal: str,
        *,
        model: str = "default",
        tools: Iterable[str] = (),
        limits: Limits | None = None,
        run_id: str | None = None,
        output_type: Any = None,
        config: RunConfig | None = None,
    ) -> RunResult[Any]:
        """Run `goal` as a workflow and wait for its result.

        The result has no events (they would swell the workflow's history; `start` streams them).
        With `output_type`, its name and JSON schema travel with the run, the workflow asks for
        and validates an object of that schema, and `result.output` comes back as the type.

        Args:
            goal: The goal.
            model: The model's name in the workers' registry.
            tools: The tools' names in the workers' registry.
            limits: The run's limits.
            run_id: The run's id, which is also its workflow id (generated if omitted).
            output_type: The type of the run's answer (as `Orchestrator.run`'s).
            config: What the run is (`RunConfig`; the defaults if None), `limits` replacing its
                limits when given.

        Raises:
            RunError: The run's workflow failed, was cancelled or terminated, or timed out.
            ConfigurationError: The output type has no JSON schema.
        """
        spec = None if output_type is None else OutputSpec(output_type)
        output = None if spec is None else OutputSchema(name=spec.name, schema_=spec.schema)
        given = RunInput(
            goal=goal,
            run_id=run_id or new_run_id(),
            model=model,
            tools=tuple(tools),
            config=config_with(config or RunConfig(), limits),
            heartbeat_timeout=self.heartbeat_timeout,
            output=output,
        )
        result = await run_result(
            await start_workflow(self.client, given, self.task_queue, self.execution_timeout)
        )
        if spec is None or result.output is None:
            return result
        try:
            return result.model_copy(update={"output": spec.of_data(result.output)})
        except ValueError as exc:  # the workers validated the schema; the type asks more of it
            why = f"its output is not a {spec.name} here: {exc}"
            return result.model_copy(update={"output": None, "status": "incomplete", "reason": why})

    async def start(self, given: RunInput) -> RemoteRun:
        """Start the workflow of `given`; iterate what it returns for the run's events.

        ```python
        async with await backend.start(given) as run:
            async for event in run:
                ...
        result = run.result
        ```
        """
        return await start(
            self.client,
            given,
            task_queue=self.task_queue,
            execution_timeout=self.execution_timeout,
        )

    async def research(
        self,
        topic: str,
        *,
        corpus: Corpus,
        limits: Limits | None = None,
        on_event: Callable[[Event], None] | None = None,
        meta: dict[str, Any] | None = None,
        run_id: str | None = None,
        tools: Sequence[str] = (),
    ) -> ResearchReport:
        """Research `topic` on the workers and write the report (`research(..., backend=self)`
        calls this).

        Args:
            topic: What to research.
            corpus: The workers' corpus (citations are checked against it).
            limits: The run's budget.
            on_event: Called with each of the run's events as it happens.
            meta: JSON data kept with the run.
            run_id: The run's id, which is also its workflow id (generated if omitted).
            tools: More tools for the agents, beside the research tools, by the names the
                workers serve them under (`paor worker --mcp FILE` serves an MCP server's).

        Raises:
            RunError: The run's workflow failed, was cancelled or terminated, or timed out.
        """
        return await research_on_temporal(
            self.client,
            topic,
            corpus=corpus,
            limits=limits,
            run_id=run_id,
            task_queue=self.task_queue,
            execution_timeout=self.execution_timeout,
            on_event=on_event,
            meta=meta,
            tools=tools,
        )

    async def batch(
        self,
        tasks: Iterable[BatchTask],
        *,
        out: Path,
        concurrency: int = 4,
        chunk_size: int = CHUNK_SIZE,
        limits: AgentLimits | None = None,
        max_tokens: int | None = None,
        deadline_s: float | None = None,
        on_result: Callable[[str, str], None] | None = None,
        tools: Sequence[str] = (),
        grounded: bool = True,
    ) -> BatchSummary:
        """`paor batch` on the workers: every task not already in `out`, a chunk per workflow
        (see `orchestrator.temporal._batch.batch_on_temporal` for each argument)."""
        return await batch_on_temporal(
            self.client,
            tasks,
            out=out,
            concurrency=concurrency,
            chunk_size=chunk_size,
            limits=limits,
            max_tokens=max_tokens,
            deadline_s=deadline_s,
            task_queue=self.task_queue,
            on_result=on_result,
            tools=tools,
            grounded=grounded,
        )

    async def runs(self, *, limit: int = 20) -> list[WorkflowRun]:
        """The `limit` most recent paor workflows on the server, newest first."""
        return await list_runs(self.client, limit=limit)
