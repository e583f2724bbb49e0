"""A scenario's simulator served over HTTP from a process of its own (`python -m benchmarks._serve
SCENARIO [N]`): it prints its base URL, then serves until its standard input closes.

For measurements of a framework's own process, where the server's memory and CPU must not count
(S7 with the real HTTP client: `benchmarks._memory`).
"""

from __future__ import annotations

import sys

import anyio

from benchmarks._endpoints import SimServer
from benchmarks._scenarios import SCENARIOS, Scenario, s7

__all__ = ["scenario_named"]


def scenario_named(name: str, n: int) -> Scenario:
    """S7 with `n` sub-agents, or one of `SCENARIOS` by name."""
    return s7(n) if name == "S7" else SCENARIOS[name]


async def _serve(scenario: Scenario) -> None:
    async with SimServer(scenario.simulator()) as server:
        print(server.base_url, flush=True)
        await anyio.to_thread.run_sync(sys.stdin.read)  # until the parent closes it


def main() -> None:
    """Serve the scenario named on the command line."""
    name, n = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 1
    anyio.run(_serve, scenario_named(name, n))


if __name__ == "__main__":
    main()
