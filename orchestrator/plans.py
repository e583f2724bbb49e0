"""Plans as the planner writes and revises them, the planner's prompts, and `PlanError`."""

from orchestrator._plan import PlanDiff, PlanDraft, PlanError, SubtaskDraft
from orchestrator._planner import PLANNER_INSTRUCTIONS, SYNTHESIS_INSTRUCTIONS, ReplanDraft
from orchestrator._state import SubtaskStatus

__all__ = [
    "PLANNER_INSTRUCTIONS",
    "SYNTHESIS_INSTRUCTIONS",
    "PlanDiff",
    "PlanDraft",
    "PlanError",
    "ReplanDraft",
    "SubtaskDraft",
    "SubtaskStatus",
]
