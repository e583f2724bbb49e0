"""The sequential ReAct baseline: a plain loop over the `openai` client, one tool call at a time.

No framework: the transcript is a list of wire messages, each tool call runs to completion before the
next model call, and the loop ends at the first reply without tool calls.
"""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable
from typing import Any

import openai

from benchmarks._paor import lookup_tool
from benchmarks._run import RunRecord
from benchmarks._scenarios import Scenario
from benchmarks._sim import SimRequest, SimServer, Simulator, classify

__all__ = ["REACT_INSTRUCTIONS", "react_loop", "run_react", "s0_cpu_react"]

REACT_INSTRUCTIONS = (
    "You are a research agent. Call the tools one at a time to gather every fact the task needs, "
    "then reply with the final answer as plain text."
)
Complete = Callable[[list[dict[str, Any]]], Awaitable[dict[str, Any]]]
ToolFn = Callable[[str], Awaitable[str]]


async def react_loop(complete: Complete, task: str, lookup: ToolFn, *, max_steps: int = 500) -> str:
    """Run the loop on `task` and return the final answer.

    Raises:
        RuntimeError: No answer within `max_steps` model calls.
    """
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": REACT_INSTRUCTIONS},
        {"role": "user", "content": task},
    ]
    for _ in range(max_steps):
        message = await complete(messages)
        messages.append(message)
        calls = message.get("tool_calls") or []
        if not calls:
            return str(message.get("content") or "")
        for call in calls:
            args = json.loads(call["function"]["arguments"])
            result = await lookup(str(args.get("key", "")))
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": result})
    raise RuntimeError(f"no answer within {max_steps} steps")


async def run_react(scenario: Scenario) -> RunRecord:
    """Run the sequential baseline on `scenario` over HTTP."""
    sim = Simulator(scenario.script(), scenario.latency, tool_tokens=scenario.tool_tokens)
    record = RunRecord(framework="react", scenario=scenario.name, transport="http")

    async def lookup(key: str) -> str:
        return await sim.tool(key, scenario.tool_slow(key))

    spec = lookup_tool(lookup).spec()
    tools: Any = [{"type": "function", "function": spec.model_dump()}]
    async with SimServer(sim) as server:
        client = openai.AsyncOpenAI(base_url=server.base_url, api_key="sim", max_retries=0)

        async def complete(messages: list[dict[str, Any]]) -> dict[str, Any]:
            wire: Any = messages
            completion = await client.chat.completions.create(
                model="sim", messages=wire, tools=tools
            )
            return completion.choices[0].message.model_dump(exclude_none=True)

        start = time.perf_counter()
        record.answer = await react_loop(complete, scenario.task, lookup)
        record.wall_s = time.perf_counter() - start
        await client.close()
    record.log, record.tools = sim.log, sim.tools
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
