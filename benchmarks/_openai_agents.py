"""The OpenAI Agents SDK peer, from paor's side: its own virtual environment, and jobs run in it.

The SDK's import name clashes with paor's `agents`, so it is installed into `benchmarks/.peer-venv`
(created on first use) and driven through `_peer_openai_agents.py` in a subprocess, against the
same HTTP simulator; results come back as JSON. Two shapes are run: the SDK's agent loop as a single
sequential ReAct agent (`run_openai_agents`), and the SDK's own parallel pattern, a planner agent with
a structured output and worker agents run as asyncio tasks, each started once its dependencies are
done, with a replanner and a synthesis agent (`run_openai_agents_plan`).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import anyio

from benchmarks._endpoints import SimServer
from benchmarks._react import REACT_INSTRUCTIONS
from benchmarks._run import RunRecord, recording
from benchmarks._scenarios import Scenario

__all__ = [
    "PIN",
    "PLANNER",
    "SYNTHESIS",
    "PeerUnavailable",
    "ensure_peer",
    "peer_ready",
    "run_openai_agents",
    "run_openai_agents_plan",
    "run_peer",
]

PIN = "openai-agents==0.24.0"
HERE = Path(__file__).resolve().parent
VENV = HERE / ".peer-venv"
PYTHON = VENV / "bin" / "python"
SCRIPT = HERE / "_peer_openai_agents.py"
_JOB_TIMEOUT_S = 300.0
# The prompts of benchmarks._langgraph's plan graph (not imported: LangGraph is optional).
PLANNER = "Split the goal into subtasks with ids, goals and dependencies. Reply with JSON only."
SYNTHESIS = "Write the final answer to the goal from the results of the subtasks."
_CHECK = "import agents, openai; from agents import Agent, Runner, OpenAIChatCompletionsModel"


class PeerUnavailable(RuntimeError):
    """The peer could not be installed or run; the message says why."""


async def ensure_peer() -> None:
    """Create the peer environment and install the pinned SDK, unless it is already there.

    Raises:
        PeerUnavailable: The environment could not be created or the SDK not installed.
    """
    if PYTHON.exists() and await _works():
        return
    steps = [
        [sys.executable, "-m", "venv", "--clear", str(VENV)],
        [str(PYTHON), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", PIN],
    ]
    for command in steps:
        with anyio.move_on_after(600):
            done = await anyio.run_process(command, check=False)
            if done.returncode == 0:
                continue
            tail = done.stderr.decode(errors="replace").strip().splitlines()[-1:] or ["no output"]
            raise PeerUnavailable(f"{' '.join(command[-2:])} failed: {tail[0][:200]}")
        if not PYTHON.exists():
            raise PeerUnavailable("timed out creating the peer environment")
    if not await _works():
        raise PeerUnavailable(f"{PIN} installed but does not import")


async def peer_ready() -> bool:
    """Whether the peer environment is there and imports the SDK (it never installs anything)."""
    return PYTHON.exists() and await _works()


async def _works() -> bool:
    done = await anyio.run_process([str(PYTHON), "-I", "-c", _CHECK], check=False)
    return done.returncode == 0


async def run_peer(job: dict[str, Any]) -> dict[str, Any]:
    """Run one job in the peer environment and return its JSON result (within five minutes).

    Raises:
        PeerUnavailable: The job failed.
    """
    # Isolated mode (-I): neither the working directory nor PYTHONPATH may put paor's `agents`
    # ahead of the SDK's.
    with anyio.fail_after(_JOB_TIMEOUT_S):
        done = await anyio.run_process(
            [str(PYTHON), "-I", str(SCRIPT)], input=json.dumps(job).encode(), check=False
        )
    if done.returncode:
        said = done.stderr.decode(errors="replace").strip().splitlines() or ["(no output)"]
        raise PeerUnavailable(f"the {job['mode']} job failed: {said[-1][:400]}")
    result: dict[str, Any] = json.loads(done.stdout)
    return result


async def run_openai_agents(scenario: Scenario, *, warmup: int = 0) -> RunRecord:
    """Run `scenario` with the SDK's agent loop over HTTP (a single ReAct agent).

    `warmup` untimed in-process runs against a zero-latency model come first (see the peer script).
    """
    job = {
        "mode": "react",
        "task": scenario.task,
        "tools": _tool_table(scenario, scenario.mono_keys),
    }
    return await _run_job(scenario, "openai-agents", job, warmup)


async def run_openai_agents_plan(scenario: Scenario, *, warmup: int = 0) -> RunRecord:
    """Run `scenario` over HTTP with the SDK's parallel pattern: a planner agent, a worker agent per
    subtask started once its dependencies are done, a replanner after an invalidation, a synthesis.

    `warmup` untimed in-process runs against a zero-latency model come first (see the peer script).
    """
    keys = [k for sub in scenario.subs.values() for k in sub.lookups()]
    job = {
        "mode": "plan",
        "goal": scenario.goal,
        "planner": PLANNER,
        "synthesis": SYNTHESIS,
        "tools": _tool_table(scenario, keys),
        "max_tokens": None if scenario.context_window is None else scenario.context_window // 2,
    }
    return await _run_job(scenario, "openai-agents-plan", job, warmup)


async def _run_job(
    scenario: Scenario, framework: str, job: dict[str, Any], warmup: int
) -> RunRecord:
    """Serve `scenario`'s simulator over HTTP and run the peer's `job` against it."""
    sim = scenario.simulator()
    record = RunRecord(framework=framework, scenario=scenario.name, transport="http")
    async with SimServer(sim) as server:
        with recording(record, sim):
            result = await run_peer(
                {
                    **job,
                    "base_url": server.base_url,
                    "instructions": REACT_INSTRUCTIONS + scenario.brief,
                    "max_retries": scenario.client_retries,
                    "timeout": scenario.timeout_s,
                    "warmup": warmup,
                }
            )
            record.wall_s, record.answer = result["wall_s"], result["answer"]
    return record


def _tool_table(scenario: Scenario, keys: Iterable[str]) -> dict[str, list[float | str]]:
    """Each lookup key's latency and text, for the peer's tool to sleep and return."""
    return {
        k: [
            scenario.latency.tool_call(k, scenario.tool_slow(k)),
            scenario.result_text(k),
        ]
        for k in keys
    }
