"""Schema binding before Act: near-miss argument names and declared value synonyms are bound when
there is one reading, the model is told what was bound, the journal records the bound call (a
replay sees exactly what ran), and anything ambiguous or unknown stays an error the model reads."""

from __future__ import annotations

import enum
from pathlib import Path
from typing import Literal

import pytest

from agents import Executor, tool
from agents.testing import ScriptedModel, call, observation, reply
from memory import Journal
from orchestrator import Orchestrator
from tests._team import Team, plan, script, sub

pytestmark = pytest.mark.anyio

ran: list[dict[str, str]] = []


class Mode(enum.Enum):
    """How to travel."""

    TRAIN = "train"
    PLANE = "plane"


@tool(synonyms={"unit": {"c": "celsius", "f": "fahrenheit"}})
async def get_weather(city: str, unit: Literal["celsius", "fahrenheit"] = "celsius") -> str:
    """Get the weather.

    Args:
        city: The city.
        unit: The temperature unit.
    """
    ran.append({"city": city, "unit": unit})
    return f"{city}: 26 degrees {unit}"


@tool
async def book(origin_city: str, destination_city: str, mode: Mode = Mode.TRAIN) -> str:
    """Book a trip.

    Args:
        origin_city: From.
        destination_city: To.
        mode: How.
    """
    return f"{origin_city} to {destination_city} by {mode.value}"


def header_and_body(model: ScriptedModel, turn: int = 1) -> list[tuple[str, str]]:
    results = [m for m in model.requests[turn].messages if m.role == "tool"]
    return [(m.content.split("\n", 1)[0], observation(m.content)) for m in results]


async def test_the_articles_example_is_bound_and_the_model_told() -> None:
    """`{"city": "Shanghai", "temp_unit": "c"}` runs as get_weather(city, unit="celsius")."""
    ran.clear()
    model = ScriptedModel(
        [call("get_weather", city="Shanghai", temp_unit="c"), reply("26 [get_weather]")]
    )
    await Executor(model, [get_weather]).run("Weather in Shanghai?")
    assert ran == [{"city": "Shanghai", "unit": "celsius"}]
    ((head, body),) = header_and_body(model)
    assert head == (
        """[OBSERVE] get_weather("Shanghai", "celsius") ok; bound temp_unit→unit, unit 'c'→'celsius'"""
    )
    assert body == "Shanghai: 26 degrees celsius"


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ({"City": "Lyon", "UNIT": "Fahrenheit"}, {"city": "Lyon", "unit": "fahrenheit"}),
        ({"ctiy": "Lyon"}, {"city": "Lyon", "unit": "celsius"}),
        ({"city_name": "Lyon", "unit": "F"}, {"city": "Lyon", "unit": "fahrenheit"}),
    ],
)
async def test_case_separators_typos_and_synonyms_are_bound(
    given: dict[str, str], expected: dict[str, str]
) -> None:
    """Case and separators ignored, a whole-word match, a typo, a synonym, a value's case."""
    ran.clear()
    model = ScriptedModel([call("get_weather", **given), reply("ok [get_weather]")])
    await Executor(model, [get_weather]).run("Weather?")
    assert ran == [expected]


async def test_ambiguous_or_unknown_arguments_stay_errors_the_model_reads() -> None:
    """Two candidate names, or a value no choice names: nothing runs, the model reads why."""
    model = ScriptedModel(
        [
            call("book", city="Lyon", to="Paris"),
            call("get_weather", city="Lyon", unit="kelvin"),
            reply("gave up"),
        ]
    )
    await Executor(model, [book, get_weather], require_evidence=False).run("Book a trip.")
    ((head, body),) = header_and_body(model, 1)
    assert head == "[OBSERVE] book not run (invalid_arguments)"
    assert "argument 'city' could be any of destination_city, origin_city" in body
    head, body = header_and_body(model, 2)[-1]
    assert "unit: Input should be 'celsius' or 'fahrenheit'" in body


async def test_enum_values_bind_and_the_bound_call_is_what_the_journal_replays(
    tmp_path: Path,
) -> None:
    """A run whose agent's call was bound replays offline with no drift: the journal holds
    the call that ran, with the bound names and values."""
    team = Team(
        [plan(sub("a"))],
        {
            "a": script(
                call("book", originCity="Lyon", destination="Paris", mode="PLANE"),
                "Booked: Lyon to Paris by plane.",
            )
        },
    )
    async with Journal(tmp_path / "j.db") as journal:
        orch = Orchestrator(team.model, [book], journal=journal)
        result = await orch.run("Book it.", run_id="bound")
        assert result.status == "complete"
        (intent,) = [r for r in await journal.load("bound") if r.kind == "intent"]
        assert intent.payload["args"] == {
            "origin_city": "Lyon", "destination_city": "Paris", "mode": "plane",
        }  # fmt: skip
        report = await orch.replay("bound")
    assert report.ok, report.drift
    (told,) = [m for m in team.of("a")[-1].messages if m.role == "tool"]
    assert observation(told.content) == "Lyon to Paris by plane"
    assert "bound originCity→origin_city, destination→destination_city, mode 'PLANE'→'plane'" in (
        told.content
    )


async def test_a_different_word_or_a_free_string_is_never_bound() -> None:
    """min_price is not a typo of max_price (a word differs), and a value of a parameter that
    takes any string is left as the model wrote it."""

    @tool
    async def search(max_price: int, mode: Literal["auto"] | str = "auto") -> str:
        """Search.

        Args:
            max_price: The highest price.
            mode: How.
        """
        return f"{max_price} {mode}"

    with pytest.raises(ValueError, match="min_price: Extra inputs are not permitted"):
        search.parse_bound('{"min_price": 10}')
    assert search.parse_bound('{"max_price": 10, "mode": "AUTO"}') == (
        {"max_price": 10, "mode": "AUTO"}, (),
    )  # fmt: skip
