"""A plan whose last subtask asks the goal itself, after every other result, has written the
run's answer: no synthesis call rewrites it, unless it fails a check a synthesis must pass."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import anyio
import pytest

from agents import AgentReport
from agents.models import ModelRequest
from agents.testing import FunctionModel, by_purpose, task_of
from orchestrator import Orchestrator, RunConfig
from orchestrator._synthesis import final_join
from orchestrator.testing import plan_reply, subtask, synthesis_reply

pytestmark = pytest.mark.anyio
GUARD_S = 10  # a guard against hangs, not a timing claim
GOAL = "Which city has more people, Lyon or Lille?"
PLANNED = RunConfig(direct_questions=False)
LYON = "Lyon has about 520,000 people."
LILLE = "Lille has about 236,000 people."
JOINED = "Lyon has more people: about 520,000 against Lille's 236,000."
WRITTEN = "Lyon, with about 520,000 people to Lille's 236,000."


def team(joined: str, *, join_needs: tuple[str, ...] = ("lyon", "lille")) -> FunctionModel:
    """A plan of two lookups and the goal itself after them (needing `join_needs`); the goal is
    answered `joined`, and a synthesis, if asked, writes `WRITTEN`."""
    answers = {"Find the population of Lyon.": LYON, "Find the population of Lille.": LILLE}

    def step(request: ModelRequest) -> str:
        task = task_of(request)
        return joined if task.startswith(GOAL) else answers[task.splitlines()[0]]

    plan = plan_reply(
        subtask("lyon", "Find the population of Lyon."),
        subtask("lille", "Find the population of Lille."),
        subtask("answer", GOAL, depends_on=list(join_needs)),
    )
    routes: dict[str, Any] = {"plan": plan, "step": step, "synthesis": synthesis_reply(WRITTEN)}
    return FunctionModel(by_purpose(**routes))


def syntheses(model: FunctionModel) -> list[ModelRequest]:
    return [r for r in model.requests if r.purpose == "synthesis"]


async def test_the_goal_asked_after_every_result_is_the_runs_answer_with_no_synthesis() -> None:
    model = team(JOINED)
    with anyio.fail_after(GUARD_S):
        result = await Orchestrator(model, config=PLANNED).run(GOAL)
    assert result.status == "complete"
    assert result.answer == JOINED
    assert syntheses(model) == []
    assert {r.agent_id: r.status for r in result.reports} == {
        "lyon": "done",
        "lille": "done",
        "answer": "done",
    }


async def test_the_goal_asked_beside_a_result_it_did_not_read_is_written_up_by_the_synthesis() -> (
    None
):
    model = team(JOINED, join_needs=("lyon",))
    with anyio.fail_after(GUARD_S):
        result = await Orchestrator(model, config=PLANNED).run(GOAL)
    assert len(syntheses(model)) == 1
    assert result.answer == WRITTEN


async def test_a_joined_answer_that_drops_a_result_is_written_up_by_the_synthesis() -> None:
    model = team("Lyon is the bigger one.")  # says nothing of what was found about Lille
    with anyio.fail_after(GUARD_S):
        result = await Orchestrator(model, config=PLANNED).run(GOAL)
    assert len(syntheses(model)) >= 1
    assert result.answer == WRITTEN


def report(agent_id: str, question: str, status: str = "done") -> AgentReport:
    return AgentReport(agent_id=agent_id, task=question, status=status, answer="x")


@pytest.mark.parametrize(
    ("needs", "found"),
    [
        ({"c": ("a", "b")}, "c"),  # joins both
        ({"c": ("b",), "b": ("a",)}, "c"),  # joins a through b
        ({"c": ("b",)}, None),  # never read a
        ({}, None),  # joins nothing, beside two results
    ],
)
def test_the_final_join_is_the_goals_subtask_that_needs_every_other_result(
    needs: Mapping[str, tuple[str, ...]], found: str | None
) -> None:
    reports = [report("a", "Find A."), report("b", "Find B."), report("c", GOAL)]
    joiner = final_join(GOAL, reports, needs)
    assert (joiner.agent_id if joiner else None) == found


def test_a_final_join_that_did_not_finish_answers_nothing() -> None:
    reports = [report("a", "Find A."), report("c", GOAL, status="partial")]
    assert final_join(GOAL, reports, {"c": ("a",)}) is None
