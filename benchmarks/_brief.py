"""S12: a long house brief in every worker's instructions, under a provider's prompt caching.

S2's eight branches of four lookups, where every framework adds the same 2,166-token brief to
its workers' instructions (paor's `instructions=`, LangGraph's `prompt=`, the Agents SDK's
`instructions=`, the single agent's system message): the shared prefix of a run's workers is
then long enough for OpenAI's rules (1,024 tokens, in 128-token steps, cached tokens at a quarter
of the price), and how much of it each framework's requests read cached shows in dollars. paor
runs as in the suite (direct calls, plan streaming, hedging) with and without
`OpenAIChatModel(warm_cache=True)`, which holds the first wave's requests that share a cold
prefix until the first of them is answered (`agents.models._warm`).

A one-run section of the suite (`python -m benchmarks`, `results["brief"]`), like S10 and S11:
one run of paor, the parallel-tool-call agent, LangGraph's tasks and the Agents SDK's plan, and
of paor with `warm_cache=True`, their figures those of S10 (`large_figures`). `python -m
benchmarks._brief` runs that section alone as the suite does (the same peers and warm-up) and
prints its table.
"""

from __future__ import annotations

import dataclasses

import anyio

from benchmarks._catalogue import SCENARIOS
from benchmarks._report import brief_table
from benchmarks._scenarios import DEFAULT_LATENCY, Scenario

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
    from benchmarks._suite import Suite  # here, not above: the suite imports this module

    suite = Suite(progress=lambda line: print(f"  {line}", flush=True))
    found = await suite.run_brief()
    for name, why in suite.unavailable.items():
        print(f"- {name}: {why}")
    print(brief_table(found))


if __name__ == "__main__":
    anyio.run(_main)
