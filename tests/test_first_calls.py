"""Subtasks that start with a tool call the planner wrote out (`Subtask.first_call`, offered with
`RunConfig(direct_calls=True)`).

The call is the sub-agent's first turn, made for it with no model call: the agent's first request
shows it as its own call with its result, through the same tool path as any call (validation,
events, evidence, the journal); "$ID" arguments take a dependency's result; a first call beside the
call a subtask is, or one the run did not offer, is left out; and it crosses to a Temporal child
workflow. (A bad first call goes back to the planner like a bad one-call subtask, and a first call
replays from the journal like one: `tests/test_direct_calls.py`.)
"""

from __future__ import annotations

import pytest

from agents import Executor
from agents.effects import AgentCall
from agents.events import ToolCalled
from agents.executor import FirstLook
from agents.guards import Stop
from agents.testing import FunctionModel, call
from memory import AssistantMessage, ToolCall, ToolMessage
from orchestrator import Limits, Orchestrator, RunConfig
from orchestrator._plan import PlanDraft, build_plan
from orchestrator.temporal import RunInput
from orchestrator.temporal._inputs import AgentInput
from tests._team import PLANNER, Team, plan, recorded_lookup, script, sub

pytestmark = pytest.mark.anyio

lookup, seen = recorded_lookup()


@pytest.fixture(autouse=True)
def _fresh() -> None:
    seen.clear()


def _orchestrator(team: Team) -> Orchestrator:
    config = RunConfig(limits=Limits(max_replans=1), direct_calls=True)
    return Orchestrator(team.model, [lookup], config=config)


# The sub-agent's script, by its own step: turn 1 is what the planner wrote out for it.
_AFTER_ALPHA = script(call("lookup", key="alpha"), "a is the value of alpha [lookup]")


async def test_a_first_call_is_the_agents_first_turn_made_without_a_model_call() -> None:
    team = Team([plan(sub("a", first_call=("lookup", {"key": "alpha"})))], {"a": _AFTER_ALPHA})
    result = await _orchestrator(team).run("Find alpha for the report.")
    team.assert_clean()
    assert result.status == "complete"
    assert seen == ["alpha"]
    (first,) = team.of("a")  # one model call: the answer
    made = [m for m in first.messages if isinstance(m, AssistantMessage)]
    assert [[(c.name, c.arguments) for c in m.tool_calls] for m in made] == [
        [("lookup", '{"key": "alpha"}')]
    ]
    (result_shown,) = [m for m in first.messages if isinstance(m, ToolMessage)]
    assert "the value of alpha" in (result_shown.content or "")
    (a,) = result.reports
    assert (a.status, a.usage.requests) == ("done", 1)
    assert [e.tool for e in result.events if isinstance(e, ToolCalled)] == ["lookup"]
    (planned,) = result.plans[0].subtasks
    assert planned.first_call is not None
    assert planned.call is None


async def test_a_first_call_takes_a_dependencys_result() -> None:
    team = Team(
        [
            plan(
                sub("a", call=("lookup", {"key": "alpha"})),
                sub("b", "a", first_call=("lookup", {"key": "$a"})),
            )
        ],
        {"b": script(call("lookup", key="x"), "b is the value of the value of alpha [lookup]")},
    )
    result = await _orchestrator(team).run("Chain two lookups for the report.")
    team.assert_clean()
    assert result.status == "complete"
    assert seen == ["alpha", "the value of alpha"]
    assert len(team.of("b")) == 1


async def test_a_first_call_the_run_did_not_offer_is_left_out() -> None:
    """Without `direct_calls` the schema has no first call; one written anyway is ignored, and
    the sub-agent makes its own first call."""
    team = Team(
        [plan(sub("a", first_call=("lookup", {"key": "alpha"})))],
        {"a": script(call("lookup", key="beta"), "a is the value of beta [lookup]")},
    )
    result = await Orchestrator(team.model, [lookup]).run("Find alpha for the report.")
    team.assert_clean()
    (request,) = team.of(PLANNER)
    assert request.output is not None
    assert "first_call" not in request.output.schema_["$defs"]["SubtaskDraft"]["properties"]
    assert seen == ["beta"]
    assert len(team.of("a")) == 2
    assert result.plans[0].subtasks[0].first_call is None


def test_a_first_call_beside_the_call_a_subtask_is_is_left_out() -> None:
    draft = PlanDraft.model_validate(
        {
            "subtasks": [
                sub(
                    "a",
                    call=("lookup", {"key": "alpha"}),
                    first_call=("lookup", {"key": "beta"}),
                )
            ]
        }
    )
    (a,) = build_plan(draft, version=1).subtasks
    assert a.call is not None
    assert a.first_call is None


async def test_an_executors_first_call_comes_before_its_first_look() -> None:
    """`Executor.run(first_call=...)`: the call is the agent's own first turn, and the
    executor's first look is not taken; its result is evidence the answer may rest on."""
    asked: list[list[str]] = []

    def decide(request: object) -> str:
        messages = getattr(request, "messages", ())
        asked.append([m.role for m in messages])
        return "The value of alpha is known [lookup]."

    executor = Executor(
        FunctionModel(decide),
        [lookup],
        first_look=FirstLook(tool="lookup", argument="key"),
        require_evidence=True,
    )
    report = await executor.run(
        "Find alpha.",
        first_call=ToolCall(id="", name="lookup", arguments='{"key": "alpha"}'),
    )
    assert report.status == "done", report.notes
    assert seen == ["alpha"]
    assert asked == [["system", "user", "assistant", "tool"]]


def test_a_first_call_crosses_to_its_temporal_child_workflow() -> None:
    first = ToolCall(id="a-call", name="lookup", arguments='{"key": "alpha"}')
    made = AgentCall(task="Find alpha.", run_id="r", agent_id="a", first_call=first)
    given = AgentInput.model_validate_json(
        AgentInput.of(RunInput(run_id="r", goal="g"), made).model_dump_json()
    )
    assert given.call(Stop()).first_call == first
    assert given.call(Stop()).call is None
