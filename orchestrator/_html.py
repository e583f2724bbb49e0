"""A journaled run as one self-contained HTML page: `paor show RUN_ID --html FILE`.

The page is built from the journal alone and needs nothing else to render: inline CSS, SVG drawn
here, no script, no font or image from elsewhere. It shows the run's header; for a paused run,
what it waits for (`orchestrator._html_waiting`: the page a person opens to review a plan); each
plan version as a DAG with what its replan changed (`orchestrator._html_plans`); a timeline of the
sub-agents with the spans they waited for approval (`orchestrator._html_timeline`); the spend;
and the reports.

Everything a model, a tool or a caller wrote (goals, answers, ids, tool names, arguments) is
escaped where it is placed: in text, and in the few attributes that carry it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from pydantic import ValidationError

from agents import Usage
from memory.journal import EffectRecord, RunInfo
from orchestrator._html_parts import escape as _e
from orchestrator._html_parts import section, status_class, svg
from orchestrator._html_plans import plans_section
from orchestrator._html_timeline import (
    Lane,
    Mark,
    Outcome,
    Timeline,
    Wait,
    elapsed,
    timeline,
    timeline_section,
)
from orchestrator._html_waiting import is_paused, shade_waiting, waiting_section
from orchestrator._inspect import _cut, _when
from orchestrator._state import RunResult

__all__ = ["Lane", "Mark", "Outcome", "Timeline", "Wait", "render_html", "run_result", "timeline"]

_CH_W, _CH_H, _CH_PAD = 640, 200, 44
_SPEND_KEYS = (("tokens", "tokens, cumulative (left)"), ("requests", "model requests (right)"))


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
    body = _header(info, result, line) + waiting_section(info, result) + plans_section(result)
    body += timeline_section(line) + _spend_section(line) + _reports_section(result)
    return (
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>paor run {_e(info.run_id)}</title><style>{_CSS}</style></head>\n"
        f"<body>\n{body}</body></html>\n"
    )


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
    return (
        f'<header><h1>paor run <span class="id">{_e(info.run_id)}</span> '
        f'<span class="pill st-{status_class(info.status)}">{_e(info.status)}</span></h1>'
        f'{_banner(info, result)}<dl class="facts">{rows}</dl><h2>Answer</h2>'
        f'<pre class="answer">{_e(_answer(info, result))}</pre></header>\n'
    )


def _banner(info: RunInfo, result: RunResult | None) -> str:
    """For a paused run, a line at the top that says so and points to what waits."""
    if not is_paused(info):
        return ""
    count = len(result.waiting) if result is not None else 0
    return (
        f'<p class="banner paused">Paused: this run waits for {count} '
        f"decision{'s' * (count != 1)} by a person, listed under "
        '<a href="#waiting">Waiting for a decision</a>.</p>'
    )


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


def _reports_section(result: RunResult | None) -> str:
    if result is None or not result.reports:
        return section("reports", "Sub-agent reports", "<p>No reports yet.</p>")
    rows = "".join(
        f'<tr><td class="id">{_e(r.agent_id)}</td>'
        f'<td><span class="pill st-{status_class(r.status)}">{_e(r.status)}</span></td>'
        f"<td>{r.steps}</td><td>{_e(_cut(r.answer, 240))}</td></tr>"
        for r in result.reports
    )
    head = "<tr><th>subtask</th><th>status</th><th>steps</th><th>answer</th></tr>"
    return section("reports", "Sub-agent reports", f'<table class="reports">{head}{rows}</table>')


# Spend


def _spend_section(line: Timeline) -> str:
    if not line.spend:
        return section("spend", "Spend", "<p>No model reply yet.</p>")
    tokens, requests = line.spend[-1][1], line.spend[-1][2]
    paths = _series(line, 1, tokens, "tokens", area=True) + _series(line, 2, requests, "requests")
    frame = (
        f'<line class="frame" x1="{_CH_PAD}" y1="{_CH_H - _CH_PAD}" x2="{_CH_W - _CH_PAD}" '
        f'y2="{_CH_H - _CH_PAD}"/><text class="axis" x="{_CH_PAD}" y="{_CH_H - 20}">0</text>'
        f'<text class="axis end" x="{_CH_W - _CH_PAD}" y="{_CH_H - 20}">'
        f"{elapsed(line.end - line.start, line)}</text>"
        f'<text class="axis tokens" x="4" y="{_CH_PAD - 8}">{tokens} tokens</text>'
        f'<text class="axis requests end" x="{_CH_W - 4}" y="{_CH_PAD - 8}">{requests} requests</text>'
    )
    return section("spend", "Spend", svg("spend", _CH_W, _CH_H, frame + paths), _SPEND_KEYS)


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
.pill.st-paused{background:#f3c98b;color:#4a2a00;font-weight:600}
figure.plan,figure.proposal{margin:0 0 18px;background:#fff;border:1px solid #dde;border-radius:8px;padding:10px;
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
.st-cancelled .span{fill:#e2e2e2}.st-paused .span{fill:#f8e2bf}.planner-row .span{fill:#e6e0f4}
.wait{fill:#9aa3b5;fill-opacity:.35}.wait.pending{fill:#e8921e;fill-opacity:.45}.mark.model{fill:#5b6fd6}.mark.tool{fill:#2f9e6b}
.mark.failed{fill:#d43c3c}.mark.tool.failed{stroke:#7a1010;stroke-width:1}.mark.cut{fill:#aaa}
.series{fill:none;stroke-width:2}.series.tokens{stroke:#5b6fd6;fill:#5b6fd6;fill-opacity:.18}
.series.requests{stroke:#d08a1e}.axis.tokens{fill:#5b6fd6}.axis.requests{fill:#d08a1e}
.frame{stroke:#99a}.legend{font-size:12px;color:#556;margin:2px 0 8px}
.key{display:inline-block;width:14px;height:10px;margin:0 4px 0 10px;vertical-align:middle;
border-radius:2px}.k-kept{background:#eef2fa;border:1.5px solid #6b7fa8}
.k-added{background:#e4f6e5;border:1.5px solid #3a9a46}.k-removed{border:1.5px dashed #c24545}
.k-cancelled{border:1.5px dashed #d08a1e}.k-model{background:#5b6fd6}.k-tool{background:#2f9e6b}
.k-failed{background:#d43c3c}.k-dropped{border:1.5px dashed #888}.k-cut{background:#aaa}
.k-wait{background:rgba(154,163,181,.35)}.k-pending{background:rgba(232,146,30,.45)}.k-tokens{background:#c9d0f3;border-top:2px solid #5b6fd6}
.k-requests{background:#d08a1e;height:3px}table.reports{border-collapse:collapse;background:#fff}
table.reports td,table.reports th{border:1px solid #dde;padding:4px 8px;text-align:left;
vertical-align:top}
.banner.paused{background:#fff4e0;border:1px solid #e8b35c;border-left:6px solid #e8921e;
padding:8px 12px;border-radius:6px;margin:0 0 12px;font-weight:600}.banner a{color:#7a4500}
#waiting{background:#fffaf2;border:1px solid #efd3a6;border-radius:10px;padding:4px 16px 12px}
#waiting .lead{font-size:15px;font-weight:600;margin:4px 0}.how{color:#556;margin:4px 0 12px}
code{font-family:ui-monospace,monospace;background:#f1f2f6;padding:0 4px;border-radius:4px}
article.request{margin:0 0 14px}article.r-tool{background:#fff;border:1px solid #dde;
border-radius:8px;padding:10px}h3.caption{font-size:15px;margin:0 0 6px}
figure.proposal{border:2px solid #e8921e}pre.call,pre.description{white-space:pre-wrap;margin:0;
background:#f7f8fb;border:1px solid #e3e5ec;padding:6px 8px;border-radius:6px}
.problems{background:#fdecec;border:1px solid #f0b4b4;border-radius:6px;padding:4px 10px;
margin:4px 0}.problems p{margin:2px 0;font-weight:600;color:#8a1f1f}.problems ul{margin:2px 0}
details.as-text{margin:4px 0 6px}details.as-text summary{cursor:pointer;color:#556}
"""
