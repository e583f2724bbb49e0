"""Replies to a run's requests, checked against the planner's own schemas, and routing by purpose.

Every request says what it is for (`ModelRequest.purpose`): the planner asks for a "plan", a
"replan" and the final "synthesis"; a sub-agent asks for its next "step", a "wrap_up" when it is
cut short, and a compaction "summary". The builders here write the planner's replies as the
planner parses them: a reply it could not read (an unknown field, a wrong type) fails when it is
built, so a test breaks loudly, at its own line, when the planner's schema changes.

```python
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
from collections.abc import Awaitable, Iterable, Mapping, Sequence
from typing import Any, get_args

from pydantic import BaseModel, ValidationError

from agents.models._model import ModelRequest, ModelResponse
from agents.testing._scripted import Decider, Turn, reply
from memory import UserMessage

__all__ = [
    "Route",
    "by_purpose",
    "observation",
    "plan_reply",
    "replan_reply",
    "subtask",
    "synthesis_reply",
    "task_of",
]

Route = Turn | Sequence[Turn] | Decider
"""How `by_purpose` answers one purpose: the same turn every time, a list of turns played in order,
or a function of the request (sync or async)."""

_TASK_PREFIX = "Task: "


def subtask(
    subtask_id: str,
    goal: str,
    *,
    depends_on: Iterable[str] = (),
    tools: Iterable[str] = (),
    acceptance: str = "",
    expected_output: str = "",
    call: tuple[str, Mapping[str, Any]] | None = None,
    output_schema: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """One subtask of a plan or a replan, as the planner model writes it.

    Args:
        subtask_id: Its id (the planner accepts letters, digits, "_", "-" and ".").
        goal: What its sub-agent must do; `task_of` finds it in that agent's requests.
        depends_on: Ids whose results it needs.
        tools: The tools it may use (empty: all).
        acceptance: What a good result contains.
        expected_output: The shape of the result.
        call: The one tool call the subtask is, as (tool, arguments), for an orchestrator with
            `direct_calls=True`.
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
    if call is not None:
        drafted["call"] = {"tool": call[0], "arguments": dict(call[1])}
    if output_schema is not None:
        drafted["output_schema"] = dict(output_schema)
    return _checked(drafted, _drafts()[0])


def plan_reply(*subtasks: Mapping[str, Any], rationale: str = "") -> ModelResponse:
    """The planner model's answer to a "plan" request.

    Args:
        subtasks: The plan's subtasks (from `subtask`, or dicts of the same fields).
        rationale: The planner's one-line reason.

    Raises:
        ValueError: The planner could not read this reply (checked here, not when played).
    """
    return _reply({"subtasks": [dict(s) for s in subtasks], "rationale": rationale}, _drafts()[1])


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
    return _reply(drafted, _drafts()[2])


def synthesis_reply(text: str) -> ModelResponse:
    """The final answer to a "synthesis" request.

    Raises:
        ValueError: `text` is blank (the run would fall back to joining the agents' results).
    """
    if not text.strip():
        raise ValueError("a blank synthesis is replaced by the agents' joined results")
    return reply(text)


def task_of(request: ModelRequest) -> str:
    """The goal of the subtask a sub-agent's request ("step", "wrap_up") is about.

    Raises:
        ValueError: The request opens with no task (a planner or summary request).
    """
    for message in request.messages:
        if isinstance(message, UserMessage) and message.content.startswith(_TASK_PREFIX):
            return message.content.removeprefix(_TASK_PREFIX).split("\n", 1)[0]
    raise ValueError(f"a {request.purpose!r} request with no sub-agent task in it")


def observation(content: str) -> str:
    """A tool message's result without the `[OBSERVE]` line of execution facts before it (see
    `agents._observe`): what the tool returned, as the model reads it."""
    head, newline, rest = content.partition("\n")
    return rest if newline and head.startswith("[OBSERVE] ") else content


def by_purpose(
    *,
    plan: Route | None = None,
    replan: Route | None = None,
    step: Route | None = None,
    wrap_up: Route | None = None,
    output: Route | None = None,
    synthesis: Route | None = None,
    summary: Route | None = None,
) -> Decider:
    """A `FunctionModel` function that answers each request by its `purpose`.

    A purpose with no route fails the request with an `AssertionError` that names it, as does a
    list of turns that has run out. Planner repairs are "plan" or "replan" requests too.
    """
    given = {
        "plan": plan,
        "replan": replan,
        "step": step,
        "wrap_up": wrap_up,
        "output": output,
        "synthesis": synthesis,
        "summary": summary,
    }
    routes = {name: _decider(name, r) for name, r in given.items() if r is not None}

    def decide(request: ModelRequest) -> Turn | Awaitable[Turn]:
        route = routes.get(request.purpose)
        if route is None:
            return AssertionError(
                f"no reply for a {request.purpose!r} request: pass by_purpose({request.purpose}=...)"
            )
        return route(request)

    return decide


def _decider(purpose: str, route: Route) -> Decider:
    if callable(route):
        return route
    if isinstance(route, str | BaseException) or not isinstance(route, Sequence):
        return lambda _request: route
    queue = list(route)

    def play(_request: ModelRequest) -> Turn:
        if not queue:
            return AssertionError(f"more {purpose!r} requests than the {len(route)} scripted")
        return queue.pop(0)

    return play


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


def _drafts() -> tuple[type[BaseModel], type[BaseModel], type[BaseModel]]:
    """The planner's own reply models. Imported when first needed: `agents` sits below
    `orchestrator`, and only these helpers, which describe the orchestrator's planner, reach up."""
    from orchestrator.plans import PlanDraft, ReplanDraft, SubtaskDraft

    return SubtaskDraft, PlanDraft, ReplanDraft
