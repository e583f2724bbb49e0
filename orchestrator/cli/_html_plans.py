"""Plans laid out for the run page: each version as a DAG, with what its replan changed.

A plan's subtasks are boxes in columns by dependency depth, with arrows for dependencies; the
subtasks a replan took out are dashed boxes where they were. This module only places them; the
template `templates/macros.html.j2` (`figure`) draws them. The same drawing serves the plan a
paused run waits to have approved (`orchestrator.cli._html_waiting`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from orchestrator._plan import Plan, PlanDiff, Subtask
from orchestrator._state import RunResult

__all__ = ["BOX", "Box", "Figure", "figure", "plan_figures"]

BOX = (230, 74)
"""A subtask box's width and height, in pixels."""
_GAP_X, _GAP_Y, _PAD = 56, 16, 12


@dataclass(kw_only=True, slots=True)
class Box:
    """One subtask's box: its top-left corner and what the replan did to it ("first" in a first
    plan; kept, added, removed, cancelled, or dropped: it ended failed or blocked)."""

    subtask: Subtask
    x: int
    y: int
    change: str
    ghost: bool = False


@dataclass(kw_only=True, slots=True)
class Figure:
    """A plan's drawing: its size, its arrows (from one box's right middle to another's left
    middle, as x1, y1, x2, y2), its boxes (live ones first) and their size."""

    plan: Plan
    diff: PlanDiff | None
    width: int
    height: int
    edges: list[tuple[int, int, int, int]]
    boxes: list[Box]
    box: tuple[int, int] = BOX


def plan_figures(result: RunResult | None) -> list[Figure] | None:
    """Every plan version of the run, first to last, each with what its replan changed (None for
    a run with no result yet: the versions are stored with it)."""
    if result is None:
        return None
    diffs = {d.version: d for d in result.diffs}
    pairs = zip(result.plans, (None, *result.plans), strict=False)  # each with its predecessor
    return [figure(plan, diffs.get(plan.version), before) for plan, before in pairs]


def figure(plan: Plan, diff: PlanDiff | None, previous: Plan | None) -> Figure:
    """The plan's subtasks as boxes in columns by dependency depth, arrows for dependencies;
    the subtasks a replan removed or cancelled (from `previous`) as dashed boxes where they were."""
    gone = _gone(diff, previous)  # drawn at their old depth
    old = _depths(previous.subtasks) if previous is not None else {}
    place = _layout([*plan.subtasks, *gone], old | _depths(plan.subtasks))
    live = len(plan.subtasks)
    boxes = [
        Box(subtask=s, x=x, y=y, change=_change(s.id, diff), ghost=i >= live)
        for i, (s, (x, y)) in enumerate(place)
    ]
    corner = {box.subtask.id: (box.x, box.y) for box in boxes}
    edges = [
        _edge(corner[d], corner[s.id]) for s in plan.subtasks for d in s.depends_on if d in corner
    ]
    width = max((b.x for b in boxes), default=0) + BOX[0] + 2 * _PAD
    height = max((b.y for b in boxes), default=0) + BOX[1] + 2 * _PAD
    return Figure(plan=plan, diff=diff, width=width, height=height, edges=edges, boxes=boxes)


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


def _layout(
    subtasks: Sequence[Subtask], depth: dict[str, int]
) -> list[tuple[Subtask, tuple[int, int]]]:
    """Each box's top-left corner: a column per depth, boxes stacked in plan order."""
    rows: dict[int, int] = {}
    place = []
    for s in subtasks:
        column = depth.get(s.id, 0)
        row = rows.get(column, 0)
        rows[column] = row + 1
        place.append((s, (_PAD + column * (BOX[0] + _GAP_X), _PAD + row * (BOX[1] + _GAP_Y))))
    return place


def _change(subtask_id: str, diff: PlanDiff | None) -> str:
    if diff is None:
        return "first"
    if subtask_id in diff.kept:
        return "kept"
    moves = {"added": diff.added, "removed": diff.removed, "cancelled": diff.cancelled}
    return next((kind for kind, ids in moves.items() if subtask_id in ids), "dropped")


def _edge(start: tuple[int, int], end: tuple[int, int]) -> tuple[int, int, int, int]:
    """An arrow from the right middle of the box at `start` to the left middle of `end`'s."""
    return start[0] + BOX[0], start[1] + BOX[1] // 2, end[0], end[1] + BOX[1] // 2
