"""What a paused run waits for, on the run page: the page a person opens to review it.

Each waiting request is drawn for deciding: a plan as the same DAG as the plan versions (a replan
with what it keeps, adds and takes out of the plan in play), with the problems of the person's
last edit and the plan as text; a tool call as its agent, its tool and its JSON arguments. The
row of a sub-agent whose call waits is shaded from its last record to the end of the timeline.
This module works out what to draw; `templates/waiting.html.j2` draws it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from pydantic import ValidationError

from agents.approvals import ApprovalRequest
from memory.journal import RunInfo
from orchestrator._plan import Plan, PlanDiff
from orchestrator._state import RunResult
from orchestrator.cli._html_plans import Figure, figure
from orchestrator.cli._html_timeline import Timeline, Wait

__all__ = ["Request", "is_paused", "shade_waiting", "waiting_requests"]


def is_paused(info: RunInfo) -> bool:
    """Whether the run is paused: it waits for people's decisions. (Its journal status says so,
    not its stored result: a run being resumed is running, with the result of its pause.)"""
    return info.status == "paused"


def shade_waiting(line: Timeline, info: RunInfo, result: RunResult | None) -> None:
    """Shade the row of each sub-agent whose tool call waits in a paused run, from its last
    record to the end of the timeline (it waits still)."""
    lanes = {lane.agent_id: lane for lane in line.lanes}
    waiting = result.waiting if result is not None and is_paused(info) else ()
    for request in waiting:
        lane = lanes.get(request.agent_id)
        if request.kind != "tool" or lane is None:
            continue
        label = f"waits for a decision on {request.tool} ({request.approval_id})"
        wait = Wait(agent_id=lane.agent_id, start=lane.end, end=line.end, label=label, pending=True)
        lane.waits.append(wait)
        if lane.status == "no report":
            lane.status = "waiting"


@dataclass(kw_only=True, slots=True)
class Request:
    """A waiting request, ready to draw.

    Attributes:
        request: The request.
        figure: A plan's drawing (None for a tool call, or a plan whose data cannot be read).
        opened: Whether the plan's text is shown unfolded (a replan: it says what it does to each
            subtask; a first plan's drawing says it all).
        args: A tool call's arguments as JSON.
    """

    request: ApprovalRequest
    figure: Figure | None = None
    opened: bool = True
    args: str = ""


def waiting_requests(info: RunInfo, result: RunResult | None) -> list[Request] | None:
    """What a paused run waits for (None for a run that is not paused), each ready to draw."""
    if not is_paused(info):
        return None
    if result is None:
        return []
    before = result.plans[-1] if result.plans else None
    return [_request(r, before) for r in result.waiting]


def _request(request: ApprovalRequest, before: Plan | None) -> Request:
    """A tool call with its arguments, or a plan drawn against the plan in play `before`."""
    if request.kind != "plan":
        args = json.dumps(request.args, ensure_ascii=False, indent=2, sort_keys=True)
        return Request(request=request, args=args)
    try:
        plan = Plan.model_validate(request.plan)
    except ValidationError:
        return Request(request=request)
    previous = before if before is not None and before.version < plan.version else None
    drawn = figure(plan, _proposed(plan, previous), previous)
    return Request(request=request, figure=drawn, opened=previous is not None)


def _proposed(plan: Plan, previous: Plan | None) -> PlanDiff | None:
    """What a proposed replan changes in the plan in play (None for a first plan)."""
    if previous is None:
        return None
    ids, old = set(plan.ids), set(previous.ids)
    return PlanDiff(
        version=plan.version, trigger="", reason="",
        kept=tuple(i for i in plan.ids if i in old),
        added=tuple(i for i in plan.ids if i not in old),
        removed=tuple(i for i in previous.ids if i not in ids),
    )  # fmt: skip
