"""Plans as the planner writes and revises them, their diffs, and `PlanError`. The planner's and the final
writer's prompts are `RunConfig`'s defaults (`RunConfig().planner_instructions`)."""

from orchestrator._plan import PlanDiff, PlanError

__all__ = [
    "PlanDiff",
    "PlanError",
]
