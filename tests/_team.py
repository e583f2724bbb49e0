"""A fake team for orchestrator tests: one `FunctionModel` that plays planner, sub-agents and writer.

Each request says what it is for (`ModelRequest.purpose`): "plan" and "replan" come from the
planner, "synthesis" from the final writer, and every other request from a sub-agent, recognised
by the goal of its task (`agents.testing.task_of`). Each kind of request is answered from its own
script, and every request is kept under the role that made it, so a test can assert on what each
member of the team was asked. Subtasks are built with `agents.testing.subtask`, so a field the
planner does not know fails the test that writes it.
"""

from __future__ import annotations

import inspect
import json
from collections import defaultdict, deque
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from agents import Tool, tool
from agents.models import ModelRequest
from agents.testing import FunctionModel, Turn, reply, task_of
from memory import AssistantMessage, UserMessage
from orchestrator.testing import subtask

Behaviour = Callable[[ModelRequest], Turn | Awaitable[Turn]]
"""How one sub-agent answers each of its requests."""

PlannerTurn = dict[str, Any] | str | BaseException
"""A planner reply: a dict is sent as JSON, a string verbatim, an exception is raised."""

PLANNER = "planner"
WRITER = "writer"


def page_search(page: str, source: str, *, name: str = "search_docs") -> Tool:
    """A search tool that always finds `page`, and declares it as coming from `source` (an
    `evidence` hook, as the corpus tools have): a run over it cites, and is held to the page."""

    def cite(args: dict[str, Any], value: Any) -> list[tuple[str, str]]:
        return [(source, str(value))]

    @tool(name=name, evidence=cite)
    async def search(query: str) -> str:
        """Search the documents.

        Args:
            query: A few words.
        """
        return page

    return search


@tool
async def lookup(key: str) -> str:
    """Look a fact up.

    Args:
        key: What to look up.
    """
    return f"the value of {key}"


def recorded_lookup() -> tuple[Tool, list[str]]:
    """A tool like `lookup`, and the keys it is called with, in order (clear them between
    tests)."""
    seen: list[str] = []

    @tool(name="lookup")
    async def look(key: str) -> str:
        """Look a fact up.

        Args:
            key: What to look up.
        """
        seen.append(key)
        return f"the value of {key}"

    return look, seen


def sub(subtask_id: str, *depends_on: str, **fields: Any) -> dict[str, Any]:
    """A subtask as the planner model writes it; its goal defaults to "Find fact <id>."."""
    return subtask(
        subtask_id, fields.pop("goal", goal(subtask_id)), depends_on=depends_on, **fields
    )


def goal(subtask_id: str) -> str:
    """The default goal of subtask `subtask_id`."""
    return f"Find fact {subtask_id}."


def plan(*subtasks: dict[str, Any], rationale: str = "") -> dict[str, Any]:
    """A plan reply."""
    return {"subtasks": list(subtasks), "rationale": rationale}


def script(*turns: Turn) -> Behaviour:
    """A sub-agent that plays `turns` by its own step (the assistant messages it has sent)."""

    def play(request: ModelRequest) -> Turn:
        step = sum(isinstance(m, AssistantMessage) for m in request.messages)
        if step >= len(turns):
            raise AssertionError(
                f"sub-agent asked for turn {step + 1}; its script has {len(turns)}"
            )
        return turns[step]

    return play


def opening(request: ModelRequest) -> str:
    """The user message a request opens with: a sub-agent's task (its goal and its dependencies'
    results), or the planner's or the writer's prompt."""
    message = request.messages[1]
    assert isinstance(message, UserMessage)
    return message.content


class Team:
    """Planner, sub-agents and writer behind one `FunctionModel`.

    Args:
        plans: The planner's replies to plan requests, in order (repairs included).
        agents: Each sub-agent's behaviour, by subtask id.
        replans: The planner's replies to replan requests, in order.
        synthesis: The writer's reply, or its replies in order (a list).
        planner_tokens: (prompt, completion) tokens each planner reply reports.
    """

    def __init__(
        self,
        plans: Iterable[PlannerTurn],
        agents: dict[str, Behaviour],
        *,
        replans: Iterable[PlannerTurn] = (),
        synthesis: Turn | list[Turn] = "The final answer.",
        planner_tokens: tuple[int, int] = (10, 5),
    ) -> None:
        self.plans = deque(plans)
        self.replans = deque(replans)
        self.agents = agents
        self.synthesis = synthesis
        self._writes = deque(synthesis) if isinstance(synthesis, list) else None
        self.planner_tokens = planner_tokens
        self.asked: defaultdict[str, list[ModelRequest]] = defaultdict(list)
        self.surprises: list[str] = []
        self._goals = {goal(i): i for i in agents}
        for turn in (*self.plans, *self.replans):
            if isinstance(turn, dict):
                for item in (*turn.get("subtasks", ()), *turn.get("add", ())):
                    self._goals.setdefault(item["goal"], item["id"])
        self.model = FunctionModel(self._decide, name="team")

    def of(self, who: str) -> list[ModelRequest]:
        """The requests made by `who`: a subtask id, PLANNER or WRITER."""
        return self.asked[who]

    def assert_clean(self) -> None:
        """Fail if a request came that no script was ready for."""
        assert not self.surprises, self.surprises

    async def _decide(self, request: ModelRequest) -> Turn:
        if request.purpose in ("plan", "replan"):
            self.asked[PLANNER].append(request)
            queue = self.plans if request.purpose == "plan" else self.replans
            return self._planner_turn(queue, request.purpose)
        if request.purpose == "synthesis":
            self.asked[WRITER].append(request)
            if self._writes is None:
                assert not isinstance(self.synthesis, list)
                return self.synthesis
            return self._writes.popleft() if self._writes else self._surprise("a writer request")
        who = self._goals.get(_task(request))
        if who is None:
            return self._surprise(f"a sub-agent with an unknown task: {opening(request)!r}")
        self.asked[who].append(request)
        turn = self.agents[who](request)
        return await turn if inspect.isawaitable(turn) else turn

    def _planner_turn(self, queue: deque[PlannerTurn], name: str) -> Turn:
        if not queue:
            return self._surprise(f"an unscripted {name} request")
        turn = queue.popleft()
        if isinstance(turn, BaseException):
            return turn
        text = turn if isinstance(turn, str) else json.dumps(turn)
        prompt, completion = self.planner_tokens
        return reply(text, prompt_tokens=prompt, completion_tokens=completion)

    def _surprise(self, what: str) -> Turn:
        self.surprises.append(what)
        return AssertionError(what)


def _task(request: ModelRequest) -> str:
    """The goal a sub-agent's request is about ("" for a request with no task)."""
    try:
        return task_of(request)
    except ValueError:
        return ""
