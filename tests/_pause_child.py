"""A journaled run that pauses for people, started in one process and continued in another.

    python -m tests._pause_child run|resume JOURNAL LEDGER OUT [APPROVAL_ID=approve|deny ...]

The plan (a, b) is reviewed; b calls `transfer`, which needs approval; a looks a fact up. Each
tool appends a line to LEDGER when it runs, so the file is the tools' own count of what ran. OUT
gets the result as JSON, with the model requests this process made, by who made them.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import anyio

from agents import Tool, tool
from agents.approvals import PAUSE, Decision
from agents.testing import call, reply
from memory import Journal
from orchestrator import Limits, Orchestrator, RunConfig
from tests._team import PLANNER, WRITER, Team, plan, script, sub

RUN_ID = "paused"

APPROVER = PAUSE
"""The approver every run and resume of it is given: every decision waits for people."""


def team() -> Team:
    """The same scripted team in every process (a resumed run replays what it recorded)."""
    return Team(
        [plan(sub("a"), sub("b", goal="Pay the invoice."))],
        {
            "a": script(call("lookup", key="a"), reply("A is 1 [lookup]")),
            "b": script(call("transfer", amount=40), reply("B paid 40 [transfer]")),
        },
    )


def tools(ledger: Path) -> list[Tool]:
    """`lookup` and `transfer` (which needs approval), each writing a line to `ledger`."""

    def note(line: str) -> None:
        with ledger.open("a") as f:
            f.write(line + "\n")

    @tool
    async def lookup(key: str) -> str:
        """Look a fact up.

        Args:
            key: Which fact.
        """
        note(f"lookup {key}")
        return f"{key} is 1"

    @tool(needs_approval=True, side_effects=True)
    async def transfer(amount: int) -> str:
        """Send money.

        Args:
            amount: How much.
        """
        note(f"transfer {amount}")
        return f"sent {amount}"

    return [lookup, transfer]


def orchestrator(model_team: Team, journal: Journal, ledger: Path) -> Orchestrator:
    """The run's orchestrator: with `APPROVER`, every plan and every call of `transfer` waits
    for people."""
    return Orchestrator(
        model_team.model,
        tools(ledger),
        journal=journal,
        config=RunConfig(review="first", limits=Limits(deadline_s=60)),
    )


def _decisions(words: list[str]) -> dict[str, Decision]:
    found = {}
    for word in words:
        approval_id, _, action = word.partition("=")
        found[approval_id] = (
            Decision.approve() if action == "approve" else Decision.deny(action or "no")
        )
    return found


async def _main(mode: str, journal_path: Path, ledger: Path, out: Path, words: list[str]) -> None:
    the_team = team()
    async with Journal(journal_path) as journal:
        orch = orchestrator(the_team, journal, ledger)
        if mode == "run":
            result = await orch.run("Pay what is owed.", run_id=RUN_ID, approver=APPROVER)
        else:
            result = await orch.resume(RUN_ID, decisions=_decisions(words), approver=APPROVER)
    asked = {who: len(the_team.of(who)) for who in (PLANNER, WRITER, "a", "b")}
    data = {
        "status": result.status,
        "answer": result.answer,
        "waiting": [w.approval_id for w in result.waiting],
        "kinds": [w.kind for w in result.waiting],
        "asked": asked,
    }
    await anyio.Path(out).write_text(json.dumps(data))


if __name__ == "__main__":
    mode, journal_arg, ledger_arg, out_arg, *rest = sys.argv[1:]
    anyio.run(_main, mode, Path(journal_arg), Path(ledger_arg), Path(out_arg), rest)
