"""A run over tools that declare their sources holds its answers to them by default.

`RunConfig(cite=None)`, the default: when a tool on the menu has an `evidence` hook (the corpus
tools, a hook of one's own), the run asks for citations and an answer is done or complete only
when a passage the tools showed says it (`agents.executor.unsupported`); over tools with no
sources there is no passage to hold an answer to, and the rule stays off. True or False choose.
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from agents import Tool
from agents.testing import call
from agents.tools import Toolbox
from orchestrator import Limits, Orchestrator, RunConfig
from tests._team import Team, lookup, page_search, plan, script, sub

pytestmark = pytest.mark.anyio

GUARD_S = 10  # a deadlock guard, not a timing claim
TASK = "How many days of annual leave does a full-time employee get?"
PAGE = (
    "Annual leave. A full-time employee gets 25 working days of paid annual leave a year. "
    "Requests are answered within 12 days."
)


read_policy = page_search(PAGE, "leave-policy", name="read_policy")


def team(answer: str) -> Team:
    """One subtask, the goal itself: read the policy, then answer `answer` (twice, as a model
    told its answer was not accepted might); the writer says the same."""
    return Team(
        [plan(sub("a", goal=TASK))],
        {"a": script(call("read_policy", query="leave"), answer, answer)},
        synthesis=[answer, answer],
    )


async def run(answer: str, tools: list[Tool], cite: bool | None = None) -> Any:
    """The run, with no replans (a rejected answer would otherwise ask for one)."""
    config = RunConfig(limits=Limits(max_replans=0), cite=cite)
    with anyio.fail_after(GUARD_S):
        return await Orchestrator(team(answer).model, tools, config=config).run(TASK)


def test_a_toolbox_knows_whether_its_tools_declare_their_sources() -> None:
    assert Toolbox([read_policy]).sourced
    assert Toolbox([read_policy, lookup]).sourced
    assert not Toolbox([lookup]).sourced
    assert not Toolbox([]).sourced


async def test_an_answer_no_source_says_is_not_complete_over_sourced_tools() -> None:
    """ "12" is a number the page shows, but not what it says about annual leave: with the
    default, the run is incomplete and says why; the same run not held to passages is complete."""
    held = await run("12 [leave-policy]", [read_policy])
    unheld = await run("12 [leave-policy]", [read_policy], cite=False)

    assert held.status == "incomplete"
    assert held.reason
    (report,) = held.reports
    assert report.status == "partial"
    assert unheld.status == "complete"


async def test_an_answer_its_source_says_is_complete_over_sourced_tools() -> None:
    answer = "A full-time employee gets 25 working days of paid annual leave a year [leave-policy]."
    result = await run(answer, [read_policy])
    assert result.status == "complete", result.reason
    assert result.answer == answer


async def test_a_run_over_tools_without_sources_is_not_held_to_passages() -> None:
    """No tool declares sources: the default leaves the rule off (there is no passage)."""
    lookup_team = Team(
        [plan(sub("a", goal=TASK))],
        {"a": script(call("lookup", key="leave"), "It is the value of leave.")},
        synthesis="It is the value of leave.",
    )
    with anyio.fail_after(GUARD_S):
        result = await Orchestrator(lookup_team.model, [lookup]).run(TASK)
    assert result.status == "complete", result.reason
