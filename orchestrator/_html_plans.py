"""Plans drawn for the run page: each version as a DAG, with what its replan changed.

A plan's subtasks are boxes in columns by dependency depth, with arrows for dependencies; the
subtasks a replan took out are dashed boxes where they were. The same drawing serves the plan a
paused run waits to have approved (`orchestrator._html_waiting`).
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence

from orchestrator._html_parts import escape as _e
from orchestrator._html_parts import section, svg
from orchestrator._inspect import _cut
from orchestrator._plan import Plan, PlanDiff, Subtask
from orchestrator._state import RunResult

__all__ = ["PLAN_KEYS", "plan_figure", "plans_section"]

PLAN_KEYS = (
    *((k, k) for k in ("kept", "added", "removed", "cancelled")),
    ("dropped", "dropped: it ended failed or blocked (dashed: no longer in the plan)"),
)
"""The legend of a plan drawing: (CSS key, meaning)."""
_BOX_W, _BOX_H, _GAP_X, _GAP_Y, _PAD = 210, 74, 56, 16, 12
_MARKER = (
    '<defs><marker id="{head}" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" '
    'markerHeight="7" orient="auto"><path d="M0 0L10 5L0 10z" fill="#667"/></marker></defs>'
)


def plans_section(result: RunResult | None) -> str:
    """Every plan version of the run, first to last, each after what its replan changed."""
    if result is None:
        note = "<p>The run has not finished: its plan versions are stored with its result.</p>"
        return section("plans", "Plan versions", note)
    if not result.plans:
        return section("plans", "Plan versions", "<p>No plan was adopted yet.</p>")
    diffs = {d.version: d for d in result.diffs}
    pairs = zip(result.plans, (None, *result.plans), strict=False)  # each with its predecessor
    parts = [_version_figure(plan, diffs.get(plan.version), before) for plan, before in pairs]
    return section("plans", "Plan versions", "".join(parts), PLAN_KEYS)


def _version_figure(plan: Plan, diff: PlanDiff | None, previous: Plan | None) -> str:
    caption = f"plan v{plan.version}: {len(plan.subtasks)} subtasks"
    if diff is not None:
        caption += f", replanned after {diff.trigger}: {diff.reason}"
    return plan_figure(plan, diff, previous, caption=caption, head=f"head-{plan.version}")


def plan_figure(
    plan: Plan,
    diff: PlanDiff | None,
    previous: Plan | None,
    *,
    caption: str,
    head: str,
    kind: str = "plan",
    notes: str = "",
) -> str:
    """A figure of class `kind` that draws `plan` under `caption` (escaped here), with the
    changes of `diff` from `previous`; `head` names its arrow marker (unique in the page) and
    `notes` is markup placed after the caption."""
    changes = "" if diff is None else _changes(diff)
    rationale = f'<p class="rationale">{_e(plan.rationale)}</p>' if plan.rationale else ""
    return (
        f'<figure class="{kind}" data-version="{plan.version}"><figcaption>{_e(caption)}'
        f"</figcaption>{notes}{changes}{rationale}{_dag(plan, diff, previous, head)}</figure>\n"
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


def _dag(plan: Plan, diff: PlanDiff | None, previous: Plan | None, head: str) -> str:
    """The plan's subtasks as boxes in columns by dependency depth, arrows for dependencies;
    the subtasks a replan removed or cancelled as dashed boxes where they were."""
    gone = _gone(diff, previous)  # drawn at their old depth
    old = _depths(previous.subtasks) if previous is not None else {}
    place = _layout([*plan.subtasks, *gone], old | _depths(plan.subtasks))
    width = max((x for x, _ in place.values()), default=0) + _BOX_W + 2 * _PAD
    height = max((y for _, y in place.values()), default=0) + _BOX_H + 2 * _PAD
    edges = [(place[d], place[s.id]) for s in plan.subtasks for d in s.depends_on if d in place]
    parts = [_MARKER.format(head=head), *(_arrow(a, b, head) for a, b in edges)]
    parts += [_box(s, place[s.id], _change(s.id, diff)) for s in plan.subtasks]
    parts += [_box(s, place[s.id], _change(s.id, diff), ghost=True) for s in gone]
    return svg("dag", width, height, "".join(parts))


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
