"""The fake team and tools of the Temporal tests, and the worker process they start.

    python -m tests._temporal_worker TARGET     (see tests/_temporal_worker.py)

The team is stateless (a `FunctionModel` deciding from the request alone), so every worker process
answers the same way. Every tool appends a line to $PAOR_TEST_CALLS when it completes: the file is
the tools' own count of what ran, across processes. `slow` prints "slow <pid>" on stdout when it
starts, so the test knows which worker to kill.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path

import anyio

from agents import ToolContext, Usage, tool
from agents._own_text import own_text
from agents.errors import MalformedResponse, ModelRetryableError
from agents.models import ModelRequest
from agents.testing import FunctionModel, Turn, call, reply
from orchestrator import RunConfig
from orchestrator.temporal import Registry

SYNTHESIS = RunConfig().synthesis_instructions

PARALLEL = {
    "subtasks": [
        {"id": "a", "goal": "Find fact a."},
        {"id": "b", "goal": "Find fact b."},
        {"id": "c", "goal": "Combine a and b.", "depends_on": ["a", "b"]},
    ],
    "rationale": "a and b in parallel, then c",
}
CHAIN = {
    "subtasks": [
        {"id": "a", "goal": "Find fact a."},
        {"id": "b", "goal": "Wait for b.", "depends_on": ["a"]},
        {"id": "c", "goal": "Find fact c.", "depends_on": ["b"]},
    ],
    "rationale": "one after the other, with a slow step in the middle",
}


def _record(kind: str, key: str) -> None:
    with Path(os.environ["PAOR_TEST_CALLS"]).open("a", encoding="utf-8") as calls:
        calls.write(f"{kind} {key}\n")


@tool(timeout=5.0)
async def search(query: str, ctx: ToolContext) -> dict[str, str]:
    """Search the corpus.

    Args:
        query: What to look for.
    """
    _record("search", ctx.idempotency_key)
    return {"source": f"doc:{query}", "text": f"result for {query}"}


@tool(timeout=10.0)
async def slow(seconds: float, ctx: ToolContext) -> str:
    """Wait, then report.

    Args:
        seconds: How long.
    """
    print(f"slow {os.getpid()}", flush=True)
    await anyio.sleep(seconds)
    _record("slow", ctx.idempotency_key)
    return "waited"


def results_of(request: ModelRequest) -> str:
    """The results the writer was given, without the prompt's layout (paor refuses a copy of
    that as its own text)."""
    lines = (request.messages[-1].content or "").splitlines()
    return " ".join(line for line in lines if line.strip() and not own_text(line))


def _team(plan: Mapping[str, object]) -> FunctionModel:
    def decide(request: ModelRequest) -> Turn:
        if request.output is not None:
            return reply(json.dumps(plan))
        if request.messages[0].content == SYNTHESIS:
            return reply("Synthesis: " + results_of(request)[:200])
        task = (request.messages[1].content or "").removeprefix("Task: ").split("\n")[0]
        if any(m.role == "tool" for m in request.messages):
            return reply(f"Answer to {task!r}.")
        if task.startswith("Wait"):
            return call("slow", seconds=2.5)
        return call("search", query=task)

    return FunctionModel(decide, name="team")


def _typed(team: FunctionModel) -> FunctionModel:
    """The parallel team, whose writer answers with a typed object when one is asked for."""

    async def decide(request: ModelRequest) -> Turn:
        if request.output is not None and request.purpose == "synthesis":
            return reply(
                json.dumps({"combined": "Answer to 'Combine a and b.'", "from": ["a", "b"]})
            )
        return await team.complete(request)

    return FunctionModel(decide, name="typed")


FACT = {"type": "object", "properties": {"fact": {"type": "string"}}, "required": ["fact"]}
TYPED_SUBTASKS = {
    "subtasks": [
        {"id": "a", "goal": "Find fact a.", "output_schema": FACT},
        {"id": "b", "goal": "Find fact b."},
        {"id": "c", "goal": "Combine a and b.", "depends_on": ["a", "b"]},
    ],
    "rationale": "a (typed) and b in parallel, then c",
}
DATA_SEEN: list[str] = []
"""The contexts of sub-agents that were given a dependency's object as data."""


def _typed_subtasks(team: FunctionModel) -> FunctionModel:
    """The parallel team with subtask a typed: a's object is {"fact": "a"}; the sub-agents that
    were given it as data are noted in `DATA_SEEN`."""

    async def decide(request: ModelRequest) -> Turn:
        if request.purpose == "output":
            return reply(json.dumps({"fact": "a"}))
        opening = request.messages[1].content or ""
        if request.purpose == "step" and 'as data: {"fact":"a"}' in opening:
            DATA_SEEN.append(opening)
        return await team.complete(request)

    return FunctionModel(decide, name="typed_subtasks")


def _flaky(team: FunctionModel) -> FunctionModel:
    """The parallel team, but its planner's first request fails as a 429 with Retry-After."""
    failed: list[ModelRequest] = []

    async def decide(request: ModelRequest) -> Turn:
        if request.output is not None and not failed:
            failed.append(request)
            return ModelRetryableError("429 Too Many Requests", retry_after=0.2, status=429)
        return await team.complete(request)

    return FunctionModel(decide, name="flaky")


def _garbled(team: FunctionModel) -> FunctionModel:
    """The parallel team, but its planner's first reply cannot be read (billed all the same)."""
    garbled: list[ModelRequest] = []

    async def decide(request: ModelRequest) -> Turn:
        if request.output is not None and not garbled:
            garbled.append(request)
            spent = Usage(requests=1, prompt_tokens=100, completion_tokens=20)
            return MalformedResponse("cannot be read", raw="{not a plan", usage=spent)
        return await team.complete(request)

    return FunctionModel(decide, name="garbled")


OBSOLETE = {
    "subtasks": [{"id": "a", "goal": "Wait for a."}, {"id": "b", "goal": "Check the premise."}],
    "rationale": "a slow step beside a check that will invalidate it",
}
REPLAN = {"remove": ["a"], "add": [{"id": "c", "goal": "Find fact c."}], "rationale": "a is moot"}


def _replanning(request: ModelRequest) -> Turn:
    """b reports that the premise is false while a waits: the replan removes a, adds c."""
    if request.output is not None:
        replanning = "reported a problem" in (request.messages[-1].content or "")
        return reply(json.dumps(REPLAN if replanning else OBSOLETE))
    if request.messages[0].content == SYNTHESIS:
        return reply("The synthesis.")
    task = (request.messages[1].content or "").removeprefix("Task: ").split("\n")[0]
    if any(m.role == "tool" for m in request.messages) or task.startswith("Find"):
        return reply(f"Answer to {task!r}.")
    if task.startswith("Check"):
        return call("report_issue", kind="invalidates", reason="the premise is false")
    return call("slow", seconds=5.0)


LONG = {"subtasks": [{"id": "a", "goal": "Search five times."}], "rationale": "one long agent"}


def _long(request: ModelRequest) -> Turn:
    """One sub-agent that searches five times, one search per step, then says what the last
    search found."""
    if request.output is not None:
        return reply(json.dumps(LONG))
    if request.messages[0].content == SYNTHESIS:
        return reply("Synthesis: " + results_of(request)[:200])
    done = sum(m.role == "tool" for m in request.messages)
    return (
        reply("The last search found the result for q4.")
        if done == 5
        else call("search", query=f"q{done}")
    )


def _no_plan(request: ModelRequest) -> Turn:
    """A planner that never returns a plan."""
    return reply("I would rather not plan.")


def registry() -> Registry:
    """The models ("parallel", "chain", "flaky", "typed", "no_plan", "replanning", "long") and
    tools ("search", "slow") of a test worker."""
    models = {
        "parallel": _team(PARALLEL),
        "chain": _team(CHAIN),
        "flaky": _flaky(_team(PARALLEL)),
        "garbled": _garbled(_team(PARALLEL)),
        "typed": _typed(_team(PARALLEL)),
        "typed_subtasks": _typed_subtasks(_team(TYPED_SUBTASKS)),
        "no_plan": FunctionModel(_no_plan, name="no_plan"),
        "replanning": FunctionModel(_replanning, name="replanning"),
        "long": FunctionModel(_long, name="long"),
    }
    return Registry.of(models, [search, slow])
