"""paor orchestrator: plans, the eager DAG scheduler, replanning, the run, and its events.

```python
from orchestrator import Limits, Orchestrator, RunConfig

orch = Orchestrator(model, [search_docs], config=RunConfig(limits=Limits(deadline_s=120)))
result = await orch.run("goal")               # RunResult
async with orch.stream("goal") as events:     # the same run, as typed events
    async for event in events:
        ...
```

Beyond the front door: `orchestrator.events` (every event type), `orchestrator.plans` (drafts,
diffs, statuses, the planner's prompts, `PlanError`), `orchestrator.runs` (backends, replay
reports), `orchestrator.batch` (reading task files) and `orchestrator.temporal` (the Temporal
backend).
"""

from orchestrator._batch import BatchSummary, BatchTask, run_batch
from orchestrator._config import RunConfig
from orchestrator._events import Event
from orchestrator._limits import Limits
from orchestrator._orchestrator import Orchestrator, RunStream
from orchestrator._plan import Plan, Subtask
from orchestrator._research import ResearchReport, research
from orchestrator._state import RunResult

__all__ = [
    "BatchSummary",
    "BatchTask",
    "Event",
    "Limits",
    "Orchestrator",
    "Plan",
    "ResearchReport",
    "RunConfig",
    "RunResult",
    "RunStream",
    "Subtask",
    "research",
    "run_batch",
]
