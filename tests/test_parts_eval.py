"""The questions-in-parts evaluation (and its variant with results passed on) scores answers as it
says, and its committed results hold."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from benchmarks.parts_eval import right, summary
from benchmarks.passing_eval import summary as passing_summary

RESULTS = sorted(Path(__file__).parent.parent.joinpath("benchmarks").glob("parts_results_*.json"))


@pytest.mark.parametrize(
    ("answer", "is_right"),
    [
        ("Paris and Tokyo.", True),
        ("The capital of France is Paris; the capital of Japan is Tokyo.", True),
        ("Paris", False),  # a part left out
        ("Paris, Tokyo and Kyoto", False),  # a city not asked for
        ("", False),
    ],
)
def test_an_answer_is_right_with_every_capital_and_no_other_city(
    answer: str, is_right: bool
) -> None:
    assert right(answer, ["Paris", "Tokyo"]) is is_right


def test_the_summary_counts_complete_runs_right_and_wrong() -> None:
    rows = [
        {"status": "complete", "answer": "Paris and Tokyo", "wanted": ["Paris", "Tokyo"]},
        {"status": "complete", "answer": "Sydney", "wanted": ["Canberra"]},
        {"status": "incomplete", "answer": "Canberra", "wanted": ["Canberra"]},
    ]
    assert summary(rows) == {
        "questions": 3,
        "complete": 2,
        "complete_right": 1,
        "complete_wrong": 1,
        "right_any_status": 2,
    }


@pytest.mark.parametrize("path", RESULTS, ids=[p.name for p in RESULTS])
def test_the_committed_results_are_scored_as_they_say(path: Path) -> None:
    report = json.loads(path.read_text(encoding="utf-8"))
    assert summary(report["rows"]) == report["summary"]


PASSING = sorted(Path(__file__).parent.parent.joinpath("benchmarks").glob("passing_results_*.json"))


def test_the_passing_summary_adds_the_results_passed_on_and_refused() -> None:
    rows: list[dict[str, Any]] = [
        {"status": "complete", "answer": "Paris and Tokyo", "wanted": ["Paris", "Tokyo"],
         "passed": 2, "refused": 0},
        {"status": "incomplete", "answer": "", "wanted": ["Canberra"], "passed": 0, "refused": 1},
        {"status": "timeout", "answer": "", "wanted": ["Lima"]},  # cut before its counts
    ]  # fmt: skip
    found = passing_summary(rows)
    assert (found["complete_right"], found["passed"], found["refused"]) == (1, 2, 1)


@pytest.mark.parametrize("path", PASSING, ids=[p.name for p in PASSING])
def test_the_committed_passing_results_are_scored_as_they_say(path: Path) -> None:
    report = json.loads(path.read_text(encoding="utf-8"))
    assert passing_summary(report["rows"]) == report["summary"]
