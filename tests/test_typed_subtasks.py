"""Typed subtasks (issue 32, item 2): a subtask with an output schema gives its result as an
object of it, and its dependents receive that object as data, not as prose."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from agents.approvals import ApprovalRequest, Decision
from agents.effects import AgentCall
from agents.guards import Stop
from agents.models import ModelRequest
from agents.testing import FunctionModel, Turn, by_purpose, task_of
from memory import Journal
from orchestrator import Orchestrator, Plan, RunConfig
from orchestrator.cli._inspect import render_run
from orchestrator.temporal import RunInput
from orchestrator.temporal._inputs import AgentInput
from orchestrator.testing import plan_reply, subtask

pytestmark = pytest.mark.anyio
GUARD_S = 10  # a guard against hangs, not a timing claim
FLIGHT = "Find the cheapest flight from Lyon to Lisbon."
HOTEL = "Find a hotel in Lisbon for the night the flight lands."
PRICE = {
    "type": "object",
    "properties": {"flight": {"type": "string"}, "price_eur": {"type": "number"}},
    "required": ["flight", "price_eur"],
}


def team(
    plans: list[Turn], output: str | list[str] = '{"flight": "LX101", "price_eur": 89}'
) -> FunctionModel:
    """A planner playing `plans`; a flight agent and a hotel agent; the flight agent's answer
    written as `output`."""

    def step(request: ModelRequest) -> Turn:
        if task_of(request).startswith(FLIGHT):
            return "The cheapest is LX101 at 89 EUR."
        return "Hotel Baixa, EUR 120 a night."

    return FunctionModel(
        by_purpose(plan=plans, step=step, output=output, synthesis="Fly LX101, stay at Baixa.")
    )


def typed_plan(schema: dict[str, Any] = PRICE) -> Turn:
    return plan_reply(
        subtask("flight", FLIGHT, output_schema=schema),
        subtask("hotel", HOTEL, depends_on=["flight"]),
    )


def hotel_task(model: FunctionModel) -> str:
    (first, *_) = [r for r in model.requests if r.purpose == "step" and HOTEL in task_of(r)]
    return "\n".join(m.content or "" for m in first.messages if m.content)


async def test_a_typed_subtask_gives_an_object_and_its_dependent_receives_it_as_data() -> None:
    model = team([typed_plan()])
    orch = Orchestrator(model, config=RunConfig(typed_subtasks=True))
    with anyio.fail_after(GUARD_S):
        result = await orch.run("Plan my trip to Lisbon.")
    assert result.status == "complete"
    flight = next(r for r in result.reports if r.agent_id == "flight")
    assert flight.output == {"flight": "LX101", "price_eur": 89}
    assert 'as data: {"flight":"LX101","price_eur":89}' in hotel_task(model)
    hotel = next(r for r in result.reports if r.agent_id == "hotel")
    assert hotel.output is None  # no schema: prose, as before
    (planned,) = [r for r in model.requests if r.purpose == "plan"]
    assert planned.output is not None
    assert "output_schema" in json.dumps(planned.output.schema_)
    assert '"output_schema"' in (planned.messages[1].content or "")


async def test_a_typed_subtask_whose_object_never_validates_is_partial_with_the_reason() -> None:
    model = team([typed_plan()], output='{"flight": "LX101"}')
    orch = Orchestrator(model, config=RunConfig(typed_subtasks=True))
    with anyio.fail_after(GUARD_S):
        result = await orch.run("Plan my trip to Lisbon.")
    flight = next(r for r in result.reports if r.agent_id == "flight")
    assert flight.status == "partial"
    assert any("price_eur" in note for note in flight.notes)
    assert result.status == "incomplete"


async def test_an_output_schema_that_is_not_a_json_schema_goes_back_to_the_planner() -> None:
    model = team([typed_plan({"type": "objekt"}), typed_plan()])
    orch = Orchestrator(model, config=RunConfig(typed_subtasks=True))
    with anyio.fail_after(GUARD_S):
        result = await orch.run("Plan my trip to Lisbon.")
    repair = [r for r in model.requests if r.purpose == "plan"][1]
    assert "flight's output_schema is not a valid JSON Schema" in (
        repair.messages[-1].content or ""
    )
    assert result.plans[0].subtasks[0].output_schema == PRICE


async def test_without_typed_subtasks_the_planner_is_not_offered_schemas() -> None:
    model = team([typed_plan()])
    with anyio.fail_after(GUARD_S):
        result = await Orchestrator(model).run("Plan my trip to Lisbon.")
    (planned,) = [r for r in model.requests if r.purpose == "plan"]
    assert planned.output is not None
    assert "output_schema" not in json.dumps(planned.output.schema_)
    assert result.plans[0].subtasks[0].output_schema is None  # written anyway: dropped
    assert not [r for r in model.requests if r.purpose == "output"]


async def test_a_person_pins_an_output_schema_by_editing_the_plan() -> None:
    model = team([plan_reply(subtask("flight", FLIGHT), subtask("hotel", HOTEL))])

    async def person(request: ApprovalRequest) -> Decision:
        proposed = Plan.model_validate(request.plan)
        pinned = proposed.subtasks[0].model_copy(update={"output_schema": PRICE})
        return Decision.edit(
            proposed.model_copy(update={"subtasks": (pinned, *proposed.subtasks[1:])})
        )

    orch = Orchestrator(model, config=RunConfig(review="first"))
    with anyio.fail_after(GUARD_S):
        result = await orch.run("Plan my trip to Lisbon.", approver=person)
    flight = next(r for r in result.reports if r.agent_id == "flight")
    assert flight.output == {"flight": "LX101", "price_eur": 89}


async def test_a_typed_subtask_is_journaled_and_replays_without_drift(tmp_path: Path) -> None:
    model = team([typed_plan()])
    async with Journal(tmp_path / "runs.db") as journal:
        orch = Orchestrator(model, config=RunConfig(typed_subtasks=True), journal=journal)
        with anyio.fail_after(GUARD_S):
            result = await orch.run("Plan my trip to Lisbon.")
            replayed = await orch.replay(result.run_id)
            info = await journal.run(result.run_id)
            records = await journal.load(result.run_id)
    assert info is not None
    assert '  flight: done: {"flight":"LX101","price_eur":89}' in render_run(info, records)
    assert replayed.ok, replayed.drift
    assert replayed.result is not None
    flight = next(r for r in replayed.result.reports if r.agent_id == "flight")
    assert flight.output == {"flight": "LX101", "price_eur": 89}


def test_a_subtask_schema_crosses_to_its_temporal_child_workflow() -> None:
    call = AgentCall(task=FLIGHT, run_id="r", agent_id="flight", output_schema=PRICE)
    given = AgentInput.model_validate_json(
        AgentInput.of(RunInput(run_id="r", goal="g"), call).model_dump_json()
    )
    assert given.call(Stop()).output_schema == PRICE
    assert given.call(Stop()).signals  # `report_issue` offered unless the run turns it off


def test_a_sub_agent_without_report_issue_has_none_in_its_temporal_child_workflow() -> None:
    call = AgentCall(task=FLIGHT, run_id="r", agent_id="flight", signals=False)
    given = AgentInput.model_validate_json(
        AgentInput.of(RunInput(run_id="r", goal="g"), call).model_dump_json()
    )
    assert not given.call(Stop()).signals
