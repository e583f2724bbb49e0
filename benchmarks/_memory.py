"""S7 in a fresh process: peak resident memory with N sub-agents alive at once.

Run as `python -m benchmarks._memory FRAMEWORK N`; prints one JSON object. Each sub-agent makes one
tool call that holds it until all N have arrived (`Rendezvous`), so all N are provably alive at the
same time; the zero-latency lean models keep no log. Memory is read from /proc/self/status: the
resident size just before the run, and the high-water mark after it.
"""

from __future__ import annotations

import functools
import json
import logging
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import structlog

from benchmarks._run import Rendezvous

__all__ = ["measure", "status_kib"]


def status_kib(field: str) -> int:
    """A field of /proc/self/status, in KiB (0 if absent)."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(f"{field}:"):
                return int(line.split()[1])
    return 0


async def _paor(n: int) -> Rendezvous:
    from benchmarks._catalogue import s7
    from benchmarks._paor import LeanModel, orchestrator_for

    warm = s7(1)
    await orchestrator_for(
        warm, LeanModel(warm.script(), reuse=False), Rendezvous(1, "the fact")
    ).run(warm.goal)
    scenario = s7(n)
    meet = Rendezvous(n, "the fact")
    orch = orchestrator_for(scenario, LeanModel(scenario.script(), reuse=False), meet)
    await _measured(orch.run(scenario.goal))
    return meet


async def _paor_http(n: int, max_in_flight: int = 1000) -> Rendezvous:
    """S7 with paor's real HTTP client (`OpenAIChatModel`, at most `max_in_flight` requests at
    once) against the simulator served from a process of its own, so that only the framework's
    memory counts. The client is built, and has answered once, before the resident size is read:
    its imports are not the sub-agents'."""
    from agents import OpenAIChatModel
    from agents.models import ModelRequest
    from benchmarks._catalogue import s7
    from benchmarks._paor import orchestrator_for
    from memory import UserMessage

    command = [sys.executable, "-m", "benchmarks._serve", "S7", str(n), "--lean"]
    async with await anyio.open_process(command) as server:
        if server.stdout is None or server.stdin is None:
            raise RuntimeError("the simulator's process has no pipes")
        url = (await server.stdout.receive(4096)).decode().strip()
        # At 10,000 the last sub-agent reaches the rendezvous tens of seconds after the first
        # (the server is one process): neither a request nor the rendezvous is timed out before
        # then, since what is measured is memory.
        model = OpenAIChatModel(
            "sim",
            base_url=url,
            api_key="sim",
            protocol="tools",
            timeout=600.0,
            max_in_flight=max_in_flight,
        )
        await model.complete(ModelRequest(messages=(UserMessage(content="warm up"),)))
        scenario = s7(n)
        meet = Rendezvous(n, "the fact")
        # The plan of 10,000 subtasks arrives whole: streamed, its events (many times its text)
        # pass the client's 8 MiB bound on a reply, and the run ends failed (`plan_failed`).
        orch = orchestrator_for(scenario, model, meet, tool_timeout=600.0, stream_plans=False)
        await _measured(orch.run(scenario.goal, keep_events=False))
        await model.aclose()
        await server.stdin.aclose()
    return meet


async def _langgraph(n: int) -> Rendezvous:
    from benchmarks._catalogue import s7
    from benchmarks._langgraph import CONFIG, LeanChatModel, lc_tools, plan_graph

    warm = s7(1)
    await plan_graph(
        LeanChatModel(script=warm.script()), lc_tools(Rendezvous(1, "the fact"))
    ).ainvoke({"goal": warm.goal}, CONFIG)
    scenario = s7(n)
    meet = Rendezvous(n, "the fact")
    graph = plan_graph(LeanChatModel(script=scenario.script()), lc_tools(meet))
    await _measured(graph.ainvoke({"goal": scenario.goal}, CONFIG))
    return meet


_RESULT: dict[str, Any] = {}


async def _measured(run: Any) -> None:
    _RESULT["rss_before_kib"] = status_kib("VmRSS")
    start = time.perf_counter()
    with anyio.fail_after(900):
        await run
    _RESULT["wall_s"] = time.perf_counter() - start
    _RESULT["hwm_kib"] = status_kib("VmHWM")


async def measure(framework: str, n: int) -> dict[str, Any]:
    """Run S7 with `n` sub-agents in this process; return memory figures."""
    runners: dict[str, Callable[[int], Awaitable[Rendezvous]]] = {
        "paor": _paor,
        "paor (HTTP)": _paor_http,
        "paor (HTTP, 100 in flight)": functools.partial(_paor_http, max_in_flight=100),
        "langgraph-plan": _langgraph,
    }
    meet = await runners[framework](n)
    return {"n": n, "arrived": meet.arrived, **_RESULT}


def main() -> None:
    """Parse the command line, measure, print JSON."""
    structlog.configure(  # noqa: TID251 - an application entry point configures logging
        wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING),
        cache_logger_on_first_use=True,
    )
    framework, n = sys.argv[1], int(sys.argv[2])
    print(json.dumps(anyio.run(measure, framework, n)))


if __name__ == "__main__":
    main()
