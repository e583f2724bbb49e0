"""What a paused run waits for, on the run page: the page a person opens to review it.

Each waiting request is drawn for deciding: a plan as the same DAG as the plan versions (a replan
with what it keeps, adds and takes out of the plan in play), with the problems of the person's
last edit and the plan as text; a tool call as its agent, its tool and its JSON arguments. The
row of a sub-agent whose call waits is shaded from its last record to the end of the timeline.
"""

from __future__ import annotations

import json

from pydantic import ValidationError

from agents.approvals import ApprovalRequest
from memory.journal import RunInfo
from orchestrator._html_parts import escape as _e
from orchestrator._html_parts import section
from orchestrator._html_plans import PLAN_KEYS, plan_figure
from orchestrator._html_timeline import Timeline, Wait
from orchestrator._plan import Plan, PlanDiff
from orchestrator._state import RunResult

__all__ = ["is_paused", "shade_waiting", "waiting_section"]

_HOW = (
    '<p class="how">Decide with <code>paor approve {run} --id APPROVAL_ID</code>: alone it '
    "approves; <code>--edit FILE</code> approves the JSON in FILE instead (the plan, or the "
    "call's arguments); <code>--reject REASON</code> rejects the plan, or denies the call. The "
    "run then goes on from where it stopped.</p>"
)


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


def waiting_section(info: RunInfo, result: RunResult | None) -> str:
    """The section listing what a paused run waits for ("" for a run that is not paused)."""
    if not is_paused(info):
        return ""
    if result is None or not result.waiting:
        note = "<p>The run is paused, but its stored result names nothing that waits.</p>"
        return section("waiting", "Waiting for a decision", note)
    requests = result.waiting
    lead = (
        f'<p class="lead">The run is paused: {len(requests)} '
        f"request{'s' * (len(requests) > 1)} wait{'s' * (len(requests) == 1)} for a decision."
        f"</p>{_HOW.format(run=_e(info.run_id))}"
    )
    before = result.plans[-1] if result.plans else None
    parts = [_request(r, before, i) for i, r in enumerate(requests)]
    replan = before is not None and any(r.kind == "plan" for r in requests)
    keys = PLAN_KEYS if replan else ()  # a first plan's boxes show no change
    return section("waiting", "Waiting for a decision", lead + "".join(parts), keys)


def _request(request: ApprovalRequest, before: Plan | None, index: int) -> str:
    """One request, as an article named by its approval id."""
    body = _plan(request, before, index) if request.kind == "plan" else _call(request)
    kind = "plan" if request.kind == "plan" else "tool"
    return (
        f'<article class="request r-{kind}" data-approval="{_e(request.approval_id)}" '
        f'data-agent="{_e(request.agent_id)}">{body}</article>\n'
    )


def _plan(request: ApprovalRequest, before: Plan | None, index: int) -> str:
    """A waiting plan drawn as a DAG (as text only, if its data cannot be read)."""
    version = (request.plan or {}).get("version", 1)
    caption = f"plan v{version} waits for approval ({request.approval_id})"
    notes = _problems(request.problems)
    try:
        plan = Plan.model_validate(request.plan)
    except ValidationError:
        text = _as_text(request, opened=True)
        return f'<h3 class="caption">{_e(caption)}: its plan data cannot be read</h3>{notes}{text}'
    replan = before is not None and before.version < plan.version
    previous = before if replan else None
    diff = _proposed(plan, previous)
    notes += _as_text(request, opened=replan)  # a replan's text says what it does to each
    return plan_figure(
        plan, diff, previous, caption=caption, head=f"head-wait-{index}", kind="proposal",
        notes=notes,
    )  # fmt: skip


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


def _problems(problems: tuple[str, ...]) -> str:
    """Why the person's last edit could not be used, as a list (nothing if none)."""
    if not problems:
        return ""
    items = "".join(f"<li>{_e(p)}</li>" for p in problems)
    return f'<div class="problems"><p>Your last edit could not be used:</p><ul>{items}</ul></div>'


def _as_text(request: ApprovalRequest, *, opened: bool) -> str:
    """The plan drawn as text, as the terminal shows it."""
    shown = " open" * opened
    return (
        f'<details class="as-text"{shown}><summary>The plan as text</summary>'
        f'<pre class="description">{_e(request.description)}</pre></details>'
    )


def _call(request: ApprovalRequest) -> str:
    """A waiting tool call: who calls what, with which arguments."""
    args = json.dumps(request.args, ensure_ascii=False, indent=2, sort_keys=True)
    facts = [("agent", request.agent_id), ("tool", request.tool)]
    if request.description:
        facts.append(("what it does", request.description))
    rows = "".join(f"<dt>{_e(k)}</dt><dd>{_e(v)}</dd>" for k, v in facts)
    return (
        f'<h3 class="caption">{_e(request.tool)} waits for approval ({_e(request.approval_id)})'
        f'</h3><dl class="facts">{rows}<dt>arguments</dt><dd><pre class="call">{_e(args)}</pre>'
        "</dd></dl>"
    )
