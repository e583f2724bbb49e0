"""An answer with nothing behind it is not done in a cited run.

Seen with Qwen2.5-Coder 0.5B on the honesty evaluation's API path (an `Orchestrator` over the
corpus tools, every default): a question that is its own one-subtask plan names no tools, so the
evidence rule did not hold; the support rule ran only over evidence it did not have. The model
answered "10" without a search, or pasted the error of its malformed search call, and the run
was `complete` in a second. Now, in a cited run, an agent that could look but cited nothing has
its answer sent back, then ends `partial`; the error text of a bad call is paor's, never an
answer.
"""

from __future__ import annotations

import anyio
import pytest

from agents import Executor
from agents._own_text import own_text
from agents.executor import AnswerCheck
from agents.models import ModelRequest
from agents.testing import FunctionModel, Turn, by_purpose, call
from orchestrator import Limits, Orchestrator, RunConfig
from orchestrator.testing import plan_reply, subtask, synthesis_reply
from tests._team import page_search

pytestmark = pytest.mark.anyio

GUARD_S = 10  # a deadlock guard, not a timing claim
QUESTION = "How many unused annual leave days can be carried over into the next year?"
POLICY = "Annual leave. Up to 5 unused days of annual leave can be carried over into the next year."


search_docs = page_search(POLICY, "annual-leave")


def guesser(answers: list[str]) -> FunctionModel:
    """Answers without calling a tool: each of `answers` in turn (the last one again)."""

    def turn(request: ModelRequest) -> Turn:
        replies = sum(m.role == "assistant" for m in request.messages)
        return answers[min(replies, len(answers) - 1)]

    return FunctionModel(turn)


async def test_a_cited_answer_with_no_source_is_sent_back_then_partial() -> None:
    """No tool called, no earlier results: even where the evidence rule is off (a subtask that
    names no tools), the cited run's answer has no passage behind it."""
    model = guesser(["10"])
    executor = Executor(model, tools=[search_docs], cite=True)

    report = await executor.run(QUESTION, require_evidence=False)

    assert report.status == "partial"
    assert report.stop_reason == "acceptance"
    sent_back = str(model.requests[1].messages[-1].content)
    assert "no source backs your answer" in sent_back


async def test_an_answer_after_looking_is_still_done() -> None:
    """The same agent, searching first and saying what the passage says, is done."""

    def turn(request: ModelRequest) -> Turn:
        if not any(m.role == "tool" for m in request.messages):
            return call("search_docs", query="carry over leave")
        return "Up to 5 unused days can be carried over into the next year [annual-leave]."

    report = await Executor(FunctionModel(turn), tools=[search_docs], cite=True).run(QUESTION)

    assert report.status == "done"


async def test_without_cite_an_answer_from_knowledge_is_kept() -> None:
    """The rule belongs to cited runs: an executor that does not cite, told that evidence is not
    needed, keeps an answer the model gives from what it knows."""
    report = await Executor(guesser(["Paris."]), tools=[search_docs]).run(
        "What is the capital of France?", require_evidence=False
    )

    assert (report.status, report.answer) == ("done", "Paris.")


@pytest.mark.parametrize("direct", [False, True], ids=["planned", "its-own-plan"])
async def test_an_orchestrator_run_is_not_complete_on_a_guess(direct: bool) -> None:
    """The API path as a user writes it: the tool declares its sources, so the run cites; the
    plan (the planner's, or the question as its own plan) names no tools; a guess leaves the run
    incomplete, never complete."""
    model = FunctionModel(
        by_purpose(
            plan=plan_reply(subtask("leave", QUESTION)),
            step=lambda request: "10",
            synthesis=synthesis_reply("10"),
        )
    )
    config = RunConfig(direct_questions=direct, limits=Limits(max_replans=0))
    with anyio.fail_after(GUARD_S):
        result = await Orchestrator(model, [search_docs], config=config).run(QUESTION)

    assert [r.status for r in result.reports] == ["partial"]
    assert result.status == "incomplete"


async def test_the_error_of_a_bad_call_is_paors_own_text() -> None:
    """What a call with invalid arguments returns, pasted back as the answer, is refused."""

    def turn(request: ModelRequest) -> Turn:
        if not any(m.role == "tool" for m in request.messages):
            return call("search_docs", properties={"query": "leave"})  # the schema, misread
        observed = str(next(m.content for m in request.messages if m.role == "tool"))
        return next(line for line in observed.splitlines() if "invalid arguments" in line)

    model = FunctionModel(turn)
    report = await Executor(model, tools=[search_docs]).run(QUESTION, require_evidence=False)

    observed = next(str(m.content) for m in model.requests[1].messages if m.role == "tool")
    error = next(line for line in observed.splitlines() if "invalid arguments" in line)
    assert "[OBSERVE]" not in error  # the line alone, as the model pasted it
    assert own_text(error)
    assert AnswerCheck().unusable(error) is not None
    assert report.status != "done"
