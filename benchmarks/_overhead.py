"""Two overheads outside the loops' own logic: CPU per step with the real HTTP client, and cold start.

CPU over HTTP: S0 (one sub-agent: model, tool, model) run many times with each framework's own
client against the zero-latency simulator, which is served from another thread with its own event
loop, so that only the framework's thread is counted (`time.thread_time`): the framework, its HTTP
client stack and its side of the sockets, not the server's.

Cold start: a fresh interpreter that imports the framework's entry point, and paor's command line
(`paor --help`), each the least of several runs (noise only ever adds time).
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from typing import Any

import anyio
import openai

from agents import Executor, OpenAIChatModel
from benchmarks._catalogue import s0
from benchmarks._endpoints import SimServer
from benchmarks._paor import lookup_tool
from benchmarks._react import openai_turns, react_loop

__all__ = ["COLD_STARTS", "cold_start", "http_cpu", "served_in_a_thread"]

# What each framework's user runs first: its import, and for paor the command line.
COLD_STARTS = {
    "paor": ["-c", "import orchestrator, agents"],
    "paor --help": ["-c", "from orchestrator.cli import entry; entry()", "--help"],
    "langgraph": ["-c", "import langgraph.graph, langgraph.prebuilt, langchain_openai"],
    "openai": ["-c", "import openai"],
}


@contextmanager
def served_in_a_thread() -> Iterator[str]:
    """A fresh S0 simulator served over HTTP from its own thread and event loop: its base URL."""
    ready = threading.Event()
    stop = threading.Event()
    found: dict[str, Any] = {}

    async def serve() -> None:
        async with SimServer(s0().simulator()) as server:
            found["url"] = server.base_url
            ready.set()
            await anyio.to_thread.run_sync(stop.wait)

    def run() -> None:
        try:
            anyio.run(serve)
        except BaseException as exc:  # reported to the caller below
            found["error"] = exc
            ready.set()

    thread = threading.Thread(target=run, name="sim-server", daemon=True)
    thread.start()
    ready.wait(30)
    try:
        if "url" not in found:
            raise RuntimeError(f"the simulator did not start: {found.get('error')!r}")
        yield found["url"]
    finally:
        stop.set()
        thread.join(30)


Run = Callable[[], Awaitable[None]]


async def http_cpu(framework: str, runs: int) -> tuple[float, int]:
    """CPU seconds of this thread over `runs` S0 runs of `framework` ("paor", "react" or
    "langgraph-react") over HTTP, and the model calls they made."""
    (sub,) = s0().plan
    task = f"Task: {sub.goal}"

    async def lookup(key: str) -> str:
        return f"{key}: the fact"

    with served_in_a_thread() as url:
        run, close = _runner(framework, url, task, lookup)
        for _ in range(max(10, runs // 10)):  # warm up: connections, lazy imports, caches
            await run()
        start = time.thread_time()
        for _ in range(runs):
            await run()
        cpu = time.thread_time() - start
        await close()
    return cpu, runs * (len(sub.turns()))


def _runner(
    framework: str, url: str, task: str, lookup: Callable[[str], Awaitable[str]]
) -> tuple[Run, Run]:
    if framework == "paor":
        model = OpenAIChatModel("sim", base_url=url, api_key="sim", protocol="tools")
        executor = Executor(model, [lookup_tool(lookup)])

        async def paor() -> None:
            report = await executor.run(task.removeprefix("Task: "))
            if not report.ok:
                raise RuntimeError(f"paor's S0 run failed: {report.stop_reason}")

        return paor, model.aclose
    if framework == "react":
        client = openai.AsyncOpenAI(base_url=url, api_key="sim", max_retries=0)
        complete = openai_turns(client, lookup)

        async def react() -> None:
            await react_loop(complete, task, lookup)

        return react, client.close
    if framework == "langgraph-react":
        from langchain_core.messages import HumanMessage
        from langchain_openai import ChatOpenAI

        from benchmarks._langgraph import CONFIG, lc_tools, react_agent

        chat = ChatOpenAI(model="sim", base_url=url, api_key="sim", max_retries=0)
        agent = react_agent(chat, lc_tools(lookup))

        async def langgraph() -> None:
            await agent.ainvoke({"messages": [HumanMessage(task)]}, CONFIG)

        async def nothing() -> None:
            return None

        return langgraph, nothing
    raise ValueError(f"no HTTP CPU runner for {framework!r}")


async def cold_start(command: list[str], runs: int) -> float:
    """The least wall time, in seconds, of `runs` fresh interpreters running `command`."""
    best = float("inf")
    for _ in range(runs):
        start = time.perf_counter()
        done = await anyio.run_process([sys.executable, *command], check=False)
        elapsed = time.perf_counter() - start
        if done.returncode:
            tail = done.stderr.decode(errors="replace").strip().splitlines()[-1:]
            raise RuntimeError(f"{' '.join(command)} failed: {tail}")
        best = min(best, elapsed)
    return best
