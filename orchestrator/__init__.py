"""paor orchestrator: plans, the eager DAG scheduler, replanning, the run, and its events.

```python
from orchestrator import Orchestrator, Limits

orch = Orchestrator(model=model, tools=[search_docs], limits=Limits(deadline_s=120))
result = await orch.run("goal")               # RunResult
async with orch.stream("goal") as events:     # the same run, as typed events
    async for event in events:
        ...
```
"""

from orchestrator._durable import ReplayReport
from orchestrator._events import (
    BudgetExhausted,
    BudgetWarning,
    Event,
    PlanCreated,
    Replanned,
    RunFinished,
    SubtaskCancelled,
    SubtaskFailed,
    SubtaskFinished,
    SubtaskInvalidated,
    SubtaskStarted,
)
from orchestrator._limits import Limits
from orchestrator._orchestrator import Orchestrator, RunStream
from orchestrator._plan import Plan, PlanDiff, PlanDraft, Subtask, SubtaskDraft
from orchestrator._planner import PLANNER_INSTRUCTIONS, SYNTHESIS_INSTRUCTIONS, ReplanDraft
from orchestrator._research import Backend, ResearchReport, research
from orchestrator._state import RunResult, SubtaskStatus

__all__ = [
    "PLANNER_INSTRUCTIONS",
    "SYNTHESIS_INSTRUCTIONS",
    "Backend",
    "BudgetExhausted",
    "BudgetWarning",
    "Event",
    "Limits",
    "Orchestrator",
    "Plan",
    "PlanCreated",
    "PlanDiff",
    "PlanDraft",
    "ReplanDraft",
    "Replanned",
    "ReplayReport",
    "ResearchReport",
    "RunFinished",
    "RunResult",
    "RunStream",
    "Subtask",
    "SubtaskCancelled",
    "SubtaskDraft",
    "SubtaskFailed",
    "SubtaskFinished",
    "SubtaskInvalidated",
    "SubtaskStarted",
    "SubtaskStatus",
    "research",
]
