"""S12: a 2,166-token brief in every worker's instructions. paor with `warm_cache` leaves at most one
sub-agent request uncached (the one that writes the prefix), every other reads the brief cached;
the single agent reads it cached from its second turn."""

from __future__ import annotations

import anyio
import pytest

from benchmarks._brief import BRIEF, s12
from benchmarks._paor import run_orchestrator
from benchmarks._react import run_parallel
from benchmarks._sim import count_tokens

pytestmark = pytest.mark.anyio

GUARD_S = 60


def test_the_brief_is_long_enough_to_be_cached() -> None:
    assert count_tokens(BRIEF) == 2166
    assert s12().brief == BRIEF


async def test_with_warm_cache_only_the_writer_of_the_prefix_misses_the_cache() -> None:
    scenario = s12()
    with anyio.fail_after(GUARD_S):
        record = await run_orchestrator(scenario, http=True, warm_cache=True)
    assert record.error is None
    assert record.framework == "paor (warm cache)"
    steps = [e for e in record.log if e.who.kind == "agent" and e.fault is None]
    assert len(steps) == 40  # eight sub-agents, four lookups and an answer each
    cold = [e for e in steps if e.cached_tokens < count_tokens(BRIEF)]
    assert len(cold) <= 1


async def test_the_single_agent_reads_the_brief_cached_from_its_second_turn() -> None:
    with anyio.fail_after(GUARD_S):
        record = await run_parallel(s12())
    assert record.error is None
    turns = [e for e in record.log if e.fault is None]
    assert turns[0].cached_tokens == 0
    assert all(e.cached_tokens >= count_tokens(BRIEF) for e in turns[1:])
