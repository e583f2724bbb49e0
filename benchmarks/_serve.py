"""A scenario's simulator served over HTTP from a process of its own (`python -m benchmarks._serve
SCENARIO [N] [--lean]`): it prints its base URL, then serves until its standard input closes.

For measurements of a framework's own process, where the server's memory and CPU must not count
(S7 with the real HTTP client: `benchmarks._memory`). `--lean` answers with the script's replies
and none of the simulator's accounting (no latencies, token counts, prefix index or log): what the
memory runs read is the framework's side only, and 10,000 sub-agents need 20,000 answers.
"""

from __future__ import annotations

import sys
from typing import Any

import anyio

from agents.testing import Completion, FakeOpenAIServer, ServerAction, TokenUsage
from benchmarks._catalogue import SCENARIOS, s7
from benchmarks._endpoints import SimServer
from benchmarks._scenarios import Scenario
from benchmarks._sim import SimRequest, classify

__all__ = ["scenario_named"]


def scenario_named(name: str, n: int) -> Scenario:
    """S7 with `n` sub-agents, or one of `SCENARIOS` by name."""
    return s7(n) if name == "S7" else SCENARIOS[name]


async def _serve(scenario: Scenario, lean: bool) -> None:
    server = _lean_server(scenario) if lean else SimServer(scenario.simulator())
    async with server:
        print(server.base_url, flush=True)
        await anyio.to_thread.run_sync(sys.stdin.read)  # until the parent closes it


def _lean_server(scenario: Scenario) -> FakeOpenAIServer:
    """The scenario's scripted replies, with none of the simulator's accounting."""
    script = scenario.script()

    def answer(body: dict[str, Any]) -> ServerAction:
        # Every planner request is its kind's first: S7 plans once and writes once.
        reply = script.reply(classify(SimRequest.from_body(body)))
        return Completion(content=reply.content, calls=reply.tool_calls, usage=TokenUsage())

    return FakeOpenAIServer(answer, model="sim")


def main() -> None:
    """Serve the scenario named on the command line."""
    args = [a for a in sys.argv[1:] if a != "--lean"]
    name, n = args[0], int(args[1]) if len(args) > 1 else 1
    anyio.run(_serve, scenario_named(name, n), "--lean" in sys.argv)


if __name__ == "__main__":
    main()
