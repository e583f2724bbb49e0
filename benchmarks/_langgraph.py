"""LangGraph as a peer: its prebuilt ReAct agent, and a plan-and-execute graph with parallel workers.

The plan-and-execute graph is the LLM-compiler shape LangGraph users build: a planner node asks for a
plan (the same JSON schema name, "plan", as paor's planner, so the simulator answers both alike);
every subtask whose dependencies are done is sent to a worker (`Send`), each worker running the
prebuilt ReAct agent on its subtask; a join node replans when a worker reported an invalidation;
a synthesis node writes the answer. LangGraph runs in supersteps, so a dependent waits for every
worker of the superstep, not only for its own dependencies.
"""

from __future__ import annotations

import json
import operator
import time
import warnings
from collections.abc import Awaitable, Callable, Sequence
from typing import Annotated, Any, TypedDict

from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import BaseTool, StructuredTool
from langchain_openai import ChatOpenAI
from langgraph.graph import END, START, StateGraph
from langgraph.types import Send
from pydantic import ConfigDict

from benchmarks._react import REACT_INSTRUCTIONS
from benchmarks._run import KEY_DESCRIPTION, TOOL_DESCRIPTION, RunRecord
from benchmarks._scenarios import Scenario, ScenarioScript
from benchmarks._sim import SimServer, Simulator, Who

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


def react_agent(model: BaseChatModel, tools: Sequence[BaseTool]) -> Any:
    """LangGraph's prebuilt ReAct agent."""
    return create_react_agent(model, tools, prompt=REACT_INSTRUCTIONS)


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


def plan_graph(model: BaseChatModel, tools: Sequence[BaseTool]) -> Any:
    """The plan-and-execute graph (see the module docstring)."""
    agent = react_agent(model, tools)
    planner_model = model.bind(response_format=_format("plan"))
    replanner_model = model.bind(response_format=_format("replan"))

    async def planner(state: PlanState) -> PlanState:
        reply = await planner_model.ainvoke(
            [SystemMessage(PLANNER), HumanMessage(f"Goal: {state['goal']}")]
        )
        draft = json.loads(str(reply.content))
        return {"plan": {s["id"]: s for s in draft["subtasks"]}, "handled": 0, "results": {}}

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
        task = f"Task: {sub['goal']}" + (
            f"\n\nWhat is already known:\n{job['context']}" if job["context"] else ""
        )
        out = await agent.ainvoke({"messages": [HumanMessage(task)]}, CONFIG)
        messages: list[BaseMessage] = out["messages"]
        issues = [
            (sub["id"], str(call["args"].get("reason", "")))
            for m in messages
            if isinstance(m, AIMessage)
            for call in m.tool_calls
            if call["name"] == "report_issue" and call["args"].get("kind") == "invalidates"
        ]
        return {"results": {sub["id"]: str(messages[-1].content)}, "issues": issues}

    async def join(state: PlanState) -> PlanState:
        issues = state.get("issues", [])[state.get("handled", 0) :]
        plan = dict(state["plan"])
        for trigger, reason in issues:
            listing = "\n".join(f"- {i}: {s['goal']}" for i, s in plan.items())
            prompt = f"Goal: {state['goal']}\n\nSubtask {trigger} reported a problem: {reason}\n\nPlan:\n{listing}"
            reply = await replanner_model.ainvoke([SystemMessage(PLANNER), HumanMessage(prompt)])
            draft = json.loads(str(reply.content))
            for removed in draft.get("remove", []):
                plan.pop(removed, None)
            plan.update((s["id"], s) for s in draft.get("add", []))
        return {"plan": plan, "handled": len(state.get("issues", []))}

    async def synthesize(state: PlanState) -> PlanState:
        done = state.get("results", {})
        body = "\n\n".join(f"## {i}\n{done[i]}" for i in state["plan"] if i in done)
        reply = await model.ainvoke(
            [SystemMessage(SYNTHESIS), HumanMessage(f"Goal: {state['goal']}\n\n{body}")]
        )
        return {"answer": str(reply.content)}

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


async def run_langgraph(scenario: Scenario, *, shape: str) -> RunRecord:
    """Run `scenario` over HTTP with the ReAct agent (`shape="react"`) or the plan graph ("plan")."""
    sim = Simulator(scenario.script(), scenario.latency, tool_tokens=scenario.tool_tokens)
    record = RunRecord(framework=f"langgraph-{shape}", scenario=scenario.name, transport="http")

    async def lookup(key: str) -> str:
        return await sim.tool(key, scenario.tool_slow(key))

    async with SimServer(sim) as server:
        model = ChatOpenAI(model="sim", base_url=server.base_url, api_key="sim", max_retries=0)
        tools = lc_tools(lookup)
        start = time.perf_counter()
        if shape == "react":
            out = await react_agent(model, tools).ainvoke(
                {"messages": [HumanMessage(scenario.task)]}, CONFIG
            )
            record.answer = str(out["messages"][-1].content)
        else:
            out = await plan_graph(model, tools).ainvoke({"goal": scenario.goal}, CONFIG)
            record.answer = str(out["answer"])
        record.wall_s = time.perf_counter() - start
    record.log, record.tools = sim.log, sim.tools
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
