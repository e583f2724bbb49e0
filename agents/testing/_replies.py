"""Routing a fake model's replies by what each request is for, and reading a request's task.

Every request says what it is for (`ModelRequest.purpose`): the planner asks for a "plan", a
"replan" and the final "synthesis"; a sub-agent asks for its next "step", a "wrap_up" when it is
cut short, and a compaction "summary". The planner's replies are built by `orchestrator.testing`,
checked against the planner's own schemas; its docstring routes a whole run this way.
"""

from __future__ import annotations

from collections.abc import Awaitable, Sequence

from agents.models._model import ModelRequest
from agents.testing._scripted import Decider, Turn
from memory import UserMessage

__all__ = [
    "Route",
    "by_purpose",
    "observation",
    "task_of",
]

Route = Turn | Sequence[Turn] | Decider
"""How `by_purpose` answers one purpose: the same turn every time, a list of turns played in order,
or a function of the request (sync or async)."""

_TASK_PREFIX = "Task: "


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
