"""A small application of paor's, as a user writes one: front doors only, scripted models.

tests/test_quiet.py runs it in a child process, tests/test_user_typing.py type-checks a copy of
it outside the repository. One executor run and one orchestrator run; it prints nothing itself
and exits 1 with a line on stderr if either run did not succeed.

    python _user_program.py none|basic|structlog

`none` configures no logging, `basic` calls `logging.basicConfig(level=logging.INFO)`, and
`structlog` configures structlog with a processor that writes each event's name to stdout.
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import MutableMapping
from typing import Any

import anyio
import structlog
from structlog.types import Processor

from agents import AgentLimits, AgentReport, Executor, tool
from agents.testing import ScriptedModel, call, reply
from orchestrator import Limits, Orchestrator, RunConfig, RunResult

TASK = "Will it rain in Lyon on Saturday?"
PLAN: dict[str, Any] = {
    "subtasks": [{"id": "s1", "goal": "Find the forecast for Lyon.", "depends_on": []}]
}


@tool
async def forecast(city: str) -> str:
    """Get the weekend forecast for a city.

    Args:
        city: The city name.
    """
    return f"{city}: rain on Saturday"


async def one_agent() -> AgentReport:
    """One executor sub-agent: a tool call, then an answer citing it."""
    model = ScriptedModel([call("forecast", city="Lyon"), reply("Rain [forecast].")])
    executor = Executor(model, tools=[forecast], limits=AgentLimits(max_steps=4))
    report = await executor.run(TASK)
    model.assert_complete()
    return report


async def one_run() -> RunResult:
    """One orchestrator run: a one-subtask plan, its sub-agent, and the synthesis."""
    model = ScriptedModel(
        [
            reply(json.dumps(PLAN)),
            call("forecast", city="Lyon"),
            reply("Rain on Saturday [forecast]."),
            reply("It will rain in Lyon on Saturday."),
        ]
    )
    result = await Orchestrator(
        model, [forecast], config=RunConfig(limits=Limits(deadline_s=30))
    ).run(TASK)
    model.assert_complete()
    return result


def print_event(
    _logger: Any, _method: str, event: MutableMapping[str, Any]
) -> MutableMapping[str, Any]:
    """An application's structlog processor: the event's name on stdout."""
    print("seen", event["event"])
    return event


def configure(how: str) -> None:
    """Configure logging as an application would (or not at all)."""
    if how == "basic":
        logging.basicConfig(level=logging.INFO)
    elif how == "structlog":
        # An application may configure structlog; the library never does.
        processors: list[Processor] = [print_event, structlog.processors.KeyValueRenderer()]
        structlog.configure(processors=processors)  # noqa: TID251


async def main() -> int:
    """Both runs; 0 if both succeeded."""
    report, result = await one_agent(), await one_run()
    if report.status != "done" or result.status != "complete":
        print(f"failed: {report.status} {result.status} {result.reason}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    configure(sys.argv[1] if len(sys.argv) > 1 else "none")
    sys.exit(anyio.run(main))
