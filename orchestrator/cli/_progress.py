"""Progress for people: a live block on a terminal, plain lines elsewhere.

Both views are driven by the run's events only: the display is redrawn when something happens.
What the model wrote (goals, tool errors) is cleaned of terminal control sequences before it is
shown; the live block's own cursor movements are the only escapes written.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TextIO

from agents.events import BreakerOpened, IssueReported, ModelCalled, ToolCalled
from orchestrator._events import (
    BudgetExhausted,
    BudgetWarning,
    Event,
    PlanCreated,
    Replanned,
    RunFinished,
    SubtaskCancelled,
    SubtaskFailed,
    SubtaskFinished,
    SubtaskInvalidated,
    SubtaskStarted,
)
from orchestrator.cli._console import clean

__all__ = ["Progress"]

_MARKS = {
    "pending": "·",
    "running": "▶",
    "done": "✓",
    "partial": "◐",
    "failed": "✗",
    "blocked": "⊘",
    "cancelled": "–",
    "dropped": "–",
}


@dataclass(kw_only=True, slots=True)
class Progress:
    """Renders run events to `out`: redrawn in place when `live`, one line per event otherwise."""

    out: TextIO
    live: bool
    started: float = field(default_factory=time.monotonic)
    goals: dict[str, str] = field(default_factory=dict)
    status: dict[str, str] = field(default_factory=dict)
    tools: dict[str, int] = field(default_factory=dict)
    tokens: int = 0
    version: int = 1
    notes: list[str] = field(default_factory=list)
    _drawn: int = 0

    def update(self, event: Event) -> None:
        """Take one event into account and show it."""
        line = self.describe(event)
        if self.live:
            self._redraw()
        elif line:
            self.out.write(f"[{self._elapsed()}] {_one_line(line)}\n")
            self.out.flush()

    def describe(self, event: Event) -> str | None:
        """Take one event into account; the line that tells what happened, if it is worth one."""
        match event:
            case PlanCreated(plan=plan) | Replanned(plan=plan):
                self.version = plan.version
                for sub in plan.subtasks:
                    self.goals[sub.id] = _one_line(sub.goal)
                    self.status.setdefault(sub.id, "pending")
                if isinstance(event, Replanned):
                    d = event.diff
                    return f"replanned v{d.version} after {d.trigger}: +{len(d.added)} -{len(d.removed)} cancelled {len(d.cancelled)}"
                return f"plan: {len(plan.subtasks)} subtasks: " + "; ".join(
                    s.id for s in plan.subtasks
                )
            case SubtaskStarted(subtask_id=sid):
                self.status[str(sid)] = "running"
                return f"{sid} started: {_one_line(event.goal)[:70]}"
            case (
                SubtaskFinished(subtask_id=sid, report=r) | SubtaskFailed(subtask_id=sid, report=r)
            ):
                self.status[str(sid)] = r.status
                return f"{sid} {r.status} in {r.steps} steps"
            case SubtaskCancelled(subtask_id=sid):
                self.status[str(sid)] = "cancelled"
                return f"{sid} cancelled ({event.reason})"
            case SubtaskInvalidated(subtask_id=sid):
                self.status[str(sid)] = "dropped"
                return f"{sid} dropped ({event.reason})"
            case ModelCalled(usage=usage):
                self.tokens += usage.total_tokens
                return None
            case ToolCalled(agent_id=aid):
                self.tools[aid] = self.tools.get(aid, 0) + 1
                return None if event.ok else f"{aid}: {event.tool} failed: {event.error}"
            case IssueReported(agent_id=aid, kind=kind):
                return f"{aid} reports: {kind}: {event.reason}"
            case BreakerOpened(tool=tool):
                self.notes.append(f"tool {tool} disabled for a while")
                return f"breaker opened: {tool}"
            case BudgetWarning(resource=resource):
                return f"budget warning: {resource} at {event.used:g}/{event.limit:g}"
            case BudgetExhausted(reason=reason):
                self.notes.append(f"{reason} budget exhausted")
                return f"budget exhausted: {reason}"
            case RunFinished(status=status):
                return f"run {status}" + (f" ({event.reason})" if event.reason else "")
        return None

    def _redraw(self) -> None:
        lines = [f"paor · plan v{self.version} · {self.tokens} tokens · {self._elapsed()}"]
        for sid, goal in self.goals.items():
            state = self.status.get(sid, "pending")
            calls = self.tools.get(sid, 0)
            lines.append(
                f"  {_MARKS.get(state, '?')} {sid:<12} {state:<9} {calls:>3} tools  {goal[:60]}"
            )
        lines += [f"  ! {note}" for note in self.notes[-3:]]
        lines = [clean(line).replace("\n", " ") for line in lines]
        if self._drawn:
            self.out.write(f"\x1b[{self._drawn}F\x1b[J")
        self.out.write("\n".join(lines) + "\n")
        self.out.flush()
        self._drawn = len(lines)

    def _elapsed(self) -> str:
        return f"{time.monotonic() - self.started:5.1f}s"


def _one_line(text: str) -> str:
    """`text` on one line: a goal the model wrote with line breaks must not break the layout (the
    live block moves the cursor up by the number of lines it drew)."""
    return " ".join(clean(text).split())
