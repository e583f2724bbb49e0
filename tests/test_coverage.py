"""The coverage rule: an answer to a task in several parts is not done while a part it names was
never looked at ("Paris" for the capitals of France and Japan, after one call for France)."""

from __future__ import annotations

import pytest

from agents import Executor, tool
from agents._coverage import unseen_names
from agents.executor import AnswerCheck
from agents.models import ModelRequest
from agents.testing import (
    FunctionModel,
    ScriptedModel,
    Turn,
    by_purpose,
    call,
    calls,
    reply,
    task_of,
)
from orchestrator import Orchestrator
from orchestrator.testing import plan_reply, replan_reply, subtask, synthesis_reply

pytestmark = pytest.mark.anyio

CAPITALS = {"france": "Paris", "japan": "Tokyo", "italy": "Rome", "australia": "Canberra"}
TWO = "What are the capitals of France and Japan?"


@tool
async def capital(country: str) -> str:
    """The capital city of a country.

    Args:
        country: The country's name.
    """
    return CAPITALS.get(country.lower(), "unknown country")


@pytest.mark.parametrize(
    ("task", "listed"),
    [
        (TWO, ["France", "Japan"]),
        ("Compare Python and Rust for command-line tools.", ["Python", "Rust"]),
        ("How many days do staff in New York and in Paris get?", ["New York", "Paris"]),
        ("What are the capitals of Egypt, Norway and Chile?", ["Egypt", "Norway", "Chile"]),
        ("Is the limit higher in London, Paris, or Zurich?", ["London", "Paris", "Zurich"]),
        # Names not listed together are a question's setting, not its parts.
        ("How many leave days does an employee of Acme in London get?", []),
        ("[goal:S6] Random wide and deep DAG: gather every fact.", []),
        ("What is the hotel limit per night in London?", []),
        ("how long is parental leave?", []),
    ],
)
def test_the_parts_of_a_task_are_the_names_it_lists_side_by_side(
    task: str, listed: list[str]
) -> None:
    assert AnswerCheck.parts(task) == listed


def test_a_part_nothing_mentions_is_uncovered_and_one_looked_at_is_not() -> None:
    uncovered = AnswerCheck.uncovered
    assert uncovered("Paris", TWO, ['{"country": "France"}', "Paris"]) == "Japan"
    assert uncovered("Paris and Tokyo", TWO, ['{"country": "France"}', "Paris"]) == "Japan"
    assert (
        uncovered("Paris and Tokyo", TWO, ['{"country": "France"}', '{"country": "Japan"}']) is None
    )
    assert uncovered("France: Paris. Japan: Tokyo.", TWO, []) is None
    # One name is not a task in several parts: the other rules judge it.
    assert uncovered("Rome", "What is the capital of France?", ["Rome"]) is None
    assert uncovered("25 days", "How long is leave at Acme in London?", []) is None


async def test_a_part_never_looked_at_is_sent_back_and_a_second_look_makes_it_done() -> None:
    model = ScriptedModel(
        [
            call("capital", country="France"),
            reply("Paris"),
            call("capital", country="Japan"),
            reply("Paris and Tokyo"),
        ]
    )
    report = await Executor(model, tools=[capital]).run(TWO)
    model.assert_complete()
    assert report.status == "done"
    assert report.answer == "Paris and Tokyo"
    told = model.requests[2].messages[-1].content or ""
    assert "says nothing about Japan" in told


async def test_an_answer_that_leaves_a_part_out_twice_is_partial_and_says_which() -> None:
    model = ScriptedModel([call("capital", country="France"), reply("Paris"), reply("Paris.")])
    report = await Executor(model, tools=[capital]).run(TWO)
    assert report.status == "partial"
    assert "says nothing about Japan" in report.notes[-1]


async def test_an_answer_naming_a_part_but_not_what_the_tool_found_is_sent_back() -> None:
    """Qwen2.5-Coder-0.5B answered "Paris, Japan" after the tool said Tokyo for Japan: the
    answer names every part yet says nothing found about one of them."""
    both = calls(("capital", {"country": "France"}), ("capital", {"country": "Japan"}))
    model = ScriptedModel([both, reply("Paris, Japan"), reply("Paris and Tokyo")])
    report = await Executor(model, tools=[capital]).run(TWO)
    model.assert_complete()
    assert report.status == "done"
    told = model.requests[2].messages[-1].content or ""
    assert "says nothing your tools found about Japan" in told


async def test_an_answer_that_names_a_part_but_drops_its_finding_twice_is_partial() -> None:
    both = calls(("capital", {"country": "France"}), ("capital", {"country": "Japan"}))
    model = ScriptedModel([both, reply("Paris, Japan"), reply("Paris, Japan")])
    report = await Executor(model, tools=[capital]).run(TWO)
    assert report.status == "partial"
    assert "says nothing your tools found about Japan" in report.notes[-1]


async def test_parts_looked_up_in_one_turn_are_covered() -> None:
    model = ScriptedModel(
        [
            calls(("capital", {"country": "France"}), ("capital", {"country": "Japan"})),
            reply("Paris and Tokyo"),
        ]
    )
    report = await Executor(model, tools=[capital]).run(TWO)
    assert report.status == "done"


async def test_an_answer_with_nothing_looked_at_is_not_held_to_the_rule() -> None:
    """With no tools and no results given, there is nothing a part could be found in."""
    report = await Executor(ScriptedModel([reply("Paris and Tokyo")])).run(TWO)
    assert report.status == "done"


async def test_a_run_whose_plan_left_a_part_out_is_incomplete_and_says_which() -> None:
    """The planner asked only about France: every subtask is done and the synthesis is fine,
    yet no one looked at Japan, so the run is not complete."""
    model = FunctionModel(
        by_purpose(
            plan=plan_reply(subtask("a", "What is the capital of France?")),
            step=[call("capital", country="France"), reply("The capital of France is Paris.")],
            synthesis=synthesis_reply("The capital of France is Paris."),
        )
    )
    result = await Orchestrator(model, tools=[capital]).run(TWO)
    assert [r.status for r in result.reports] == ["done"]
    assert result.status == "incomplete"
    assert result.reason == "nothing in the run looked at Japan, which the goal asks about"


async def test_a_run_that_looked_at_every_part_is_complete() -> None:
    model = FunctionModel(
        by_purpose(
            plan=plan_reply(
                subtask("a", "What is the capital of France?"),
                subtask("b", "What is the capital of Japan?"),
            ),
            step=_look_then_answer,
            synthesis=synthesis_reply("Paris and Tokyo."),
        )
    )
    result = await Orchestrator(model, tools=[capital]).run(TWO)
    assert result.status == "complete", result.reason


def _look_then_answer(request: ModelRequest) -> Turn:
    """A sub-agent that calls `capital` for the country its task names, then answers."""
    country = task_of(request).removeprefix("What is the capital of ").rstrip("?")
    if request.messages[-1].role != "tool":
        return call("capital", country=country)
    return reply(f"The capital of {country} is {CAPITALS[country.lower()]}.")


def test_a_result_the_answer_draws_on_covers_its_part() -> None:
    results = [
        ("What is the capital of France?", "Paris"),
        ("What is the capital of Japan?", "Tokyo"),
    ]
    dropped = AnswerCheck.dropped
    assert dropped("Paris and Tokyo.", TWO, results) is None
    assert dropped("France: Paris. Japan: Tokyo.", TWO, results) is None
    assert dropped("Paris.", TWO, results) == "Japan"
    # Naming a part is not saying what was found (Qwen2.5-Coder-0.5B's "Paris, Japan").
    assert dropped("Paris, Japan.", TWO, results) == "Japan"
    # A result that adds nothing to the task's own words gives a named part nothing to say.
    empty = [results[0], (results[1][0], "The capital of Japan.")]
    assert dropped("Paris; Japan: none found.", TWO, empty) is None
    assert dropped("Paris.", TWO, empty) == "Japan"
    # A part no result is about is not the synthesis's to say (the run's note says it).
    assert dropped("Paris.", TWO, results[:1]) is None


def _two_capitals(*syntheses: str) -> FunctionModel:
    return FunctionModel(
        by_purpose(
            plan=plan_reply(
                subtask("a", "What is the capital of France?"),
                subtask("b", "What is the capital of Japan?"),
            ),
            step=_look_then_answer,
            synthesis=[synthesis_reply(text) for text in syntheses],
        )
    )


async def test_a_synthesis_that_drops_a_part_is_sent_back() -> None:
    model = _two_capitals("The capital of France is Paris.", "Paris and Tokyo.")
    result = await Orchestrator(model, tools=[capital]).run(TWO)
    assert result.status == "complete", result.reason
    assert result.answer == "Paris and Tokyo."
    retry = [r for r in model.requests if r.purpose == "synthesis"][-1]
    assert "says nothing the results found about Japan" in (retry.messages[-1].content or "")


async def test_a_synthesis_that_drops_a_part_twice_is_not_the_answer() -> None:
    model = _two_capitals("The capital of France is Paris.", "The capital of France is Paris.")
    result = await Orchestrator(model, tools=[capital]).run(TWO)
    assert result.status == "incomplete"
    assert "says nothing the results found about Japan" in (result.reason or "")
    assert "Tokyo" in result.answer  # the results as they were reported


async def test_a_one_question_goal_is_answered_from_a_tool_not_from_memory() -> None:
    """A question for one fact runs as its own subtask, without a plan; with tools to look it
    up, an answer resting on none is sent back ("Sydney" from a small model's memory)."""
    question = "What is the capital of Australia?"
    model = FunctionModel(
        by_purpose(
            step=[reply("Sydney"), call("capital", country="Australia"), reply("Canberra")],
            synthesis=synthesis_reply("unused"),
        )
    )
    result = await Orchestrator(model, tools=[capital]).run(question)
    assert result.status == "complete", result.reason
    assert result.answer == "Canberra"
    remembered = FunctionModel(
        by_purpose(
            step=[reply("Sydney"), reply("Sydney.")],
            replan=replan_reply(rationale="nothing else to try"),
            synthesis=synthesis_reply("Sydney."),
        )
    )
    result = await Orchestrator(remembered, tools=[capital]).run(question)
    assert result.status != "complete"
    assert "no tool result backs your answer" in " ".join(result.reports[0].notes)


@pytest.mark.parametrize(
    ("answer", "unseen"),
    [
        ("Sydney", ["Sydney"]),
        ("The capital of Australia is Sydney.", ["Sydney"]),
        ("Canberra", []),
        ("Based on the results, the capital is Canberra.", []),  # an opening word is no name
        ("Paris, Tokyo", ["Paris", "Tokyo"]),  # an answer of names alone: each is one
        ("Yes", []),
        ("Staff get 25 days [hr/leave].", []),  # citations are not names
        ("Canberra's the capital.", []),  # a possessive is its name
        ("The harbour is Sydney's, not Canberra's.", ["Sydney's"]),
    ],
)
def test_a_name_nothing_showed_is_unseen(answer: str, unseen: list[str]) -> None:
    shown = ["What is the capital of Australia?", '[OBSERVE] capital("Australia") ok\nCanberra']
    assert unseen_names(answer, shown) == unseen


async def test_a_name_from_memory_against_the_tool_is_sent_back_then_partial() -> None:
    """Told "Canberra" by the tool, Qwen2.5-Coder-0.5B answered "Sydney"."""
    task = "What is the capital of Australia?"
    model = ScriptedModel([call("capital", country="Australia"), reply("Sydney"), reply("Sydney")])
    report = await Executor(model, tools=[capital]).run(task)
    assert report.status == "partial"
    assert "names what no tool result shows (Sydney)" in report.notes[-1]
    fixed = ScriptedModel(
        [call("capital", country="Australia"), reply("Sydney"), reply("Canberra")]
    )
    assert (await Executor(fixed, tools=[capital]).run(task)).status == "done"


def test_a_synthesis_naming_what_no_result_shows_is_no_answer() -> None:
    prompt = (
        "Goal: What are the capitals of France and Japan?\n\n## a (done)\nParis\n## b (done)\nTokyo"
    )
    check = AnswerCheck()
    assert check.unusable("Paris and Tokyo.", task=TWO, seen=[prompt]) is None
    assert "(Kyoto)" in (check.unusable("Paris and Kyoto.", task=TWO, seen=[prompt]) or "")
