"""What the planner model writes, read: a draft parsed and validated (its problems said in words
a model or a report reader understands), and what a replan is shown of the plan and may change.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Collection, Sequence
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from agents import AgentReport
from orchestrator._plan import AskingPlanDraft, Plan, PlanDraft, SubtaskDraft

__all__ = [
    "ReplanDraft",
    "base_schema",
    "parse_draft",
    "plan_status",
    "removable_ids",
    "run_schema",
    "validation_problems",
]

M = TypeVar("M", bound=BaseModel)


class ReplanDraft(BaseModel):
    """A replan as the planner model writes it: what to drop and what to add."""

    remove: list[str] = []
    add: list[SubtaskDraft] = []
    rationale: str = ""


@functools.cache
def base_schema(schema: type[BaseModel]) -> str:
    """The draft's JSON schema as the planner model is shown it, made once (pydantic takes about
    a millisecond to generate it, on the critical path of every plan and replan): without
    pydantic's titles or the classes' docstrings, which are written for paor's developers and
    would cost every plan's prompt (the planner's instructions say what each field is for)."""
    return json.dumps(_bare(schema.model_json_schema()))


def run_schema(
    schema: type[BaseModel],
    *,
    tools: Collection[str],
    max_subtasks: int,
    calls: bool,
    schemas: bool,
    removable: Sequence[str] = (),
) -> dict[str, Any]:
    """A draft's JSON schema with a run's limits in it: the plan size, tool names and the ids a
    replan may remove as enums, so a grammar-constrained model cannot break them; a subtask's
    written-out calls (`calls`) and output schema (`schemas`) only where the run offers them."""
    json_schema: dict[str, Any] = json.loads(base_schema(schema))  # a fresh copy to edit
    if schema in (PlanDraft, AskingPlanDraft):  # a question comes with a plan all the same
        json_schema["properties"]["subtasks"].update(minItems=1, maxItems=max_subtasks)
    if schema is ReplanDraft:
        remove = json_schema["properties"]["remove"]
        remove["items"] = {"enum": list(removable)} if removable else {"type": "string"}
        remove["maxItems"] = len(removable)
    defs = json_schema.get("$defs", {})
    draft = defs.get("SubtaskDraft")
    if draft is not None:
        names, fields = sorted(tools), draft["properties"]
        fields["tools"]["items"] = {"enum": names} if names else {"type": "string"}
        fields["tools"]["maxItems"] = len(names)
        if not schemas:
            fields.pop("output_schema", None)
        if not calls or not names:  # a subtask is always a sub-agent
            for key in ("call", "first_call"):
                fields.pop(key, None)
            defs.pop("CallDraft", None)
        else:
            defs["CallDraft"]["properties"]["tool"] = {"enum": names}
    return json_schema


def _bare(node: Any, *, names: bool = False) -> Any:
    """`node` without "title" keywords, nor "description" where it describes an object (a
    class's docstring); `names`: `node` maps names (of properties or definitions) to schemas."""
    if isinstance(node, list):
        return [_bare(v) for v in node]
    if not isinstance(node, dict):
        return node
    if names:
        return {k: _bare(v) for k, v in node.items()}
    dropped = {"title", "description"} if "properties" in node else {"title"}
    return {
        k: _bare(v, names=k in ("properties", "$defs")) for k, v in node.items() if k not in dropped
    }


def parse_draft(text: str, model: type[M]) -> M | list[str]:
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        return [f"the reply is not valid JSON ({exc.msg} at char {exc.pos})"]
    except RecursionError:
        return ["the reply is not valid JSON (nested too deep)"]
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        return [f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors()[:5]]


def validation_problems(exc: ValidationError) -> list[str]:
    """Subtask field errors in words (a regex means nothing to a model, or to a report reader)."""
    found = []
    for error in exc.errors()[:5]:
        field = ".".join(map(str, error["loc"]))
        if error["type"] == "string_pattern_mismatch":
            shown = str(error.get("input", ""))[:60]
            found.append(
                f"{field}: {shown!r} is not a valid id: use 1 to 40 letters, digits, '_', '-' or '.'"
            )
        else:
            found.append(f"{field}: {error['msg']}")
    return found


def removable_ids(
    plan: Plan, status: dict[str, str], trigger: str, *, invalidated: bool
) -> set[str]:
    """What a replan may remove: pending subtasks; running ones only when the trigger's finding
    invalidates the plan's assumptions, or when they depend on the trigger. A subtask that merely
    failed says nothing about the running agents on other questions: they keep their work. Never
    the trigger itself (still running when it reported before its answer)."""
    downstream = plan.dependents(trigger)
    return {
        i
        for i, st in status.items()
        if i != trigger
        and (st == "pending" or (st == "running" and (invalidated or i in downstream)))
    }


def plan_status(plan: Plan, status: dict[str, str], reports: dict[str, AgentReport]) -> str:
    lines = []
    for sub in plan.subtasks:
        line = f"- {sub.id} [{status.get(sub.id, 'pending')}] {sub.goal}"
        if sub.depends_on:
            line += f" (after {', '.join(sub.depends_on)})"
        report = reports.get(sub.id)
        if report is not None:
            line += f"\n  result: {report.answer[:300]}"
        lines.append(line)
    return "\n".join(lines)
