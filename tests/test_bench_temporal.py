"""The benchmark suite's Temporal section runs to its figures: its fake models behave as paor's
rules want a model to (a grounded batch's goal answered from its search and cited, a sub-agent's
answer from its lookup, a synthesis from the results), so every goal ends done and every run
complete on both backends. A fake that paor rightly refuses would end the section with an error
instead of figures, as it did before these fakes answered from what they were given."""

from __future__ import annotations

import pytest

from benchmarks._temporal import Sizes, measure

pytestmark = pytest.mark.anyio


async def test_the_section_measures_both_backends() -> None:
    found = await measure(Sizes(goals=10, concurrency=5, runs=1), progress=lambda _line: None)
    throughput, run = found["throughput"], found["run"]
    assert throughput["in_process"] > 0
    assert throughput["temporal"] > 0
    assert run["in_process"] > 0
    assert run["temporal"] > 0
    # Model calls and lookups of one run: the plan, each sub-agent's lookup call and answer, the
    # synthesis (8), and the three lookups.
    assert run["calls"] == 11
