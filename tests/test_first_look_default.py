"""A run's first look follows its tools: a tool that offers one (`@tool(first_look=...)`, as the
corpus's `search_docs` does) is called for every sub-agent before its first decision, unless the
run's configuration names another or turns it off."""

from __future__ import annotations

import pytest

from agents import ConfigurationError, tool
from agents.executor import FirstLook
from agents.models import ModelRequest
from agents.testing import call
from agents.toolkits import Corpus, Document, research_tools
from agents.tools import Toolbox
from memory import UserMessage
from orchestrator import Orchestrator, RunConfig
from tests._team import Team, lookup, plan, script, sub

pytestmark = pytest.mark.anyio

GOAL = "How many days of annual leave do staff get?"
PAGE = "Annual leave: every member of staff receives 25 working days of paid leave a year."
CORPUS = Corpus([Document(id="hr/leave", title="Leave policy", text=PAGE)])
ANSWER = "Staff get 25 working days of paid leave a year [hr/leave]."


def _team(*, searches: bool = False) -> Team:
    """A team whose sub-agent answers at once, or (`searches`) searches first."""
    turns = (call("search_docs", query="annual leave"), ANSWER) if searches else (ANSWER,)
    return Team([plan(sub("a", goal=GOAL))], {"a": script(*turns)}, synthesis=ANSWER)


def _first_request(team: Team) -> ModelRequest:
    """The sub-agent's first request: what it decides its first step from."""
    return team.of("a")[0]


async def test_a_tool_that_offers_a_first_look_is_searched_before_the_first_decision() -> None:
    """With the corpus tools and the default configuration, the sub-agent's first request
    already holds what a search for its question found."""
    team = _team()
    result = await Orchestrator(team.model, research_tools(CORPUS)).run(GOAL)
    shown = _first_request(team).messages[2]
    assert isinstance(shown, UserMessage)
    assert shown.content.startswith("What a first search for the task found:")
    assert "25 working days" in shown.content
    assert result.status == "complete", result.reason
    assert {e.source for r in result.reports for e in r.evidence} == {"hr/leave"}


async def test_a_run_can_turn_the_first_look_off() -> None:
    """`RunConfig(first_look=None)`: the sub-agent decides from its task alone."""
    team = _team(searches=True)
    orchestrator = Orchestrator(
        team.model, research_tools(CORPUS), config=RunConfig(first_look=None)
    )
    await orchestrator.run(GOAL)
    assert [m.role for m in _first_request(team).messages] == ["system", "user"]


async def test_a_run_over_tools_that_offer_none_makes_no_first_look() -> None:
    """A lookup tool that does not declare a first look is never called unasked."""
    answer = "Staff get the value of annual leave."
    team = Team(
        [plan(sub("a", goal=GOAL))],
        {"a": script(call("lookup", key="annual leave"), answer)},
        synthesis=answer,
    )
    await Orchestrator(team.model, [lookup]).run(GOAL)
    assert [m.role for m in _first_request(team).messages] == ["system", "user"]


async def test_a_first_look_the_run_names_wins_over_the_tools() -> None:
    """`RunConfig(first_look=FirstLook(...))` calls that tool, whatever the tools offer."""
    team = _team(searches=True)
    config = RunConfig(first_look=FirstLook(tool="lookup", argument="key"))
    await Orchestrator(team.model, [*research_tools(CORPUS), lookup], config=config).run(GOAL)
    shown = _first_request(team).messages[2]
    assert isinstance(shown, UserMessage)
    assert f"the value of {GOAL}" in shown.content


def test_the_toolbox_offers_the_first_look_of_its_first_tool_that_has_one() -> None:
    """The first tool declaring a first look is the one called, with its declared argument."""

    @tool(first_look="text")
    def echo(text: str, times: int = 1) -> str:
        """Repeat text.

        Args:
            text: What to repeat.
            times: How often.
        """
        return text * times

    assert Toolbox([lookup]).first_look is None
    offered = Toolbox([lookup, *research_tools(CORPUS), echo]).first_look
    assert offered == FirstLook(tool="search_docs", argument="query")


@pytest.mark.parametrize("argument", ["missing", "times"])
def test_a_first_look_must_name_a_string_parameter(argument: str) -> None:
    """A first look whose argument is not a string parameter fails when the tool is built."""

    def echo(text: str, times: int = 1) -> str:
        """Repeat text.

        Args:
            text: What to repeat.
            times: How often.
        """
        return text * times

    with pytest.raises(ConfigurationError, match=f"first_look='{argument}' is not a string"):
        tool(first_look=argument)(echo)


def test_a_configuration_without_a_first_look_survives_its_json() -> None:
    """None (none) and "tools" (the tools') are kept apart through the journal's JSON."""
    for config in (RunConfig(first_look=None), RunConfig()):
        assert RunConfig.model_validate_json(config.model_dump_json()) == config


async def test_a_run_journaled_before_the_tools_offered_a_first_look_replays_without_one() -> None:
    """A configuration recorded with no first look (`null`, as every run before the tools
    could offer one) stays without one: its journal replays as it was recorded."""
    recorded = RunConfig().model_dump(mode="json") | {"first_look": None}
    team = _team(searches=True)
    config = RunConfig.model_validate(recorded)
    await Orchestrator(team.model, research_tools(CORPUS), config=config).run(GOAL)
    assert [m.role for m in _first_request(team).messages] == ["system", "user"]
