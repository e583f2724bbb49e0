"""`RunWorkflow`: the unchanged orchestrator run loop, hosted in one Temporal workflow.

The planner, the scheduler and every sub-agent run inside the workflow exactly as they do in
process; only the effect boundary differs (`TemporalEffects`). The models and tools are resolved by
name in the registry of the worker that runs the workflow; so is the acceptance check (functions do
not serialise). The result is the run's `RunResult` without its events: it is stored in the
workflow's history, which takes payloads of at most 2 MB, and a run's plans and reports (evidence
excerpts are clipped by the toolbox) stay far below that.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict
from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from agents import DEFAULT_INSTRUCTIONS, AcceptanceCheck, cites_evidence
    from orchestrator._limits import Limits
    from orchestrator._orchestrator import Orchestrator
    from orchestrator._planner import PLANNER_INSTRUCTIONS, SYNTHESIS_INSTRUCTIONS
    from orchestrator._state import RunResult
    from orchestrator.temporal._activities import registry_for
    from orchestrator.temporal._effects import ActivityModel, TemporalEffects

__all__ = ["ACCEPTANCE_CHECKS", "Acceptance", "RunInput", "RunWorkflow"]

Acceptance = Literal["none", "cites_evidence"]
ACCEPTANCE_CHECKS: dict[Acceptance, AcceptanceCheck | None] = {
    "none": None,
    "cites_evidence": cites_evidence,
}
"""The acceptance checks a run on Temporal can name."""


class RunInput(BaseModel):
    """What a run on Temporal is given.

    Attributes:
        goal: The goal.
        run_id: The run's id (also what its agents' ids derive from: fixed, so replays agree).
        model: The model's name in the workers' registry.
        tools: The tools' names in the workers' registry.
        limits: The run's limits.
        heartbeat_timeout: Seconds without a heartbeat before a tool's worker is taken for dead.
        instructions: The sub-agents' system prompt.
        planner_instructions: The planner's system prompt.
        synthesis_instructions: The writer's system prompt.
        acceptance: The sub-agents' acceptance check, by name.
        on_plan_failure: What an unusable first plan does (as `Orchestrator`'s).
    """

    model_config = ConfigDict(frozen=True)

    goal: str
    run_id: str
    model: str = "default"
    tools: tuple[str, ...] = ()
    limits: Limits = Limits()
    heartbeat_timeout: float = 30.0
    instructions: str = DEFAULT_INSTRUCTIONS
    planner_instructions: str = PLANNER_INSTRUCTIONS
    synthesis_instructions: str = SYNTHESIS_INSTRUCTIONS
    acceptance: Acceptance = "none"
    on_plan_failure: Literal["raise", "single"] = "raise"


@workflow.defn(name="paor.Run")
class RunWorkflow:
    """One orchestrator run."""

    @workflow.run
    async def run(self, given: RunInput) -> RunResult:
        """Plan, run the sub-agents, replan and synthesise; return the result without events."""
        registry = registry_for(workflow.info().task_queue)
        orchestrator = Orchestrator(
            ActivityModel(given.model),
            tools=[registry.tool(name) for name in given.tools],
            limits=given.limits,
            instructions=given.instructions,
            planner_instructions=given.planner_instructions,
            synthesis_instructions=given.synthesis_instructions,
            acceptance=ACCEPTANCE_CHECKS[given.acceptance],
            on_plan_failure=given.on_plan_failure,
            effects=TemporalEffects(heartbeat_timeout=given.heartbeat_timeout),
            keep_events=False,  # the result goes into the history: its events stay out
        )
        return await orchestrator.run(given.goal, run_id=given.run_id)
