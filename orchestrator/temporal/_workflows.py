"""The run and its sub-agents as Temporal workflows: the unchanged loops, hosted.

`RunWorkflow` runs the orchestrator's planner and scheduler; every sub-agent it starts runs in an
`AgentWorkflow`, a child workflow, as the effect boundary decides (`TemporalEffects.sub_agent`). So
a run's history holds its plans and one start and one result per sub-agent, and each sub-agent's
history holds its own steps. The models and tools are resolved by name in the registry of the
worker that runs the workflow, and so is the acceptance check (functions do not serialise).

A run's result is its `RunResult` without its events (they would swell the history); callers
that want them read them while the run goes (`RunWorkflow.events`, an update that waits for news;
`RunWorkflow.progress`, a query, for a look that leaves no trace). A run that fails (no plan could
be made, nothing usable was gathered) returns its "failed" result like any other; a paor error
(a misconfigured run) fails the workflow with its message; any other exception is a bug, which
Temporal retries.
"""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from agents import AgentReport, PaorError
    from agents.approvals import ApprovalRequest, Approver
    from agents.effects import Effects, ReservedAgent
    from agents.events import ApprovalDecided, ApprovalRequested
    from agents.guards import Stop
    from agents.models import OutputSpec
    from agents.telemetry import quiet
    from orchestrator._config import RunOptions
    from orchestrator._orchestrator import Orchestrator
    from orchestrator._research import with_approval
    from orchestrator._state import RunResult
    from orchestrator.temporal._activities import registry_for
    from orchestrator.temporal._approvals import AgentApprovals, Decided, RunApprovals
    from orchestrator.temporal._continue import ContinuingEffects
    from orchestrator.temporal._effects import ActivityModel, TemporalEffects
    from orchestrator.temporal._eventlog import EventLog, EventPage
    from orchestrator.temporal._inputs import ACCEPTANCE_CHECKS, AgentInput, RunInput

__all__ = ["READER_GRACE", "AgentWorkflow", "RunWorkflow", "orchestrator_for", "run_options"]

READER_GRACE = timedelta(seconds=30)
"""How long a finished run waits for a watching caller to read its last events."""


def orchestrator_for(given: RunInput) -> Orchestrator:
    """The orchestrator `given` describes, its models and tools from this worker's registry."""
    registry = registry_for(workflow.info().task_queue)
    return Orchestrator(
        ActivityModel(given.model),
        tools=with_approval([registry.tool(name) for name in given.tools], given.approve),
        config=given.config,
        acceptance=ACCEPTANCE_CHECKS[given.acceptance],
    )


def run_options(given: RunInput, effects: Effects, approver: Approver | None) -> RunOptions:
    """What a run on Temporal is given: the workflow's effects, and with `given.approve` or
    questions, what waits for `approver` (its config's review is `approve`'s)."""
    approve = given.approve if approver is not None else None
    questions = given.config.questions if approver is not None else 0
    config = given.config.model_copy(
        update={
            "review": "every" if approve in ("plan", "all") else None,
            "questions": questions,
        }
    )
    return RunOptions(
        config=config,
        effects=effects,
        approver=approver if approve is not None or questions else None,
        keep_events=False,  # the result goes into the history: its events stay out
    )


@workflow.defn(name="paor.Run", failure_exception_types=[PaorError])
class RunWorkflow:
    """One orchestrator run; its sub-agents are `AgentWorkflow` children."""

    def __init__(self) -> None:
        self._log = EventLog()
        self._approvals = RunApprovals()

    @workflow.run
    async def run(self, given: RunInput) -> RunResult:
        """Plan, run the sub-agents, replan and synthesise; return the result without events."""
        effects = TemporalEffects(
            heartbeat_timeout=given.heartbeat_timeout,
            agents=given,
            payload_limit=given.payload_limit,
        )
        self._approvals.run_id = given.run_id
        self._approvals.questions = given.config.questions
        options = run_options(given, effects, self._approvals.approver())
        output = (
            None
            if given.output is None
            else OutputSpec.from_json_schema(given.output.schema_, name=given.output.name)
        )
        orch = orchestrator_for(given)
        stream = orch.stream(given.goal, run_id=given.run_id, output_type=output, **options)
        try:
            # No paor span in workflow code: a replay would make them again. The activities
            # make them, in the caller's trace (see `connect`).
            with quiet():
                async with stream as events:
                    async for event in events:
                        self._log.append(event)
        finally:
            self._log.close()
            await self._let_reader_finish()
        asked = (*stream.result.answered, *self._approvals.answered)  # the children's, too
        return stream.result.model_copy(update={"answered": asked})

    async def _let_reader_finish(self) -> None:
        """Give a watching caller time to take the last page (a workflow cannot answer once it
        has returned); an unwatched run, or a reader gone for good, does not hold it up."""
        if self._log.unread_end():
            try:
                await workflow.wait_condition(
                    lambda: not self._log.unread_end(), timeout=READER_GRACE
                )
            except TimeoutError:
                workflow.logger.info("run ended with its last events unread")
        await workflow.wait_condition(workflow.all_handlers_finished)

    @workflow.update(name="events")
    async def events(self, after: int) -> EventPage:
        """The run's events after the first `after`, once there are any (or the run is over)."""
        await workflow.wait_condition(lambda: self._log.has_news(after))
        return self._log.page(after)

    @workflow.query(name="progress")
    def progress(self) -> EventPage:
        """The run's events so far (`done` once it is over), read without a trace in its history."""
        return self._log.peek()

    @workflow.query(name="waiting")
    def waiting(self) -> list[ApprovalRequest]:
        """What the run waits for: its plans and its sub-agents' calls."""
        return list(self._approvals.waiting.values())

    @workflow.signal(name="asked")
    async def asked(self, request: ApprovalRequest) -> None:
        """A sub-agent's call waits for a decision: the run knows it, and says so (a question
        past the run's limit is refused at once)."""
        if not await self._approvals.asked(request):
            return
        self._log.append(ApprovalRequested.of(request, step=0))

    @workflow.update(name="decide")
    async def decide(self, given: Decided) -> None:
        """Take a person's decision on what waits (a sub-agent's goes on to it)."""
        request = await self._approvals.take(given)
        if request.agent_id != ReservedAgent.RUN:  # the run's own decisions are its stream's events
            self._log.append(ApprovalDecided.of(request, given.decision, step=0))

    @decide.validator
    def _check_decision(self, given: Decided) -> None:
        self._approvals.check(given)


@workflow.defn(name="paor.Agent", failure_exception_types=[PaorError])
class AgentWorkflow:
    """One sub-agent of a run: its executor's loop, its model and tool calls activities; a long
    one continues as new (`ContinuingEffects`)."""

    def __init__(self) -> None:
        self._stop = Stop()
        self._approvals = AgentApprovals(run_workflow="")

    @workflow.run
    async def run(self, given: AgentInput) -> AgentReport:
        """Run the sub-agent to its report (a partial one if it is stopped)."""
        activities = TemporalEffects(
            heartbeat_timeout=given.run.heartbeat_timeout, payload_limit=given.run.payload_limit
        )
        effects = ContinuingEffects(activities, given, self._stop.is_set)
        parent = workflow.info().parent
        self._approvals.run_workflow = parent.workflow_id if parent else given.run.run_id
        options = run_options(given.run, effects, self._approvals.approver())
        executor = orchestrator_for(given.run).executor(
            options["config"], approver=options["approver"], effects=effects
        )
        with quiet():
            return await given.call(self._stop).run_here(executor)

    @workflow.signal(name="stop")
    def stop(self) -> None:
        """Wrap up now with what has been gathered (the run replanned it away, or cancelled it)."""
        self._stop.set()

    @workflow.signal(name="decided")
    def decided(self, given: Decided) -> None:
        """The run forwards a person's decision on one of this sub-agent's calls."""
        self._approvals.take(given)
