"""S12: a long house brief in every worker's instructions, under a provider's prompt caching.

S2's eight branches of four lookups, where every framework adds the same 2,166-token brief to
its workers' instructions (paor's `instructions=`, LangGraph's `prompt=`, the Agents SDK's
`instructions=`, the single agent's system message): the shared prefix of a run's workers is
then long enough for OpenAI's rules (1,024 tokens, in 128-token steps, cached tokens at a quarter
of the price), and how much of it each framework's requests read cached shows in dollars. paor
runs as in the suite (direct calls, plan streaming, hedging) with and without
`OpenAIChatModel(warm_cache=True)`, which holds the first wave's requests that share a cold
prefix until the first of them is answered (`agents._warm`).

Not in the suite's tables: `python -m benchmarks._brief` prints one run of each framework.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Awaitable, Callable

import anyio

from benchmarks._hostile import large_figures
from benchmarks._paor import run_orchestrator
from benchmarks._react import run_parallel
from benchmarks._run import RunRecord
from benchmarks._scenarios import DEFAULT_LATENCY, SCENARIOS, Scenario

__all__ = ["BRIEF", "s12"]

BRIEF = "\n\nHouse brief for every answer:\n" + "\n".join(
    f"Rule {i}: when a fact about topic {i} is found, state it with its lookup key, keep units "
    "as given, never round figures, and say which source it came from."
    for i in range(1, 61)
)
# About 3 s to prefill 100,000 tokens at a hosted provider, scaled down tenfold like the rest.
_LATENCY = dataclasses.replace(DEFAULT_LATENCY, seed=12, prefill_s=3e-6)


def s12() -> Scenario:
    """S12: S2's fan-out with `BRIEF` in every worker's instructions."""
    return dataclasses.replace(
        SCENARIOS["S2"],
        name="S12",
        title="A 2,166-token brief in every worker's instructions, prompt caching",
        latency=_LATENCY,
        brief=BRIEF,
    )


async def _main() -> None:
    scenario = s12()
    runners: dict[str, Callable[[], Awaitable[RunRecord]]] = {
        "paor (warm cache)": lambda: run_orchestrator(scenario, http=True, warm_cache=True),
        "paor": lambda: run_orchestrator(scenario, http=True),
        "parallel-tools": lambda: run_parallel(scenario),
    }
    try:
        from benchmarks._langgraph import run_langgraph
        from benchmarks._openai_agents import run_openai_agents_plan
    except ImportError as exc:
        print(f"peers unavailable: {exc} (install the bench extra)")
    else:
        runners["langgraph-tasks"] = lambda: run_langgraph(scenario, shape="tasks")
        runners["openai-agents-plan"] = lambda: run_openai_agents_plan(scenario, warmup=3)
    shown = ("failed_subtasks", "requests", "prompt_tokens", "cached_share", "dollars")
    for name, run in runners.items():
        figures = large_figures(await run(), scenario)
        row = {k: figures.get(k) for k in (*shown, "wall_over_cp", "error")}
        print(f"{name}: {json.dumps(row)}", flush=True)


if __name__ == "__main__":
    anyio.run(_main)
