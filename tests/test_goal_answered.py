"""A run whose plan asked the goal itself, and got a done answer to it, is answered: what the
rest of the plan left undone is noted, not the run's status."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from agents.errors import ModelRequestError
from agents.models import ModelRequest
from agents.testing import FunctionModel, Turn, by_purpose, task_of
from orchestrator import Limits, Orchestrator, RunConfig
from orchestrator.testing import plan_reply, replan_reply, subtask, synthesis_reply

pytestmark = pytest.mark.anyio
GUARD_S = 10  # a guard against hangs, not a timing claim
GOAL = "How many days of annual leave do employees get?"
# The goal is planned with a side question, not made its own plan (`direct_questions`).
PLANNED = RunConfig(direct_questions=False)


def team(
    goal_answer: Turn | ModelRequestError, side: Turn | ModelRequestError, *, side_s: float = 0
) -> FunctionModel:
    """A plan of the goal itself and a side question; each answered as given (the side one
    after `side_s` seconds)."""

    async def step(request: ModelRequest) -> Turn | ModelRequestError:
        if task_of(request).startswith(GOAL):
            return goal_answer
        await anyio.sleep(side_s)
        return side

    routes: dict[str, Any] = {
        "plan": plan_reply(subtask("goal", GOAL), subtask("side", "Who approves leave?")),
        "step": step,
        "replan": replan_reply(rationale="nothing else to try"),
        "synthesis": synthesis_reply("Employees get 25 days; approval unknown."),
    }
    return FunctionModel(by_purpose(**routes))


async def test_the_goal_answered_makes_the_run_complete_and_its_answer_the_runs() -> None:
    model = team("Employees get 25 working days a year.", ModelRequestError("down", status=400))
    with anyio.fail_after(GUARD_S):
        result = await Orchestrator(model, config=PLANNED).run(GOAL)
    assert result.status == "complete"
    assert result.reason is None
    assert result.answer == "Employees get 25 working days a year."
    assert any(
        n.startswith("goal answered the goal itself; besides: failed: side") for n in result.notes
    )
    assert {r.agent_id: r.status for r in result.reports} == {"goal": "done", "side": "failed"}
    assert [r for r in model.requests if r.purpose == "synthesis"] == []


async def test_a_side_question_answered_alone_leaves_the_run_incomplete() -> None:
    model = team(ModelRequestError("down", status=400), "A manager approves leave.")
    with anyio.fail_after(GUARD_S):
        result = await Orchestrator(model, config=PLANNED).run(GOAL)
    assert result.status == "incomplete"
    assert result.reason is not None
    assert result.reason.startswith("failed: goal")


async def test_a_run_the_caller_stopped_stays_incomplete_even_with_the_goal_answered() -> None:
    model = team("Employees get 25 working days a year.", "A manager approves.", side_s=GUARD_S)
    orch = Orchestrator(model, config=PLANNED)
    with anyio.fail_after(GUARD_S - 1):
        async with orch.stream(GOAL) as events:
            async for event in events:
                if event.type == "subtask_finished":  # the goal's: the side one still runs
                    events.cancel("stopped by the test")
    assert events.result.status == "incomplete"
    assert events.result.reason is not None
    assert "stopped by the test" in events.result.reason


async def test_a_run_a_budget_cut_stays_incomplete_even_with_the_goal_answered() -> None:
    model = team("Employees get 25 working days a year.", "A manager approves.", side_s=GUARD_S)
    config = RunConfig(limits=Limits(deadline_s=1.0, synthesis_reserve=0.5), direct_questions=False)
    with anyio.fail_after(GUARD_S - 1):
        result = await Orchestrator(model, config=config).run(GOAL)
    assert result.status == "incomplete"
    assert result.reason is not None
    assert "deadline" in result.reason
