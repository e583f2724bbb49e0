"""`TemporalBackend`: the Python API's way to say "on Temporal" instead of "in this process".

```python
backend = TemporalBackend(await connect("127.0.0.1:7233"))
report = await research(topic, corpus=corpus, backend=backend)   # on the workers
result = await backend.run("goal", tools=["search_docs"])
summary = await backend.batch(tasks, out=Path("results.jsonl"))
```
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from temporalio.client import Client

from agents import AgentLimits as AgentLimits
from agents.toolkits import Corpus
from orchestrator._batch import BatchSummary, BatchTask
from orchestrator._events import Event
from orchestrator._limits import Limits
from orchestrator._research import ResearchReport
from orchestrator._state import RunResult
from orchestrator.temporal._activities import DEFAULT_TASK_QUEUE
from orchestrator.temporal._batch import batch_on_temporal
from orchestrator.temporal._client import run_on_temporal
from orchestrator.temporal._research import research_on_temporal

__all__ = ["TemporalBackend"]


@dataclass(frozen=True, slots=True, kw_only=True)
class TemporalBackend:
    """Runs go to the workers of `task_queue` on `client`'s server (a `research` backend).

    Attributes:
        client: A client made by `connect`.
        task_queue: The workers' queue.
        execution_timeout: Seconds a run's workflow may take (no limit if None).
    """

    client: Client
    task_queue: str = DEFAULT_TASK_QUEUE
    execution_timeout: float | None = None

    async def research(
        self,
        topic: str,
        *,
        corpus: Corpus,
        limits: Limits | None = None,
        on_event: Callable[[Event], None] | None = None,
        meta: dict[str, Any] | None = None,
    ) -> ResearchReport:
        """A research run on the workers (`research(..., backend=self)` calls this)."""
        return await research_on_temporal(
            self.client,
            topic,
            corpus=corpus,
            limits=limits,
            task_queue=self.task_queue,
            execution_timeout=self.execution_timeout,
            on_event=on_event,
            meta=meta,
        )

    async def run(
        self,
        goal: str,
        *,
        model: str = "default",
        tools: Iterable[str] = (),
        limits: Limits | None = None,
    ) -> RunResult:
        """Run `goal` with the workers' model and tools of these names (see `run_on_temporal`)."""
        return await run_on_temporal(
            self.client,
            goal,
            model=model,
            tools=tools,
            limits=limits,
            task_queue=self.task_queue,
            execution_timeout=self.execution_timeout,
        )

    async def batch(
        self,
        tasks: Iterable[BatchTask],
        *,
        out: Path,
        concurrency: int = 4,
        limits: AgentLimits | None = None,
        max_tokens: int | None = None,
        deadline_s: float | None = None,
    ) -> BatchSummary:
        """`paor batch` on the workers (see `batch_on_temporal`)."""
        return await batch_on_temporal(
            self.client,
            tasks,
            out=out,
            concurrency=concurrency,
            limits=limits,
            max_tokens=max_tokens,
            deadline_s=deadline_s,
            task_queue=self.task_queue,
        )
