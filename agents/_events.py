"""Events an agent emits while it runs, for progress displays and the planner.

Each event is a frozen model with a `type` tag and the ids that place it: run, agent, step.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from agents._approval import ApprovalRequest, Decision
from agents.models._model import Usage, WireProtocol

__all__ = [
    "AgentEvent",
    "ApprovalDecided",
    "ApprovalRequested",
    "BreakerOpened",
    "EventSink",
    "IssueReported",
    "LoopWarning",
    "ModelCalled",
    "TextDelta",
    "ToolCalled",
]


class _AgentEventBase(BaseModel):
    model_config = ConfigDict(frozen=True)

    run_id: str
    agent_id: str
    step: int


class ModelCalled(_AgentEventBase):
    """The agent got a reply from its model."""

    type: Literal["model_called"] = "model_called"
    usage: Usage
    duration_ms: float
    tool_calls: int
    protocol: WireProtocol | None = None


class ToolCalled(_AgentEventBase):
    """A tool call finished, whatever its outcome.

    Attributes:
        error: What went wrong, as the model read it (first line, at most 300 characters).
        error_kind: The kind of failure (`failed`, `timeout`, `invalid_arguments`, ...).
    """

    type: Literal["tool_called"] = "tool_called"
    tool: str
    call_id: str
    ok: bool
    error: str | None
    duration_ms: float
    error_kind: str | None = None


class IssueReported(_AgentEventBase):
    """The agent reported a problem with its task (the built-in `report_issue` tool). A run
    replans on an invalidation as it arrives, while the agent still writes its answer.

    Attributes:
        kind: "blocked" (the task cannot be done: the agent stops) or "invalidates" (what it
            found contradicts the task's assumptions).
        reason: What the agent found, as it wrote it (the report's `invalidates` or answer).
    """

    type: Literal["issue_reported"] = "issue_reported"
    kind: Literal["blocked", "invalidates"]
    reason: str


class BreakerOpened(_AgentEventBase):
    """A tool failed too often and left the menu for a cooldown."""

    type: Literal["breaker_opened"] = "breaker_opened"
    tool: str
    reason: str


class LoopWarning(_AgentEventBase):
    """The agent was told it is going round in circles."""

    type: Literal["loop_warning"] = "loop_warning"
    detail: str


class TextDelta(_AgentEventBase):
    """A piece of a model's reply text, as it is generated: a sub-agent's (its answer, or what
    it says before calling tools, a call it writes as text included: the `ModelCalled` event
    after the reply says it was a call) or the planner's synthesis (`agent_id` "planner"). Only
    when the text is asked for (`Orchestrator.stream(goal, text=True)`); never kept in
    `RunResult.events`, where the whole replies are.

    Attributes:
        text: The piece.
        purpose: What the model call was for (see `ModelRequest.purpose`).
        restart: The model call was retried: the text so far is void and starts again here.
    """

    type: Literal["text_delta"] = "text_delta"
    text: str
    purpose: str
    restart: bool = False


class ApprovalRequested(_AgentEventBase):
    """A tool call, or a plan, waits for a person's decision (see `agents.approvals`): answer
    it with `RunStream.decide(approval_id, ...)`.

    Attributes:
        approval_id: The request's id (`agent_id#seq`, stable across resumes).
        tool: The tool ("" for a plan, "ask_user" for a question).
        args: Its arguments (sensitive values masked; a question's is {"question": ...}).
        kind: "tool", "plan" or "question".
        request: The whole request (a plan's drawing and data included).
    """

    type: Literal["approval_requested"] = "approval_requested"
    approval_id: str
    tool: str
    args: dict[str, Any]
    kind: Literal["tool", "plan", "question"] = "tool"
    request: ApprovalRequest | None = None

    @classmethod
    def of(cls, request: ApprovalRequest, step: int) -> ApprovalRequested:
        """The event of `request`, made at its agent's `step`."""
        return cls(
            run_id=request.run_id, agent_id=request.agent_id, step=step,
            approval_id=request.approval_id, tool=request.tool, args=request.args,
            kind=request.kind, request=request,
        )  # fmt: skip


class ApprovalDecided(_AgentEventBase):
    """The decision on a tool call came.

    Attributes:
        approval_id: The request's id.
        tool: The tool ("" for a plan).
        action: "approve" or "deny" (a plan: rejected).
        by: "person", "always" (an earlier decision for the run), or "timeout".
        edited: The call runs with arguments the person gave (a plan: as the person edited it).
        kind: "tool" or "plan".
        message: The reason given with a denial (the feedback of a rejected plan).
    """

    type: Literal["approval_decided"] = "approval_decided"
    approval_id: str
    tool: str
    action: str
    by: str
    edited: bool = False
    kind: Literal["tool", "plan", "question"] = "tool"
    message: str = ""

    @classmethod
    def of(cls, request: ApprovalRequest, decision: Decision, step: int) -> ApprovalDecided:
        """The event of `decision` on `request`, at its agent's `step`."""
        return cls(
            run_id=request.run_id, agent_id=request.agent_id, step=step,
            approval_id=request.approval_id, tool=request.tool, action=decision.action,
            by=decision.by, edited=decision.args is not None or decision.plan is not None,
            kind=request.kind, message=decision.message,
        )  # fmt: skip


AgentEvent = Annotated[
    ModelCalled
    | ToolCalled
    | BreakerOpened
    | IssueReported
    | LoopWarning
    | TextDelta
    | ApprovalRequested
    | ApprovalDecided,
    Field(discriminator="type"),
]
"""Any event of a sub-agent (a tagged union on `type`)."""

EventSink = Callable[[AgentEvent], Awaitable[None]]
"""Receives an agent's events; awaiting it applies back-pressure to the agent."""
