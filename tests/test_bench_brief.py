"""S12: a 2,166-token brief in every worker's instructions. paor with `warm_cache` leaves at most one
sub-agent request uncached (the one that writes the prefix), every other reads the brief cached;
the single agent reads it cached from its second turn."""

from __future__ import annotations

from collections import Counter

import anyio
import pytest

from benchmarks._brief import BRIEF, s12
from benchmarks._hostile import large_figures
from benchmarks._paor import run_orchestrator
from benchmarks._react import run_parallel
from benchmarks._report import render
from benchmarks._run import RunRecord
from benchmarks._sim import Exchange, Who, count_tokens

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
    # Eight sub-agents of four lookups each, the first written out by the planner, ending on
    # their results (nothing else reads them), or with an answer where they called the tool
    # before the streamed plan had come.
    per_agent = Counter(e.who.name for e in steps)
    assert len(per_agent) == 8
    assert set(per_agent.values()) <= {3, 4}
    cold = [e for e in steps if e.cached_tokens < count_tokens(BRIEF)]
    assert len(cold) <= 1


async def test_the_single_agent_reads_the_brief_cached_from_its_second_turn() -> None:
    with anyio.fail_after(GUARD_S):
        record = await run_parallel(s12())
    assert record.error is None
    turns = [e for e in record.log if e.fault is None]
    assert turns[0].cached_tokens == 0
    assert all(e.cached_tokens >= count_tokens(BRIEF) for e in turns[1:])


def test_the_report_renders_the_s12_section_one_row_a_framework() -> None:
    """The suite's `results["brief"]` becomes a table: how each run ended, failed subtasks,
    requests, prompt tokens with the share cached, dollars and wall over the critical path."""
    scenario = s12()
    last = len(scenario.par_turns)
    first = Exchange(who=Who("par", "S12", 0), received=0.0, answered=0.1, prompt_tokens=3000)
    final = Exchange(
        who=Who("par", "S12", last), received=0.2, answered=0.3, prompt_tokens=5000,
        cached_tokens=3072, completion_tokens=100,
    )  # fmt: skip
    done = RunRecord(
        framework="parallel-tools", scenario="S12", transport="http", wall_s=2.0, log=[first, final]
    )
    lost = RunRecord(
        framework="openai-agents-plan", scenario="S12", transport="http", error="PeerUnavailable: x"
    )
    table = render(
        {
            "command": "c", "started": "s", "machine": {"python": "3", "cpus": 2},
            "unavailable": {}, "scenarios": {}, "targets": [], "s0": {}, "s8": {},
            "memory": {}, "dispatch_gap_ms": {}, "overhead": {},
            "brief": {
                "parallel-tools": large_figures(done, scenario),
                "openai-agents-plan": large_figures(lost, scenario),
            },
        }
    )  # fmt: skip
    wall = 2.0 / scenario.critical_path()
    assert "| framework | run | failed | requests | prompt tokens | dollars | wall / cp |" in table
    # (4,928 uncached at $0.40, 3,072 cached at $0.10, 100 out at $1.60) per million: $0.0024.
    assert f"| parallel-tools | complete | 0 | 2 | 8,000 (38%) | $0.0024 | {wall:.3f} |" in table
    assert (
        "| openai-agents-plan | error: PeerUnavailable: x | 8 | 0 | 0 (0%) | $0.0000 | n/a |"
        in table
    )
