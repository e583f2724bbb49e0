"""The run in time, for the run page: one row per agent with its model and tool calls, the
spans it waited for a person's decision, and the spend after each model reply.

Journal records carry no time of their own: the journal keeps them in the order they were written,
and the loops read the wall clock through the effect boundary (`clock` records) at each step,
before every model call and around every tool turn. A record's time is therefore interpolated, by
its place in the write order, between the clock reads around it, and never goes back. A run with
no clock read is laid out by order alone.

A sub-agent's decision on a tool call is a recorded choice whose value is the decision as JSON
(`agents.approvals.Decision`): the agent waited for it from its previous record to this one.

`chart` lays the timeline out (rows, rectangles, ticks, in pixels) for the template that draws
it, `templates/timeline.html.j2`.
"""

from __future__ import annotations

import bisect
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import ValidationError

from agents import AgentReport, Usage
from agents.effects import ReservedAgent
from memory.journal import EffectRecord
from orchestrator.cli._inspect import _cut

__all__ = [
    "Chart", "Lane", "Mark", "Outcome", "Rect", "Row", "Timeline", "Wait", "chart", "elapsed",
    "timeline",
]  # fmt: skip

_TL_W, _TL_LABEL, _TL_ROW, _TL_TOP = 1200, 150, 28, 30

Outcome = Literal["ok", "failed", "cancelled"]
"""How a call on the timeline ended."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Wait:
    """A span during which a sub-agent waited (for an approval), shaded on its timeline row.

    Attributes:
        agent_id: The sub-agent (a subtask id).
        start: When the wait began (seconds since the epoch, like the journal's clock reads).
        end: When it ended.
        label: What it waited for, and how it ended (the shaded span's tooltip).
        pending: Whether it still waits (a paused run): drawn to the end of the timeline.
    """

    agent_id: str
    start: float
    end: float
    label: str = "waits for approval"
    pending: bool = False


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


@dataclass(kw_only=True, slots=True)
class _Open:
    """What placing the records remembers along the way: tool intents' times, and the spend."""

    intents: dict[tuple[str, int], float] = field(default_factory=dict)
    spend: list[tuple[float, int, int]] = field(default_factory=list)


def timeline(
    records: Sequence[EffectRecord], reports: dict[str, AgentReport], waits: Iterable[Wait] = ()
) -> Timeline:
    """The run's lanes, calls, approval waits (recorded, and `waits`) and spend, placed in time
    by the journal's clock reads."""
    times, timed = _stamps(records)
    lanes: dict[str, Lane] = {}
    seen = _Open()
    for record, at in zip(records, times, strict=True):
        if record.agent_id == ReservedAgent.RUN:
            continue  # the run's own records (its plan reviews among them) have no row
        lane = lanes.get(record.agent_id)
        if lane is None:
            lane = lanes[record.agent_id] = Lane(agent_id=record.agent_id, start=at, end=at)
        previous, lane.end = lane.end, at
        _place(record, lane, previous, at, seen)
    _settle(lanes, reports, waits)
    start, end = (times[0], times[-1]) if times else (0.0, 0.0)
    return Timeline(start=start, end=end, timed=timed, lanes=list(lanes.values()), spend=seen.spend)


def _place(record: EffectRecord, lane: Lane, previous: float, at: float, seen: _Open) -> None:
    """Put one record on its lane: a call, a wait it ended, or the start of a tool call."""
    if record.kind == "intent":
        seen.intents[(record.agent_id, record.seq)] = at
    elif record.kind == "tool":
        start = seen.intents.get((record.agent_id, record.seq), previous)
        lane.marks.append(_tool_mark(record, start, at))
    elif record.kind == "model":
        lane.marks.append(_model_mark(record, previous, at))
        _spend(seen.spend, record, at)
    elif (label := _decided(record)) is not None:
        lane.waits.append(Wait(agent_id=lane.agent_id, start=previous, end=at, label=label))


def _decided(record: EffectRecord) -> str | None:
    """What a recorded decision on a tool call says, or None: not a decision, or one nobody
    waited for (an earlier "always" approved it)."""
    value = _dict(record.payload).get("value")
    if record.kind != "choice" or record.outcome != "ok" or not isinstance(value, str):
        return None
    try:
        decision = _dict(json.loads(value))
    except ValueError:
        return None
    action, by = decision.get("action"), decision.get("by")
    if action not in ("approve", "deny") or by == "always":
        return None
    if action == "deny":
        said = f"denied: {_cut(str(decision.get('message') or ''), 120)}"
    else:
        said = "approved" + (" with edited arguments" if decision.get("args") else "")
    return f"waited for approval: {said}" + (" (no decision came in time)" * (by == "timeout"))


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
    """Give each lane its final status and the waits passed in."""
    for lane in lanes.values():
        report = reports.get(lane.agent_id)
        if lane.agent_id == ReservedAgent.PLANNER:
            lane.status = "planner"
        elif report is not None:
            lane.status = "cancelled" if report.stop_reason == "cancelled" else report.status
    for wait in waits:
        if wait.agent_id in lanes:
            lanes[wait.agent_id].waits.append(wait)


# Layout


@dataclass(kw_only=True, slots=True)
class Rect:
    """A rectangle of a drawing (its numbers rounded to 0.1 px), with its classes and tooltip."""

    x: float
    y: float
    width: float
    height: float
    classes: str
    title: str


@dataclass(kw_only=True, slots=True)
class Row:
    """One lane laid out: its top, and its rectangles (its span, its waits, its calls)."""

    lane: Lane
    y: int
    shapes: list[Rect]


@dataclass(kw_only=True, slots=True)
class Chart:
    """The timeline laid out: its size and geometry, the ticks of its axis (x, elapsed time),
    its rows, and whether a row still waits (its legend then says what that looks like)."""

    width: int
    height: int
    label: int
    top: int
    ticks: list[tuple[float, str]]
    rows: list[Row]
    pending: bool


def chart(line: Timeline) -> Chart:
    """The timeline laid out for drawing: a row per lane, an axis of elapsed time."""
    height = _TL_TOP + _TL_ROW * len(line.lanes) + 8
    span = line.end - line.start
    at = [line.start + span * k / 5 for k in range(6)]
    ticks = [(round(_x(line, t), 1), elapsed(t - line.start, line)) for t in at]
    rows = [_row(lane, _TL_TOP + i * _TL_ROW, line) for i, lane in enumerate(line.lanes)]
    pending = any(w.pending for lane in line.lanes for w in lane.waits)
    return Chart(
        width=_TL_W, height=height, label=_TL_LABEL, top=_TL_TOP, ticks=ticks, rows=rows,
        pending=pending,
    )  # fmt: skip


def elapsed(seconds: float, line: Timeline) -> str:
    """A time on an axis: in ms for a run shorter than a second, else in s (or in effects)."""
    if not line.timed:
        return f"{seconds:.0f} effects"
    return f"{seconds * 1000:.0f} ms" if line.end - line.start < 1 else f"{seconds:.1f} s"


def _x(line: Timeline, at: float) -> float:
    span = line.end - line.start
    track = _TL_W - _TL_LABEL - 20
    return _TL_LABEL + (track * (at - line.start) / span if span > 0 else 0.0)


def _row(lane: Lane, y: int, line: Timeline) -> Row:
    """A lane's span, then its waits (shaded behind its calls), then its calls."""
    title = f"{lane.agent_id}: {lane.status}"
    shapes = [_rect(line, lane.start, lane.end, y + 8, _TL_ROW - 16, "span", title)]
    shapes += [_wait(wait, y, line) for wait in lane.waits]
    shapes += [_mark(mark, y, line) for mark in lane.marks]
    return Row(lane=lane, y=y, shapes=shapes)


def _wait(wait: Wait, y: int, line: Timeline) -> Rect:
    """A wait, shaded over the whole height of its row."""
    kind = "wait pending" if wait.pending else "wait"
    return _rect(line, wait.start, wait.end, y + 2, _TL_ROW - 4, kind, wait.label)


def _mark(mark: Mark, y: int, line: Timeline) -> Rect:
    """A call: a model call in the top half of its row, a tool call in the bottom half; at least
    4 px wide, to be seen."""
    top = y + 4 if mark.kind == "model" else y + _TL_ROW // 2
    kind = f"mark {mark.kind} {'cut' if mark.outcome == 'cancelled' else mark.outcome}"
    return _rect(line, mark.start, mark.end, top, _TL_ROW // 2 - 4, kind, mark.label, least=4.0)


def _rect(
    line: Timeline, start: float, end: float, top: int, height: int, classes: str, title: str,
    *, least: float = 2.0,
) -> Rect:  # fmt: skip
    """From `start` to `end` in time (at least `least` px wide), `height` px high from `top`."""
    x = _x(line, start)
    width = round(max(_x(line, end) - x, least), 1)
    return Rect(x=round(x, 1), y=top, width=width, height=height, classes=classes, title=title)
