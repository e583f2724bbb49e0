"""Plans: a small DAG of subtasks, its validation, and the diff a replan records.

A plan is data the model produced, so everything about it is checked: ids unique and well-formed,
dependencies known, no cycles, not empty, not too large, tools that exist. Problems are phrased for
the planner model, which gets a bounded number of chances to repair them.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Collection, Iterable
from typing import Any, TypeGuard

from pydantic import BaseModel, ConfigDict, Field

from agents import ConfigurationError
from agents.effects import ReservedAgent
from agents.errors import RunError
from agents.executor import strip_markers, task_brief
from agents.models import OutputSpec
from memory import ToolCall

__all__ = [
    "Plan",
    "PlanDiff",
    "PlanDraft",
    "PlanError",
    "PlannedCall",
    "Subtask",
    "SubtaskDraft",
    "fresh_id",
]

_ID_PATTERN = r"^[A-Za-z0-9_.\-]{1,40}$"
MAX_PROBLEMS = 10
_PROBLEM_CHARS = 300
_RESERVED: frozenset[str] = frozenset(ReservedAgent)  # ids no subtask may take
_WORD = re.compile(r"[^\W\d_]{2,}")


class PlanError(RunError):
    """The planner could not produce a valid plan within its repair budget (its place in paor's
    error tree is drawn in `agents.errors`)."""


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class PlannedCall(_Frozen):
    """A tool call the planner wrote out (LLMCompiler's task). A subtask that is this one call
    runs without a sub-agent's model calls, and its result is the tool's output; a subtask's
    first call is made for its sub-agent, as the agent's first turn.

    Attributes:
        tool: The tool's name.
        arguments: The arguments, as JSON text. A string argument that is exactly "$ID" stands
            for the result of subtask ID, which the subtask depends on.
    """

    tool: str = Field(min_length=1)
    arguments: str = "{}"

    def references(self) -> set[str]:
        """The subtask ids whose results the arguments stand for."""
        return {v[1:] for v in _arguments(self.arguments).values() if _is_reference(v)}

    def call(self, call_id: str, results: dict[str, str]) -> ToolCall:
        """The tool call, each reference replaced by that subtask's result."""
        args = {
            k: results.get(v[1:], v) if _is_reference(v) else v
            for k, v in _arguments(self.arguments).items()
        }
        return ToolCall(id=call_id, name=self.tool, arguments=json.dumps(args, ensure_ascii=False))


def _arguments(text: str) -> dict[str, Any]:
    try:
        found = json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        return {}
    return found if isinstance(found, dict) else {}


def _is_reference(value: object) -> TypeGuard[str]:
    return isinstance(value, str) and value.startswith("$") and len(value) > 1


class Subtask(_Frozen):
    """One node of the plan, run by its own executor sub-agent (or, when it is one tool call the
    planner wrote out, by that call alone).

    Attributes:
        id: A short unique id (letters, digits, "_", "-", ".").
        goal: What the sub-agent must find out or do.
        depends_on: Ids whose results this subtask needs.
        tools: The tools it may use (empty: all).
        acceptance: What a good result must contain (shown to the sub-agent).
        expected_output: The shape of the result (shown to the sub-agent).
        call: The one tool call this subtask is, if the planner wrote it out.
        first_call: The tool call its sub-agent's first turn is, if the planner wrote it out
            (one model decision fewer on the subtask's path; never with `call`).
        output_schema: A JSON Schema the result is also written as (`AgentReport.output`);
            the subtasks depending on this one receive that object as JSON data. The planner
            writes one under `RunConfig(typed_subtasks=True)`; a person reviewing a plan may
            pin one on any subtask by editing it.
    """

    id: str = Field(pattern=_ID_PATTERN)
    goal: str = Field(min_length=1)
    depends_on: tuple[str, ...] = ()
    tools: tuple[str, ...] = ()
    acceptance: str = ""
    expected_output: str = ""
    call: PlannedCall | None = None
    first_call: PlannedCall | None = None
    output_schema: dict[str, Any] | None = None

    def brief(self) -> str:
        """The task text a sub-agent is given."""
        return task_brief(
            self.goal, expected_output=self.expected_output, acceptance=self.acceptance
        )


class CallDraft(BaseModel):
    """A subtask's one tool call as the planner model writes it."""

    tool: str
    arguments: dict[str, Any] = {}


class SubtaskDraft(BaseModel):
    """A subtask as the planner model writes it (lenient: ids are checked later, with a message
    a model can act on; the schema still carries the id rule, which grammar-constrained servers
    enforce while the model writes)."""

    id: str = Field(json_schema_extra={"pattern": _ID_PATTERN, "maxLength": 40})
    goal: str
    depends_on: list[str] = []
    tools: list[str] = []
    acceptance: str = ""
    expected_output: str = ""
    call: CallDraft | None = None
    first_call: CallDraft | None = None
    output_schema: dict[str, Any] | None = None


class PlanDraft(BaseModel):
    """A plan as the planner model writes it."""

    subtasks: list[SubtaskDraft]
    rationale: str = ""


class AskingPlanDraft(PlanDraft):
    """A plan as a planner that may ask the user writes it: with a question, its subtasks are
    set aside and the planner plans again with the answer."""

    question: str = ""


class Plan(_Frozen):
    """A versioned DAG of subtasks.

    Attributes:
        version: 1 for the first plan, +1 per replan.
        subtasks: The subtasks, in the planner's order.
        rationale: The planner's one-line reason.
    """

    version: int = 1
    subtasks: tuple[Subtask, ...]
    rationale: str = ""

    def get(self, subtask_id: str) -> Subtask:
        """The subtask with this id; KeyError if there is none."""
        for sub in self.subtasks:
            if sub.id == subtask_id:
                return sub
        raise KeyError(subtask_id)

    @property
    def ids(self) -> tuple[str, ...]:
        """Every subtask id, in order."""
        return tuple(s.id for s in self.subtasks)

    def dependents(self, subtask_id: str) -> set[str]:
        """Every subtask that depends on `subtask_id`, directly or not."""
        found: set[str] = set()
        frontier = [subtask_id]
        while frontier:
            current = frontier.pop()
            for sub in self.subtasks:
                if current in sub.depends_on and sub.id not in found:
                    found.add(sub.id)
                    frontier.append(sub.id)
        return found

    def critical_path(self, cost: dict[str, float] | None = None) -> float:
        """The longest dependency chain, counting each subtask's cost (default 1)."""
        depth: dict[str, float] = {}
        for sub in _topological(self.subtasks):
            own = (cost or {}).get(sub.id, 1.0)
            depth[sub.id] = own + max((depth[d] for d in sub.depends_on if d in depth), default=0.0)
        return max(depth.values(), default=0.0)


def build_plan(
    draft: PlanDraft,
    *,
    version: int,
    keep: Iterable[Subtask] = (),
    calls: bool = True,
    schemas: bool = True,
) -> Plan:
    """A plan from the kept subtasks and a draft's subtasks (raises pydantic errors on bad ids);
    without `calls` a subtask's written-out tool calls are left out, and without `schemas` its
    output schema (neither was offered); so is a first call beside the one call a subtask is.
    paor's own markers (`[OBSERVE]` lines, status labels) are taken out of what the model wrote,
    and an expected output or acceptance line that adds nothing to its goal is dropped
    (`_adds`)."""
    added = tuple(
        Subtask(
            id=d.id.strip(),
            goal=strip_markers(d.goal).strip() or d.goal.strip(),
            depends_on=tuple(dict.fromkeys(x.strip() for x in d.depends_on)),
            tools=tuple(dict.fromkeys(d.tools)),
            acceptance=_adds(strip_markers(d.acceptance), d.goal),
            expected_output=_adds(strip_markers(d.expected_output), d.goal),
            call=_planned(d.call) if calls else None,
            first_call=_planned(d.first_call) if calls and d.call is None else None,
            output_schema=d.output_schema if schemas else None,
        )
        for d in draft.subtasks
    )
    return Plan(version=version, subtasks=(*keep, *added), rationale=draft.rationale)


def _planned(draft: CallDraft | None) -> PlannedCall | None:
    if draft is None:
        return None
    return PlannedCall(
        tool=draft.tool.strip(), arguments=json.dumps(draft.arguments, ensure_ascii=False)
    )


def _adds(line: str, goal: str) -> str:
    """A subtask's expected output or acceptance line, or "" when it tells the sub-agent nothing
    its goal does not: a copy of the goal (only the goal's words), or a bare value ("1", "21",
    "EUR 240": a guessed answer, which the agent would take as given, not a shape), names
    included ("Paris", or "Italy: Rome, Spain: Madrid" for the capitals of Italy and Spain: each
    word the goal does not have is a name; a small planner guesses the answer there, its
    sub-agent copies it, and the synthesis reads it as found)."""
    words = {w.lower() for w in _WORD.findall(line)}
    asked = {w.lower() for w in _WORD.findall(goal)}
    if not words or words <= asked:
        return ""
    if any(c.isdigit() for c in line) and len(words) < 2:
        return ""
    # The words the goal does not have, less acronyms ("JSON", "EUR"), which may be either.
    new = [w for w in _WORD.findall(line) if w.lower() not in asked and not w.isupper()]
    if new and all(w[0].isupper() for w in new):
        return ""  # only names: the answer, guessed
    return line


def problems(
    plan: Plan, *, max_subtasks: int, tools: Collection[str], reserved: Collection[str] = ()
) -> list[str]:
    """Everything wrong with a plan, phrased for the planner model (empty when it is valid).

    Linear in the plan's size; an oversize plan is refused before anything else is checked, and
    at most `MAX_PROBLEMS` problems are listed (a model cannot act on thousands).
    """
    if not plan.subtasks:
        return ["the plan has no subtasks"]
    if len(plan.subtasks) > max_subtasks:
        return [f"the plan has {len(plan.subtasks)} subtasks; at most {max_subtasks} allowed"]
    found: list[str] = []
    counts = Counter(s.id for s in plan.subtasks)
    duplicates = sorted({i for i, n in counts.items() if n > 1} | (counts.keys() & set(reserved)))
    if duplicates:
        found.append(f"subtask ids must be unique and new: {', '.join(duplicates)}")
    if taken := sorted(counts.keys() & _RESERVED):
        found.append(f"these ids are reserved for paor itself, choose others: {', '.join(taken)}")
    ids = set(counts)
    for sub in plan.subtasks:
        found += _subtask_problems(sub, ids, tools)
    cycle = _find_cycle(plan.subtasks)
    if cycle:
        found.append(f"dependencies form a cycle: {' -> '.join(cycle)}")
    # Each on one line and bounded: they quote what the model wrote (ids of any length, with
    # line breaks), and they end up in a one-line error if the repairs run out.
    return [" ".join(p.split())[:_PROBLEM_CHARS] for p in found[:MAX_PROBLEMS]]


def salvage(draft: PlanDraft, *, taken: Collection[str], room: int) -> tuple[PlanDraft, list[str]]:
    """A replan's additions repaired where the intent is plain, with what was changed.

    Ids already taken are renamed (`id-2`), a subtask asking the same question as another is left
    out, dependencies on unknown ids are dropped, and what does not fit in `room` is cut. What
    is left is validated as usual.
    """
    notes: list[str] = []
    used, goals, kept = set(taken) | _RESERVED, set(), []
    for sub in draft.subtasks:
        goal = " ".join(sub.goal.lower().split())
        if goal in goals:
            notes.append(f"left out {sub.id}: it repeats another subtask's goal")
            continue
        new_id = fresh_id(sub.id.strip(), used)
        if new_id != sub.id.strip():
            notes.append(f"renamed {sub.id} to {new_id}: the id was taken")
        used.add(new_id)
        goals.add(goal)
        kept.append(sub.model_copy(update={"id": new_id}))
    if len(kept) > room:
        notes.append(
            f"kept the first {room} of {len(kept)} new subtasks: the plan has room for no more"
        )
        kept = kept[: max(room, 0)]
    known = set(taken) | {k.id for k in kept}
    for index, sub in enumerate(kept):
        deps = [d for d in sub.depends_on if d.strip() in known]
        if len(deps) != len(sub.depends_on):
            notes.append(f"dropped unknown dependencies of {sub.id}")
            kept[index] = sub.model_copy(update={"depends_on": deps})
    return PlanDraft(subtasks=kept, rationale=draft.rationale), notes


def fresh_id(subtask_id: str, used: set[str]) -> str:
    """`subtask_id`, or when it is in `used` the first of "id-2", "id-3", ... that is not."""
    if subtask_id not in used:
        return subtask_id
    stem = subtask_id[:36]
    return next(f"{stem}-{n}" for n in range(2, len(used) + 3) if f"{stem}-{n}" not in used)


def _subtask_problems(sub: Subtask, ids: set[str], tools: Collection[str]) -> list[str]:
    found = []
    unknown = [d for d in sub.depends_on if d not in ids]
    if unknown:
        found.append(f"subtask {sub.id} depends on unknown ids: {', '.join(unknown)}")
    if sub.id in sub.depends_on:
        found.append(f"subtask {sub.id} depends on itself")
    bad_tools = [t for t in sub.tools if t not in tools]
    if bad_tools:
        found.append(
            f"subtask {sub.id} names unknown tools {', '.join(bad_tools)}; "
            f"valid: {', '.join(tools) or '(none)'}"
        )
    for call in (sub.call, sub.first_call):
        if call is not None:
            found += _call_problems(sub, call, tools)
    if sub.output_schema is not None:
        found += _schema_problems(sub, sub.output_schema)
    return found


def _schema_problems(sub: Subtask, schema: dict[str, Any]) -> list[str]:
    if sub.call is not None:
        return [
            f"subtask {sub.id} is a tool call, whose result is the tool's: drop its output_schema"
        ]
    try:
        OutputSpec.from_json_schema(schema, name=sub.id)
    except ConfigurationError as exc:
        return [f"subtask {sub.id}'s output_schema is {exc}"]
    return []


def _call_problems(sub: Subtask, call: PlannedCall, tools: Collection[str]) -> list[str]:
    if call.tool not in tools:
        return [
            f"subtask {sub.id} calls unknown tool {call.tool}; valid: {', '.join(tools) or '(none)'}"
        ]
    if sub.tools and call.tool not in sub.tools:
        return [f"subtask {sub.id} calls {call.tool}, which is not among its tools"]
    loose = sorted(call.references() - set(sub.depends_on))
    if loose:
        return [
            f"subtask {sub.id}'s call uses the results of {', '.join(loose)}: list them in depends_on"
        ]
    return []


def _find_cycle(subtasks: tuple[Subtask, ...]) -> list[str]:
    """One dependency cycle, as a path that returns to its start; empty when there is none."""
    placed = {s.id for s in _topological(subtasks)}
    left = {s.id: s for s in subtasks if s.id not in placed}
    if not left:
        return []
    # Every subtask Kahn's algorithm could not place waits on another unplaced one: walk until a
    # subtask repeats, and the walk from its first visit is a cycle.
    node, seen = next(iter(left)), []
    while node not in seen:
        seen.append(node)
        node = next(d for d in left[node].depends_on if d in left and d != node)
    return [*seen[seen.index(node) :], node]


def _topological(subtasks: tuple[Subtask, ...]) -> list[Subtask]:
    """Subtasks in dependency order (Kahn's algorithm); members of a cycle are left out."""
    ids = {s.id for s in subtasks}
    waiting = {s.id: {d for d in s.depends_on if d in ids and d != s.id} for s in subtasks}
    users: dict[str, list[str]] = {}
    for sub in subtasks:
        for dep in waiting[sub.id]:
            users.setdefault(dep, []).append(sub.id)
    by_id = {s.id: s for s in subtasks}
    ready = [s.id for s in subtasks if not waiting[s.id]]
    order: list[Subtask] = []
    while ready:
        current = ready.pop()
        order.append(by_id[current])
        for user in users.get(current, []):
            waiting[user].discard(current)
            if not waiting[user]:
                ready.append(user)
    return order


class PlanDiff(_Frozen):
    """What one replan changed.

    Attributes:
        version: The new plan's version.
        trigger: The subtask whose result caused the replan.
        reason: Why (failed, blocked, invalidated assumptions, rejected answer).
        added: Ids of new subtasks.
        removed: Ids of pending subtasks dropped.
        cancelled: Ids of running subtasks cancelled.
        kept: Ids carried over unchanged.
    """

    version: int
    trigger: str
    reason: str
    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    cancelled: tuple[str, ...] = ()
    kept: tuple[str, ...] = ()


def plan_schema() -> dict[str, Any]:
    """The JSON schema the planner model's plan must follow."""
    return PlanDraft.model_json_schema()
