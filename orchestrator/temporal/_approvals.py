"""Approvals on Temporal: plans and tool calls wait in their workflows for a client's decision.

A run started with `RunInput.approve` asks for decisions as in process (its plans under review,
calls of tools that change something). Nothing pauses: a workflow waits as long as it must, and
its history keeps it. The run's workflow is where every wait of the run is known and decided:

- a plan waits in the run's workflow itself; a tool call in its sub-agent's child workflow,
  which tells the run by the signal "asked" (the run shows it among its events);
- a client decides with the run's update "decide" (`decide_on_temporal`), which the run
  validates before it is written to the history: the approval waits, and nobody decided it
  first. So of two people deciding one approval, one wins; the other is told it was decided;
- the run forwards a sub-agent's decision by the signal "decided" to its child workflow;
- the query "waiting" says what waits (`waiting_on_temporal`), leaving no trace.

Signals and updates are in the history, so a replayed workflow meets the same decisions.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pydantic import BaseModel, ConfigDict
from temporalio import workflow
from temporalio.client import Client, WorkflowUpdateFailedError
from temporalio.service import RPCError

with workflow.unsafe.imports_passed_through():
    from agents.approvals import ApprovalRequest, Approver, Decision, RunWaits
    from agents.effects import ReservedAgent
    from agents.errors import RunError
    from orchestrator._state import Answered

__all__ = [
    "AgentApprovals",
    "Decided",
    "RunApprovals",
    "decide_on_temporal",
    "waiting_on_temporal",
]


class Decided(BaseModel):
    """A decision on one approval of a run on Temporal (the update's and the signal's input)."""

    model_config = ConfigDict(frozen=True)

    approval_id: str
    decision: Decision


@dataclass(kw_only=True, slots=True)
class RunApprovals:
    """What a run's workflow waits for: its own plans, and its sub-agents' calls."""

    run_id: str = ""
    waiting: dict[str, ApprovalRequest] = field(default_factory=dict)
    decided: dict[str, Decision] = field(default_factory=dict)
    answered: list[Answered] = field(default_factory=list)  # the sub-agents' questions
    questions: int = 0  # how many the run may ask, its planner's and its sub-agents' together
    asked_ids: set[str] = field(default_factory=set)  # the questions asked so far

    def approver(self) -> Approver:
        """The run's approver: each plan waits for the update that decides it."""
        return Approver(decide=self._decide)

    async def _decide(self, request: ApprovalRequest) -> Decision:
        if request.kind == "question":
            self.asked_ids.add(request.approval_id)  # the planner's (its own count limits it)
        self.waiting[request.approval_id] = request
        await workflow.wait_condition(lambda: request.approval_id in self.decided)
        return self.decided[request.approval_id]

    async def asked(self, request: ApprovalRequest) -> bool:
        """A sub-agent's request, told by its child workflow; False when it is a question the
        run may not ask (its limit is reached, counted over the whole run): it is refused."""
        approval_id = request.approval_id
        if approval_id in self.decided:
            return False
        if request.kind == "question" and approval_id not in self.asked_ids:
            if len(self.asked_ids) >= self.questions:
                refusal = Decision(
                    action="deny", message=RunWaits.NONE_LEFT.format(limit=self.questions)
                )
                self.decided[approval_id] = refusal
                child = workflow.get_external_workflow_handle(f"{self.run_id}.{request.agent_id}")
                await child.signal("decided", Decided(approval_id=approval_id, decision=refusal))
                return False
            self.asked_ids.add(approval_id)
        self.waiting[approval_id] = request
        return True

    def check(self, given: Decided) -> None:
        """Refuse a decision on what does not wait (before anything is written to the history).

        Raises:
            ValueError: The run does not wait for this approval, or it was decided first.
        """
        approval_id = given.approval_id
        if approval_id in self.decided:
            action = self.decided[approval_id].action
            raise ValueError(f"{approval_id} of run {self.run_id} was already decided ({action})")
        if approval_id not in self.waiting:
            open_ids = ", ".join(self.waiting) or "nothing"
            raise ValueError(
                f"run {self.run_id} does not wait for {approval_id}; it waits for: {open_ids}"
            )

    async def take(self, given: Decided) -> ApprovalRequest:
        """Take the (checked) decision; a sub-agent's goes on to its child workflow."""
        request = self.waiting.pop(given.approval_id)
        decision = self.decided[given.approval_id] = given.decision
        if request.agent_id != ReservedAgent.RUN:
            if request.kind == "question" and decision.action == "answer":
                said = Answered(
                    agent_id=request.agent_id, question=request.description, answer=decision.message
                )
                self.answered.append(said)
            child = workflow.get_external_workflow_handle(f"{self.run_id}.{request.agent_id}")
            await child.signal("decided", given)
        return request


@dataclass(kw_only=True, slots=True)
class AgentApprovals:
    """What a sub-agent's child workflow waits for: its tool calls' decisions, from its run."""

    run_workflow: str
    decided: dict[str, Decision] = field(default_factory=dict)

    def approver(self) -> Approver:
        """The sub-agent's approver: each call waits for its run to forward the decision."""
        return Approver(decide=self._decide)

    async def _decide(self, request: ApprovalRequest) -> Decision:
        run = workflow.get_external_workflow_handle(self.run_workflow)
        await run.signal("asked", request)
        await workflow.wait_condition(lambda: request.approval_id in self.decided)
        return self.decided[request.approval_id]

    def take(self, given: Decided) -> None:
        """The run forwarded a decision."""
        self.decided[given.approval_id] = given.decision


async def decide_on_temporal(
    client: Client, run_id: str, approval_id: str, decision: Decision
) -> None:
    """Decide what the run `run_id` waits for (`approval_id`, as `waiting_on_temporal` lists).

    Raises:
        RunError: The run does not wait for it (or someone decided it first), or is not running.
    """
    handle = client.get_workflow_handle(run_id)
    try:
        await handle.execute_update("decide", Decided(approval_id=approval_id, decision=decision))
    except WorkflowUpdateFailedError as exc:
        raise RunError(getattr(exc.cause, "message", None) or str(exc)) from None
    except RPCError as exc:
        raise RunError(f"run {run_id} cannot take a decision now: {exc.message}") from None


async def waiting_on_temporal(client: Client, run_id: str) -> list[ApprovalRequest]:
    """What the run `run_id` on Temporal waits for, oldest first.

    Raises:
        RunError: The run cannot be asked (unknown, or not a paor run).
    """
    try:
        found = await client.get_workflow_handle(run_id).query(
            "waiting", result_type=list[ApprovalRequest]
        )
    except RPCError as exc:
        raise RunError(f"run {run_id} cannot be asked what it waits for: {exc.message}") from None
    return list(found)
