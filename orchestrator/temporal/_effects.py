"""`TemporalEffects`: the effect boundary of a loop that runs inside a Temporal workflow.

Each model call and tool call becomes an activity whose id is the effect's site (`model:a#3`), the
clock is the workflow's, and a `choice` is made live: Temporal's history replays the order in
which activities completed, so the pick comes out the same on every replay. Nothing is ever
"replaying" from the loop's point of view: Temporal replays transparently.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any, TypeVar

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, ApplicationError

with workflow.unsafe.imports_passed_through():
    import anyio

    from agents import (
        ChatModel,
        EffectSite,
        LiveEffects,
        MalformedResponse,
        ModelRequest,
        ModelRequestError,
        ModelResponse,
        ModelRetryableError,
        Tool,
        ToolContext,
        ToolOutcome,
    )
    from orchestrator.temporal._activities import Activities, ModelCall, ToolCall

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

    `choice` and `replaying` are the live ones: a choice is made at once (the workflow's history
    orders the wake-ups it depends on), and nothing replays as the loops see it (deadlines are
    timers, stops are live).

    Attributes:
        model_timeout: Seconds one model attempt may take.
        model_attempts: Attempts of a model call (retryable failures only).
        tool_margin: Seconds added to a tool's own timeout for its activity's.
        tool_attempts: Attempts of a tool call whose worker died or stopped heartbeating.
        heartbeat_timeout: Seconds without a heartbeat before a tool's worker is taken for dead.
    """

    model_timeout: float = 120.0
    model_attempts: int = 5
    tool_margin: float = 10.0
    tool_attempts: int = 3
    heartbeat_timeout: float = 30.0

    async def model_call(
        self, site: EffectSite, model: ChatModel, request: ModelRequest
    ) -> ModelResponse:
        """Ask the model in the activity `model:{site.key}`."""
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
        """Run the tool in the activity `tool:{site.key}`, which heartbeats while it runs."""
        timeout = (tool.timeout or 3600.0) + self.tool_margin
        call = ToolCall(
            tool=tool.name,
            args=args,
            run_id=ctx.run_id,
            agent_id=ctx.agent_id,
            call_id=ctx.call_id,
            idempotency_key=ctx.idempotency_key,
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
        return await _cancellable(handle)

    async def now(self, site: EffectSite) -> float:
        """The workflow's clock (the same on every replay)."""
        return workflow.now().timestamp()


async def _cancellable(handle: workflow.ActivityHandle[_T]) -> _T:
    """Wait for an activity so that an anyio cancellation works.

    Awaiting the handle itself under a cancelled anyio scope deadlocks the workflow (TMPRL1101):
    anyio re-delivers the cancellation on every loop iteration while Temporal resolves the
    cancelled activity only in its next activation. Waiting on an event lets the scope exit at once;
    the activity is cancelled once, explicitly.
    """
    done = anyio.Event()
    handle.add_done_callback(lambda _: done.set())
    try:
        await done.wait()
    except BaseException:
        if not handle.done():
            handle.cancel()
        raise
    return handle.result()


def _model_error(exc: ActivityError) -> Exception:
    """The paor error the in-process loop would have seen."""
    cause = exc.cause
    if not isinstance(cause, ApplicationError):
        return ModelRetryableError(f"model activity failed: {cause or exc}")
    if cause.type == "MalformedResponse":
        raw = str(cause.details[0]) if cause.details else ""
        return MalformedResponse(cause.message, raw=raw)
    if cause.type == "ModelRetryableError":
        return ModelRetryableError(cause.message)
    return ModelRequestError(cause.message)
