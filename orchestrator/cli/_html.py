"""A journaled run as one self-contained HTML page: `paor show RUN_ID --html FILE`.

The page is built from the journal alone and needs nothing else to render: inline CSS, inline
SVG, no script, no font or image from elsewhere. It shows the run's header; for a paused run,
what it waits for (`_html_waiting`: the page a person opens to review a plan); each plan version
as a DAG with what its replan changed (`_html_plans`); a timeline of the sub-agents with the spans
they waited for approval (`_html_timeline`); the spend; and the reports.

These modules work out what to show and where (the numbers and the geometry); the Jinja2
templates in `templates/` beside them write the markup, with autoescaping on: everything a model,
a tool or a caller wrote (goals, answers, ids, tool names, arguments) is escaped where it is
placed, in text and in attributes alike.
"""

from __future__ import annotations

import functools
import textwrap
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pydantic import ValidationError

from agents import Usage
from memory.journal import EffectRecord, RunInfo
from orchestrator._state import RunResult
from orchestrator.cli._html_plans import plan_figures
from orchestrator.cli._html_timeline import (
    Lane,
    Mark,
    Outcome,
    Timeline,
    Wait,
    chart,
    elapsed,
    timeline,
)
from orchestrator.cli._html_waiting import is_paused, shade_waiting, waiting_requests
from orchestrator.cli._inspect import _cut, _when

if TYPE_CHECKING:
    import jinja2

__all__ = ["Lane", "Mark", "Outcome", "Timeline", "Wait", "render_html", "run_result", "timeline"]

_CH_W, _CH_H, _CH_PAD = 640, 200, 44
_STATUSES = frozenset({"done", "partial", "failed", "blocked", "cancelled", "planner", "paused"})
# A paused run's sub-agent whose call waits for a person is "waiting".
_RUN_CLASSES = {"complete": "done", "waiting": "paused"} | dict.fromkeys(
    ("incomplete", "crashed", "running"), "partial"
)


@dataclass(kw_only=True, slots=True)
class _Spend:
    """The spend chart: its size, the totals, the axis's last time, and two step lines (SVG
    element, series name, points)."""

    width: int
    height: int
    pad: int
    tokens: int
    requests: int
    end: str
    series: list[tuple[str, str, str]]


def run_result(info: RunInfo) -> RunResult | None:
    """The run's stored result (finished or paused), or None (none yet, or not a result this
    version reads)."""
    if info.result is None:
        return None
    try:
        return RunResult.model_validate(info.result)
    except ValidationError:
        return None


def render_html(info: RunInfo, records: Sequence[EffectRecord], waits: Iterable[Wait] = ()) -> str:
    """The whole page for the run `info` with its journal `records` (and any approval waits
    beyond those the records show)."""
    result = run_result(info)
    reports = {r.agent_id: r for r in result.reports} if result is not None else {}
    line = timeline(records, reports, waits)
    shade_waiting(line, info, result)
    page = _environment().get_template("run.html.j2")
    return page.render(
        info=info,
        facts=_facts(info, result, line),
        answer=_answer(info, result),
        waiting=waiting_requests(info, result),
        result=result,
        plans=plan_figures(result),
        timeline=chart(line),
        spend=_spend(line),
    )


@functools.cache
def _environment() -> jinja2.Environment:
    """The templates' environment, made on first use: the command line imports this module at
    start, and only `show --html` needs Jinja2 (its import takes tens of milliseconds)."""
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("orchestrator.cli", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(cut=_cut, status_class=_status_class, lines=_lines)
    return env


def _status_class(status: str) -> str:
    """A CSS class for a status: only the known ones, so no written text reaches a class."""
    return _RUN_CLASSES.get(status) or (status if status in _STATUSES else "other")


def _lines(text: str, width: int, count: int) -> list[str]:
    """`text` wrapped to at most `count` lines of `width` characters (one line at least)."""
    return textwrap.wrap(text, width, max_lines=count, placeholder=" …") or [""]


# The header


def _facts(info: RunInfo, result: RunResult | None, line: Timeline) -> list[tuple[str, str]]:
    usage = result.usage if result is not None else _record_usage(line)
    seconds = line.end - line.start if line.timed else info.updated - info.created
    return [
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


def _answer(info: RunInfo, result: RunResult | None) -> str:
    if result is None:
        return "(the run has not finished)"
    if is_paused(info) and not result.answer:
        return "(none yet: the run is paused, waiting for a decision)"
    return result.answer


def _record_usage(line: Timeline) -> Usage:
    """What the records say was spent, for a run with no result yet."""
    tokens, requests = line.spend[-1][1:] if line.spend else (0, 0)
    tools = sum(m.kind == "tool" for lane in line.lanes for m in lane.marks)
    return Usage(requests=requests, completion_tokens=tokens, tool_calls=tools)


# Spend


def _spend(line: Timeline) -> _Spend | None:
    """The spend chart: tokens (an area) and requests (a line), cumulative (None: no reply)."""
    if not line.spend:
        return None
    tokens, requests = line.spend[-1][1], line.spend[-1][2]
    series = [
        ("polygon", "tokens", _series(line, 1, tokens, area=True)),
        ("polyline", "requests", _series(line, 2, requests)),
    ]
    end = elapsed(line.end - line.start, line)
    return _Spend(
        width=_CH_W, height=_CH_H, pad=_CH_PAD, tokens=tokens, requests=requests, end=end,
        series=series,
    )  # fmt: skip


def _series(line: Timeline, column: int, top: int, *, area: bool = False) -> str:
    """The points of a step line of one cumulative column of `line.spend`, scaled so `top` is
    the chart's top (closed along the base when it is drawn as an `area`)."""
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
    return " ".join(f"{x:.1f},{y:.1f}" for x, y in points)
