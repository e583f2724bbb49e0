"""`RunWorkflow`: the unchanged orchestrator run loop, hosted in one Temporal workflow.

The planner, the scheduler and every sub-agent run inside the workflow exactly as they do in
process; only the effect boundary differs (`TemporalEffects`). The models and tools are resolved by
name in the registry of the worker that runs the workflow. The result is kept compact (no event
list): it is stored in the workflow's history.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict
from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from agents import Usage
    from orchestrator._limits import Limits
    from orchestrator._orchestrator import Orchestrator
    from orchestrator._state import RunResult
    from orchestrator.temporal._activities import registry_for
    from orchestrator.temporal._effects import ActivityModel, TemporalEffects

__all__ = ["RunInput", "RunOutcome", "RunWorkflow"]


class RunInput(BaseModel):
    """What a run on Temporal is given.

    Attributes:
        goal: The goal.
        run_id: The run's id (also what its agents' ids derive from: fixed, so replays agree).
        model: The model's name in the workers' registry.
        tools: The tools' names in the workers' registry.
        limits: The run's limits.
        heartbeat_timeout: Seconds without a heartbeat before a tool's worker is taken for dead.
    """

    model_config = ConfigDict(frozen=True)

    goal: str
    run_id: str
    model: str = "default"
    tools: tuple[str, ...] = ()
    limits: Limits = Limits()
    heartbeat_timeout: float = 30.0


class RunOutcome(BaseModel):
    """The compact result of a run on Temporal.

    Attributes:
        run_id: The run.
        answer: The synthesised answer.
        status: complete, incomplete or failed (as `RunResult.status`).
        reason: Why the run is not complete, if it is not.
        usage: Tokens, requests and tool calls of the whole run.
        reports: Each sub-agent's report status, by agent id.
    """

    model_config = ConfigDict(frozen=True)

    run_id: str
    answer: str
    status: str
    reason: str | None = None
    usage: Usage = Usage()
    reports: dict[str, str] = {}

    @classmethod
    def of(cls, result: RunResult) -> RunOutcome:
        """The compact form of `result`."""
        return cls(
            run_id=result.run_id,
            answer=result.answer,
            status=result.status,
            reason=result.reason,
            usage=result.usage,
            reports={r.agent_id: r.status for r in result.reports},
        )


@workflow.defn(name="paor.Run")
class RunWorkflow:
    """One orchestrator run."""

    @workflow.run
    async def run(self, given: RunInput) -> RunOutcome:
        """Plan, run the sub-agents, replan and synthesise; return the compact result."""
        registry = registry_for(workflow.info().task_queue)
        orchestrator = Orchestrator(
            ActivityModel(given.model),
            tools=[registry.tool(name) for name in given.tools],
            limits=given.limits,
            effects=TemporalEffects(heartbeat_timeout=given.heartbeat_timeout),
            keep_events=False,
        )
        return RunOutcome.of(await orchestrator.run(given.goal, run_id=given.run_id))
