"""Test doubles for a run: the planner's replies, checked against the planner's own schemas.

Every request says what it is for (`ModelRequest.purpose`); `agents.testing.by_purpose` routes
each to its reply. The builders here write the planner's replies as the planner parses them: a
reply it could not read (an unknown field, a wrong type) fails when it is built, so a test breaks
loudly, at its own line, when the planner's schema changes.

```python
from agents.testing import FunctionModel, by_purpose, task_of
from orchestrator.testing import plan_reply, subtask, synthesis_reply

model = FunctionModel(by_purpose(
    plan=plan_reply(subtask("a", "Find the population of Lyon."),
                    subtask("b", "Compare it with Paris.", depends_on=["a"])),
    step=lambda request: f"Found it for: {task_of(request)}",
    synthesis=synthesis_reply("Lyon is smaller than Paris."),
))
result = await Orchestrator(model).run("Compare Lyon and Paris")
```
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any, get_args

from pydantic import BaseModel, ValidationError

from agents.models import ModelResponse
from agents.testing import reply
from orchestrator._drafts import ReplanDraft
from orchestrator._plan import PlanDraft, SubtaskDraft

__all__ = ["plan_reply", "replan_reply", "subtask", "synthesis_reply"]


def subtask(
    subtask_id: str,
    goal: str,
    *,
    depends_on: Iterable[str] = (),
    tools: Iterable[str] = (),
    acceptance: str = "",
    expected_output: str = "",
    call: tuple[str, Mapping[str, Any]] | None = None,
    first_call: tuple[str, Mapping[str, Any]] | None = None,
    output_schema: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """One subtask of a plan or a replan, as the planner model writes it.

    Args:
        subtask_id: Its id (the planner accepts letters, digits, "_", "-" and ".").
        goal: What its sub-agent must do; `agents.testing.task_of` finds it in that agent's
            requests.
        depends_on: Ids whose results it needs.
        tools: The tools it may use (empty: all).
        acceptance: What a good result contains.
        expected_output: The shape of the result.
        call: The one tool call the subtask is, as (tool, arguments), for an orchestrator with
            `direct_calls=True`.
        first_call: The tool call its sub-agent starts with, as (tool, arguments), likewise.
        output_schema: The JSON Schema its result is written as, for an orchestrator with
            `typed_subtasks=True`.
    """
    drafted: dict[str, Any] = {
        "id": subtask_id,
        "goal": goal,
        "depends_on": list(depends_on),
        "tools": list(tools),
        "acceptance": acceptance,
        "expected_output": expected_output,
    }
    for name, made in (("call", call), ("first_call", first_call)):
        if made is not None:
            drafted[name] = {"tool": made[0], "arguments": dict(made[1])}
    if output_schema is not None:
        drafted["output_schema"] = dict(output_schema)
    return _checked(drafted, SubtaskDraft)


def plan_reply(*subtasks: Mapping[str, Any], rationale: str = "") -> ModelResponse:
    """The planner model's answer to a "plan" request.

    Args:
        subtasks: The plan's subtasks (from `subtask`, or dicts of the same fields).
        rationale: The planner's one-line reason.

    Raises:
        ValueError: The planner could not read this reply (checked here, not when played).
    """
    return _reply({"subtasks": [dict(s) for s in subtasks], "rationale": rationale}, PlanDraft)


def replan_reply(
    *, add: Iterable[Mapping[str, Any]] = (), remove: Iterable[str] = (), rationale: str = ""
) -> ModelResponse:
    """The planner model's answer to a "replan" request.

    What is not removed is kept. Removing a pending subtask drops it; removing a running one
    cancels it (the planner allows that only for subtasks downstream of the surprise, or all of
    them when the surprise invalidates the plan).

    Args:
        add: New subtasks (new ids), from `subtask` or dicts of the same fields.
        remove: Ids of pending or running subtasks to drop.
        rationale: The planner's one-line reason.

    Raises:
        ValueError: The planner could not read this reply.
    """
    drafted = {"remove": list(remove), "add": [dict(s) for s in add], "rationale": rationale}
    return _reply(drafted, ReplanDraft)


def synthesis_reply(text: str) -> ModelResponse:
    """The final answer to a "synthesis" request.

    Raises:
        ValueError: `text` is blank (the run would fall back to joining the agents' results).
    """
    if not text.strip():
        raise ValueError("a blank synthesis is replaced by the agents' joined results")
    return reply(text)


def _reply(drafted: dict[str, Any], schema: type[BaseModel]) -> ModelResponse:
    return reply(json.dumps(_checked(drafted, schema)))


def _checked(drafted: dict[str, Any], schema: type[BaseModel]) -> dict[str, Any]:
    """`drafted` if the planner reads it as written: valid, and with no field it would ignore."""
    unknown = _unknown_fields(drafted, schema)
    if unknown:
        raise ValueError(f"not a field of the planner's {schema.__name__}: {', '.join(unknown)}")
    try:
        schema.model_validate(drafted)
    except ValidationError as exc:
        raise ValueError(f"the planner could not read this reply: {exc}") from None
    return drafted


def _unknown_fields(drafted: Mapping[str, Any], schema: type[BaseModel], at: str = "") -> list[str]:
    found = [f"{at}{name}" for name in drafted if name not in schema.model_fields]
    for name, field in schema.model_fields.items():
        inner = [a for a in get_args(field.annotation) if isinstance(a, type)]
        nested = next((a for a in inner if issubclass(a, BaseModel)), None)
        if nested is None or not isinstance(drafted.get(name), list):
            continue
        for index, item in enumerate(drafted[name]):
            if isinstance(item, Mapping):
                found += _unknown_fields(item, nested, f"{at}{name}[{index}].")
    return found
