"""Crash-resume for real: a run killed with SIGKILL mid-plan, then resumed in a new process."""

from __future__ import annotations

import json
import os
import signal
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import anyio
import pytest
from anyio.abc import Process
from anyio.streams.text import TextReceiveStream

from memory import Journal
from tests._kill_child import RUN_ID

pytestmark = pytest.mark.anyio

ROOT = Path(__file__).resolve().parent.parent
# A guard against a hung child, not a timing claim.
GUARD_S = 45


def _child(mode: str, journal: Path, calls: Path, out: Path) -> list[str]:
    return [sys.executable, "-m", "tests._kill_child", mode, str(journal), str(calls), str(out)]


def _env(*, block: bool) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PAOR_TEST_BLOCK"}
    return {**env, "PAOR_TEST_BLOCK": "1"} if block else env


async def _wait_for(process: Process, marker: str) -> None:
    """Read the child's output until `marker` is printed on a line of its own."""
    assert process.stdout is not None
    seen = ""
    async for chunk in TextReceiveStream(process.stdout):
        seen += chunk
        if f"\n{marker}\n" in f"\n{seen}":
            return
    raise AssertionError(f"the child ended without printing {marker}:\n{seen[-2000:]}")


def _calls(path: Path) -> Counter[str]:
    return Counter(path.read_text(encoding="utf-8").splitlines())


def _answer(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


async def test_a_killed_run_resumes_to_the_same_answer_running_each_tool_once(
    tmp_path: Path,
) -> None:
    """SIGKILL while the last subtask's tool is in flight; a new process resumes the run: the
    answer equals an uninterrupted run's and every tool completed exactly once, by its own count."""
    journal, calls = tmp_path / "journal.db", tmp_path / "calls.txt"
    with anyio.fail_after(GUARD_S):
        command = _child("run", journal, calls, tmp_path / "killed.json")
        async with await anyio.open_process(command, cwd=ROOT, env=_env(block=True)) as child:
            await _wait_for(child, "BLOCKED")
            child.send_signal(signal.SIGKILL)
            await child.wait()
        assert child.returncode == -signal.SIGKILL
        assert _calls(calls) == {"lookup a": 1, "lookup b": 1, "lookup c": 1}
        async with Journal(journal) as opened:
            info = await opened.run(RUN_ID)
        assert info is not None
        assert info.status == "crashed"

        await anyio.run_process(
            _child("resume", journal, calls, tmp_path / "resumed.json"),
            cwd=ROOT,
            env=_env(block=False),
        )
        reference = tmp_path / "reference"
        reference.mkdir()
        await anyio.run_process(
            _child(
                "run", reference / "journal.db", reference / "calls.txt", reference / "out.json"
            ),
            cwd=ROOT,
            env=_env(block=False),
        )

    resumed = _answer(tmp_path / "resumed.json")
    assert resumed == _answer(reference / "out.json")
    assert resumed["status"] == "complete"
    assert "D settled" in resumed["answer"]
    assert _calls(calls) == {"lookup a": 1, "lookup b": 1, "lookup c": 1, "settle d": 1}
    async with Journal(journal) as opened:
        info = await opened.run(RUN_ID)
    assert info is not None
    assert (info.status, info.owner) == ("complete", None)
