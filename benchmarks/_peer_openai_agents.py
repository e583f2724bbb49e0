"""The OpenAI Agents SDK peer, run by the peer virtual environment's Python (never imported by paor).

The SDK's import name, `agents`, is paor's too, so this script runs in its own environment
(`benchmarks/.peer-venv`) and process, in isolated mode so that paor's `agents` cannot shadow the
SDK's. It reads one JSON job on stdin and prints one JSON result on stdout:

- `{"mode": "react", "base_url", "task", "instructions", "tools": {key: [latency_s, text]}}`: the SDK's
  agent loop over HTTP against the simulator, with the scenario's lookup tool;
- `{"mode": "s0", "runs", "task", "instructions"}`: S0 with an in-process zero-latency model, CPU
  seconds per model call;
- `{"mode": "memory", "n", "task", "instructions"}`: `n` agents at once, each held in its one tool call
  until all have arrived, with the peak resident set size.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import sys
import time
from typing import Any

from openai.types.responses import (
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
)

sdk: Any = importlib.import_module("agents")
sdk_models: Any = importlib.import_module("agents.models.interface")
sdk_items: Any = importlib.import_module("agents.items")
sdk_usage: Any = importlib.import_module("agents.usage")

LOOKUP_DOC = 'Look up one fact by its key.\n\nArgs:\n    key: The fact\'s key, e.g. "a.0".\n'


class LeanModel(sdk_models.Model):  # type: ignore[misc]
    """A zero-latency model: one lookup call, then an answer once a tool result is in the input."""

    def __init__(self) -> None:
        self.calls = 0

    async def get_response(
        self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any
    ) -> Any:
        """Answer one turn."""
        self.calls += 1
        items = input if isinstance(input, list) else []
        answered = any(
            isinstance(i, dict) and i.get("type") == "function_call_output" for i in items
        )
        output: Any
        if answered:
            text = ResponseOutputText(
                type="output_text", text="Facts of s0: found [lookup s0].", annotations=[]
            )
            output = ResponseOutputMessage(
                id=f"m{self.calls}",
                type="message",
                role="assistant",
                status="completed",
                content=[text],
            )
        else:
            output = ResponseFunctionToolCall(
                type="function_call",
                call_id=f"c{self.calls}",
                name="lookup",
                arguments='{"key": "s0.0"}',
            )
        return sdk_items.ModelResponse(
            output=[output], usage=sdk_usage.Usage(requests=1), response_id=None
        )

    def stream_response(self, *args: Any, **kwargs: Any) -> Any:
        """Not used."""
        raise NotImplementedError


def lookup_tool(body: Any) -> Any:
    """The lookup tool as an SDK function tool running `body`."""

    async def lookup(key: str) -> str:
        return str(await body(key))

    lookup.__doc__ = LOOKUP_DOC
    return sdk.function_tool(lookup)


async def react(job: dict[str, Any]) -> dict[str, Any]:
    """The SDK's agent loop over HTTP."""
    openai = importlib.import_module("openai")
    client = openai.AsyncOpenAI(base_url=job["base_url"], api_key="sim", max_retries=0)
    table = job["tools"]

    async def body(key: str) -> str:
        latency, text = table[key]
        await asyncio.sleep(latency)
        return str(text)

    model = sdk.OpenAIChatCompletionsModel(model="sim", openai_client=client)
    agent = sdk.Agent(
        name="react", instructions=job["instructions"], tools=[lookup_tool(body)], model=model
    )
    start = time.perf_counter()
    result = await sdk.Runner.run(agent, job["task"], max_turns=1000)
    wall = time.perf_counter() - start
    await client.close()
    return {"wall_s": wall, "answer": str(result.final_output)}


async def s0(job: dict[str, Any]) -> dict[str, Any]:
    """CPU per model call of the SDK's loop on S0."""

    async def body(key: str) -> str:
        return f"{key}: the fact"

    model = LeanModel()
    agent = sdk.Agent(
        name="s0", instructions=job["instructions"], tools=[lookup_tool(body)], model=model
    )
    for _ in range(max(10, job["runs"] // 10)):
        await sdk.Runner.run(agent, job["task"])
    model.calls = 0
    start = time.process_time()
    for _ in range(job["runs"]):
        await sdk.Runner.run(agent, job["task"])
    return {"cpu_s": time.process_time() - start, "steps": model.calls}


def rendezvous(n: int) -> tuple[Any, list[int]]:
    """A tool body holding every caller until `n` have arrived, and the arrival count."""
    arrived = [0]
    all_here = asyncio.Event()

    async def body(key: str) -> str:
        arrived[0] += 1
        if arrived[0] >= n:
            all_here.set()
        await all_here.wait()
        return f"{key}: the fact"

    return body, arrived


async def memory(job: dict[str, Any]) -> dict[str, Any]:
    """Peak resident memory of `n` agent runs alive at once."""
    n = job["n"]

    def agent_with(body: Any) -> Any:
        tools = [lookup_tool(body)]
        return sdk.Agent(
            name="s7", instructions=job["instructions"], tools=tools, model=LeanModel()
        )

    warm, _ = rendezvous(1)
    await sdk.Runner.run(
        agent_with(warm), job["task"]
    )  # imports and caches are not per-agent memory
    body, arrived = rendezvous(n)
    agent = agent_with(body)
    before = status_kib("VmRSS")
    start = time.perf_counter()
    runs = [sdk.Runner.run(agent, job["task"]) for _ in range(n)]
    async with asyncio.timeout(120):
        for finished in asyncio.as_completed(runs):
            await finished
    return {
        "n": n,
        "arrived": arrived[0],
        "rss_before_kib": before,
        "hwm_kib": status_kib("VmHWM"),
        "wall_s": time.perf_counter() - start,
    }


def status_kib(field: str) -> int:
    """A field of /proc/self/status, in KiB."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(f"{field}:"):
                return int(line.split()[1])
    return 0


def main() -> None:
    """Run the job on stdin; print its result."""
    sdk.set_tracing_disabled(True)  # the SDK would otherwise export traces to OpenAI
    job = json.loads(sys.stdin.read())
    modes = {"react": react, "s0": s0, "memory": memory}
    print(json.dumps(asyncio.run(modes[job["mode"]](job))))


if __name__ == "__main__":
    main()
