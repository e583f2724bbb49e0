"""The single-agent baselines: a plain loop over the `openai` client, as its users write it.

No framework: the transcript is a list of wire messages and the loop ends at the first reply without
tool calls. The sequential ReAct agent (`run_react`) runs each tool call to completion before the
next; the parallel one (`run_parallel`: parallel function calling, what LLMCompiler's paper compared
itself with) runs every tool call of a reply at once and sends their results back together.
"""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import openai

from benchmarks._endpoints import SimServer
from benchmarks._paor import lookup_tool
from benchmarks._run import RunRecord, recording
from benchmarks._scenarios import Scenario
from benchmarks._sim import SimRequest, classify

__all__ = [
    "PARALLEL_INSTRUCTIONS",
    "REACT_INSTRUCTIONS",
    "openai_turns",
    "react_loop",
    "run_parallel",
    "run_react",
    "s0_cpu_react",
]

REACT_INSTRUCTIONS = (
    "You are a research agent. Call the tools one at a time to gather every fact the task needs, "
    "then reply with the final answer as plain text."
)
PARALLEL_INSTRUCTIONS = (
    "You are a research agent. Gather every fact the task needs, calling in parallel every tool "
    "call that does not need another's result, then reply with the final answer as plain text."
)
Complete = Callable[[list[dict[str, Any]]], Awaitable[dict[str, Any]]]
ToolFn = Callable[[str], Awaitable[str]]


async def react_loop(
    complete: Complete,
    task: str,
    lookup: ToolFn,
    *,
    parallel: bool = False,
    max_steps: int = 500,
    brief: str = "",
) -> str:
    """Run the loop on `task` and return the final answer; `parallel` runs a reply's calls at once.

    Raises:
        RuntimeError: No answer within `max_steps` model calls.
    """
    instructions = (PARALLEL_INSTRUCTIONS if parallel else REACT_INSTRUCTIONS) + brief
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": instructions},
        {"role": "user", "content": task},
    ]
    for _ in range(max_steps):
        message = await complete(messages)
        messages.append(message)
        calls = message.get("tool_calls") or []
        if not calls:
            return str(message.get("content") or "")
        keys = [str(json.loads(c["function"]["arguments"]).get("key", "")) for c in calls]
        if parallel and len(calls) > 1:
            results = await _all_at_once(lookup, keys)
        else:
            results = [await lookup(key) for key in keys]
        for call, result in zip(calls, results, strict=True):
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": result})
    raise RuntimeError(f"no answer within {max_steps} steps")


async def _all_at_once(lookup: ToolFn, keys: list[str]) -> list[str]:
    """Every lookup at once (what `asyncio.gather` does), the results in call order."""
    results = [""] * len(keys)

    async def run(i: int) -> None:
        results[i] = await lookup(keys[i])

    async with anyio.create_task_group() as tg:
        for i in range(len(keys)):
            tg.start_soon(run, i)
    return results


async def run_react(scenario: Scenario) -> RunRecord:
    """Run the sequential baseline on `scenario` over HTTP."""
    return await _run_loop(scenario, parallel=False)


async def run_parallel(scenario: Scenario) -> RunRecord:
    """Run the parallel-tool-call baseline on `scenario` over HTTP."""
    return await _run_loop(scenario, parallel=True)


def openai_turns(client: openai.AsyncOpenAI, lookup: ToolFn) -> Complete:
    """The loop's model over the `openai` client: each turn a chat completion offering the
    lookup tool, its message as a plain dict."""
    spec = lookup_tool(lookup).spec()
    tools: Any = [{"type": "function", "function": spec.model_dump()}]

    async def complete(messages: list[dict[str, Any]]) -> dict[str, Any]:
        wire: Any = messages
        completion = await client.chat.completions.create(model="sim", messages=wire, tools=tools)
        return completion.choices[0].message.model_dump(exclude_none=True)

    return complete


async def _run_loop(scenario: Scenario, *, parallel: bool) -> RunRecord:
    sim = scenario.simulator()
    name = "parallel-tools" if parallel else "react"
    record = RunRecord(framework=name, scenario=scenario.name, transport="http")

    async def lookup(key: str) -> str:
        return await sim.tool(key, scenario.tool_slow(key))

    async with SimServer(sim) as server:
        client = openai.AsyncOpenAI(
            base_url=server.base_url,
            api_key="sim",
            max_retries=scenario.client_retries,
            timeout=openai.NOT_GIVEN if scenario.timeout_s is None else scenario.timeout_s,
        )
        complete = openai_turns(client, lookup)
        start = time.perf_counter()
        task = scenario.par_task if parallel else scenario.task
        with recording(record, sim):
            record.answer = await react_loop(
                complete, task, lookup, parallel=parallel, brief=scenario.brief
            )
            record.wall_s = time.perf_counter() - start
        await client.close()
    return record


async def s0_cpu_react(scenario: Scenario, runs: int) -> tuple[float, int]:
    """CPU seconds of the plain loop over `runs` S0 runs with a zero-latency in-process model, and
    the model calls made: the floor any framework adds to."""
    script = scenario.script()
    (sub,) = scenario.plan
    calls = 0

    async def complete(messages: list[dict[str, Any]]) -> dict[str, Any]:
        nonlocal calls
        calls += 1
        reply = script.reply(classify(SimRequest(messages=messages, tools=_LEAN_TOOLS)))
        wire = [
            {"id": f"c{calls}.{i}", "type": "function", "function": {"name": n, "arguments": a}}
            for i, (n, a) in enumerate(reply.tool_calls)
        ]
        return {"role": "assistant", "content": reply.content, "tool_calls": wire}

    async def lookup(key: str) -> str:
        return f"{key}: the fact"

    for _ in range(max(10, runs // 10)):
        await react_loop(complete, f"Task: {sub.goal}", lookup)
    calls = 0
    start = time.process_time()
    for _ in range(runs):
        await react_loop(complete, f"Task: {sub.goal}", lookup)
    return time.process_time() - start, calls


_LEAN_TOOLS = ({"type": "function", "function": {"name": "lookup"}},)
