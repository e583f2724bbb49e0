"""A person's review of the plan: the first plan and, when asked, every replan's new version.

The person sees the plan drawn as text (`draw_plan`: each subtask's goal, dependencies and tools,
and what a replan keeps, adds, removes and cancels) with its JSON data, and decides: approve;
approve an edited plan, which is validated like the planner's (an edit with problems is shown
them and asked again, a bounded number of times); or reject with feedback, which the planner
reads when it plans again (bounded too: see `MAX_REJECTIONS`). Every decision is a recorded
choice of the run, at its own address, so a resume or a replay meets it without asking anyone.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection, Mapping
from dataclasses import dataclass

from pydantic import ValidationError

from agents.approvals import ApprovalRequest, Approver, RunWaits
from agents.effects import Addresses, Effects, EffectSite, ReservedAgent
from agents.events import AgentEvent, ApprovalDecided, ApprovalRequested
from orchestrator._plan import Plan, problems

__all__ = [
    "MAX_EDITS",
    "MAX_REJECTIONS",
    "Reviewer",
    "asked_for_planner",
    "checked_edit",
    "draw_plan",
]

MAX_REJECTIONS = 3
"""Plans a person may reject in a row: then the first plan fails (`PlanError`), and a replan is
given up (the current plan stays)."""
MAX_EDITS = 5
"""Edits with problems a person may send for one plan: the next counts as a rejection."""
_LIVE = ("pending", "running")


@dataclass(frozen=True, slots=True, kw_only=True)
class Reviewer:
    """Asks the run's approver about a plan, through the effect boundary."""

    approver: Approver
    waits: RunWaits
    effects: Effects
    addresses: Addresses
    max_subtasks: int
    tools: Collection[str]
    emit: Callable[[AgentEvent], Awaitable[None]]

    async def review(
        self,
        step: int,
        plan: Plan,
        *,
        before: Plan | None = None,
        status: Mapping[str, str] | None = None,
        reserved: Collection[str] = (),
        why: str = "",
    ) -> Plan | str:
        """The plan to adopt (as proposed, or as the person edited it), or the feedback of a
        rejection. `before` is the plan in play when this is a replan, with its subtasks'
        `status`; `reserved` ids may not be reused; `why` says what caused the replan."""
        status = status or {}
        found: tuple[str, ...] = ()
        for _ in range(MAX_EDITS + 1):
            site = self.addresses.next(step)
            request = ApprovalRequest(
                approval_id=site.key, run_id=site.run_id, agent_id=ReservedAgent.RUN, kind="plan",
                description=draw_plan(plan, before=before, status=status, why=why),
                plan=plan.model_dump(mode="json"), problems=found,
            )  # fmt: skip
            await self.emit(ApprovalRequested.of(request, step))
            decision = await self.waits.decided(self.effects, site, request, self.approver)
            await self.emit(ApprovalDecided.of(request, decision, step))
            if decision.action == "deny":
                return decision.message or "the person rejected the plan without a reason"
            if decision.plan is None:
                return plan
            edited = checked_edit(
                decision.plan, proposed=plan, before=before, status=status, reserved=reserved,
                max_subtasks=self.max_subtasks, tools=self.tools,
            )  # fmt: skip
            if isinstance(edited, Plan):
                return edited
            found = tuple(edited)
        return f"the person's edits of the plan had problems: {'; '.join(found)}"


def checked_edit(
    data: object,
    *,
    proposed: Plan,
    before: Plan | None,
    status: Mapping[str, str],
    reserved: Collection[str],
    max_subtasks: int,
    tools: Collection[str],
) -> Plan | list[str]:
    """A person's edited plan, validated like the planner's (and, for a replan, only changing
    what may change: new subtasks added, pending or running ones removed); else its problems."""
    if not isinstance(data, dict):
        return ["the edited plan is not a JSON object"]
    try:
        plan = Plan.model_validate({**data, "version": proposed.version})
    except ValidationError as exc:
        return [f"{'.'.join(map(str, e['loc'])) or 'plan'}: {e['msg']}" for e in exc.errors()[:5]]
    found = problems(plan, max_subtasks=max_subtasks, tools=tools, reserved=reserved)
    for sub in before.subtasks if before is not None else ():
        state = status.get(sub.id, "pending")
        if sub.id not in plan.ids:
            if state not in _LIVE:
                found.append(
                    f"{sub.id} is {state}: only pending or running subtasks can be removed"
                )
        elif plan.get(sub.id) != sub:
            found.append(
                f"{sub.id} is already in the run ({state}): it cannot be changed; remove it and "
                "add a subtask with a new id instead"
            )
    return found or plan


def draw_plan(
    plan: Plan,
    *,
    before: Plan | None = None,
    status: Mapping[str, str] | None = None,
    why: str = "",
) -> str:
    """The plan as a person reads it: one line per subtask (new ones marked +) with what it
    waits for and its tools, and for a replan what it keeps, adds, removes and cancels."""
    status = status or {}
    head = f"Plan v{plan.version}: {len(plan.subtasks)} subtask(s)"
    lines = [f"{head}. {plan.rationale}" if plan.rationale else head]
    old = set() if before is None else set(before.ids)
    if before is not None:
        gone = [i for i in before.ids if i not in plan.ids]
        change = {
            "keeps": [i for i in before.ids if i in plan.ids],
            "adds": [i for i in plan.ids if i not in old],
            "removes": [i for i in gone if status.get(i) != "running"],
            "cancels (running)": [i for i in gone if status.get(i) == "running"],
        }
        if why:
            lines.append(f"Replanned because {why}")
        lines += [f"  {what}: {', '.join(ids)}" for what, ids in change.items() if ids]
    for sub in plan.subtasks:
        mark = "+" if before is not None and sub.id not in old else "-"
        state = f" ({status[sub.id]})" if sub.id in status else ""
        lines.append(f"{mark} [{sub.id}]{state} {sub.goal}")
        if sub.depends_on:
            lines.append(f"    after: {', '.join(sub.depends_on)}")
        if sub.tools:
            lines.append(f"    tools: {', '.join(sub.tools)}")
    return "\n".join(lines)


async def asked_for_planner(
    effects: Effects,
    site: EffectSite,
    question: str,
    approver: Approver | None,
    waits: RunWaits,
    limit: int,
    emit: Callable[[AgentEvent], Awaitable[None]],
) -> str:
    """Ask the user the planner's question (a recorded choice at `site`); the answer, or
    "(no answer)" when none came or the run may not ask."""
    request = ApprovalRequest.question(site, ReservedAgent.RUN, question)
    await emit(ApprovalRequested.of(request, site.step))
    decision = await waits.ask(effects, site, request, approver, limit)
    await emit(ApprovalDecided.of(request, decision, site.step))
    return decision.message if decision.action == "answer" else "(no answer)"
