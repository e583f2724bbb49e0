"""paor under test: the orchestrator on a scenario, one executor on S8, and the overhead and memory runs."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable

import agents
from agents import Executor, OpenAIChatModel, Tool, Usage, tool
from agents.executor import DEFAULT_INSTRUCTIONS
from agents.models import Admission, CacheWarming, ModelRequest, ModelResponse, stack
from benchmarks._endpoints import SimChatModel, SimServer
from benchmarks._run import TOOL_DESCRIPTION, RunRecord
from benchmarks._scenarios import Scenario, ScenarioScript
from benchmarks._sim import Reply, Simulator, Who
from memory import AssistantMessage, Compactor, ToolCall, UserMessage
from orchestrator import Limits, Orchestrator, RunConfig

__all__ = [
    "LeanModel",
    "lookup_tool",
    "orchestrator_for",
    "run_executor",
    "run_orchestrator",
    "s0_cpu",
]

Lookup = Callable[[str], Awaitable[str]]


def lookup_tool(body: Lookup, *, max_chars: int = 2000, timeout: float = 60.0) -> Tool:
    """The scenarios' one tool, as a paor `Tool` running `body` (observations cut at `max_chars`,
    paor's default)."""

    async def lookup(key: str) -> str:
        return await body(key)

    lookup.__doc__ = f'{TOOL_DESCRIPTION}\n\nArgs:\n    key: The fact\'s key, e.g. "a.0".\n'
    return tool(timeout=timeout, max_chars=max_chars)(lookup)


def orchestrator_for(
    scenario: Scenario,
    model: agents.ChatModel,
    body: Lookup,
    *,
    eager: bool = False,
    tool_timeout: float = 60.0,
    stream_plans: bool | None = None,
) -> Orchestrator:
    """An orchestrator sized for `scenario` (every subtask may run at once); `eager` turns on
    `direct_calls` (the scripted planner writes each single-lookup subtask out as that tool call),
    `stream_plans` (subtasks start as the plan streams in, over HTTP) and `pass_results` (a
    subtask only the writer reads may end with its lookups' results); otherwise `stream_plans`
    and `pass_results` are paor's defaults (on for a hosted endpoint) unless given.

    Dependents and the writer read every result whole (`result_chars=None`), as the single
    agents read every lookup. Behind a context window, as paor's users configure it for long
    tool outputs: the lookup's observations are not cut (a window's worth of characters is
    allowed), and each sub-agent's history is compacted past half the window
    (`memory.Compactor`)."""
    n = len(scenario.subs)
    window = scenario.context_window
    compactor = None if window is None else Compactor(max_tokens=window // 2)
    max_chars = 2000 if window is None else window * 8
    limits = Limits(
        max_concurrency=max(n, 1),
        max_subtasks=n,
        max_replans=len(scenario.replans) + 1,
        agent=agents.AgentLimits(max_steps=40),
    )
    return Orchestrator(
        model,
        [lookup_tool(body, max_chars=max_chars, timeout=tool_timeout)],
        compactor=compactor,
        config=RunConfig(
            limits=limits,
            instructions=DEFAULT_INSTRUCTIONS + scenario.brief,
            direct_calls=eager,
            stream_plans=True if eager else stream_plans,  # None, paor's default: on if hosted
            pass_results=True if eager else None,  # None, paor's default: on if hosted
            result_chars=None,
        ),
    )


def _sim_lookup(sim: Simulator, scenario: Scenario) -> Lookup:
    async def body(key: str) -> str:
        return await sim.tool(key, scenario.tool_slow(key))

    return body


async def run_orchestrator(
    scenario: Scenario,
    *,
    http: bool,
    admission: bool = True,
    eager: bool = True,
    warm_cache: bool = False,
) -> RunRecord:
    """Run `scenario` through `Orchestrator`, over HTTP or with the in-process simulator, with
    direct calls and plan streaming on (`orchestrator_for`'s `eager`), and over HTTP hedged
    requests (`HedgedModel`), unless told otherwise.

    `admission=False` turns the model's admission control off (over HTTP); the record's framework
    is then "paor (no admission)"; `eager=False` (paor's defaults) makes it "paor (defaults)";
    `warm_cache` adds `CacheWarmingModel` (over HTTP), "... (warm cache)".
    """
    sim = scenario.simulator()
    name = ("paor" if eager else "paor (defaults)") + (" (warm cache)" if warm_cache else "")
    record = RunRecord(
        framework=name if admission else "paor (no admission)",
        scenario=scenario.name,
        transport="http" if http else "inproc",
    )
    if http:
        async with SimServer(sim) as server:
            limits = Admission() if admission else None
            protocol = OpenAIChatModel(
                "sim",
                base_url=server.base_url,
                api_key="sim",
                protocol="tools",
                timeout=60.0 if scenario.timeout_s is None else scenario.timeout_s,
                rate_limits=limits,
            )
            model = stack(
                protocol,
                # paor's defaults (3 retries, 60 s) under limits or hangs, else no retry
                max_retries=3 if scenario.client_retries else 0,
                admission=limits,
                hedging=eager,
                warming=CacheWarming() if warm_cache else None,
            )
            orch = orchestrator_for(scenario, model, _sim_lookup(sim, scenario), eager=eager)
            await _timed_run(record, orch, scenario)
            await protocol.aclose()
    else:
        orch = orchestrator_for(
            scenario, SimChatModel(sim), _sim_lookup(sim, scenario), eager=eager
        )
        await _timed_run(record, orch, scenario)
    record.log, record.tools, record.read = sim.log, sim.tools, sim.reading.read
    return record


async def _timed_run(record: RunRecord, orch: Orchestrator, scenario: Scenario) -> None:
    start = time.perf_counter()
    result = await orch.run(scenario.goal)
    record.wall_s = time.perf_counter() - start
    record.answer, record.usage = result.answer, result.usage
    if result.status != "complete":
        record.error = f"run {result.status}: {result.reason}"


async def run_executor(scenario: Scenario, *, http: bool) -> RunRecord:
    """Run `scenario`'s single subtask with one `Executor` (S8)."""
    (sub,) = scenario.plan
    sim = scenario.simulator()
    record = RunRecord(
        framework="paor", scenario=scenario.name, transport="http" if http else "inproc"
    )
    tools = [lookup_tool(_sim_lookup(sim, scenario))]
    limits = agents.AgentLimits(max_steps=sub.steps + 10)

    async def run(model: agents.ChatModel) -> None:
        start = time.perf_counter()
        report = await Executor(model, tools, limits=limits).run(sub.goal)
        record.wall_s = time.perf_counter() - start
        record.answer, record.usage = report.answer, report.usage
        if not report.ok:
            record.error = f"report {report.status}: {report.stop_reason}"

    if http:
        async with SimServer(sim) as server:
            model = OpenAIChatModel(
                "sim", base_url=server.base_url, api_key="sim", protocol="tools"
            )
            await run(model)
            await model.aclose()
    else:
        await run(SimChatModel(sim))
    record.log, record.tools, record.read = sim.log, sim.tools, sim.reading.read
    return record


class LeanModel:
    """A zero-latency scripted paor `ChatModel` that keeps no log: for overhead and memory runs.

    It dispatches like the simulator (see `benchmarks._sim.classify`) on the request's own fields.

    Args:
        script: The scenario's script.
        reuse: Answer a requester's step with the same (frozen) response every time; off for
            memory runs, where a cache of responses would be counted against the framework.
    """

    def __init__(self, script: ScenarioScript, *, reuse: bool = True) -> None:
        self.script = script
        self.reuse = reuse
        self.calls = 0
        self._replans = 0
        self._replies: dict[Who, ModelResponse] = {}

    @property
    def name(self) -> str:
        """The model label."""
        return "lean"

    async def complete(self, request: ModelRequest) -> ModelResponse:
        """Play the script's reply to whoever asked."""
        self.calls += 1
        who = self._who(request)
        if not self.reuse:
            return _response(self.script.reply(who), who)
        found = self._replies.get(who)
        if found is None:
            # Responses are frozen, so one per requester and step serves every run: the model's
            # own cost stays out of the framework's CPU figure.
            found = self._replies[who] = _response(self.script.reply(who), who)
        return found

    def _who(self, request: ModelRequest) -> Who:
        if request.output is not None:
            if request.output.name == "plan":
                return Who("plan", "", 0)
            self._replans += 1
            return Who("replan", "", self._replans - 1)
        if not request.tools:
            return Who("synthesis", "", 0)
        opening = request.messages[1]
        assert isinstance(opening, UserMessage)
        marker = opening.content.split("]", 1)[0].removeprefix("Task: [")
        kind, _, name = marker.partition(":")
        step = sum(isinstance(m, AssistantMessage) for m in request.messages)
        finishes = any(spec.name == "answer_with_results" for spec in request.tools)
        return Who("agent" if kind == "sub" else "mono", name, step, finishes=finishes)


def _response(reply: Reply, who: Who) -> ModelResponse:
    calls = tuple(
        ToolCall(id=f"c{who.name}.{who.step}.{i}", name=name, arguments=args)
        for i, (name, args) in enumerate(reply.tool_calls)
    )
    message = AssistantMessage(content=reply.content, tool_calls=calls)
    return ModelResponse(
        message=message, usage=Usage(requests=1, prompt_tokens=1, completion_tokens=1)
    )


async def s0_cpu(scenario: Scenario, runs: int) -> tuple[float, int]:
    """Framework CPU per executor step on S0: CPU seconds over `runs` executor runs, and steps."""
    (sub,) = scenario.plan
    script = scenario.script()

    async def lookup(key: str) -> str:
        return f"{key}: the fact"

    model = LeanModel(script)
    executor = Executor(model, [lookup_tool(lookup)])
    for _ in range(max(10, runs // 10)):  # warm up: first-call caches, lazy imports
        await executor.run(sub.goal)
    model.calls = 0
    start = time.process_time()
    for _ in range(runs):
        report = await executor.run(sub.goal)
    cpu = time.process_time() - start
    assert report.ok, report
    return cpu, model.calls
