"""A goal that is one question needs no plan (`RunConfig(direct_questions=True)`, the default),
and what a planner writes around a subtask's goal must add to it (issue 30: a 0.5B
planner split "How many days of annual leave...?" into rewordings whose expected outputs were
"1", "21" and the question copied)."""

from __future__ import annotations

import anyio
import pytest

from agents.approvals import ApprovalRequest, Decision
from agents.models import ModelRequest
from agents.testing import FunctionModel, Turn, by_purpose, task_of
from orchestrator import Orchestrator, RunConfig
from orchestrator._plan import PlanDraft, SubtaskDraft, build_plan
from orchestrator._plan_checks import one_question
from orchestrator._research import research_config
from orchestrator.testing import plan_reply, subtask, synthesis_reply

pytestmark = pytest.mark.anyio
GUARD_S = 10  # a guard against hangs, not a timing claim
QUESTION = "How many days of paid annual leave does a full-time employee get each year?"
ANSWER = "Full-time employees get 25 working days of paid annual leave a year."


@pytest.mark.parametrize(
    "goal",
    [
        QUESTION,
        "What is the hotel limit per night in London?",
        "What is each employee's yearly learning budget?",
        "  Above what amount does an expense need\n an itemised receipt?  ",
        "For how many days can an employee self-certify a sickness absence?",
        "By what date must carried-over leave days be taken?",
        "Which email address should phishing emails be forwarded to?",
        "Where does the drinking water come from?",
        "Who approves leave?",
        "What is the hotel limit for a trip to New York?",
        "How many leave days does an employee of Acme in London get?",
    ],
)
def test_one_short_question_is_one_question(goal: str) -> None:
    assert one_question(goal)


@pytest.mark.parametrize(
    "goal",
    [
        "Write a report on the leave policies.",  # not a question
        "What is the leave policy? And who approves leave?",  # two questions
        "Summarise the travel policy. What is the hotel limit?",  # two sentences
        "What is the hotel limit in London and how is it claimed?",  # a question in parts
        "Compare the hotel limits in London and Paris?",
        "What are the capitals of France and Japan?",  # two named things, two facts
        "What is the hotel limit in London, Paris or Zurich?",
        "What is the difference between partner leave and parental leave?",
        "What are the hotel limits for each of the cities we visit?",
        "Why " + "very " * 30 + "long?",  # more than 30 words
        "?",
        "How do generators work?",  # a topic, not a fact
        "Why do generators exist?",
        "What is asyncio?",
        "Explain generators?",
    ],
)
def test_a_goal_in_parts_or_a_topic_is_for_the_planner(goal: str) -> None:
    assert not one_question(goal)


def team(plans: list[Turn] | None = None) -> tuple[FunctionModel, list[str]]:
    """A planner (its requests counted in the list returned) and sub-agents that answer the
    question, or say what else they were asked."""
    planned: list[str] = []

    def planner(request: ModelRequest) -> Turn:
        planned.append(request.purpose)
        return (plans or [plan_reply(subtask("a", "Who approves leave?"))]).pop(0)

    def step(request: ModelRequest) -> Turn:
        return ANSWER if task_of(request).startswith(QUESTION) else "The line manager approves."

    model = FunctionModel(
        by_purpose(plan=planner, step=step, synthesis=synthesis_reply("Written."))
    )
    return model, planned


@pytest.mark.parametrize("config", [None, RunConfig(direct_questions=True)], ids=["default", "on"])
async def test_a_one_question_goal_runs_as_its_own_subtask_without_a_planning_call(
    config: RunConfig | None,
) -> None:
    model, planned = team()
    orch = Orchestrator(model, config=config)
    with anyio.fail_after(GUARD_S):
        result = await orch.run(QUESTION)
    assert planned == []
    assert result.status == "complete"
    assert result.answer == ANSWER
    assert [s.goal for s in result.plans[-1].subtasks] == [QUESTION]
    assert "one question" in result.plans[-1].rationale


async def test_without_direct_questions_or_for_a_goal_in_parts_the_planner_plans() -> None:
    model, planned = team()
    with anyio.fail_after(GUARD_S):
        await Orchestrator(model, config=RunConfig(direct_questions=False)).run(QUESTION)
    assert planned == ["plan"]

    model, planned = team()
    orch = Orchestrator(model, config=RunConfig(direct_questions=True))
    with anyio.fail_after(GUARD_S):
        result = await orch.run("Who approves leave, and how many days are there?")
    assert planned == ["plan"]
    assert [s.id for s in result.plans[-1].subtasks] == ["a"]


async def test_a_rejected_one_question_plan_goes_to_the_planner_with_the_feedback() -> None:
    model, planned = team([plan_reply(subtask("a", QUESTION))])
    shown: list[ApprovalRequest] = []

    async def person(request: ApprovalRequest) -> Decision:
        shown.append(request)
        return Decision.reject("split it") if len(shown) == 1 else Decision.approve()

    orch = Orchestrator(model, config=RunConfig(direct_questions=True, review="first"))
    with anyio.fail_after(GUARD_S):
        result = await orch.run(QUESTION, approver=person)
    assert len(shown) == 2
    assert planned == ["plan"]
    assert result.plans[-1].subtasks[0].id == "a"


def test_research_runs_a_one_question_topic_directly() -> None:
    assert research_config().direct_questions


@pytest.mark.parametrize(
    ("line", "kept"),
    [
        ("1", False),  # a guessed answer, not a shape
        ("21", False),
        ("EUR 240", False),
        (QUESTION, False),  # the goal copied
        ("days of paid annual leave", False),  # only the goal's words
        ("", False),
        ("A number", True),
        ("The number of days, with its unit", True),
        ("Cites the policy it comes from", True),
        ("London", False),  # a guessed name
        ("London: EUR 240, Paris: EUR 200", False),
        ("JSON", True),  # a format, not a name
        ("A Markdown table of the days", True),
    ],
)
def test_an_expected_output_or_acceptance_that_adds_nothing_is_dropped(
    line: str, kept: bool
) -> None:
    draft = PlanDraft(
        subtasks=[SubtaskDraft(id="a", goal=QUESTION, expected_output=line, acceptance=line)]
    )
    (built,) = build_plan(draft, version=1).subtasks
    assert built.expected_output == (line if kept else "")
    assert built.acceptance == (line if kept else "")
    assert ("Expected output:" in built.brief()) is kept
