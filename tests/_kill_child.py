"""The process `test_resume_kill` kills: a journaled plan of four subtasks, run or resumed.

    python -m tests._kill_child run|resume JOURNAL CALLS OUT

a, b and c each look a fact up; d, which depends on all three, calls `settle`. Every tool appends
a line to CALLS when it completes, so the file is the tools' own count of what ran. With
PAOR_TEST_BLOCK=1, `settle` prints BLOCKED and waits forever: the parent kills the process there.
The run's answer (the writer echoes every result it was given) is written to OUT as JSON.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio

from agents import Tool, tool
from agents._own_text import own_text
from agents.models import ModelRequest
from agents.testing import call
from memory import Journal
from orchestrator import Orchestrator, RunConfig
from tests._team import WRITER, Team, opening, plan, script, sub

SYNTHESIS = RunConfig().synthesis_instructions

RUN_ID = "killed"
_FACTS = {"a": 1, "b": 2, "c": 3}  # what `lookup` finds, and the sub-agents say


class _EchoTeam(Team):
    async def _decide(self, request: ModelRequest) -> Any:
        if request.output is None and request.messages[0].content == SYNTHESIS:
            self.asked[WRITER].append(request)
            # Every result, without the prompt's layout (a copy of that is refused as paor's own).
            return "\n".join(line for line in opening(request).splitlines() if not own_text(line))
        return await super()._decide(request)


def _team() -> Team:
    return _EchoTeam(
        [plan(sub("a"), sub("b"), sub("c"), sub("d", "a", "b", "c"))],
        {
            "a": script(call("lookup", key="a"), "A is 1"),
            "b": script(call("lookup", key="b"), "B is 2"),
            "c": script(call("lookup", key="c"), "C is 3"),
            "d": script(call("settle", key="d"), "D settled"),
        },
    )


def _tools(calls: Path, block: bool) -> list[Tool]:
    def completed(line: str) -> None:
        with calls.open("a", encoding="utf-8") as sink:
            sink.write(line + "\n")
            sink.flush()
            os.fsync(sink.fileno())

    @tool
    def lookup(key: str) -> str:
        """Look a fact up.

        Args:
            key: What to look up.
        """
        completed(f"lookup {key}")
        return f"{key.upper()} is {_FACTS[key]}"

    @tool(timeout=None)
    async def settle(key: str) -> str:
        """Settle the account.

        Args:
            key: What to settle.
        """
        if block:
            print("BLOCKED", flush=True)
            await anyio.sleep_forever()
        completed(f"settle {key}")
        return f"{key} settled"

    return [lookup, settle]


async def _main(mode: str, journal_path: Path, calls: Path, out: Path) -> None:
    tools = _tools(calls, block=os.environ.get("PAOR_TEST_BLOCK") == "1")
    async with Journal(journal_path) as journal:
        orch = Orchestrator(_team().model, tools, journal=journal)
        if mode == "resume":
            result = await orch.resume(RUN_ID)
        else:
            result = await orch.run("goal", run_id=RUN_ID)
    await anyio.Path(out).write_text(json.dumps({"status": result.status, "answer": result.answer}))


if __name__ == "__main__":
    mode, journal_path, calls, out = sys.argv[1:5]
    anyio.run(_main, mode, Path(journal_path), Path(calls), Path(out))
