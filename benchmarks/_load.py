"""Many runs at once in one process: throughput, event-loop lag and dispatch under load.

`concurrent_runs` starts `n` paor runs of a scenario together on one event loop, each with its own
simulator (in process, or over HTTP with a server of its own in the same process, so both ends of
every request share the loop), beside a ticker that sleeps 5 ms at a time: how late each wake-up
comes is the loop's lag, what every run on it waits on top of its own work.
"""

from __future__ import annotations

import time
from typing import Any

import anyio

from benchmarks._figures import dispatch_gaps, percentile
from benchmarks._paor import run_orchestrator
from benchmarks._run import RunRecord
from benchmarks._scenarios import Scenario

__all__ = ["TICK_S", "concurrent_runs"]

TICK_S = 0.005


async def concurrent_runs(scenario: Scenario, n: int, *, http: bool) -> dict[str, Any]:
    """Run `scenario` `n` times at once; the figures (times in ms, walls over the critical path)."""
    lags: list[float] = []
    records: list[RunRecord] = []
    done = anyio.Event()

    async def ticker() -> None:
        while not done.is_set():
            start = time.perf_counter()
            await anyio.sleep(TICK_S)
            lags.append(time.perf_counter() - start - TICK_S)

    async def one() -> None:
        records.append(await run_orchestrator(scenario, http=http))

    start = time.perf_counter()
    async with anyio.create_task_group() as tg:
        tg.start_soon(ticker)
        async with anyio.create_task_group() as runs:
            for _ in range(n):
                runs.start_soon(one)
        done.set()
    wall = time.perf_counter() - start
    cp = scenario.critical_path()
    ok = [r for r in records if r.error is None]
    walls = [r.wall_s / cp for r in ok]
    gaps = [g for r in ok for g in dispatch_gaps(r, scenario)]
    return {
        "runs": n,
        "failed": n - len(ok),
        "wall_s": round(wall, 3),
        "runs_per_s": round(n / wall, 2),
        "wall_over_cp_p50": round(percentile(walls, 50), 3),
        "wall_over_cp_p99": round(percentile(walls, 99), 3),
        "lag_ms_p50": round(percentile(lags, 50) * 1000, 2),
        "lag_ms_p99": round(percentile(lags, 99) * 1000, 2),
        "lag_ms_max": round(max(lags, default=0.0) * 1000, 1),
        "dispatch_ms_p50": round(percentile(gaps, 50) * 1000, 2),
        "dispatch_ms_p99": round(percentile(gaps, 99) * 1000, 2),
    }
