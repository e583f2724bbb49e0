"""What a person approves: tool calls (`@tool(needs_approval=...)`) and plans, and their decisions.

Before a call of a tool that needs approval runs, its sub-agent asks the approver and waits; the
rest of the run (other sub-agents, the other calls of the turn) goes on meanwhile. A decision is
to approve (as asked, or with edited arguments, or for every later call of that tool in the
run) or to deny with a message the model reads. A plan under review (`RunConfig(review=...)`)
is approved, approved as a person edited it, or rejected with feedback the planner reads. Each
decision is a recorded choice of the effect boundary, so a replay or a resume meets the same
decisions without asking anyone (and a call approved "always" is recorded as such, wherever the
run's timing put it).

An approver with no callback (`PAUSE`) leaves the decision to the caller (`RunStream.decide`), or,
once nothing else is left to do, pauses the run: it is journaled, the process may exit, and
`resume(run_id, decisions=...)` or `paor approve` continues it later.

An approval may have a timeout: when no decision comes in time, the default decision applies
(deny, unless told otherwise).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict

if TYPE_CHECKING:
    from agents._effects import EffectSite

__all__ = [
    "ASK_USER_TOOL",
    "PAUSE",
    "ApprovalRequest",
    "Approver",
    "Decide",
    "Decision",
]


ASK_USER_TOOL = "ask_user"
"""The name of the built-in tool a sub-agent asks the user with (`agents._signals.ASK_USER`)."""


class ApprovalRequest(BaseModel):
    """A tool call, or a plan, waiting for a person's decision.

    Attributes:
        approval_id: Stable across resumes and replays (`agent_id#seq`).
        run_id: The run.
        agent_id: The sub-agent that made the call ("run" for a plan).
        kind: "tool" (a call), "plan" (a first plan, or a replan's new version), or
            "question" (the planner or a sub-agent asks the user: `description` says what).
        tool: The tool's name (tool calls).
        description: What the tool does; for a plan, the plan drawn as text (goals,
            dependencies, tools, and what a replan keeps, adds, removes and cancels).
        args: The validated arguments (values of the tool's `sensitive` arguments masked).
        plan: The plan proposed, as JSON data (`orchestrator.plans.Plan`).
        problems: Why the person's last edit of this plan could not be used.
    """

    model_config = ConfigDict(frozen=True)

    approval_id: str
    run_id: str
    agent_id: str
    kind: Literal["tool", "plan", "question"] = "tool"
    tool: str = ""
    description: str = ""
    args: dict[str, Any] = {}
    plan: dict[str, Any] | None = None
    problems: tuple[str, ...] = ()

    @classmethod
    def question(cls, site: EffectSite, agent_id: str, question: str) -> ApprovalRequest:
        """The request of `agent_id`'s question to the user, at the question's own address."""
        return cls(
            approval_id=site.key, run_id=site.run_id, agent_id=agent_id, kind="question",
            tool=ASK_USER_TOOL, description=question, args={"question": question},
        )  # fmt: skip

    def summary(self) -> str:
        """One line naming what waits."""
        if self.kind == "plan":
            version = (self.plan or {}).get("version", 1)
            return f"{self.approval_id}: plan v{version}"
        if self.kind == "question":
            return f"{self.approval_id}: question: {' '.join(self.description.split())[:120]}"
        shown = json.dumps(self.args, ensure_ascii=False, sort_keys=True)
        return f"{self.approval_id}: {self.tool}({shown[:120]})"


class Decision(BaseModel):
    """What a person decided about one call.

    Attributes:
        action: "approve" or "deny" (for a plan: reject); "answer" for a question.
        args: Approve the call with these arguments instead (validated like the model's).
        plan: Approve this plan instead (JSON data of an `orchestrator.plans.Plan`, validated
            like the planner's).
        message: Why it was denied: the model (or, for a plan, the planner) reads it; for a
            question, the answer.
        always: Approve every later call of this tool in the run without asking.
        by: Who decided: "person", "always" (an earlier `always`), or "timeout".
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    action: Literal["approve", "deny", "answer"]
    args: dict[str, Any] | None = None
    plan: dict[str, Any] | None = None
    message: str = ""
    always: bool = False
    by: Literal["person", "always", "timeout"] = "person"

    @classmethod
    def approve(cls, args: Mapping[str, Any] | None = None, *, always: bool = False) -> Decision:
        """Approve the call (with `args` instead of the model's, if given; `always`: every later
        call of the tool in this run too)."""
        return cls(action="approve", args=None if args is None else dict(args), always=always)

    @classmethod
    def deny(cls, message: str = "a person denied this call") -> Decision:
        """Deny the call; the model reads `message`."""
        return cls(action="deny", message=message)

    @classmethod
    def edit(cls, plan: Any) -> Decision:
        """Approve this plan instead of the one proposed (a `Plan`, or its JSON data)."""
        data = plan.model_dump(mode="json") if isinstance(plan, BaseModel) else dict(plan)
        return cls(action="approve", plan=data)

    @classmethod
    def answer(cls, text: str) -> Decision:
        """Answer a question the run asked (`ApprovalRequest.kind == "question"`)."""
        return cls(action="answer", message=text)

    @classmethod
    def reject(cls, feedback: str) -> Decision:
        """Reject the plan; the planner makes another with `feedback` (a bounded number of
        times)."""
        return cls(action="deny", message=feedback)


Decide = Callable[[ApprovalRequest], Awaitable[Decision]]
"""An async function that decides on one request (it may wait for a person)."""

_TIMED_OUT = Decision(action="deny", message="no decision came in time", by="timeout")


@dataclass(frozen=True, slots=True, kw_only=True)
class Approver:
    """Who decides, and how long they may take.

    Args:
        decide: Called with each request; returns the decision (it may wait for a person).
            None: the caller decides (`RunStream.decide`), or the run pauses (see `PAUSE`).
        timeout: Seconds to wait for a decision (None: as long as the run may).
        default: The decision when the timeout passes.
    """

    decide: Callable[[ApprovalRequest], Awaitable[Decision]] | None = None
    timeout: float | None = None
    default: Decision = _TIMED_OUT

    @classmethod
    def of(cls, given: Approver | Decide | None) -> Approver | None:
        """`given` as an approver (a bare function: no timeout)."""
        return given if given is None or isinstance(given, Approver) else cls(decide=given)

    @property
    def pauses(self) -> bool:
        """Whether nobody decides in process: a journaled run pauses once only approvals wait."""
        return self.decide is None


PAUSE = Approver()
"""The approver of a run that pauses for its decisions: the caller may answer while it streams
(`RunStream.decide`); once nothing but approvals is left, a journaled run pauses (it ends with
status "paused", naming what waits) and `resume(run_id, decisions=...)` continues it."""
