"""A batch output torn mid-line by a crash: repaired on the next start, so it holds whole lines only."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from structlog.testing import capture_logs

from agents import Budget, Executor
from agents.testing import ScriptedModel
from orchestrator._batch import BatchTask, append_line, run_batch
from orchestrator._batch_files import repair_tail

pytestmark = pytest.mark.anyio

DONE = json.dumps({"id": "a", "goal": "Goal a", "status": "done", "answer": "A"}).encode()
# Half a record, cut inside the two bytes of "é".
TORN = b'{"id": "b", "goal": "Goal b", "status": "done", "answer": "caf' + "é".encode()[:1]


def tasks(*ids: str) -> list[BatchTask]:
    """Tasks whose goals are "Goal <id>"."""
    return [BatchTask(id=i, goal=f"Goal {i}") for i in ids]


def asked_goals(model: ScriptedModel) -> list[str]:
    """The goal of each request's task message, in order."""
    return [str(r.messages[1].content).removeprefix("Task: ") for r in model.requests]


def whole_lines(path: Path) -> list[dict[str, object]]:
    """Every line of a JSON Lines file, failing the test on any line that is not whole JSON."""
    data = path.read_bytes()
    assert data.endswith(b"\n")
    return [json.loads(line) for line in data.decode("utf-8").split("\n")[:-1]]


async def test_a_torn_last_line_is_moved_aside_and_its_goal_runs_again(tmp_path: Path) -> None:
    """The torn half line goes to OUT.torn with a one-line warning, the output is valid JSON
    Lines afterwards, and the torn goal (with the new one) runs again; the done one does not."""
    out = tmp_path / "results.jsonl"
    out.write_bytes(DONE + b"\n" + TORN)
    model = ScriptedModel(["B", "C"])

    with capture_logs() as logs:
        summary = await run_batch(
            tasks("a", "b", "c"), executor=Executor(model), out=out, concurrency=1, budget=Budget()
        )

    assert asked_goals(model) == ["Goal b", "Goal c"]
    assert [r["id"] for r in whole_lines(out)] == ["a", "b", "c"]
    assert out.read_bytes().startswith(DONE + b"\n")
    aside = tmp_path / "results.jsonl.torn"
    assert aside.read_bytes() == TORN + b"\n"
    (warning,) = [e for e in logs if e["event"] == "batch_output_torn"]
    assert (warning["log_level"], warning["kept_in"]) == ("warning", str(aside))
    assert summary.torn == aside
    assert summary.line().endswith(f"; a torn last line was moved to {aside}")


async def test_a_whole_record_that_lost_only_its_newline_is_kept(tmp_path: Path) -> None:
    """A last line that is whole JSON is ended, not moved: its goal counts as done."""
    out = tmp_path / "results.jsonl"
    out.write_bytes(DONE)
    model = ScriptedModel(["B"])

    summary = await run_batch(
        tasks("a", "b"), executor=Executor(model), out=out, concurrency=1, budget=Budget()
    )

    assert asked_goals(model) == ["Goal b"]
    assert [r["id"] for r in whole_lines(out)] == ["a", "b"]
    assert not (tmp_path / "results.jsonl.torn").exists()
    assert summary.torn is None
    assert summary.skipped == 1


def test_repair_finds_a_long_torn_line_and_keeps_every_torn_line(tmp_path: Path) -> None:
    """A torn line longer than one backwards read is found whole, a second repair appends to
    OUT.torn, and a whole file or a missing one is left alone."""
    out = tmp_path / "results.jsonl"
    long_torn = b'{"id": "b", "answer": "' + b"x" * 200_000
    out.write_bytes(DONE + b"\n" + long_torn)
    assert repair_tail(out) == tmp_path / "results.jsonl.torn"
    out.write_bytes(out.read_bytes() + TORN)
    repair_tail(out)

    assert out.read_bytes() == DONE + b"\n"
    assert (tmp_path / "results.jsonl.torn").read_bytes() == long_torn + b"\n" + TORN + b"\n"
    assert repair_tail(out) is None
    assert out.read_bytes() == DONE + b"\n"
    assert repair_tail(tmp_path / "missing.jsonl") is None
    only_torn = tmp_path / "only.jsonl"
    only_torn.write_bytes(TORN)
    repair_tail(only_torn)
    assert only_torn.read_bytes() == b""


def test_append_line_writes_whole_lines_only(tmp_path: Path) -> None:
    """A record without its newline is refused before anything is written."""
    out = tmp_path / "results.jsonl"
    with out.open("a", encoding="utf-8") as sink:
        with pytest.raises(ValueError, match="whole lines"):
            append_line(sink, '{"id": "a"}')
        append_line(sink, '{"id": "a"}\n')
    assert out.read_bytes() == b'{"id": "a"}\n'
