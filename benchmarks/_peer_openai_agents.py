"""The OpenAI Agents SDK peer, run by the peer virtual environment's Python (never imported by paor).

The SDK's import name, `agents`, is paor's too, so this script runs in its own environment
(`benchmarks/.peer-venv`) and process, in isolated mode so that paor's `agents` cannot shadow the
SDK's. It reads one JSON job on stdin and prints one JSON result on stdout:

- `{"mode": "react", "base_url", "task", "instructions", "tools": {key: [latency_s, text]},
  "max_retries", "timeout", "warmup"}`: the SDK's agent loop over HTTP against the
  simulator, with the scenario's lookup tool (each call sleeps its latency, then returns its text);
- `{"mode": "plan", "base_url", "goal", "instructions", "planner", "synthesis", "tools",
  "max_retries", "timeout", "warmup"}`: the SDK's own parallel pattern, written as its
  examples write it (`examples/agent_patterns/parallelization.py`,
  `examples/research_bot/manager.py`: a planner agent with a structured `output_type`, then worker
  agents run as plain asyncio tasks): a planner `Agent` whose output type is `Plan`; each subtask
  a worker `Agent` run (`Runner.run`) with the lookup and report_issue tools, started as soon as its own dependencies are done; after a worker reported an
  invalidation, a replanner `Agent` (output type `Replan`) whose removals are cancelled or dropped
  and whose additions are scheduled; then a synthesis `Agent` over the surviving results;
- `{"mode": "s0", "runs", "task", "instructions"}`: S0 with an in-process zero-latency model, CPU
  seconds per model call;
- `{"mode": "memory", "n", "task", "instructions"}`: `n` agents at once, each held in its one tool call
  until all have arrived, with the peak resident set size.

Modes "react" and "plan" time one run over HTTP and report its `wall_s`. Each job is a fresh process,
so the SDK's first-call costs (lazy imports, schema and tool set-up, first runs of its loop) would
land in that run; `"warmup": N` (default 0, cold) first makes N untimed in-process runs of the same
shape against a zero-latency scripted model (`LeanModel`, `LeanPlanModel`), as mode "s0" warms up,
so that they do not, then one full garbage collection: a fresh process has never made one, and the
first, over the whole heap of the SDK's imports, takes about 0.1 s wherever it falls (in a cold plan
run, typically on the first fan-out), where a long-running process made it long ago. Warm-up never
reaches the simulator, whose log stays that of the timed run alone; the HTTP client's first
connections are still made inside the timed run.
"""

from __future__ import annotations

import asyncio
import gc
import importlib
import json
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

from openai.types.responses import (
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
)
from pydantic import BaseModel

sdk: Any = importlib.import_module("agents")
sdk_models: Any = importlib.import_module("agents.models.interface")
sdk_items: Any = importlib.import_module("agents.items")
sdk_usage: Any = importlib.import_module("agents.usage")
sdk_run_config: Any = importlib.import_module("agents.run_config")

Body = Callable[[str], Awaitable[str]]
LOOKUP_DOC = 'Look up one fact by its key.\n\nArgs:\n    key: The fact\'s key, e.g. "a.0".\n'
REPORT_DOC = "Tell the planner the task's assumptions are wrong."
MAX_TURNS = 1000
WARM_GOAL = "[goal:warm-up] Warm-up: gather every fact and write the answer."


class Subtask(BaseModel):
    """One subtask: its id, its goal, and the ids whose results it needs."""

    id: str
    goal: str
    depends_on: list[str]


class Plan(BaseModel):
    """The planner's plan."""

    subtasks: list[Subtask]
    rationale: str


class Replan(BaseModel):
    """The planner's change to the plan after a subtask invalidated it."""

    remove: list[str]
    add: list[Subtask]
    rationale: str


def said(text: str, n: int) -> Any:
    """A model response that answers `text`."""
    content = ResponseOutputText(type="output_text", text=text, annotations=[])
    output = ResponseOutputMessage(
        id=f"m{n}", type="message", role="assistant", status="completed", content=[content]
    )
    return sdk_items.ModelResponse(
        output=[output], usage=sdk_usage.Usage(requests=1), response_id=None
    )


def called(name: str, arguments: str, n: int) -> Any:
    """A model response that calls tool `name` once."""
    output = ResponseFunctionToolCall(
        type="function_call", call_id=f"c{n}", name=name, arguments=arguments
    )
    return sdk_items.ModelResponse(
        output=[output], usage=sdk_usage.Usage(requests=1), response_id=None
    )


def tool_outputs(items: list[Any]) -> int:
    """How many tool results the input holds."""
    return sum(1 for i in items if isinstance(i, dict) and i.get("type") == "function_call_output")


class LeanModel(sdk_models.Model):  # type: ignore[misc]
    """A zero-latency model: one lookup call, then an answer once a tool result is in the input."""

    def __init__(self) -> None:
        self.calls = 0

    async def get_response(
        self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any
    ) -> Any:
        """Answer one turn."""
        self.calls += 1
        if tool_outputs(input if isinstance(input, list) else []):
            return said("Facts of s0: found [lookup s0].", self.calls)
        return called("lookup", '{"key": "s0.0"}', self.calls)

    def stream_response(self, *args: Any, **kwargs: Any) -> Any:
        """Not used."""
        raise NotImplementedError


class LeanPlanModel(LeanModel):
    """A zero-latency model for warm-up runs of mode "plan", which walk every path of the timed run.

    The plan is one subtask, w0, whose worker looks one fact up and reports an invalidation; the
    replan adds w1 after it, whose worker looks one fact up; then the synthesis answers.
    """

    async def get_response(
        self,
        system_instructions: Any,
        input: Any,
        model_settings: Any,
        tools: Any,
        output_schema: Any,
        *args: Any,
        **kwargs: Any,
    ) -> Any:
        """Answer one turn."""
        self.calls += 1
        if output_schema is not None and not output_schema.is_plain_text():
            if output_schema.json_schema().get("title") == "Plan":
                body: dict[str, Any] = {"subtasks": [warm_sub("w0")], "rationale": "warm-up"}
            else:
                body = {"remove": [], "add": [warm_sub("w1", "w0")], "rationale": "warm-up"}
            return said(json.dumps(body), self.calls)
        if not tools:
            return said("Final answer: warmed up.", self.calls)
        items = input if isinstance(input, list) else [{"role": "user", "content": input}]
        opening = str(items[0].get("content", "")) if items and isinstance(items[0], dict) else ""
        done = tool_outputs(items)
        if done == 0:
            return called("lookup", '{"key": "w.0"}', self.calls)
        if done == 1 and opening.startswith("Task: [sub:w0]"):
            report = json.dumps({"kind": "invalidates", "reason": "warm-up"})
            return called("report_issue", report, self.calls)
        return said("Facts: found [lookup w].", self.calls)


def warm_sub(sub_id: str, *deps: str) -> dict[str, Any]:
    """A warm-up subtask as the lean planner writes it."""
    return {"id": sub_id, "goal": f"[sub:{sub_id}] Look up one fact.", "depends_on": list(deps)}


def lookup_tool(body: Body) -> Any:
    """The lookup tool as an SDK function tool running `body`."""

    async def lookup(key: str) -> str:
        return str(await body(key))

    lookup.__doc__ = LOOKUP_DOC
    return sdk.function_tool(lookup)


def report_tool() -> Any:
    """The report_issue tool: the worker's run records the call, which the scheduler reads."""

    async def report_issue(kind: str, reason: str) -> str:
        return "Noted; the planner will be told."

    report_issue.__doc__ = REPORT_DOC
    return sdk.function_tool(report_issue)


def table_body(table: dict[str, list[Any]]) -> Body:
    """A lookup body that sleeps each key's latency, then returns its text."""

    async def body(key: str) -> str:
        latency, text = table[key]
        await asyncio.sleep(latency)
        return str(text)

    return body


async def instant(key: str) -> str:
    """A zero-latency lookup body, for warm-up runs."""
    return f"{key}: the fact"


def sim_model(job: dict[str, Any]) -> tuple[Any, Any]:
    """The OpenAI client for the simulator, and the SDK's chat completions model over it."""
    openai = importlib.import_module("openai")
    client = openai.AsyncOpenAI(
        base_url=job["base_url"],
        api_key="sim",
        max_retries=job.get("max_retries", 0),
        # the job's request timeout, if it sets one (None would mean no timeout at all)
        **({} if job.get("timeout") is None else {"timeout": job["timeout"]}),
    )
    return client, sdk.OpenAIChatCompletionsModel(model="sim", openai_client=client)


def settle(job: dict[str, Any]) -> None:
    """After warm-up runs, the full collection a long-running process has long since made."""
    if job.get("warmup", 0):
        gc.collect()


async def react(job: dict[str, Any]) -> dict[str, Any]:
    """The SDK's agent loop over HTTP."""
    warm = sdk.Agent(
        name="react",
        instructions=job["instructions"],
        tools=[lookup_tool(instant)],
        model=LeanModel(),
    )
    for _ in range(job.get("warmup", 0)):
        await sdk.Runner.run(warm, job["task"], max_turns=MAX_TURNS)
    settle(job)
    client, model = sim_model(job)
    tools = [lookup_tool(table_body(job["tools"]))]
    agent = sdk.Agent(name="react", instructions=job["instructions"], tools=tools, model=model)
    start = time.perf_counter()
    result = await sdk.Runner.run(agent, job["task"], max_turns=MAX_TURNS)
    wall = time.perf_counter() - start
    await client.close()
    return {"wall_s": wall, "answer": str(result.final_output)}


def mask_old_results(max_tokens: int) -> Callable[[Any], Any]:
    """The `call_model_input_filter` an SDK user writes for long tool results: while the input is
    over `max_tokens` (four characters a token), the oldest tool outputs give way to a
    placeholder, those of the latest turn never."""

    def size(item: Any) -> int:
        return len(str(item.get("output") or item.get("content") or item.get("arguments") or ""))

    def keep_under(data: Any) -> Any:
        items = [dict(item) for item in data.model_data.input]
        total = sum(size(item) for item in items) // 4
        calls = [i for i, item in enumerate(items) if item.get("type") == "function_call"]
        for item in items[: calls[-1] if calls else 0]:
            if total <= max_tokens:
                break
            if item.get("type") == "function_call_output":
                total -= size(item) // 4
                item["output"] = "[old tool result elided]"
        return sdk_run_config.ModelInputData(input=items, instructions=data.model_data.instructions)

    return keep_under


class Crew:
    """Mode "plan"'s agents on one model, and the code that runs them (see the module docstring)."""

    def __init__(self, job: dict[str, Any], model: Any, body: Body) -> None:
        planner, instructions = job["planner"], job["instructions"]
        self.planner = sdk.Agent(
            name="planner", instructions=planner, model=model, output_type=Plan
        )
        self.replanner = sdk.Agent(
            name="replanner", instructions=planner, model=model, output_type=Replan
        )
        tools = [lookup_tool(body), report_tool()]
        self.worker = sdk.Agent(name="worker", instructions=instructions, tools=tools, model=model)
        self.writer = sdk.Agent(name="synthesis", instructions=job["synthesis"], model=model)
        # Behind a context window, each worker's input is kept under half of it, as paor's.
        budget = job.get("max_tokens")
        self.run_config = (
            sdk.RunConfig()
            if budget is None
            else sdk.RunConfig(call_model_input_filter=mask_old_results(budget))
        )

    async def run(self, goal: str) -> str:
        """Plan, execute, synthesize: the final answer."""
        first = await sdk.Runner.run(self.planner, f"Goal: {goal}", max_turns=MAX_TURNS)
        draft: Plan = first.final_output_as(Plan, raise_if_incorrect_type=True)
        plan = {s.id: s for s in draft.subtasks}
        results = await self.execute(goal, plan)
        body = "\n\n".join(f"## {i}\n{results[i]}" for i in plan if i in results)
        answer = await sdk.Runner.run(self.writer, f"Goal: {goal}\n\n{body}", max_turns=MAX_TURNS)
        return str(answer.final_output)

    async def execute(self, goal: str, plan: dict[str, Subtask]) -> dict[str, str]:
        """Run every subtask of `plan` (changed in place by replans) once its dependencies are done.

        A subtask starts the moment its last dependency's result is in, unless one of them reported
        an invalidation whose replan has not yet been applied. Replans run one at a time, in the
        order the invalidations came in, while the other workers carry on; a removed subtask is
        cancelled if it is running and dropped (with its result) otherwise.
        """
        results: dict[str, str] = {}
        running: dict[asyncio.Task[tuple[str, list[str]]], str] = {}
        issues: list[tuple[str, str]] = []  # (trigger, reason), waiting for the replanner
        replanning: tuple[asyncio.Task[Replan], str] | None = None
        cancelled: list[asyncio.Task[Any]] = []
        try:
            while True:
                held = {t for t, _ in issues} | ({replanning[1]} if replanning else set())
                busy = set(running.values())
                for sub_id, sub in plan.items():
                    if sub_id in results or sub_id in busy:
                        continue
                    if all(d in results and d not in held for d in sub.depends_on):
                        task = asyncio.create_task(self.work(sub, context(sub, results)))
                        running[task] = sub_id
                if replanning is None and issues:
                    trigger, reason = issues.pop(0)
                    asking = asyncio.create_task(self.replan(goal, plan, trigger, reason))
                    replanning = (asking, trigger)
                waiting: set[asyncio.Task[Any]] = set(running)
                if replanning is not None:
                    waiting.add(replanning[0])
                if not waiting:
                    return results
                done, _ = await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
                if replanning is not None and replanning[0] in done:
                    change = replanning[0].result()
                    replanning = None
                    for removed in change.remove:
                        plan.pop(removed, None)
                        results.pop(removed, None)
                        for task, sub_id in list(running.items()):
                            if sub_id == removed and task not in done:
                                task.cancel()
                                cancelled.append(task)
                                del running[task]
                    plan.update((s.id, s) for s in change.add)
                for task in [t for t in done if t in running]:
                    sub_id = running.pop(task)
                    text, reasons = task.result()
                    if sub_id in plan:
                        results[sub_id] = text
                        issues += [(sub_id, reason) for reason in reasons]
        finally:
            leftover: list[asyncio.Task[Any]] = [*running, *cancelled]
            if replanning is not None:
                leftover.append(replanning[0])
            for task in leftover:
                task.cancel()
            await asyncio.gather(*leftover, return_exceptions=True)

    async def work(self, sub: Subtask, known: str) -> tuple[str, list[str]]:
        """One worker run: its answer, and the reasons of every invalidation it reported."""
        task = f"Task: {sub.goal}" + (f"\n\nWhat is already known:\n{known}" if known else "")
        result = await sdk.Runner.run(
            self.worker, task, max_turns=MAX_TURNS, run_config=self.run_config
        )
        reasons = []
        for item in result.new_items:
            raw: Any = getattr(item, "raw_item", None)
            if item.type != "tool_call_item" or getattr(raw, "name", None) != "report_issue":
                continue
            args = json.loads(raw.arguments or "{}")
            if args.get("kind") == "invalidates":
                reasons.append(str(args.get("reason", "")))
        return str(result.final_output), reasons

    async def replan(
        self, goal: str, plan: dict[str, Subtask], trigger: str, reason: str
    ) -> Replan:
        """Ask the replanner what to remove and add after `trigger` reported `reason`."""
        listing = "\n".join(f"- {i}: {s.goal}" for i, s in plan.items())
        prompt = (
            f"Goal: {goal}\n\nSubtask {trigger} reported a problem: {reason}\n\nPlan:\n{listing}"
        )
        result = await sdk.Runner.run(self.replanner, prompt, max_turns=MAX_TURNS)
        change: Replan = result.final_output_as(Replan, raise_if_incorrect_type=True)
        return change


def context(sub: Subtask, results: dict[str, str]) -> str:
    """What a subtask's dependencies found, as its worker is told."""
    return "\n\n".join(f"[{d}] {results[d]}" for d in sub.depends_on)


async def plan_and_execute(job: dict[str, Any]) -> dict[str, Any]:
    """The SDK's parallel pattern over HTTP: planner, workers as asyncio tasks, replanner, writer."""
    for _ in range(job.get("warmup", 0)):
        await Crew(job, LeanPlanModel(), instant).run(WARM_GOAL)
    settle(job)
    client, model = sim_model(job)
    crew = Crew(job, model, table_body(job["tools"]))
    start = time.perf_counter()
    answer = await crew.run(job["goal"])
    wall = time.perf_counter() - start
    await client.close()
    return {"wall_s": wall, "answer": answer}


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
    modes = {"react": react, "plan": plan_and_execute, "s0": s0, "memory": memory}
    print(json.dumps(asyncio.run(modes[job["mode"]](job))))


if __name__ == "__main__":
    main()
