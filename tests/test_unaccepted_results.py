"""An answer that was not accepted backs nothing: not a later agent's, not the synthesis's.

Seen on Qwen2.5-Coder-0.5B through the Python API: a subtask "Find the probation period"
answered "12 months" from the parental-leave policy ("within 12 months of the birth"), and the
support rule sent it back and reported it `partial`. Its answer was then handed, under its own
task, to the next subtask, which asked the goal itself; that one repeated "12 months" from the
context, the context (its task's words beside the number) held it up, and the run was complete
with the wrong answer. A partial result now hands on what its tools showed, not its answer; an
answer given from the context alone is held to the support rule like one given from a tool's
result; and the synthesis rests only on answers that were accepted.
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from agents import AgentReport
from agents.testing import call
from agents.tools import Evidence
from orchestrator import Limits, Orchestrator, RunConfig
from orchestrator._synthesis import passages
from tests._team import Team, opening, page_search, plan, script, sub

pytestmark = pytest.mark.anyio

GUARD_S = 10  # a deadlock guard, not a timing claim
GOAL = "How long is the probation period for new employees?"
FIND = "Find the probation period for new employees."
PAGE = (
    "Partner leave. The partner of the birth parent receives 6 weeks of partner leave at full "
    "pay. It must all be taken within 12 months of the birth or the placement."
)
WRONG = "The probation period is 12 months [parental-leave]."


search_docs = page_search(PAGE, "parental-leave")


def team(second: Any) -> Team:
    """ "a" finds the wrong page and answers from it twice (so it ends partial); "b", the goal
    itself, depends on it and plays `second`; the writer repeats the wrong answer."""
    return Team(
        [plan(sub("a", goal=FIND), sub("b", "a", goal=GOAL))],
        {"a": script(call("search_docs", query="probation period"), WRONG, WRONG), "b": second},
        synthesis=[WRONG, WRONG],
    )


async def run(members: Team) -> Any:
    config = RunConfig(limits=Limits(max_replans=0), direct_questions=False)
    with anyio.fail_after(GUARD_S):
        return await Orchestrator(members.model, [search_docs], config=config).run(GOAL)


async def test_a_partial_result_hands_on_what_its_tools_showed_not_its_answer() -> None:
    members = team(script(WRONG, WRONG))
    await run(members)

    (first,) = members.of("b")[:1]
    context = opening(first)
    assert "12 months [parental-leave]" not in context
    assert "The probation period is 12 months" not in context
    assert "Not finished (partial); its answer was not accepted." in context
    assert "- [parental-leave] Partner leave." in context  # what its tools showed, by source


async def test_a_wrong_answer_repeated_from_an_unaccepted_one_is_not_complete() -> None:
    """ "b" calls no tool: it answers from its context alone, and is held to it."""
    result = await run(team(script(WRONG, WRONG)))

    assert result.status == "incomplete"
    statuses = {r.agent_id: r.status for r in result.reports}
    assert statuses == {"a": "partial", "b": "partial"}


async def test_a_wrong_answer_repeated_after_a_search_is_not_complete() -> None:
    """ "b" searches too (the same wrong page) before repeating the answer."""
    second = script(call("search_docs", query="probation"), WRONG, WRONG)
    result = await run(team(second))

    assert result.status == "incomplete"
    assert {r.agent_id: r.status for r in result.reports} == {"a": "partial", "b": "partial"}


async def test_an_answer_from_an_accepted_result_in_the_context_is_done() -> None:
    """The rule holds a context answer to the context: one an accepted result says passes."""
    right = "New employees serve a probation period of 4 months [probation]."
    members = Team(
        [plan(sub("a", goal=FIND), sub("b", "a", goal=GOAL))],
        {
            "a": script(call("search_docs", query="probation period"), right),
            "b": script("The probation period for new employees is 4 months [probation]."),
        },
        synthesis=[right],
    )
    page = "Probation. New employees serve a probation period of 4 months."
    search_docs = page_search(page, "probation")
    config = RunConfig(limits=Limits(max_replans=0), direct_questions=False)
    with anyio.fail_after(GUARD_S):
        result = await Orchestrator(members.model, [search_docs], config=config).run(GOAL)

    assert {r.agent_id: r.status for r in result.reports} == {"a": "done", "b": "done"}
    assert result.status == "complete", result.reason


def test_the_synthesis_rests_only_on_accepted_answers() -> None:
    """A done answer and every gathered excerpt back the synthesis; a partial answer does not."""
    evidence = Evidence(source="parental-leave", excerpt=PAGE)
    done = AgentReport(agent_id="a", task=FIND, status="done", answer="A.", evidence=(evidence,))
    partial = AgentReport(agent_id="b", task=GOAL, status="partial", answer=WRONG)

    shown = passages([done, partial])

    assert f"# {FIND}\nA." in shown
    assert all(WRONG not in p for p in shown if isinstance(p, str))
    assert evidence in shown
