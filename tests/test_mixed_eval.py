"""The mixed-goals evaluation scores answers as it says, its tool finds what a step asks for, and
its committed results hold (its counts are `parts_eval`'s, tested there)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.mixed_eval import lookup, right, summary

pytestmark = pytest.mark.anyio
RESULTS = sorted(Path(__file__).parent.parent.joinpath("benchmarks").glob("mixed_results_*.json"))


@pytest.mark.parametrize(
    ("answer", "is_right"),
    [
        ("Water boils at 100 C at sea level; Titanic's director made Avatar next.", True),
        ("100°C; Avatar (2009)", True),
        ("Water boils at 212 degrees; Avatar.", False),  # Fahrenheit
        ("The boiling point is 100°F. Avatar.", False),
        ("James Cameron", False),  # parts left out
        ("", False),
    ],
)
def test_an_answer_is_right_with_every_fact_and_no_fahrenheit(answer: str, is_right: bool) -> None:
    assert right(answer, ["100", "Avatar"]) is is_right


async def test_the_lookup_finds_a_fact_by_its_words_in_any_order_or_says_it_found_none() -> None:
    assert await lookup.fn(key="Titanic director") == "director of titanic: James Cameron"
    assert await lookup.fn(key="the boiling point of water") == (
        "boiling point of water: 100 C at sea level"
    )
    assert await lookup.fn(key="height of Everest") == "no fact found for 'height of Everest'"


@pytest.mark.parametrize("path", RESULTS, ids=[p.name for p in RESULTS])
def test_the_committed_results_are_scored_as_they_say(path: Path) -> None:
    report = json.loads(path.read_text(encoding="utf-8"))
    assert summary(report["rows"]) == report["summary"]
