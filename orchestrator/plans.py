"""Plans as the planner writes and revises them, and `PlanError`. The planner's and the final
writer's prompts are `RunConfig`'s defaults (`RunConfig().planner_instructions`)."""

from orchestrator._plan import PlanDiff, PlanDraft, PlanError, SubtaskDraft
from orchestrator._planner import ReplanDraft
from orchestrator._state import SubtaskStatus

__all__ = [
    "PlanDiff",
    "PlanDraft",
    "PlanError",
    "ReplanDraft",
    "SubtaskDraft",
    "SubtaskStatus",
]
