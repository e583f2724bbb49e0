"""The journal cost benchmark runs in a tiny configuration and writes every figure (no timing)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from benchmarks.journal_cost import ROWS

ROOT = Path(__file__).resolve().parent.parent


def test_a_tiny_run_writes_every_figure_for_both_workloads(tmp_path: Path) -> None:
    """One run each way of one subtask with one tool call writes the JSON with every figure,
    and the journal has the effects it counted."""
    out = tmp_path / "cost.json"
    argv = ["--runs", "1", "--warmup", "0", "--subtasks", "1", "--steps", "1"]
    argv += ["--latency-ms", "1", "--dir", str(tmp_path), "--out", str(out)]
    # A child process: the command configures structlog for itself, which a test must not do.
    subprocess.run(
        [sys.executable, "-m", "benchmarks.journal_cost", *argv],
        cwd=ROOT,
        check=True,
        capture_output=True,
        timeout=30,
    )
    results = json.loads(out.read_text())
    assert {"filesystem", "fsync_ms", "workloads", "command"} <= set(results)
    assert list(results["workloads"]) == ["zero-latency model", "model 1 ms per call"]
    for figures in results["workloads"].values():
        assert {key for _label, key in ROWS} <= set(figures)
        assert figures["effects_by_kind"]["tool"] == 1
        assert figures["effects_per_run"] == sum(figures["effects_by_kind"].values())
