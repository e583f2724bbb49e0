"""A journaled run whose sub-agent asks the user, paused in one process, answered in another.

    python -m tests._ask_child JOURNAL OUT run
    python -m tests._ask_child JOURNAL OUT answer APPROVAL_ID TEXT

OUT gets the result as JSON, with the number of model requests the sub-agent made in this process
and the tool results it read last.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio

from agents.approvals import PAUSE, Decision
from agents.testing import call, observation
from memory import Journal
from orchestrator import Orchestrator, RunConfig
from tests._team import Team, plan, script, sub

RUN_ID = "asks"


async def _main(journal_path: Path, out: Path, mode: str, *rest: str) -> None:
    team = Team(
        [plan(sub("hotel", goal="Find a cheap hotel."))],
        {"hotel": script(call("ask_user", question="What is your budget?"), "Hotel Sol, 80 EUR.")},
    )
    async with Journal(journal_path) as journal:
        orch = Orchestrator(team.model, journal=journal, config=RunConfig(questions=1))
        if mode == "run":
            result = await orch.run(
                "Find me a cheap hotel in Porto.", run_id=RUN_ID, approver=PAUSE
            )
        else:
            approval_id, text = rest
            result = await orch.resume(
                RUN_ID, decisions={approval_id: Decision.answer(text)}, approver=PAUSE
            )
    asked = team.of("hotel")
    told = (
        [observation(str(m.content)) for m in asked[-1].messages if m.role == "tool"]
        if asked
        else []
    )
    data: dict[str, Any] = {
        "status": result.status,
        "waiting": [w.model_dump(mode="json") for w in result.waiting],
        "asked": len(asked),
        "told": told,
        "answered": [[a.agent_id, a.question, a.answer] for a in result.answered],
    }
    await anyio.Path(out).write_text(json.dumps(data))


if __name__ == "__main__":
    journal_arg, out_arg, mode_arg, *more = sys.argv[1:]
    anyio.run(_main, Path(journal_arg), Path(out_arg), mode_arg, *more)
