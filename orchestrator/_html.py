"""A journaled run as one self-contained HTML page: `paor show RUN_ID --html FILE`.

The page is built from the journal alone and needs nothing else to render: inline CSS, SVG drawn
here, no script, no font or image from elsewhere. It shows the run's header and reports, each plan
version as a DAG with what its replan changed, a timeline of the sub-agents, and the spend.

Journal records carry no time of their own: the journal keeps them in the order they were written,
and the loops read the wall clock through the effect boundary (`clock` records) at each step,
before every model call and around every tool turn. A record's time is therefore interpolated, by
its place in the write order, between the clock reads around it, and never goes back. A run with
no clock read is laid out by order alone.

Everything a model, a tool or a caller wrote (goals, answers, ids, tool names) is escaped where it
is placed: in text, and in the few attributes that carry it.
"""

from __future__ import annotations

import bisect
import html
import textwrap
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import ValidationError

from agents import AgentReport, Usage
from agents.effects import PLANNER_AGENT, RUN_AGENT
from memory.journal import EffectRecord, RunInfo
from orchestrator._inspect import _cut, _when
from orchestrator._plan import Plan, PlanDiff, Subtask
from orchestrator._state import RunResult

__all__ = ["Lane", "Mark", "Outcome", "Timeline", "Wait", "render_html", "run_result", "timeline"]

_STATUSES = frozenset({"done", "partial", "failed", "blocked", "cancelled", "planner"})
_RUN_CLASSES = {"complete": "done"} | dict.fromkeys(("incomplete", "crashed", "running"), "partial")
_BOX_W, _BOX_H, _GAP_X, _GAP_Y, _PAD = 210, 74, 56, 16, 12
_TL_W, _TL_LABEL, _TL_ROW, _TL_TOP = 1200, 150, 28, 30
_CH_W, _CH_H, _CH_PAD = 640, 200, 44
_PLAN_KEYS = (
    *((k, k) for k in ("kept", "added", "removed", "cancelled")),
    ("dropped", "dropped: it ended failed or blocked (dashed: no longer in the plan)"),
)
_TIMELINE_KEYS = (
    ("model", "model call"),
    ("tool", "tool call"),
    ("failed", "failed call"),
    ("cut", "cut short"),
    ("wait", "waits for approval"),
)
_MARKER = (
    '<defs><marker id="{head}" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" '
    'markerHeight="7" orient="auto"><path d="M0 0L10 5L0 10z" fill="#667"/></marker></defs>'
)
_SPEND_KEYS = (("tokens", "tokens, cumulative (left)"), ("requests", "model requests (right)"))


Outcome = Literal["ok", "failed", "cancelled"]
"""How a call on the timeline ended."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Wait:
    """A span during which a sub-agent waited (for an approval), shaded on its timeline row.

    Attributes:
        agent_id: The sub-agent (a subtask id).
        start: When the wait began (seconds since the epoch, like the journal's clock reads).
        end: When it ended.
    """

    agent_id: str
    start: float
    end: float


@dataclass(kw_only=True, slots=True)
class Mark:
    """One model or tool call on a timeline row, from its start to its record."""

    kind: Literal["model", "tool"]
    start: float
    end: float
    outcome: Outcome
    label: str


@dataclass(kw_only=True, slots=True)
class Lane:
    """One agent's row: from its first record to its last, its calls and its waits."""

    agent_id: str
    start: float
    end: float
    status: str = "no report"
    marks: list[Mark] = field(default_factory=list)
    waits: list[Wait] = field(default_factory=list)


@dataclass(kw_only=True, slots=True)
class Timeline:
    """The run in time: its span, one lane per agent, and the spend after each model call.

    Attributes:
        start: The first record's time.
        end: The last record's time.
        timed: Whether times come from clock reads (else they are places in the write order).
        lanes: The planner's lane, then one per sub-agent, in order of their first record.
        spend: (time, tokens so far, requests so far) after each model reply.
    """

    start: float
    end: float
    timed: bool
    lanes: list[Lane]
    spend: list[tuple[float, int, int]]


def run_result(info: RunInfo) -> RunResult | None:
    """The finished run's result, or None (not finished, or not a result this version reads)."""
    if info.result is None:
        return None
    try:
        return RunResult.model_validate(info.result)
    except ValidationError:
        return None


def render_html(info: RunInfo, records: Sequence[EffectRecord], waits: Iterable[Wait] = ()) -> str:
    """The whole page for the run `info` with its journal `records` (and any approval waits)."""
    result = run_result(info)
    reports = {r.agent_id: r for r in result.reports} if result is not None else {}
    line = timeline(records, reports, waits)
    body = _header(info, result, line) + _plans_section(result) + _timeline_section(line)
    body += _spend_section(line) + _reports_section(result)
    return (
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>paor run {_e(info.run_id)}</title><style>{_CSS}</style></head>\n"
        f"<body>\n{body}</body></html>\n"
    )


# Times and the timeline's data


def timeline(
    records: Sequence[EffectRecord], reports: dict[str, AgentReport], waits: Iterable[Wait] = ()
) -> Timeline:
    """The run's lanes, calls and spend, placed in time by the journal's clock reads."""
    times, timed = _stamps(records)
    lanes: dict[str, Lane] = {}
    intents: dict[tuple[str, int], float] = {}
    spend: list[tuple[float, int, int]] = []
    for record, at in zip(records, times, strict=True):
        if record.agent_id == RUN_AGENT:
            continue
        lane = lanes.get(record.agent_id)
        if lane is None:
            lane = lanes[record.agent_id] = Lane(agent_id=record.agent_id, start=at, end=at)
        previous, lane.end = lane.end, at
        if record.kind == "intent":
            intents[(record.agent_id, record.seq)] = at
        elif record.kind == "tool":
            start = intents.get((record.agent_id, record.seq), previous)
            lane.marks.append(_tool_mark(record, start, at))
        elif record.kind == "model":
            lane.marks.append(_model_mark(record, previous, at))
            _spend(spend, record, at)
    _settle(lanes, reports, waits)
    start, end = (times[0], times[-1]) if times else (0.0, 0.0)
    return Timeline(start=start, end=end, timed=timed, lanes=list(lanes.values()), spend=spend)


def _stamps(records: Sequence[EffectRecord]) -> tuple[list[float], bool]:
    """Each record's time, interpolated between the clock reads around it in write order."""
    clocks = [(i, float(v)) for i, r in enumerate(records) if (v := _clock(r)) is not None]
    if not clocks:
        return [float(i) for i in range(len(records))], False
    times: list[float] = []
    for i in range(len(records)):
        ahead = bisect.bisect_left(clocks, i, key=lambda clock: clock[0])  # the next, or this one
        before = clocks[ahead - 1] if ahead > 0 else clocks[0]
        after = clocks[ahead] if ahead < len(clocks) else clocks[-1]
        span = after[0] - before[0]
        at = before[1] if span <= 0 else before[1] + (after[1] - before[1]) * (i - before[0]) / span
        times.append(max(at, times[-1]) if times else at)  # concurrent writers: never go back
    return times, True


def _clock(record: EffectRecord) -> float | None:
    value = _dict(record.payload).get("value")
    if record.kind != "clock" or record.outcome != "ok" or not isinstance(value, int | float):
        return None
    return float(value)


def _tool_mark(record: EffectRecord, start: float, end: float) -> Mark:
    payload = _dict(record.payload)
    outcome, tool = _dict(payload.get("outcome")), str(payload.get("tool", "tool"))
    ended: Outcome
    if record.outcome == "cancelled":
        ended, label = "cancelled", f"{tool}: cut short"
    elif outcome.get("ok"):
        ended, label = "ok", f"{tool}: ok"
    else:
        why = _cut(str(outcome.get("message", "")), 120)
        ended, label = "failed", f"{tool} failed ({outcome.get('error')}): {why}"
    return Mark(kind="tool", start=start, end=end, outcome=ended, label=label)


def _model_mark(record: EffectRecord, start: float, end: float) -> Mark:
    ended: Outcome
    if record.outcome == "ok":
        ended, label = "ok", f"model: {_usage(record).total_tokens} tokens"
    else:
        ended = "cancelled" if record.outcome == "cancelled" else "failed"
        label = f"model {ended}: {_cut(str(_dict(record.payload).get('message', '')), 120)}"
    return Mark(kind="model", start=start, end=end, outcome=ended, label=label)


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _usage(record: EffectRecord) -> Usage:
    try:
        return Usage.model_validate(_dict(record.payload).get("usage") or {})
    except ValidationError:
        return Usage()


def _spend(spend: list[tuple[float, int, int]], record: EffectRecord, at: float) -> None:
    if record.outcome != "ok":
        return
    usage = _usage(record)
    tokens, requests = spend[-1][1:] if spend else (0, 0)
    spend.append((at, tokens + usage.total_tokens, requests + max(usage.requests, 1)))


def _settle(lanes: dict[str, Lane], reports: dict[str, AgentReport], waits: Iterable[Wait]) -> None:
    """Give each lane its final status and its waits."""
    for lane in lanes.values():
        report = reports.get(lane.agent_id)
        if lane.agent_id == PLANNER_AGENT:
            lane.status = "planner"
        elif report is not None:
            lane.status = "cancelled" if report.stop_reason == "cancelled" else report.status
    for wait in waits:
        if wait.agent_id in lanes:
            lanes[wait.agent_id].waits.append(wait)


# The header and the reports


def _header(info: RunInfo, result: RunResult | None, line: Timeline) -> str:
    usage = result.usage if result is not None else _record_usage(line)
    seconds = line.end - line.start if line.timed else info.updated - info.created
    facts = [
        ("run", info.run_id),
        ("goal", info.goal),
        ("status", info.status),
        ("reason", result.reason if result is not None and result.reason else "—"),
        ("started", _when(info.created)),
        ("duration", f"{seconds:.2f} s"),
        ("tokens", str(usage.total_tokens)),
        ("model requests", str(usage.requests)),
        ("tool calls", str(usage.tool_calls)),
    ]
    rows = "".join(f"<dt>{_e(k)}</dt><dd>{_e(v)}</dd>" for k, v in facts)
    answer = result.answer if result is not None else "(the run has not finished)"
    return (
        f'<header><h1>paor run <span class="id">{_e(info.run_id)}</span> '
        f'<span class="pill st-{_status_class(info.status)}">{_e(info.status)}</span></h1>'
        f'<dl class="facts">{rows}</dl><h2>Answer</h2><pre class="answer">{_e(answer)}</pre>'
        "</header>\n"
    )


def _record_usage(line: Timeline) -> Usage:
    """What the records say was spent, for a run with no result yet."""
    tokens, requests = line.spend[-1][1:] if line.spend else (0, 0)
    tools = sum(m.kind == "tool" for lane in line.lanes for m in lane.marks)
    return Usage(requests=requests, completion_tokens=tokens, tool_calls=tools)


def _reports_section(result: RunResult | None) -> str:
    if result is None or not result.reports:
        return _section("reports", "Sub-agent reports", "<p>No reports yet.</p>")
    rows = "".join(
        f'<tr><td class="id">{_e(r.agent_id)}</td>'
        f'<td><span class="pill st-{_status_class(r.status)}">{_e(r.status)}</span></td>'
        f"<td>{r.steps}</td><td>{_e(_cut(r.answer, 240))}</td></tr>"
        for r in result.reports
    )
    head = "<tr><th>subtask</th><th>status</th><th>steps</th><th>answer</th></tr>"
    return _section("reports", "Sub-agent reports", f'<table class="reports">{head}{rows}</table>')


# Plan versions


def _plans_section(result: RunResult | None) -> str:
    if result is None or not result.plans:
        note = "<p>The run has not finished: its plan versions are stored with its result.</p>"
        return _section("plans", "Plan versions", note)
    diffs = {d.version: d for d in result.diffs}
    pairs = zip(result.plans, (None, *result.plans), strict=False)  # each with its predecessor
    parts = [_plan_figure(plan, diffs.get(plan.version), before) for plan, before in pairs]
    return _section("plans", "Plan versions", "".join(parts), _PLAN_KEYS)


def _plan_figure(plan: Plan, diff: PlanDiff | None, previous: Plan | None) -> str:
    caption = f"plan v{plan.version}: {len(plan.subtasks)} subtasks"
    if diff is not None:
        caption += f", replanned after {diff.trigger}: {diff.reason}"
    changes = "" if diff is None else _changes(diff)
    rationale = f'<p class="rationale">{_e(plan.rationale)}</p>' if plan.rationale else ""
    return (
        f'<figure class="plan" data-version="{plan.version}"><figcaption>{_e(caption)}'
        f"</figcaption>{changes}{rationale}{_dag(plan, diff, previous)}</figure>\n"
    )


def _changes(diff: PlanDiff) -> str:
    kinds = {"kept": diff.kept, **_moves(diff)}.items()
    badges = (
        f'<span class="badge b-{k}">{k}: {_e(", ".join(ids))}</span>' for k, ids in kinds if ids
    )
    return f'<p class="changes">{"".join(badges)}</p>'


def _moves(diff: PlanDiff) -> dict[str, tuple[str, ...]]:
    """What the replan did to subtasks beyond keeping them."""
    return {"added": diff.added, "removed": diff.removed, "cancelled": diff.cancelled}


def _dag(plan: Plan, diff: PlanDiff | None, previous: Plan | None) -> str:
    """The plan's subtasks as boxes in columns by dependency depth, arrows for dependencies;
    the subtasks a replan removed or cancelled as dashed boxes where they were."""
    gone = _gone(diff, previous)  # drawn at their old depth
    old = _depths(previous.subtasks) if previous is not None else {}
    place = _layout([*plan.subtasks, *gone], old | _depths(plan.subtasks))
    width = max((x for x, _ in place.values()), default=0) + _BOX_W + 2 * _PAD
    height = max((y for _, y in place.values()), default=0) + _BOX_H + 2 * _PAD
    head = f"head-{plan.version}"  # one marker per figure: ids must be unique in the page
    edges = [(place[d], place[s.id]) for s in plan.subtasks for d in s.depends_on if d in place]
    parts = [_MARKER.format(head=head), *(_arrow(a, b, head) for a, b in edges)]
    parts += [_box(s, place[s.id], _change(s.id, diff)) for s in plan.subtasks]
    parts += [_box(s, place[s.id], _change(s.id, diff), ghost=True) for s in gone]
    return _svg("dag", width, height, "".join(parts))


def _gone(diff: PlanDiff | None, previous: Plan | None) -> list[Subtask]:
    """The previous version's subtasks this one no longer has: removed, cancelled, or dropped
    (a subtask that ended failed or blocked, which the replan routed around)."""
    if diff is None or previous is None:
        return []
    return [s for s in previous.subtasks if s.id not in diff.kept and s.id not in diff.added]


def _depths(subtasks: Sequence[Subtask]) -> dict[str, int]:
    """Each subtask's depth: 0 with no dependency, else one more than its deepest dependency."""
    ids = {s.id for s in subtasks}
    depth = {s.id: 0 for s in subtasks}
    for _ in range(len(subtasks)):  # a longest path has fewer than n edges: n rounds settle it
        for s in subtasks:
            depth[s.id] = max([0, *(depth[d] + 1 for d in s.depends_on if d in ids)])
    return depth


def _layout(subtasks: Sequence[Subtask], depth: dict[str, int]) -> dict[str, tuple[int, int]]:
    """Each box's top-left corner: a column per depth, boxes stacked in plan order."""
    rows: dict[int, int] = {}
    place: dict[str, tuple[int, int]] = {}
    for s in subtasks:
        column = depth.get(s.id, 0)
        row = rows.get(column, 0)
        rows[column] = row + 1
        place[s.id] = (_PAD + column * (_BOX_W + _GAP_X), _PAD + row * (_BOX_H + _GAP_Y))
    return place


def _change(subtask_id: str, diff: PlanDiff | None) -> str:
    if diff is None:
        return "first"
    if subtask_id in diff.kept:
        return "kept"
    return next((kind for kind, ids in _moves(diff).items() if subtask_id in ids), "dropped")


def _arrow(start: tuple[int, int], end: tuple[int, int], head: str) -> str:
    x1, y1 = start[0] + _BOX_W, start[1] + _BOX_H // 2
    x2, y2 = end[0], end[1] + _BOX_H // 2
    bend = (x1 + x2) // 2
    return (
        f'<path class="edge" d="M{x1} {y1}C{bend} {y1} {bend} {y2} {x2 - 2} {y2}" '
        f'marker-end="url(#{head})"/>'
    )


def _box(subtask: Subtask, at: tuple[int, int], change: str, *, ghost: bool = False) -> str:
    x, y = at
    lines = textwrap.wrap(subtask.goal, 32, max_lines=2, placeholder=" …") or [""]
    tools = "tools: " + (_cut(", ".join(subtask.tools), 30) if subtask.tools else "all")
    texts = [(subtask.id, "sid", 18), *((g, "goal", 36 + 14 * i) for i, g in enumerate(lines))]
    texts.append((tools, "tools", 66))
    body = "".join(
        f'<text class="{c}" x="{x + 8}" y="{y + dy}">{_e(t)}</text>' for t, c, dy in texts
    )
    badge = f'<text class="tag t-{change}" x="{x + _BOX_W - 8}" y="{y + 18}">{change}</text>'
    kind = "ghost" if ghost else "live"
    return (
        f'<g class="node {kind} c-{change}" data-id="{_e(subtask.id)}"><title>{_e(subtask.id)}: '
        f'{_e(subtask.goal)}</title><rect x="{x}" y="{y}" width="{_BOX_W}" height="{_BOX_H}" '
        f'rx="6"/>{body}{"" if change == "first" else badge}</g>'
    )


# The timeline


def _timeline_section(line: Timeline) -> str:
    if not line.lanes:
        return _section("timeline", "Timeline", "<p>No agent has a record.</p>")
    height = _TL_TOP + _TL_ROW * len(line.lanes) + 8
    rows = "".join(_lane(lane, i, line) for i, lane in enumerate(line.lanes))
    chart = _svg("timeline", _TL_W, height, _axis(line, height) + rows)
    return _section("timeline", "Timeline", chart, _TIMELINE_KEYS)


def _x(line: Timeline, at: float) -> float:
    span = line.end - line.start
    track = _TL_W - _TL_LABEL - 20
    return _TL_LABEL + (track * (at - line.start) / span if span > 0 else 0.0)


def _axis(line: Timeline, height: int) -> str:
    span = line.end - line.start
    ticks = []
    for k in range(6):
        at = line.start + span * k / 5
        x = _x(line, at)
        ticks.append(
            f'<line class="tick" x1="{x:.1f}" y1="{_TL_TOP - 6}" x2="{x:.1f}" y2="{height}"/>'
            f'<text class="axis{" end" * (k == 5)}" x="{x:.1f}" y="{_TL_TOP - 10}">'
            f"{_elapsed(at - line.start, line)}</text>"
        )
    return "".join(ticks)


def _lane(lane: Lane, index: int, line: Timeline) -> str:
    y = _TL_TOP + index * _TL_ROW
    x1, x2 = _x(line, lane.start), max(_x(line, lane.end), _x(line, lane.start) + 2)
    kind = "planner-row" if lane.agent_id == PLANNER_AGENT else "agent-row"
    status = _status_class(lane.status)
    waits = "".join(
        f'<rect class="wait" x="{_x(line, w.start):.1f}" y="{y + 2}" '
        f'width="{max(_x(line, w.end) - _x(line, w.start), 2):.1f}" height="{_TL_ROW - 4}">'
        f"<title>waits for approval</title></rect>"
        for w in lane.waits
    )
    marks = "".join(_mark(m, y, line) for m in lane.marks)
    label, shown = _cut(lane.agent_id, 18), "" if lane.status == "planner" else lane.status
    return (
        f'<g class="{kind} st-{status}" data-agent="{_e(lane.agent_id)}">'
        f'<text class="label" x="8" y="{y + 18}">{_e(label)}</text>'
        f'<text class="status" x="{_TL_LABEL - 8}" y="{y + 18}">{_e(shown)}</text>'
        f'<rect class="span" x="{x1:.1f}" y="{y + 8}" width="{x2 - x1:.1f}" height="{_TL_ROW - 16}">'
        f"<title>{_e(lane.agent_id)}: {_e(lane.status)}</title></rect>{waits}{marks}</g>"
    )


def _mark(mark: Mark, y: int, line: Timeline) -> str:
    x1 = _x(line, mark.start)
    width = max(_x(line, mark.end) - x1, 4)
    kind = "cut" if mark.outcome == "cancelled" else mark.outcome
    top = y + 4 if mark.kind == "model" else y + _TL_ROW // 2
    return (
        f'<rect class="mark {mark.kind} {kind}" x="{x1:.1f}" y="{top}" width="{width:.1f}" '
        f'height="{_TL_ROW // 2 - 4}"><title>{_e(mark.label)}</title></rect>'
    )


# Spend


def _spend_section(line: Timeline) -> str:
    if not line.spend:
        return _section("spend", "Spend", "<p>No model reply yet.</p>")
    tokens, requests = line.spend[-1][1], line.spend[-1][2]
    paths = _series(line, 1, tokens, "tokens", area=True) + _series(line, 2, requests, "requests")
    frame = (
        f'<line class="frame" x1="{_CH_PAD}" y1="{_CH_H - _CH_PAD}" x2="{_CH_W - _CH_PAD}" '
        f'y2="{_CH_H - _CH_PAD}"/><text class="axis" x="{_CH_PAD}" y="{_CH_H - 20}">0</text>'
        f'<text class="axis end" x="{_CH_W - _CH_PAD}" y="{_CH_H - 20}">'
        f"{_elapsed(line.end - line.start, line)}</text>"
        f'<text class="axis tokens" x="4" y="{_CH_PAD - 8}">{tokens} tokens</text>'
        f'<text class="axis requests end" x="{_CH_W - 4}" y="{_CH_PAD - 8}">{requests} requests</text>'
    )
    return _section("spend", "Spend", _svg("spend", _CH_W, _CH_H, frame + paths), _SPEND_KEYS)


def _series(line: Timeline, column: int, top: int, name: str, *, area: bool = False) -> str:
    """A step line of one cumulative column of `line.spend`, scaled so `top` is the chart's top
    (closed along the base when it is drawn as an `area`)."""
    span = line.end - line.start
    track_w, track_h = _CH_W - 2 * _CH_PAD, _CH_H - 2 * _CH_PAD
    base = level = float(_CH_H - _CH_PAD)
    points = [(float(_CH_PAD), base)]
    for point in line.spend:
        x = _CH_PAD + (track_w * (point[0] - line.start) / span if span > 0 else track_w)
        points.append((x, level))
        level = base - track_h * point[column] / max(top, 1)
        points.append((x, level))
    points.append((float(_CH_W - _CH_PAD), level))
    if area:
        points.append((float(_CH_W - _CH_PAD), base))
    drawn = " ".join(f"{x:.1f},{y:.1f}" for x, y in points)
    return f'<{"polygon" if area else "polyline"} class="series {name}" points="{drawn}"/>'


def _elapsed(seconds: float, line: Timeline) -> str:
    """A time on an axis: in ms for a run shorter than a second, else in s (or in effects)."""
    if not line.timed:
        return f"{seconds:.0f} effects"
    return f"{seconds * 1000:.0f} ms" if line.end - line.start < 1 else f"{seconds:.1f} s"


def _section(name: str, title: str, body: str, keys: Sequence[tuple[str, str]] = ()) -> str:
    """A titled section of the page, after a legend of (key, meaning) pairs."""
    legend = "".join(f'<span class="key k-{key}"></span>{meaning} ' for key, meaning in keys)
    legend = f'<p class="legend">{legend}</p>' if keys else ""
    return f'<section id="{name}"><h2>{title}</h2>{legend}{body}</section>\n'


def _svg(name: str, width: int, height: int, content: str) -> str:
    return (
        f'<svg class="{name}" xmlns="http://www.w3.org/2000/svg" width="{width}" '
        f'height="{height}" viewBox="0 0 {width} {height}">{content}</svg>'
    )


def _status_class(status: str) -> str:
    """A CSS class for a status: only the known ones, so no written text reaches a class."""
    return _RUN_CLASSES.get(status) or (status if status in _STATUSES else "other")


def _e(text: Any) -> str:
    return html.escape(str(text), quote=True)


_CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:24px;color:#1d2330;
background:#fbfbfd}h1{font-size:22px;margin:0 0 12px}h2{font-size:17px;margin:26px 0 8px}
section,header{max-width:1240px}.id{font-family:ui-monospace,monospace}
dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:2px 14px;margin:0}
dl.facts dt{color:#667;font-weight:600}dl.facts dd{margin:0;overflow-wrap:anywhere}
pre.answer{white-space:pre-wrap;background:#fff;border:1px solid #dde;padding:10px;
border-radius:6px;max-height:320px;overflow:auto}
.pill{font-size:12px;padding:1px 8px;border-radius:10px;background:#ccd;color:#123;
vertical-align:middle}.pill.st-done{background:#cdeccf}.pill.st-partial{background:#fbe7b5}
.pill.st-failed,.pill.st-blocked{background:#f6c6c6}.pill.st-cancelled{background:#ddd}
figure.plan{margin:0 0 18px;background:#fff;border:1px solid #dde;border-radius:8px;padding:10px;
overflow-x:auto}figcaption{font-weight:600;margin-bottom:4px}.rationale{color:#556;margin:2px 0}
.badge{display:inline-block;font-size:12px;padding:1px 8px;margin-right:6px;border-radius:10px}
.b-kept{background:#dfe6f3}.b-added{background:#cdeccf}.b-removed{background:#f6c6c6}
.b-cancelled{background:#fbe0b5}.node rect{fill:#f3f5fa;stroke:#8a94a8;stroke-width:1.5}
.node.c-kept rect{fill:#eef2fa;stroke:#6b7fa8}.node.c-added rect{fill:#e4f6e5;stroke:#3a9a46}
.node.ghost rect{fill:#fafafa;stroke-dasharray:5 4}.node.c-removed rect{stroke:#c24545}
.t-dropped{fill:#777}.node.c-cancelled rect{stroke:#d08a1e}.node.ghost text{fill:#888}
.node.ghost .sid{text-decoration:line-through}.node text{font-size:12px;fill:#1d2330}
.node .sid{font-weight:700;font-family:ui-monospace,monospace}
.node .tools{fill:#667;font-size:11px}.tag{font-size:11px;text-anchor:end;font-weight:600}
.t-added{fill:#2b7d36}.t-kept{fill:#51648c}.t-removed{fill:#b33}.t-cancelled{fill:#b8730f}
.edge{fill:none;stroke:#667;stroke-width:1.4}
svg.timeline,svg.spend{background:#fff;border:1px solid #dde;border-radius:8px}
.tick{stroke:#eceef3}.axis{font-size:11px;fill:#667}.axis.end{text-anchor:end}
.label{font-size:12px;font-family:ui-monospace,monospace}
.status{font-size:11px;fill:#667;text-anchor:end}.span{fill:#dfe6f3}.st-done .span{fill:#d4eed6}
.st-partial .span{fill:#f8e9c4}.st-failed .span,.st-blocked .span{fill:#f4d2d2}
.st-cancelled .span{fill:#e2e2e2}.planner-row .span{fill:#e6e0f4}
.wait{fill:#9aa3b5;fill-opacity:.35}.mark.model{fill:#5b6fd6}.mark.tool{fill:#2f9e6b}
.mark.failed{fill:#d43c3c}.mark.tool.failed{stroke:#7a1010;stroke-width:1}.mark.cut{fill:#aaa}
.series{fill:none;stroke-width:2}.series.tokens{stroke:#5b6fd6;fill:#5b6fd6;fill-opacity:.18}
.series.requests{stroke:#d08a1e}.axis.tokens{fill:#5b6fd6}.axis.requests{fill:#d08a1e}
.frame{stroke:#99a}.legend{font-size:12px;color:#556;margin:2px 0 8px}
.key{display:inline-block;width:14px;height:10px;margin:0 4px 0 10px;vertical-align:middle;
border-radius:2px}.k-kept{background:#eef2fa;border:1.5px solid #6b7fa8}
.k-added{background:#e4f6e5;border:1.5px solid #3a9a46}.k-removed{border:1.5px dashed #c24545}
.k-cancelled{border:1.5px dashed #d08a1e}.k-model{background:#5b6fd6}.k-tool{background:#2f9e6b}
.k-failed{background:#d43c3c}.k-dropped{border:1.5px dashed #888}.k-cut{background:#aaa}
.k-wait{background:rgba(154,163,181,.35)}.k-tokens{background:#c9d0f3;border-top:2px solid #5b6fd6}
.k-requests{background:#d08a1e;height:3px}table.reports{border-collapse:collapse;background:#fff}
table.reports td,table.reports th{border:1px solid #dde;padding:4px 8px;text-align:left;
vertical-align:top}
"""
