"""Typed outputs: `orch.run(goal, output_type=T)` gives `result.output`, a validated T, written by
the synthesis under the type's JSON schema; a reply that does not validate goes back with the
errors, then the run ends incomplete, never with an exception."""

from __future__ import annotations

import dataclasses
import datetime
import json
import sys
import typing
from pathlib import Path
from typing import Any

import anyio
import pytest
from pydantic import BaseModel
from typing_extensions import TypedDict

from agents import ConfigurationError, Executor, tool
from agents.errors import ModelRequestError
from agents.models import ModelRequest, ModelResponse, OutputSpec
from agents.testing import FunctionModel, by_purpose, call, reply
from memory import Journal, UserMessage
from orchestrator import Orchestrator
from orchestrator.cli._inspect import render_run
from orchestrator.testing import plan_reply, replan_reply, subtask

pytestmark = pytest.mark.anyio
GUARD_S = 10  # a guard against hangs, not a timing claim


class Flight(BaseModel):
    number: str
    price_eur: int


@dataclasses.dataclass
class City:
    name: str
    days: int


class Stop(TypedDict):
    city: str


@tool
def lookup(key: str) -> str:
    """Look a key up."""
    return f"{key}: LX101 at 89 EUR"


def _found(request: ModelRequest) -> ModelResponse:
    """The agent looks the flight up, then says what it found."""
    if any(m.role == "tool" for m in request.messages):
        return reply("The cheapest is LX101 at 89 EUR.")
    return call("lookup", key="cheapest flight from Lyon to Lisbon")


def team(*synthesis: str) -> FunctionModel:
    """A one-subtask run whose agent found a flight, and whose synthesis replies `synthesis` in
    turn (the last one again if asked more often)."""
    replies = list(synthesis)

    def write(_request: ModelRequest) -> str:
        return replies.pop(0) if len(replies) > 1 else replies[0]

    routes: dict[str, Any] = {
        "plan": plan_reply(subtask("a", "Find the cheapest flight from Lyon to Lisbon.")),
        "step": _found,
        "synthesis": write,
    }
    return FunctionModel(by_purpose(**routes))


def synthesis_requests(model: FunctionModel) -> list[ModelRequest]:
    return [r for r in model.requests if r.purpose == "synthesis"]


async def test_a_run_returns_its_answer_as_an_object_of_the_type() -> None:
    model = team('{"number": "LX101", "price_eur": 89}')
    with anyio.fail_after(GUARD_S):
        result = await Orchestrator(model, [lookup]).run("Book a flight.", output_type=Flight)
    assert result.status == "complete"
    assert result.output == Flight(number="LX101", price_eur=89)
    assert json.loads(result.answer) == {"number": "LX101", "price_eur": 89}
    (request,) = synthesis_requests(model)
    assert request.output is not None
    assert request.output.name == "Flight"
    assert request.output.schema_["required"] == ["number", "price_eur"]


async def test_a_reply_that_does_not_validate_goes_back_with_the_errors() -> None:
    model = team('{"number": "LX101"}', '{"number": "LX101", "price_eur": 89}')
    with anyio.fail_after(GUARD_S):
        result = await Orchestrator(model, [lookup]).run("Book a flight.", output_type=Flight)
    assert result.status == "complete"
    assert result.output == Flight(number="LX101", price_eur=89)
    _, second = synthesis_requests(model)
    told = second.messages[-1]
    assert isinstance(told, UserMessage)
    assert "price_eur: Field required" in told.content


async def test_an_object_never_valid_ends_the_run_incomplete_with_the_reason() -> None:
    model = team("not json at all")
    with anyio.fail_after(GUARD_S):
        result = await Orchestrator(model, [lookup]).run("Book a flight.", output_type=Flight)
    assert result.status == "incomplete"
    assert result.output is None
    assert result.reason is not None
    assert "no valid Flight: the reply is not JSON" in result.reason
    assert len(synthesis_requests(model)) == 3  # the first reply, then two with the errors


async def test_a_number_no_result_shows_is_not_accepted() -> None:
    """The object rests on the results: an invented price goes back like a schema error."""
    model = team('{"number": "LX101", "price_eur": 45}', '{"number": "LX101", "price_eur": 89}')
    with anyio.fail_after(GUARD_S):
        result = await Orchestrator(model, [lookup]).run("Book a flight.", output_type=Flight)
    assert result.output == Flight(number="LX101", price_eur=89)
    told = synthesis_requests(model)[1].messages[-1]
    assert "45" in (told.content or "")


async def test_an_object_whose_content_never_passes_is_kept_and_the_run_incomplete() -> None:
    model = team('{"number": "LX101", "price_eur": 45}')
    with anyio.fail_after(GUARD_S):
        result = await Orchestrator(model, [lookup]).run("Book a flight.", output_type=Flight)
    assert result.status == "incomplete"
    assert result.output == Flight(number="LX101", price_eur=45)  # the best there is
    assert result.reason is not None
    assert "no valid Flight: numbers nothing you were given shows: 45" in result.reason


async def test_lists_primitives_dataclasses_and_typed_dicts_are_outputs_too() -> None:
    model = team('{"output": [{"name": "Lisbon", "days": 89}]}')
    with anyio.fail_after(GUARD_S):
        result = await Orchestrator(model, [lookup]).run("Plan it.", output_type=list[City])
    assert result.output == [City(name="Lisbon", days=89)]
    schema = synthesis_requests(model)[0].output
    assert schema is not None
    assert schema.schema_["required"] == ["output"]  # a list is asked for inside an object
    assert OutputSpec(int).parse('{"output": 89}') == 89
    assert OutputSpec(Stop).parse('{"city": "Lyon"}') == {"city": "Lyon"}
    assert OutputSpec[int | str](int | str).parse('{"output": "LX101"}') == "LX101"


class Opaque:
    """A class pydantic cannot describe."""


class OldStop(typing.TypedDict):  # typing's TypedDict: pydantic needs typing_extensions' on 3.11
    city: str


async def test_a_type_without_a_schema_is_refused_before_any_work() -> None:
    model = team("{}")
    orch = Orchestrator(model, [lookup])
    with pytest.raises(ConfigurationError, match="output_type Opaque has no JSON schema"):
        orch.stream("Book a flight.", output_type=Opaque)
    if sys.version_info < (3, 12):  # pydantic takes typing's own TypedDict from 3.12 on
        with pytest.raises(ConfigurationError, match="output_type OldStop has no JSON") as e:
            orch.stream("Book a flight.", output_type=OldStop)
        assert "\n" not in str(e.value)
    assert model.requests == []


async def test_a_typed_run_is_journaled_and_replays_without_drift(tmp_path: Path) -> None:
    model = team('{"number": "LX101", "price_eur": 89}')
    async with Journal(tmp_path / "runs.db") as journal:
        orch = Orchestrator(model, [lookup], journal=journal)
        with anyio.fail_after(GUARD_S):
            result = await orch.run("Book a flight.", output_type=Flight)
            info = await journal.run(result.run_id)
            records = await journal.load(result.run_id)
            replayed = await orch.replay(result.run_id, output_type=Flight)
    assert info is not None
    assert info.result is not None
    assert info.result["output"] == {"number": "LX101", "price_eur": 89}
    assert replayed.ok
    assert replayed.result is not None
    assert replayed.result.output == result.output
    shown = render_run(info, records)
    assert 'output: {"number": "LX101", "price_eur": 89}' in shown


# Sub-agents


async def test_an_executor_gives_its_answer_as_an_object_of_the_type() -> None:
    routes: dict[str, Any] = {
        "step": "The cheapest is LX101 at 89 EUR.",
        "output": '{"number": "LX101", "price_eur": 89}',
    }
    model = FunctionModel(by_purpose(**routes))
    with anyio.fail_after(GUARD_S):
        report = await Executor(model, output_type=Flight).run("Find the cheapest flight.")
    assert report.status == "done"
    assert report.output == Flight(number="LX101", price_eur=89)
    assert report.answer == "The cheapest is LX101 at 89 EUR."
    asked = [r for r in model.requests if r.purpose == "output"]
    assert len(asked) == 1
    assert asked[0].output is not None
    assert "LX101 at 89 EUR" in (asked[0].messages[-1].content or "")


async def test_an_executor_whose_object_never_validates_reports_partial() -> None:
    routes: dict[str, Any] = {"step": "The cheapest is LX101 at 89 EUR.", "output": "[]"}
    model = FunctionModel(by_purpose(**routes))
    with anyio.fail_after(GUARD_S):
        report = await Executor(model, output_type=Flight).run("Find the cheapest flight.")
    assert report.status == "partial"
    assert report.output is None
    assert any(note.startswith("no valid Flight:") for note in report.notes)
    assert len([r for r in model.requests if r.purpose == "output"]) == 3


async def test_a_run_with_no_results_writes_no_object() -> None:
    """Nothing gathered: the run fails, and no object is asked for (one would be invented)."""
    routes: dict[str, Any] = {
        "plan": plan_reply(subtask("a", "Find the cheapest flight from Lyon to Lisbon.")),
        "step": ModelRequestError("refused", status=400),
        "replan": replan_reply(rationale="nothing else to try"),
        "synthesis": '{"number": "XX1", "price_eur": 1}',
    }
    model = FunctionModel(by_purpose(**routes))
    with anyio.fail_after(GUARD_S):
        result = await Orchestrator(model, [lookup]).run("Book a flight.", output_type=Flight)
    assert result.status == "failed"
    assert result.output is None
    assert synthesis_requests(model) == []


async def test_a_date_whose_year_no_result_shows_is_not_accepted() -> None:
    @dataclasses.dataclass
    class Due:
        due: datetime.date

    model_steps = FunctionModel(by_purpose(
        plan=plan_reply(subtask("a", "When is it due?")),
        step=[call("lookup", key="3 May 2026"), reply("It is due on 3 May 2026.")],
        synthesis=['{"due": "1000-05-03"}', '{"due": "2026-05-03"}'],
    ))  # fmt: skip
    with anyio.fail_after(GUARD_S):
        result = await Orchestrator(model_steps, [lookup]).run("When?", output_type=Due)
    assert result.output == Due(due=datetime.date(2026, 5, 3))
    told = synthesis_requests(model_steps)[1].messages[-1]
    assert "1000" in (told.content or "")


@dataclasses.dataclass
class Notice:
    name: str
    due: datetime.date


async def test_dates_the_text_names_are_handed_over_as_iso_dates() -> None:
    """A small model cannot turn "8 June 2026" into 2026-06-08: paor reads it and lists it."""
    routes: dict[str, Any] = {
        "step": "Bruno Martins must pay by 8 June 2026.",
        "output": '{"name": "Bruno Martins", "due": "2026-06-08"}',
    }
    model = FunctionModel(by_purpose(**routes))
    with anyio.fail_after(GUARD_S):
        report = await Executor(model, output_type=Notice).run("When must Bruno pay?")
    assert report.output == Notice(name="Bruno Martins", due=datetime.date(2026, 6, 8))
    (asked,) = [r for r in model.requests if r.purpose == "output"]
    assert "The dates above as ISO dates: 8 June 2026 = 2026-06-08" in (
        asked.messages[-1].content or ""
    )


async def test_without_date_fields_no_dates_are_listed() -> None:
    routes: dict[str, Any] = {
        "step": "LX101 at 89 EUR on 8 June 2026.",
        "output": '{"number": "LX101", "price_eur": 89}',
    }
    model = FunctionModel(by_purpose(**routes))
    with anyio.fail_after(GUARD_S):
        await Executor(model, output_type=Flight).run("Find the cheapest flight.")
    (asked,) = [r for r in model.requests if r.purpose == "output"]
    assert "ISO dates" not in (asked.messages[-1].content or "")


async def test_a_date_that_is_none_of_the_dates_given_goes_back_naming_them() -> None:
    """ "2026-08-06" has the year and the day of "8 June 2026", but it is not that date."""
    routes: dict[str, Any] = {
        "step": "Bruno Martins must pay by 8 June 2026.",
        "output": [
            '{"name": "Bruno Martins", "due": "2026-08-06"}',
            '{"name": "Bruno Martins", "due": "2026-06-08"}',
        ],
    }
    model = FunctionModel(by_purpose(**routes))
    with anyio.fail_after(GUARD_S):
        report = await Executor(model, output_type=Notice).run("When must Bruno pay?")
    assert report.status == "done"
    assert report.output == Notice(name="Bruno Martins", due=datetime.date(2026, 6, 8))
    told = [r for r in model.requests if r.purpose == "output"][1].messages[-1].content or ""
    assert "2026-08-06 is not a date you were given" in told
    assert "2026-06-08" in told


@pytest.mark.parametrize(
    ("text", "dates"),
    [
        ("due on 1 January 2026", {"1 January 2026": "2026-01-01"}),
        ("by June 8, 2026 or the 22nd of April 2026", {
            "June 8, 2026": "2026-06-08", "22nd of April 2026": "2026-04-22"
        }),
        ("3 Sept. 2026 and 2026-11-15", {"3 Sept. 2026": "2026-09-03", "2026-11-15": "2026-11-15"}),
        ("31 February 2026, 2026-13-01 and May 2026", {}),  # impossible, or no day
    ],
)  # fmt: skip
def test_dates_are_read_in_the_ways_texts_write_them(text: str, dates: dict[str, str]) -> None:
    from agents.models._dates import named_dates

    assert named_dates(text) == dates


@pytest.mark.parametrize(
    "reply",
    [
        'Here it is:\n```json\n{"number": "LX101", "price_eur": 89}\n```',
        'The flight {"note": "not it"} and then {"number": "LX101", "price_eur": 89}.',
    ],
)
async def test_an_object_written_in_prose_or_a_fence_is_recovered(reply: str) -> None:
    """An endpoint that ignores the response format answers in prose: the first JSON value in
    it that validates is the object, with no reply sent back."""
    routes: dict[str, Any] = {"step": "The cheapest is LX101 at 89 EUR.", "output": reply}
    model = FunctionModel(by_purpose(**routes))
    with anyio.fail_after(GUARD_S):
        report = await Executor(model, output_type=Flight).run("Find the cheapest flight.")
    assert report.status == "done"
    assert report.output == Flight(number="LX101", price_eur=89)
    assert len([r for r in model.requests if r.purpose == "output"]) == 1


def test_prose_with_no_valid_object_says_what_is_wrong_with_the_first() -> None:
    spec: OutputSpec[Flight] = OutputSpec(Flight)
    with pytest.raises(ValueError, match="price_eur: Field required"):
        spec.parse('Sorry: {"number": "LX101"}')
    with pytest.raises(ValueError, match="not JSON"):
        spec.parse("Sorry, no flight.")
