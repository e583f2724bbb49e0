"""Journaled runs for people: the list of runs, and one run's plan versions and step trace.

The trace is the journal itself, one line per effect in the order they were written: what each
agent asked its model and got back, which tools ran and how they ended, and the run's recorded
choices. Clock reads are left out. Tool arguments were redacted before they were stored. Above it,
what the run's records take in the journal: the bytes by kind, and the largest record.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Sequence
from typing import Any

from pydantic import ValidationError
from pydantic_core import to_json

from agents import AgentReport
from memory.journal import EffectRecord, RunInfo
from orchestrator._config import RunConfig
from orchestrator._plan import Plan, PlanDiff
from orchestrator._state import RunResult

__all__ = ["render_result", "render_run", "render_runs"]

_TEXT = 100


def render_runs(runs: Sequence[RunInfo]) -> str:
    """One line per run: id, status, last update, goal."""
    if not runs:
        return "no runs"
    width = max(len(r.run_id) for r in runs)
    lines = [f"{'RUN':<{width}}  {'STATUS':<10}  {'UPDATED':<19}  GOAL"]
    lines += [
        f"{r.run_id:<{width}}  {r.status:<10}  {_when(r.updated)}  {_cut(r.goal, 80)}" for r in runs
    ]
    return "\n".join(lines)


def render_run(info: RunInfo, records: Sequence[EffectRecord]) -> str:
    """A run's header, its plan versions (when it finished) and its step trace."""
    lines = [
        f"run {info.run_id}: {info.status}",
        f"goal: {info.goal}",
        f"started {_when(info.created)}, updated {_when(info.updated)}",
    ]
    if info.meta.get("command"):
        lines.append(f"command: paor {info.meta['command']}")
    if info.config is not None:
        lines.append(f"config: {_config(info.config)}")
    lines += ["", *_outcome(info), "", *_footprint(records)]
    shown = [r for r in records if r.kind != "clock"]
    lines += ["", f"trace ({len(shown)} effects, clock reads left out):"]
    lines += [f"  {_step(r)}" for r in shown]
    return "\n".join(lines)


def _config(given: dict[str, Any]) -> str:
    """What a run's configuration sets apart from the defaults, a prompt by its length."""
    defaults = RunConfig().model_dump(mode="json")
    said = []
    for key, value in given.items():
        if value == defaults.get(key):
            continue
        if key == "limits" and isinstance(value, dict):
            base = defaults["limits"]
            value = {k: v for k, v in value.items() if v != base.get(k)}
        shown = f"{len(value):,} chars" if key.endswith("instructions") else json.dumps(value)
        said.append(f"{key}={shown}")
    return ", ".join(said) or "the defaults"


def _footprint(records: Sequence[EffectRecord]) -> list[str]:
    """What the run's records take in the journal: in all, by kind (the most first), and the
    largest record (a capped tool result says how big the whole result was)."""
    if not records:
        return ["journal: no records"]
    sized = [(r.size(), r) for r in records]
    total: Counter[str] = Counter()
    count: Counter[str] = Counter()
    for size, record in sized:
        total[record.kind] += size
        count[record.kind] += 1
    kinds = ", ".join(f"{kind} {n:,} in {count[kind]}" for kind, n in total.most_common())
    size, big = max(sized, key=lambda pair: pair[0])
    return [
        f"journal: {total.total():,} bytes in {len(records)} records ({kinds})",
        f"largest: {big.agent_id}#{big.seq} {big.kind}, {size:,} bytes{_capped(big, sha=True)}",
    ]


def _capped(record: EffectRecord, *, sha: bool = False) -> str:
    """How big a capped tool result was (and its sha256), as a note ("" for any other record)."""
    payload: Any = record.payload
    if record.kind != "tool" or not isinstance(payload, dict):
        return ""
    outcome = payload.get("outcome")
    # The cut rides in the outcome; a record of an earlier version has it under `capped`.
    capped = outcome.get("cut") if isinstance(outcome, dict) else None
    capped = capped or payload.get("capped")
    if not isinstance(capped, dict):
        return ""
    digest = f"; sha256 {capped.get('sha256')}" if sha else ""
    return f" (a {capped.get('bytes', 0):,}-byte result, capped{digest})"


def _outcome(info: RunInfo) -> list[str]:
    if info.result is None:
        return ["the run has not finished: the planner's replies are in the trace"]
    try:
        result = RunResult.model_validate(info.result)
    except ValidationError:
        return [f"answer: {_cut(str(info.result.get('answer', '')), 300)}"]
    return render_result(result)


def _said(report: AgentReport) -> str:
    """A sub-agent's result: its object as JSON data when it has one (a typed subtask's)."""
    return report.answer if report.output is None else to_json(report.output).decode()


def render_result(result: RunResult) -> list[str]:
    """A finished run's plan versions, its sub-agents' reports, and its answer, as lines (a
    paused run's: what it waits for instead of an answer)."""
    diffs = {d.version: d for d in result.diffs}
    lines = [_plan(plan, diffs.get(plan.version)) for plan in result.plans]
    lines += [f"  {r.agent_id}: {r.status}: {_cut(_said(r), 80)}" for r in result.reports]
    for asked in result.answered:
        lines += [
            f"asked by {asked.agent_id}: {_cut(asked.question)}",
            f"  answered: {_cut(asked.answer)}",
        ]
    if result.status == "paused":
        lines += [f"waits: {w.summary()}" for w in result.waiting]
        lines.append(f"decide with: paor approve {result.run_id} (or Orchestrator.resume)")
    elif result.reason:
        lines.append(f"incomplete: {result.reason}")
    usage = result.usage
    lines.append(
        f"spent: {usage.total_tokens} tokens, {usage.requests} model requests, "
        f"{usage.tool_calls} tool calls"
    )
    if result.status == "paused":
        return lines
    if result.output is not None:  # the typed answer, as JSON data
        return [*lines, f"output: {_cut(json.dumps(result.output, ensure_ascii=False), 300)}"]
    return [*lines, f"answer: {_cut(result.answer, 300)}"]


def _plan(plan: Plan, diff: PlanDiff | None) -> str:
    subtasks = ", ".join(
        f"{s.id} (after {', '.join(s.depends_on)})" if s.depends_on else s.id for s in plan.subtasks
    )
    line = f"plan v{plan.version}: {subtasks}"
    if diff is None:
        return line
    changes = [
        f"{what} {', '.join(ids)}"
        for what, ids in (
            ("added", diff.added),
            ("removed", diff.removed),
            ("cancelled", diff.cancelled),
        )
        if ids
    ]
    return f"{line}\n  replanned after {diff.trigger}: {'; '.join(changes) or 'no change'}"


def _step(record: EffectRecord) -> str:
    where = f"{record.agent_id}#{record.seq}"
    return f"{where:<16} {record.kind:<7} {record.outcome:<9} {_summary(record)}".rstrip()


def _summary(record: EffectRecord) -> str:
    payload: Any = record.payload
    if record.outcome == "cancelled":
        return "(cut short)"
    if record.outcome == "error":
        return f"{payload.get('type')}: {_cut(str(payload.get('message')))}"
    if record.kind == "model":
        message = payload.get("message", {})
        calls = message.get("tool_calls") or []
        if calls:
            return "calls " + ", ".join(f"{c['name']}({_cut(c['arguments'], 60)})" for c in calls)
        return f"says: {_cut(message.get('content') or '')}"
    if record.kind == "intent":
        args = json.dumps(payload.get("args"), ensure_ascii=False, sort_keys=True)
        return f"starts {payload.get('tool')}({_cut(args, 60)})"
    if record.kind == "tool":
        outcome = payload.get("outcome", {})
        if outcome.get("ok"):
            value = _cut(json.dumps(outcome.get("value"), ensure_ascii=False))
            return f"{payload.get('tool')}{_capped(record)}: {value}"
        return f"{payload.get('tool')} failed ({outcome.get('error')}): {_cut(outcome.get('message', ''))}"
    return _cut(str(payload.get("value")))


def _when(stamp: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(stamp))


def _cut(text: str, limit: int = _TEXT) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
