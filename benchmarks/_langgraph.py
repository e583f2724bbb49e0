"""LangGraph as a peer: its prebuilt ReAct agent, and two plan-and-execute shapes with parallel workers.

Both plan-and-execute shapes ask a planner for a plan (the same JSON schema name, "plan", as paor's
planner, so the simulator answers both alike), run each subtask on a worker running the prebuilt
ReAct agent with its dependencies' results as context, replan (schema "replan") when a worker
reported an invalidation, and write the answer with a synthesis call. They differ in scheduling:

- `plan_graph` ("langgraph-plan") is the LLM-compiler shape written with the Graph API: every
  subtask whose dependencies are done is sent to a worker (`Send`), and a join node replans. The
  graph runs in supersteps, so a dependent waits for every worker of the superstep, not only for
  its own dependencies, and a replan waits for the superstep too.
- `task_graph` ("langgraph-tasks") is written with the functional API, as LangGraph's docs write
  parallel work: an `@entrypoint` calls `@task`s, and each call returns a future at once (in
  async mode an `asyncio.Future` over a task LangGraph has already started). The entrypoint keeps
  the futures of the running workers and the replanner, each posting itself to an anyio memory
  stream when done (a done callback: the project allows no `asyncio.wait`), and takes them in
  the order they finish, so each subtask starts as soon as its own dependencies are done: there
  is no barrier. An invalidation starts the replanner right away while the other
  workers keep running (replans run one at a time, and the reporting subtask's dependents wait
  for its replan); a removed subtask is dropped if it has not started and cancelled if it has
  (cancelling the task's future cancels the task).
"""

from __future__ import annotations

import contextlib
import json
import math
import operator
import time
import warnings
from collections.abc import Awaitable, Callable, Sequence
from concurrent.futures import Future
from typing import Annotated, Any, TypedDict

import anyio
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import BaseTool, StructuredTool
from langchain_openai import ChatOpenAI
from langgraph.func import entrypoint, task
from langgraph.graph import END, START, StateGraph
from langgraph.types import Send
from pydantic import ConfigDict

from benchmarks._endpoints import SimServer
from benchmarks._react import REACT_INSTRUCTIONS
from benchmarks._run import KEY_DESCRIPTION, TOOL_DESCRIPTION, RunRecord, recording
from benchmarks._scenarios import Scenario, ScenarioScript
from benchmarks._sim import Who

with warnings.catch_warnings():
    # Deprecated in favour of langchain's create_agent, but still LangGraph's prebuilt ReAct agent.
    warnings.simplefilter("ignore")
    from langgraph.prebuilt import create_react_agent

__all__ = [
    "LeanChatModel",
    "lc_tools",
    "plan_graph",
    "react_agent",
    "run_langgraph",
    "s0_cpu_langgraph",
    "task_graph",
]

Lookup = Callable[[str], Awaitable[str]]
CONFIG: Any = {"recursion_limit": 10_000}
PLANNER = "Split the goal into subtasks with ids, goals and dependencies. Reply with JSON only."
SYNTHESIS = "Write the final answer to the goal from the results of the subtasks."


def lc_tools(body: Lookup) -> list[BaseTool]:
    """The scenarios' tools for LangChain: lookup (running `body`) and report_issue."""

    async def lookup(key: str) -> str:
        return await body(key)

    async def report_issue(kind: str, reason: str) -> str:
        return "Noted; the planner will be told."

    lookup.__doc__ = f"{TOOL_DESCRIPTION}\n\nArgs:\n    key: {KEY_DESCRIPTION}"
    report_issue.__doc__ = "Tell the planner the task's assumptions are wrong."
    return [
        StructuredTool.from_function(coroutine=lookup, parse_docstring=True),
        StructuredTool.from_function(coroutine=report_issue),
    ]


def react_agent(
    model: BaseChatModel,
    tools: Sequence[BaseTool],
    *,
    max_tokens: int | None = None,
    brief: str = "",
) -> Any:
    """LangGraph's prebuilt ReAct agent; with `max_tokens`, the history kept under it by a
    `pre_model_hook` (`mask_old_results`)."""
    hook = None if max_tokens is None else mask_old_results(max_tokens)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the deprecation above warns on each call too
        return create_react_agent(
            model, tools, prompt=REACT_INSTRUCTIONS + brief, pre_model_hook=hook
        )


def mask_old_results(max_tokens: int) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """The `pre_model_hook` a LangGraph user writes for long tool results: while the history is
    over `max_tokens` (four characters a token, as `count_tokens_approximately` counts), the
    oldest tool results give way to a placeholder, the latest turn's never. (LangGraph's own
    `trim_messages` drops whole turns, which the model reads as steps it has not taken.)"""

    def hook(state: dict[str, Any]) -> dict[str, Any]:
        messages = list(state["messages"])
        size = sum(len(str(m.content)) for m in messages) // 4
        latest = max((i for i, m in enumerate(messages) if isinstance(m, AIMessage)), default=0)
        for i, message in enumerate(messages[:latest]):
            if size <= max_tokens:
                break
            if isinstance(message, ToolMessage):
                size -= len(str(message.content)) // 4
                messages[i] = message.model_copy(update={"content": "[old tool result elided]"})
        return {"llm_input_messages": messages}

    return hook


def _format(name: str) -> dict[str, Any]:
    schema = {"type": "object"}
    return {"type": "json_schema", "json_schema": {"name": name, "schema": schema, "strict": False}}


class PlanState(TypedDict, total=False):
    """The plan-and-execute graph's state."""

    goal: str
    plan: dict[str, dict[str, Any]]
    results: Annotated[dict[str, str], operator.or_]
    issues: Annotated[list[tuple[str, str]], operator.add]
    handled: int
    answer: str


class WorkerInput(TypedDict):
    """What one worker is sent."""

    sub: dict[str, Any]
    context: str


def plan_graph(
    model: BaseChatModel,
    tools: Sequence[BaseTool],
    *,
    max_tokens: int | None = None,
    brief: str = "",
) -> Any:
    """The plan-and-execute graph (see the module docstring); `max_tokens`: `react_agent`'s."""
    agent = react_agent(model, tools, max_tokens=max_tokens, brief=brief)
    planner_model = model.bind(response_format=_format("plan"))
    replanner_model = model.bind(response_format=_format("replan"))

    async def planner(state: PlanState) -> PlanState:
        return {"plan": await _plan(planner_model, state["goal"]), "handled": 0, "results": {}}

    def route(state: PlanState) -> list[Send] | str:
        plan, done = state["plan"], state.get("results", {})
        ready = [
            s for i, s in plan.items() if i not in done and all(d in done for d in s["depends_on"])
        ]
        if not ready:
            return "synthesize"
        return [Send("worker", WorkerInput(sub=s, context=_context(s, done))) for s in ready]

    async def worker(job: WorkerInput) -> PlanState:
        sub = job["sub"]
        answer, reasons = await _work(agent, sub, job["context"])
        return {"results": {sub["id"]: answer}, "issues": [(sub["id"], r) for r in reasons]}

    async def join(state: PlanState) -> PlanState:
        issues = state.get("issues", [])[state.get("handled", 0) :]
        plan = dict(state["plan"])
        for trigger, reason in issues:
            draft = await _replan(replanner_model, state["goal"], plan, trigger, reason)
            _apply(plan, draft)
        return {"plan": plan, "handled": len(state.get("issues", []))}

    async def synthesize(state: PlanState) -> PlanState:
        answer = await _synthesize(model, state["goal"], state["plan"], state.get("results", {}))
        return {"answer": answer}

    graph = StateGraph(PlanState)
    graph.add_node("planner", planner)
    graph.add_node("worker", worker)  # type: ignore[arg-type]  # a Send target takes its own input
    graph.add_node("join", join)
    graph.add_node("synthesize", synthesize)
    graph.add_edge(START, "planner")
    graph.add_conditional_edges("planner", route, ["worker", "synthesize"])
    graph.add_edge("worker", "join")
    graph.add_conditional_edges("join", route, ["worker", "synthesize"])
    graph.add_edge("synthesize", END)
    return graph.compile()


def _context(sub: dict[str, Any], done: dict[str, str]) -> str:
    return "\n\n".join(f"[{d}] {done[d]}" for d in sub["depends_on"])


Plan = dict[str, dict[str, Any]]


async def _plan(planner_model: Any, goal: str) -> Plan:
    reply = await planner_model.ainvoke([SystemMessage(PLANNER), HumanMessage(f"Goal: {goal}")])
    draft = json.loads(str(reply.content))
    return {s["id"]: s for s in draft["subtasks"]}


async def _work(agent: Any, sub: dict[str, Any], context: str) -> tuple[str, list[str]]:
    """Run the ReAct agent on one subtask: its answer, and the reasons of its invalidations."""
    text = f"Task: {sub['goal']}" + (f"\n\nWhat is already known:\n{context}" if context else "")
    out = await agent.ainvoke({"messages": [HumanMessage(text)]}, CONFIG)
    messages: list[BaseMessage] = out["messages"]
    reasons = [
        str(call["args"].get("reason", ""))
        for m in messages
        if isinstance(m, AIMessage)
        for call in m.tool_calls
        if call["name"] == "report_issue" and call["args"].get("kind") == "invalidates"
    ]
    return str(messages[-1].content), reasons


async def _replan(
    replanner_model: Any, goal: str, plan: Plan, trigger: str, reason: str
) -> dict[str, Any]:
    listing = "\n".join(f"- {i}: {s['goal']}" for i, s in plan.items())
    prompt = f"Goal: {goal}\n\nSubtask {trigger} reported a problem: {reason}\n\nPlan:\n{listing}"
    reply = await replanner_model.ainvoke([SystemMessage(PLANNER), HumanMessage(prompt)])
    draft: dict[str, Any] = json.loads(str(reply.content))
    return draft


def _apply(plan: Plan, draft: dict[str, Any]) -> list[str]:
    """Apply a replan to `plan` in place; the ids it removed."""
    removed = [r for r in draft.get("remove", []) if plan.pop(r, None) is not None]
    plan.update((s["id"], s) for s in draft.get("add", []))
    return removed


async def _synthesize(model: BaseChatModel, goal: str, plan: Plan, done: dict[str, str]) -> str:
    body = "\n\n".join(f"## {i}\n{done[i]}" for i in plan if i in done)
    reply = await model.ainvoke([SystemMessage(SYNTHESIS), HumanMessage(f"Goal: {goal}\n\n{body}")])
    return str(reply.content)


def task_graph(
    model: BaseChatModel,
    tools: Sequence[BaseTool],
    *,
    max_tokens: int | None = None,
    brief: str = "",
) -> Any:
    """The plan-and-execute workflow in the functional API, without a barrier (module docstring).

    Invoke it with the goal; it returns the answer. `max_tokens`: `react_agent`'s.
    """
    agent = react_agent(model, tools, max_tokens=max_tokens, brief=brief)
    planner_model = model.bind(response_format=_format("plan"))
    replanner_model = model.bind(response_format=_format("replan"))

    @task
    async def planner(goal: str) -> Plan:
        return await _plan(planner_model, goal)

    @task
    async def worker(sub: dict[str, Any], context: str) -> tuple[str, list[str]]:
        return await _work(agent, sub, context)

    @task
    async def replanner(goal: str, plan: Plan, trigger: str, reason: str) -> dict[str, Any]:
        return await _replan(replanner_model, goal, plan, trigger, reason)

    @task
    async def synthesize(goal: str, plan: Plan, done: dict[str, str]) -> str:
        return await _synthesize(model, goal, plan, done)

    @entrypoint()
    async def plan_and_execute(goal: str) -> str:
        plan = await planner(goal)
        done: dict[str, str] = {}  # results, by subtask id
        held: dict[str, int] = {}  # finished subtasks whose replans are not all answered: how many
        issues: list[tuple[str, str]] = []  # invalidations not yet sent to the replanner
        running: dict[str, Future[Any]] = {}  # workers, by subtask id
        replanning, trigger = False, ""
        post, inbox = anyio.create_memory_object_stream[tuple[str | None, Future[Any]]](math.inf)

        def watch(key: str | None, fut: Future[Any]) -> None:
            def done(f: Future[Any]) -> None:
                if not f.cancelled():
                    f.exception()  # retrieved here: after a failure the rest are never read
                with contextlib.suppress(anyio.ClosedResourceError):  # the run has ended
                    post.send_nowait((key, f))

            fut.add_done_callback(done)

        with post, inbox:
            while True:
                if not replanning and issues:
                    trigger, reason = issues.pop(0)
                    watch(None, replanner(goal, dict(plan), trigger, reason))
                    replanning = True
                settled = {i for i in done if i not in held}
                for i, sub in plan.items():
                    if i not in done and i not in running and settled >= set(sub["depends_on"]):
                        running[i] = worker(sub, _context(sub, done))
                        watch(i, running[i])
                if not running and not replanning:
                    break
                key, fut = await inbox.receive()
                if key is None:
                    replanning = False
                    for gone in _apply(plan, fut.result()):
                        if gone in running:
                            running.pop(gone).cancel()
                    held[trigger] -= 1
                    if not held[trigger]:
                        del held[trigger]
                elif running.get(key) is fut:  # not a cancelled worker's last word
                    del running[key]
                    done[key], reasons = fut.result()
                    issues += [(key, r) for r in reasons]
                    if reasons:
                        held[key] = len(reasons)
        return await synthesize(goal, plan, done)

    return plan_and_execute


async def run_langgraph(scenario: Scenario, *, shape: str) -> RunRecord:
    """Run `scenario` over HTTP with the ReAct agent (`shape="react"`), the plan graph ("plan") or
    the functional-API workflow ("tasks"); the record's framework is "langgraph-" + shape."""
    if shape not in ("react", "plan", "tasks"):
        raise ValueError(f"unknown LangGraph shape {shape!r}")
    sim = scenario.simulator()
    record = RunRecord(framework=f"langgraph-{shape}", scenario=scenario.name, transport="http")

    async def lookup(key: str) -> str:
        return await sim.tool(key, scenario.tool_slow(key))

    async with SimServer(sim) as server:
        model = ChatOpenAI(
            model="sim",
            base_url=server.base_url,
            api_key="sim",
            max_retries=scenario.client_retries,
            timeout=scenario.timeout_s,  # None: the client's default
        )
        tools = lc_tools(lookup)
        # Behind a context window, each worker's history is kept under half of it, as paor's.
        window = scenario.context_window
        budget = None if window is None else window // 2
        start = time.perf_counter()
        with recording(record, sim):
            if shape == "react":
                out = await react_agent(
                    model, tools, max_tokens=budget, brief=scenario.brief
                ).ainvoke({"messages": [HumanMessage(scenario.task)]}, CONFIG)
                record.answer = str(out["messages"][-1].content)
            elif shape == "plan":
                graph = plan_graph(model, tools, max_tokens=budget, brief=scenario.brief)
                out = await graph.ainvoke({"goal": scenario.goal}, CONFIG)
                record.answer = str(out["answer"])
            else:
                graph = task_graph(model, tools, max_tokens=budget, brief=scenario.brief)
                record.answer = str(await graph.ainvoke(scenario.goal, CONFIG))
            record.wall_s = time.perf_counter() - start
    return record


class LeanChatModel(BaseChatModel):
    """A zero-latency scripted LangChain chat model that keeps no log: for overhead and memory runs.

    It dispatches like the simulator: a bound response format is a plan request, bound tools make a
    sub-agent or single-agent request (by the marker in the first human message), else synthesis.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)
    script: ScenarioScript
    calls: int = 0

    @property
    def _llm_type(self) -> str:
        return "lean"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Any:
        """Bind the tool names (the script decides what to call)."""
        return self.bind(tools=[getattr(t, "name", str(t)) for t in tools], **kwargs)

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: Any = None,
        **kwargs: Any,
    ) -> ChatResult:
        raise NotImplementedError("LeanChatModel is async only")

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: Any = None,
        **kwargs: Any,
    ) -> ChatResult:
        self.calls += 1
        reply = self.script.reply(_who(messages, kwargs))
        calls = [
            {
                "name": name,
                "args": json.loads(args),
                "id": f"c{self.calls}.{i}",
                "type": "tool_call",
            }
            for i, (name, args) in enumerate(reply.tool_calls)
        ]
        message = AIMessage(content=reply.content or "", tool_calls=calls)
        return ChatResult(generations=[ChatGeneration(message=message)])


def _who(messages: list[BaseMessage], kwargs: dict[str, Any]) -> Who:
    fmt = kwargs.get("response_format")
    if fmt:
        return Who("plan", "", 0) if fmt["json_schema"]["name"] == "plan" else Who("replan", "", 0)
    if not kwargs.get("tools"):
        return Who("synthesis", "", 0)
    opening = next(str(m.content) for m in messages if isinstance(m, HumanMessage))
    marker = opening.split("]", 1)[0].removeprefix("Task: [")
    kind, _, name = marker.partition(":")
    step = sum(isinstance(m, AIMessage) for m in messages)
    return Who("agent" if kind == "sub" else "mono", name, step)


async def s0_cpu_langgraph(scenario: Scenario, runs: int) -> tuple[float, int]:
    """CPU seconds of LangGraph's prebuilt ReAct agent over `runs` S0 runs with a zero-latency
    in-process model, and the model calls made."""
    (sub,) = scenario.plan
    model = LeanChatModel(script=scenario.script())

    async def lookup(key: str) -> str:
        return f"{key}: the fact"

    agent = react_agent(model, lc_tools(lookup))
    task = {"messages": [HumanMessage(f"Task: {sub.goal}")]}
    for _ in range(max(10, runs // 10)):
        await agent.ainvoke(task, CONFIG)
    model.calls = 0
    start = time.process_time()
    for _ in range(runs):
        await agent.ainvoke({"messages": [HumanMessage(f"Task: {sub.goal}")]}, CONFIG)
    return time.process_time() - start, model.calls
