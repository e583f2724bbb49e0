"""Plans as the planner writes and revises them, and the planner's prompts."""

from orchestrator._plan import PlanDiff, PlanDraft, SubtaskDraft
from orchestrator._planner import PLANNER_INSTRUCTIONS, SYNTHESIS_INSTRUCTIONS, ReplanDraft
from orchestrator._state import SubtaskStatus

__all__ = [
    "PLANNER_INSTRUCTIONS",
    "SYNTHESIS_INSTRUCTIONS",
    "PlanDiff",
    "PlanDraft",
    "ReplanDraft",
    "SubtaskDraft",
    "SubtaskStatus",
]
