"""`TemporalEffects`: the effect boundary of a loop that runs inside a Temporal workflow.

Each model call and tool call becomes an activity whose id is the effect's site (`model:a#3`), each
sub-agent of a run a child workflow (`paor.Agent`, id `{run}.{agent}`), the clock is the
workflow's, and a `choice` is made live: Temporal's history replays the order in which activities
and children completed, so the pick comes out the same on every replay. From the loop's point of
view everything is live (stops obeyed, deadlines applied): Temporal replays transparently.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, TypeVar

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, ApplicationError, ChildWorkflowError

with workflow.unsafe.imports_passed_through():
    import anyio

    from agents import AgentReport, ChatModel, Executor, Tool, ToolContext, Usage
    from agents.effects import AgentCall, EffectSite, LiveEffects
    from agents.errors import MalformedResponse, ModelRequestError, ModelRetryableError
    from agents.guards import Stop
    from agents.models import ModelRequest, ModelResponse
    from agents.tools import ToolOutcome
    from orchestrator.temporal._activities import Activities, ModelCall, ToolCall, registry_for
    from orchestrator.temporal._inputs import AgentInput, RunInput

__all__ = ["ActivityModel", "TemporalEffects"]

_T = TypeVar("_T")
_NOT_RETRYABLE = ["MalformedResponse", "ModelRequestError", "UnknownName"]


class ActivityModel:
    """A model inside a workflow: only its name travels; the worker's registry has the real one.

    Args:
        name: The model's name in the worker's registry.
    """

    def __init__(self, name: str) -> None:
        self.name = name

    async def complete(self, request: ModelRequest) -> ModelResponse:
        """Refuse: a workflow reaches its model through `TemporalEffects.model_call` only."""
        raise ModelRequestError("an ActivityModel is asked through TemporalEffects only")


@dataclass(kw_only=True, slots=True)
class TemporalEffects(LiveEffects):
    """Effects as workflow operations (use it only inside a workflow).

    `choice`, `obeys_stops` and `time_limit` are the live ones: a choice is made at once (the
    workflow's history orders the wake-ups it depends on), and nothing replays as the loops see
    it (deadlines are timers, stops are live).

    Attributes:
        model_timeout: Seconds one model attempt may take (above the model's own timeout, 120 s by
            default, so that its error is the one reported).
        model_attempts: Attempts of a model call (retryable failures only).
        tool_margin: Seconds added to a tool's own timeout for its activity's.
        tool_attempts: Attempts of a tool call whose worker died or stopped heartbeating.
        heartbeat_timeout: Seconds without a heartbeat before a tool's worker is taken for dead.
        agents: The run whose sub-agents become child workflows (None: they run in this one).
        payload_limit: The largest model request, in bytes, sent as an activity input (None: no
            check; a blob store takes large ones).
    """

    model_timeout: float = 180.0
    model_attempts: int = 5
    tool_margin: float = 10.0
    tool_attempts: int = 3
    heartbeat_timeout: float = 30.0
    agents: RunInput | None = None
    payload_limit: int | None = None

    async def model_call(
        self, site: EffectSite, model: ChatModel, request: ModelRequest
    ) -> ModelResponse:
        """Ask the model in the activity `model:{site.key}`.

        Raises:
            ModelRequestError: The request is over `payload_limit` (Temporal would refuse it, and
                retry the workflow's step until the run's timeout).
        """
        if self.payload_limit is not None:
            size = len(request.model_dump_json())
            if size > self.payload_limit:
                raise ModelRequestError(_too_large(size))
        handle = workflow.start_activity_method(
            Activities.model_call,
            ModelCall(model=model.name, request=request),
            activity_id=f"model:{site.key}",
            start_to_close_timeout=timedelta(seconds=self.model_timeout),
            retry_policy=RetryPolicy(
                maximum_attempts=self.model_attempts, non_retryable_error_types=_NOT_RETRYABLE
            ),
        )
        try:
            return await _cancellable(handle)
        except ActivityError as exc:
            raise _model_error(exc) from exc

    async def tool_call(
        self, site: EffectSite, tool: Tool, args: dict[str, Any], ctx: ToolContext
    ) -> ToolOutcome:
        """Run the tool in the activity `tool:{site.key}`, which heartbeats while it runs.

        A tool the workers do not serve is one of the executor's own control tools
        (`report_issue`), which only records a signal: it runs here, in the workflow.
        """
        if tool.name not in registry_for(workflow.info().task_queue).tools:
            return await tool.execute(args, ctx)
        timeout = (tool.timeout or 3600.0) + self.tool_margin
        call = ToolCall(
            tool=tool.name,
            args=args,
            run_id=ctx.run_id,
            agent_id=ctx.agent_id,
            call_id=ctx.call_id,
        )
        handle = workflow.start_activity_method(
            Activities.tool_call,
            call,
            activity_id=f"tool:{site.key}",
            start_to_close_timeout=timedelta(seconds=timeout),
            heartbeat_timeout=timedelta(seconds=self.heartbeat_timeout),
            retry_policy=RetryPolicy(
                maximum_attempts=self.tool_attempts, non_retryable_error_types=["UnknownName"]
            ),
        )
        try:
            return await _cancellable(handle)
        except ActivityError as exc:  # out of attempts, or unrunnable: the model reads why
            return ToolOutcome(ok=False, error="failed", message=_cause(exc))

    async def now(self, site: EffectSite) -> float:
        """The workflow's clock (the same on every replay)."""
        return workflow.now().timestamp()

    async def sub_agent(self, executor: Executor, call: AgentCall) -> AgentReport:
        """Run the sub-agent as the child workflow `{run}.{agent}` (here, without `agents`).

        The child gets what the run's budget has left and is charged what it spent once it
        reports; a stop becomes the child's "stop" signal, and it reports what it has.
        """
        if self.agents is None:
            return await call.run_here(executor)
        handle = await workflow.start_child_workflow(
            "paor.Agent",
            AgentInput.of(self.agents, call),
            id=f"{call.run_id}.{call.agent_id}",
            result_type=AgentReport,
        )
        try:
            report = await _until_reported(handle, call.stop)
        except ChildWorkflowError as exc:
            report = AgentReport(
                agent_id=call.agent_id,
                task=call.task,
                status="failed",
                answer="",
                notes=(f"its workflow failed: {_cause(exc)}",),
            )
        if call.budget is not None:
            call.budget.charge(report.usage)
        return report


async def _cancellable(handle: workflow.ActivityHandle[_T]) -> _T:
    """Wait for an activity so that an anyio cancellation works.

    Awaiting the handle itself under a cancelled anyio scope deadlocks the workflow (TMPRL1101):
    anyio re-delivers the cancellation on every loop iteration while Temporal resolves the
    cancelled activity only in its next activation. Waiting on an event lets the scope exit at once;
    the activity is cancelled once, explicitly.
    """
    done = _done_event(handle)
    try:
        await done.wait()
    except BaseException:
        _cancel(handle)
        raise
    return handle.result()


async def _until_reported(
    handle: workflow.ChildWorkflowHandle[Any, AgentReport], stop: Stop | None
) -> AgentReport:
    """Wait for a child agent's report; a stop asks it to wrap up, and its report is waited for.

    As with activities, the handle is never awaited under a cancel scope: a cancellation of the
    caller cancels the child once, explicitly.
    """
    done = _done_event(handle)
    try:
        async with anyio.create_task_group() as tg:
            if stop is not None:
                stop.attach(tg.cancel_scope)
            await done.wait()
            tg.cancel_scope.cancel()
        if stop is not None:
            stop.detach(tg.cancel_scope)
        if not done.is_set():  # stopped: the child reports what it has
            await handle.signal("stop")
            await done.wait()
    except BaseException:
        _cancel(handle)
        raise
    return handle.result()


def _done_event(handle: asyncio.Future[Any]) -> anyio.Event:
    """An event set when the activity or child workflow behind `handle` is done."""
    done = anyio.Event()
    handle.add_done_callback(lambda _: done.set())
    return done


def _cancel(handle: asyncio.Future[Any]) -> None:
    """Cancel the activity or child workflow behind `handle`, once, unless it is done."""
    if not handle.done():
        handle.cancel()


def _too_large(size: int) -> str:
    return (
        f"the model request is {size / 1e6:.1f} MB, over what Temporal takes (2 MB): give the "
        "client and every worker the same blob store (connect(..., blobs=DIR), --blobs DIR)"
    )


def _cause(exc: BaseException) -> str:
    """The innermost message of a Temporal failure chain (what went wrong, not where)."""
    while exc.__cause__ is not None:
        exc = exc.__cause__
    return getattr(exc, "message", None) or str(exc)


def _model_error(exc: ActivityError) -> Exception:
    """The paor error the in-process loop would have seen."""
    cause = exc.cause
    if not isinstance(cause, ApplicationError):
        return ModelRetryableError(f"model activity failed: {cause or exc}")
    if cause.type == "MalformedResponse":
        raw = str(cause.details[0]) if cause.details else ""
        usage = cause.details[1] if len(cause.details) > 1 else None
        spent = Usage.model_validate(usage) if isinstance(usage, dict) else None
        return MalformedResponse(cause.message, raw=raw, usage=spent)
    if cause.type == "ModelRetryableError":
        return ModelRetryableError(cause.message)
    return ModelRequestError(cause.message)
