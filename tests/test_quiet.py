"""A quiet library: a user's small program prints nothing unless it configures logging.

Each test runs tests/_user_program.py (an executor run and an orchestrator run on scripted
models) in a child process, from a folder outside the repository, so that paor is imported as
installed and nothing this test suite configured (pytest's log capture, structlog) leaks in.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

PROGRAM = Path(__file__).resolve().parent / "_user_program.py"


def run_program(how: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run the user's program with logging set up `how`; it must succeed."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    done = subprocess.run(
        [sys.executable, str(PROGRAM), how],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done


def test_a_run_with_no_logging_configured_prints_nothing(tmp_path: Path) -> None:
    """No logging configuration: not a line on stdout or stderr, warnings included."""
    done = run_program("none", tmp_path)
    assert (done.stdout, done.stderr) == ("", "")


def test_basic_config_shows_paor_records_on_stderr(tmp_path: Path) -> None:
    """`logging.basicConfig(level=INFO)`: paor's events are stdlib records, fields in the line."""
    done = run_program("basic", tmp_path)
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    tool_called = [line for line in lines if line.startswith("INFO:paor.agent:tool_called ")]
    assert len(tool_called) == 2  # one per run
    assert "tool=forecast" in tool_called[0]
    assert "args={'city': 'Lyon'}" in tool_called[0]
    assert "run_id=" in tool_called[0]  # the loops' contextvars
    finished = [line for line in lines if line.startswith("INFO:paor.run:run_finished ")]
    assert len(finished) == 1
    assert "status=complete" in finished[0]
    assert "run_id=" in finished[0]  # the run binds its id too


def test_an_application_structlog_configuration_sees_paor_events(tmp_path: Path) -> None:
    """structlog configured by the application: its processors get paor's events, stdlib none."""
    done = run_program("structlog", tmp_path)
    seen = [line.removeprefix("seen ") for line in done.stdout.splitlines() if "seen " in line]
    assert seen.count("tool_called") == 2
    assert {"model_called", "plan_created", "run_finished"} <= set(seen)
    assert done.stderr == ""
