"""A run's events, as `Orchestrator.stream()` yields them."""

from orchestrator._events import (
    BudgetExhausted,
    BudgetWarning,
    PlanCreated,
    Replanned,
    RunFinished,
    RunPaused,
    SubtaskCancelled,
    SubtaskFailed,
    SubtaskFinished,
    SubtaskInvalidated,
    SubtaskStarted,
)

__all__ = [
    "BudgetExhausted",
    "BudgetWarning",
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
