"""Subtasks that are one tool call (`RunConfig(direct_calls=True)`, LLMCompiler's tasks).

The planner writes the call out; it runs as its subtask's only step, through the same tool path
as a sub-agent's calls (validation, timeouts, events, the journal), with no model call; its output
is the subtask's result; "$ID" arguments take a dependency's result; a failing or unknown call is
handled like any failed subtask; and without the option the planner is never offered calls.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agents import tool
from agents.events import ToolCalled
from agents.testing import call
from memory import Journal
from orchestrator import Limits, Orchestrator, RunConfig
from orchestrator.events import SubtaskFailed, SubtaskFinished
from tests._team import PLANNER, WRITER, Team, opening, plan, recorded_lookup, script, sub

pytestmark = pytest.mark.anyio

lookup, seen = recorded_lookup()


@tool
async def broken(key: str) -> str:
    """A tool that always fails.

    Args:
        key: Anything.
    """
    raise RuntimeError(f"no {key} today")


@pytest.fixture(autouse=True)
def _fresh() -> None:
    seen.clear()


def _orchestrator(team: Team, *, replans: int = 1, journal: Journal | None = None) -> Orchestrator:
    config = RunConfig(limits=Limits(max_replans=replans), direct_calls=True)
    return Orchestrator(team.model, [lookup, broken], config=config, journal=journal)


async def test_a_planned_call_runs_without_a_model_call_and_is_the_result() -> None:
    team = Team(
        [plan(sub("a", call=("lookup", {"key": "alpha"})), sub("b"))],
        {"b": script(call("lookup", key="beta"), "b is beta [lookup]")},
    )
    result = await _orchestrator(team).run("Find alpha and beta for the report.")
    team.assert_clean()
    assert result.status == "complete"
    assert team.of("a") == []  # no sub-agent model call for a
    (a,) = [r for r in result.reports if r.agent_id == "a"]
    assert (a.status, a.answer, a.usage.requests) == ("done", "the value of alpha", 0)
    assert sorted(seen) == ["alpha", "beta"]
    calls = [e for e in result.events if isinstance(e, ToolCalled) and e.agent_id == "a"]
    assert [c.tool for c in calls] == ["lookup"]
    # The writer reads the call's output as the subtask's result.
    (written,) = team.of(WRITER)
    assert "the value of alpha" in opening(written)


async def test_a_dollar_reference_takes_the_dependency_result() -> None:
    team = Team(
        [
            plan(
                sub("a", call=("lookup", {"key": "alpha"})),
                sub("b", "a", call=("lookup", {"key": "$a"})),
            )
        ],
        {},
    )
    result = await _orchestrator(team).run("Chain two lookups for the report.")
    team.assert_clean()
    assert result.status == "complete"
    assert seen == ["alpha", "the value of alpha"]


async def test_the_planner_is_offered_calls_with_each_tools_parameters() -> None:
    team = Team([plan(sub("a", call=("lookup", {"key": "alpha"})))], {})
    await _orchestrator(team).run("Find alpha for the report.")
    (request,) = team.of(PLANNER)
    assert request.output is not None
    draft = request.output.schema_["$defs"]["SubtaskDraft"]
    assert "call" in draft["properties"]
    assert request.output.schema_["$defs"]["CallDraft"]["properties"]["tool"] == {
        "enum": ["broken", "lookup"]
    }
    assert "- lookup(key: string): Look a fact up." in opening(request)
    assert '"$ID"' in opening(request)


async def test_without_the_option_the_planner_is_never_offered_calls() -> None:
    team = Team([plan(sub("a"))], {"a": script("a is alpha")})
    await Orchestrator(team.model, [lookup]).run("Find alpha for the report.")
    (request,) = team.of(PLANNER)
    assert request.output is not None
    assert "call" not in request.output.schema_["$defs"]["SubtaskDraft"]["properties"]
    assert "CallDraft" not in request.output.schema_["$defs"]
    assert "$ID" not in opening(request)


async def test_without_the_option_a_written_out_call_is_ignored() -> None:
    """A planner that writes a call it was not offered gets a sub-agent for that subtask."""
    team = Team(
        [plan(sub("a", call=("lookup", {"key": "alpha"})))],
        {"a": script(call("lookup", key="beta"), "a is beta [lookup]")},
    )
    result = await Orchestrator(team.model, [lookup]).run("Find alpha for the report.")
    team.assert_clean()
    assert result.status == "complete"
    assert len(team.of("a")) == 2  # the sub-agent's two turns
    assert seen == ["beta"]
    (created,) = result.plans
    assert created.subtasks[0].call is None


@pytest.mark.parametrize("field", ["call", "first_call"])
async def test_an_unknown_tool_or_a_loose_reference_goes_back_to_the_planner(field: str) -> None:
    """In a subtask's one call or its first call alike (`Subtask.first_call`)."""
    bad = {"a": {field: ("nosuch", {"key": "x"})}, "b": {field: ("lookup", {"key": "$a"})}}
    team = Team(
        [
            plan(sub("a", **bad["a"]), sub("b", **bad["b"])),
            plan(sub("a", call=("lookup", {"key": "alpha"}))),
        ],
        {},
    )
    result = await _orchestrator(team).run("Find alpha for the report.")
    team.assert_clean()
    assert result.status == "complete"
    repair = str(team.of(PLANNER)[1].messages[-1].content)
    assert "subtask a calls unknown tool nosuch" in repair
    assert "subtask b's call uses the results of a: list them in depends_on" in repair


async def test_a_failing_call_is_a_failed_subtask_that_is_replanned() -> None:
    team = Team(
        [plan(sub("a", call=("broken", {"key": "x"})))],
        {"a2": script("alpha found another way [lookup]")},
        replans=[{"remove": [], "add": [sub("a2")], "rationale": "another way"}],
    )
    result = await _orchestrator(team).run("Find alpha for the report.")
    team.assert_clean()
    assert result.status == "incomplete"  # a failed, a2 done in its place
    assert [r.status for r in result.reports if r.agent_id == "a2"] == ["done"]
    failed = [e for e in result.events if isinstance(e, SubtaskFailed)]
    assert [e.subtask_id for e in failed] == ["a"]
    (a,) = [r for r in result.reports if r.agent_id == "a"]
    assert a.status == "failed"
    assert any("broken failed:" in note and "no x today" in note for note in a.notes)
    assert team.of("a") == []


async def test_bad_arguments_fail_the_subtask_with_the_tools_own_message() -> None:
    team = Team(
        [plan(sub("a", call=("lookup", {"wrong": 1})), sub("b", call=("lookup", {"key": "b"})))],
        {},
    )
    result = await _orchestrator(team, replans=0).run("Find alpha for the report.")
    team.assert_clean()
    assert result.status == "incomplete"
    (a,) = [r for r in result.reports if r.agent_id == "a"]
    assert a.status == "failed"
    assert seen == ["b"]
    assert any("lookup failed:" in note for note in a.notes)


@pytest.mark.parametrize(("field", "requests"), [("call", 0), ("first_call", 1)])
async def test_a_journaled_planned_call_replays_without_calling_the_tool(
    tmp_path: Path, field: str, requests: int
) -> None:
    """A one-call subtask (no model call), or one that starts with the call (its answer the one
    model call), replays from the journal."""
    after = script(call("lookup", key="alpha"), "a is the value of alpha [lookup]")
    team = Team([plan(sub("a", **{field: ("lookup", {"key": "alpha"})}))], {"a": after})
    async with Journal(tmp_path / "runs.db") as journal:
        orch = _orchestrator(team, journal=journal)
        first = await orch.run("Find alpha for the report.", run_id="direct")
        assert seen == ["alpha"]
        assert len(team.of("a")) == requests
        report = await orch.replay("direct")
    assert report.ok, report.drift
    assert seen == ["alpha"]  # served from the journal
    assert report.result is not None
    assert report.result.answer == first.answer
    finished = [e.subtask_id for e in report.result.events if isinstance(e, SubtaskFinished)]
    assert finished == ["a"]


def test_the_plan_keeps_a_call_as_json_text() -> None:
    from orchestrator._plan import PlanDraft, build_plan

    draft = PlanDraft.model_validate(
        {"subtasks": [sub("a", call=("lookup", {"key": "ünï", "n": [1, 2]}))]}
    )
    (a,) = build_plan(draft, version=1).subtasks
    assert a.call is not None
    assert json.loads(a.call.arguments) == {"key": "ünï", "n": [1, 2]}
    made = a.call.call("a-call", {})
    assert (made.name, json.loads(made.arguments)) == ("lookup", {"key": "ünï", "n": [1, 2]})


@tool
async def capital(country: str) -> str:
    """The capital city of a country.

    Args:
        country: The country's name.
    """
    return {"brazil": "Brasilia", "india": "New Delhi"}[country.lower()]


async def test_a_call_answering_one_part_of_a_two_part_task_is_not_done() -> None:
    """The planner wrote one call for a question in two parts: its result covers Brazil only,
    and nothing looked at India, so it is a partial result and the run does not claim the
    answer (Qwen2.5-Coder-0.5B wrote such a plan, and "Brasilia" came back complete)."""
    question = "What are the capitals of Brazil and India?"
    team = Team([plan(sub("a", goal=question, call=("capital", {"country": "Brazil"})))], {})
    config = RunConfig(limits=Limits(max_replans=0), direct_calls=True)
    result = await Orchestrator(team.model, [capital], config=config).run(question)
    team.assert_clean()
    assert result.status != "complete"
    (a,) = result.reports
    assert a.status == "partial"
    assert any("not the task's whole answer" in n and "india" in n.lower() for n in a.notes)


async def test_a_call_answering_its_whole_task_is_done() -> None:
    question = "What is the capital of Brazil?"
    team = Team([plan(sub("a", goal=question, call=("capital", {"country": "Brazil"})))], {})
    config = RunConfig(limits=Limits(max_replans=0), direct_calls=True)
    orch = Orchestrator(team.model, [capital], config=config)
    result = await orch.run("Find the capital of Brazil for the report.")
    team.assert_clean()
    (a,) = result.reports
    assert (a.status, a.answer) == ("done", "Brasilia")
