"""The typed events of a run.

Run-level events carry the run id, the subtask id they concern (None for the run itself) and the
orchestrator step that produced them. Sub-agent events (`ModelCalled`, `ToolCalled`,
`BreakerOpened`, `IssueReported`, `LoopWarning`) are passed through as the agents emit them; their
`agent_id` is the subtask id.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from agents import AgentReport, Usage
from agents.approvals import ApprovalRequest
from agents.events import (
    ApprovalDecided,
    ApprovalRequested,
    BreakerOpened,
    IssueReported,
    LoopWarning,
    ModelCalled,
    TextDelta,
    ToolCalled,
)
from orchestrator._plan import Plan, PlanDiff

__all__ = [
    "BudgetExhausted",
    "BudgetWarning",
    "Event",
    "PlanCreated",
    "Replanned",
    "RunFinished",
    "RunPaused",
    "SubtaskCancelled",
    "SubtaskFailed",
    "SubtaskFinished",
    "SubtaskInvalidated",
    "SubtaskStarted",
]


class _RunEvent(BaseModel):
    model_config = ConfigDict(frozen=True)

    run_id: str
    subtask_id: str | None = None
    step: int = 0


class PlanCreated(_RunEvent):
    """The first plan was made."""

    type: Literal["plan_created"] = "plan_created"
    plan: Plan


class SubtaskStarted(_RunEvent):
    """A sub-agent began work on a subtask."""

    type: Literal["subtask_started"] = "subtask_started"
    goal: str


class SubtaskFinished(_RunEvent):
    """A subtask ended with a usable result (done, or partial)."""

    type: Literal["subtask_finished"] = "subtask_finished"
    report: AgentReport


class SubtaskFailed(_RunEvent):
    """A subtask ended failed or blocked."""

    type: Literal["subtask_failed"] = "subtask_failed"
    report: AgentReport


class SubtaskCancelled(_RunEvent):
    """A running subtask was stopped; its partial report is kept."""

    type: Literal["subtask_cancelled"] = "subtask_cancelled"
    reason: str
    report: AgentReport | None = None


class SubtaskInvalidated(_RunEvent):
    """A subtask that had not started was dropped from the plan."""

    type: Literal["subtask_invalidated"] = "subtask_invalidated"
    reason: str


class Replanned(_RunEvent):
    """The plan changed; the diff says how."""

    type: Literal["replanned"] = "replanned"
    diff: PlanDiff
    plan: Plan


class BudgetWarning(_RunEvent):
    """A resource passed 80% of its cap."""

    type: Literal["budget_warning"] = "budget_warning"
    resource: str
    used: float
    limit: float


class BudgetExhausted(_RunEvent):
    """A cap was reached: nothing new starts; the run synthesises what it has."""

    type: Literal["budget_exhausted"] = "budget_exhausted"
    reason: str


class RunFinished(_RunEvent):
    """The run ended."""

    type: Literal["run_finished"] = "run_finished"
    status: Literal["complete", "incomplete", "failed"]
    reason: str | None
    usage: Usage


class RunPaused(_RunEvent):
    """Nothing is left to do but wait for people: the run is journaled as paused, naming what
    waits (`Orchestrator.resume(run_id, decisions=...)` or `paor approve` continues it)."""

    type: Literal["run_paused"] = "run_paused"
    waiting: tuple[ApprovalRequest, ...]


Event = Annotated[
    PlanCreated
    | SubtaskStarted
    | SubtaskFinished
    | SubtaskFailed
    | SubtaskCancelled
    | SubtaskInvalidated
    | Replanned
    | BudgetWarning
    | BudgetExhausted
    | RunFinished
    | RunPaused
    | ModelCalled
    | ToolCalled
    | BreakerOpened
    | IssueReported
    | LoopWarning
    | TextDelta
    | ApprovalRequested
    | ApprovalDecided,
    Field(discriminator="type"),
]
"""Any event of a run, a sub-agent's included (a tagged union on `type`)."""
