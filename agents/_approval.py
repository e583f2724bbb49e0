"""Tool calls a person approves: `@tool(needs_approval=...)`, an `Approver`, and their decisions.

Before a call of a tool that needs approval runs, its sub-agent asks the approver and waits; the
rest of the run (other sub-agents, the other calls of the turn) goes on meanwhile. A decision is
to approve (as asked, or with edited arguments, or for every later call of that tool in the
run) or to deny with a message the model reads. Each decision is a recorded choice of the effect
boundary, so a replay or a resume meets the same decisions without asking anyone (and a call
approved "always" is recorded as such, wherever the run's timing put it).

An approval may have a timeout: when no decision comes in time, the default decision applies
(deny, unless told otherwise).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Awaitable, Callable, Iterator, Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Literal

import anyio
from pydantic import BaseModel, ConfigDict

from agents._effects import Effects, EffectSite

__all__ = [
    "ApprovalRequest",
    "Approver",
    "Decide",
    "Decision",
    "approvals_of_run",
    "approve",
    "decided",
    "deny",
]


class ApprovalRequest(BaseModel):
    """A tool call waiting for a person's decision.

    Attributes:
        approval_id: Stable across resumes and replays (`agent_id#seq`).
        run_id: The run.
        agent_id: The sub-agent that made the call.
        tool: The tool's name.
        description: What the tool does.
        args: The validated arguments (values of the tool's `sensitive` arguments masked).
    """

    model_config = ConfigDict(frozen=True)

    approval_id: str
    run_id: str
    agent_id: str
    tool: str
    description: str
    args: dict[str, Any]


class Decision(BaseModel):
    """What a person decided about one call.

    Attributes:
        action: "approve" or "deny".
        args: Approve with these arguments instead (validated like the model's).
        message: Why it was denied: the model reads it.
        always: Approve every later call of this tool in the run without asking.
        by: Who decided: "person", "always" (an earlier `always`), or "timeout".
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    action: Literal["approve", "deny"]
    args: dict[str, Any] | None = None
    message: str = ""
    always: bool = False
    by: Literal["person", "always", "timeout"] = "person"


def approve(args: Mapping[str, Any] | None = None, *, always: bool = False) -> Decision:
    """Approve the call (with `args` instead of the model's, if given; `always`: every later
    call of the tool in this run too)."""
    return Decision(action="approve", args=None if args is None else dict(args), always=always)


def deny(message: str = "a person denied this call") -> Decision:
    """Deny the call; the model reads `message`."""
    return Decision(action="deny", message=message)


Decide = Callable[[ApprovalRequest], Awaitable[Decision]]
"""An async function that decides on one request (it may wait for a person)."""

_TIMED_OUT = Decision(action="deny", message="no decision came in time", by="timeout")


@dataclass(frozen=True, slots=True, kw_only=True)
class Approver:
    """Who decides, and how long they may take.

    Args:
        decide: Called with each request; returns the decision (it may wait for a person).
        timeout: Seconds to wait for a decision (None: as long as the run may).
        default: The decision when the timeout passes.
    """

    decide: Callable[[ApprovalRequest], Awaitable[Decision]]
    timeout: float | None = None
    default: Decision = _TIMED_OUT

    @classmethod
    def of(cls, given: Approver | Decide | None) -> Approver | None:
        """`given` as an approver (a bare function: no timeout)."""
        return given if given is None or isinstance(given, Approver) else cls(decide=given)

    async def ask(self, request: ApprovalRequest, always: set[str]) -> Decision:
        """The decision on `request`: at once if its tool was approved "always" in the run."""
        if request.tool in always:
            return Decision(action="approve", by="always")
        with anyio.move_on_after(self.timeout):
            decision = await self.decide(request)
            return decision.model_copy(update={"by": "person"})
        return self.default.model_copy(update={"by": "timeout"})


async def decided(
    effects: Effects,
    site: EffectSite,
    request: ApprovalRequest,
    approver: Approver,
    always: set[str],
) -> Decision:
    """The decision on `request`, as a recorded choice at `site`: asked live, served on replay."""

    async def pick() -> str:
        return (await approver.ask(request, always)).model_dump_json()

    value = await effects.choice(site, pick)
    try:
        decision = Decision.model_validate(json.loads(value))
    except (ValueError, TypeError):
        return deny(f"the recorded decision could not be read: {value[:80]!r}")
    if decision.action == "approve" and decision.always:
        always.add(request.tool)  # replayed too: a resumed run goes on as the person said
    return decision


_run_always: ContextVar[set[str] | None] = ContextVar("paor_always_approved", default=None)


@contextlib.contextmanager
def approvals_of_run() -> Iterator[set[str]]:
    """One run's tools approved "always", shared by every sub-agent started inside the block."""
    found = _run_always.get()
    if found is not None:
        yield found
        return
    always: set[str] = set()
    token = _run_always.set(always)
    try:
        yield always
    finally:
        _run_always.reset(token)
