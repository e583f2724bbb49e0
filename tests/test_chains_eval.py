"""The longest-chains-first evaluation scores plans as it says, and its committed results hold."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from benchmarks._model_eval import run_eval
from benchmarks.chains_eval import longest_first, summary

RESULTS = sorted(Path(__file__).parent.parent.joinpath("benchmarks").glob("chains_results_*.json"))


def plan(*subtasks: tuple[str, list[str]]) -> list[dict[str, Any]]:
    return [{"id": i, "depends_on": deps} for i, deps in subtasks]


@pytest.mark.parametrize(
    ("subtasks", "first"),
    [
        (plan(("ceo", []), ("born", ["ceo"]), ("capital", [])), True),
        (plan(("capital", []), ("ceo", []), ("born", ["ceo"])), False),
        (plan(("a", []), ("b", [])), True),  # two chains of one: either is the longest
        (plan(("a", []), ("b", ["a"]), ("c", ["b"])), True),
    ],
)
def test_a_plan_writes_its_longest_chain_first_when_its_first_root_begins_one(
    subtasks: list[dict[str, Any]], first: bool
) -> None:
    assert longest_first(subtasks) is first


def test_the_summary_counts_only_plans_whose_roots_had_an_order_to_choose() -> None:
    rows: list[dict[str, Any]] = [
        {"variant": "asked", "subtasks": plan(("ceo", []), ("born", ["ceo"]), ("capital", []))},
        {"variant": "asked", "subtasks": plan(("a", []), ("b", []))},  # equal chains: no choice
        {"variant": "asked", "subtasks": []},  # no plan
        {"variant": "not asked", "subtasks": plan(("capital", []), ("ceo", []), ("b", ["ceo"]))},
    ]
    assert summary(rows) == {
        "asked": {"plans": 3, "valid": 2, "roots_to_order": 1, "longest_first": 1},
        "not asked": {"plans": 1, "valid": 1, "roots_to_order": 1, "longest_first": 0},
    }


@pytest.mark.parametrize("path", RESULTS, ids=[p.name for p in RESULTS])
def test_the_committed_results_are_scored_as_they_say(path: Path) -> None:
    report = json.loads(path.read_text(encoding="utf-8"))
    assert summary(report["rows"]) == report["summary"]


def test_an_evaluation_writes_its_model_its_summary_and_every_row(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rows: list[dict[str, Any]] = [{"variant": "asked", "subtasks": plan(("a", []))}]
    seen: list[tuple[Path | None, float]] = []

    async def evaluate(gguf: Path | None, deadline: float) -> list[dict[str, Any]]:
        seen.append((gguf, deadline))
        return rows

    out = tmp_path / "results.json"
    argv = [
        "chains_eval",
        "--gguf",
        str(tmp_path / "qwen.gguf"),
        "--deadline",
        "9",
        "--out",
        str(out),
    ]
    monkeypatch.setattr(sys, "argv", argv)
    run_eval("An evaluation.", evaluate, summary, per="plan")
    assert seen == [(tmp_path / "qwen.gguf", 9.0)]
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report == {"model": "qwen", "switches": {}, "summary": summary(rows), "rows": rows}


def test_an_evaluations_switches_reach_it_and_its_results(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A switch is off unless given; given, `evaluate` gets it as a keyword argument, and the
    results file says which switches the rows ran under."""
    got: list[bool] = []

    async def evaluate(gguf: Path | None, deadline: float, *, fast: bool) -> list[dict[str, Any]]:
        got.append(fast)
        return []

    out = tmp_path / "results.json"
    for given in ([], ["--fast"]):
        monkeypatch.setattr(sys, "argv", ["eval", "--out", str(out), *given])
        run_eval("An evaluation.", evaluate, summary, per="plan", switches={"fast": "go fast"})
        assert json.loads(out.read_text(encoding="utf-8"))["switches"] == {"fast": bool(given)}
    assert got == [False, True]
