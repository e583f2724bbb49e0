"""The benchmark simulator and two tiny scenarios, in process: accounting must be exact (no timing)."""

from __future__ import annotations

import random
import time

import anyio
import anyio.lowlevel
import pytest

from agents import Executor, OpenAIChatModel
from agents.errors import MalformedResponse
from agents.models import ModelRequest, RetryingModel, ToolSpec
from benchmarks._catalogue import SCENARIOS, s0
from benchmarks._clock import sleep_until
from benchmarks._endpoints import SimChatModel, SimServer
from benchmarks._figures import dispatch_gaps, prefix_share, prompt_tokens
from benchmarks._paor import LeanModel, lookup_tool, run_orchestrator
from benchmarks._scenarios import Scenario, Sub
from benchmarks._sim import (
    ZERO_LATENCY,
    Exchange,
    Fault,
    Faults,
    LatencyModel,
    Reply,
    SimRequest,
    Simulator,
    Who,
    classify,
    count_tokens,
    tokens,
    tool_text,
)
from memory import SystemMessage, UserMessage

pytestmark = pytest.mark.anyio

TINY = Scenario(
    name="T1",
    title="Two lookups, then a combining step",
    plan=(Sub(id="a", steps=2), Sub(id="b"), Sub(id="c", deps=("a", "b"))),
    tool_tokens=12,
    latency=ZERO_LATENCY,
)


class Echo:
    """A script that answers every request with the same text."""

    def reply(self, who: Who) -> Reply:
        """Say who asked."""
        return Reply(content=f"hello {who.kind} {who.name} {who.step}")

    def slow(self, who: Who) -> float:
        """Never slow."""
        return 1.0


def conversation(seed: int) -> list[SimRequest]:
    """Requests that share, extend and diverge from each other's prefixes."""
    rng = random.Random(seed)
    words = ["alpha", "beta", "gamma", "delta", "(", ")", "{", "}", "x1", "y2"]
    pool = [" ".join(rng.choices(words, k=rng.randint(1, 12))) for _ in range(6)]
    tools = [{"type": "function", "function": {"name": "lookup", "parameters": {}}}]
    requests = []
    for _ in range(12):
        messages = [{"role": "system", "content": rng.choice(pool[:2])}]
        messages += [
            {"role": rng.choice(["user", "assistant"]), "content": rng.choice(pool)}
            for _ in range(rng.randint(0, 4))
        ]
        requests.append(SimRequest(messages=messages, tools=tools if rng.random() < 0.5 else ()))
    return requests


def brute_force_prefixes(requests: list[SimRequest]) -> list[int]:
    """For each request, the longest token prefix it shares with any earlier one, by comparison."""
    flat = [[t for text in r.texts() for t in tokens(text)] for r in requests]
    shared = []
    for i, mine in enumerate(flat):
        best = 0
        for earlier in flat[:i]:
            n = 0
            while n < min(len(mine), len(earlier)) and mine[n] == earlier[n]:
                n += 1
            best = max(best, n)
        shared.append(best)
    return shared


@pytest.mark.parametrize("seed", range(5))
async def test_prompt_tokens_and_shared_prefixes_are_exact(seed: int) -> None:
    """Prompt tokens and cached (shared-prefix) tokens equal a brute-force count, request by request."""
    requests = conversation(seed)
    sim = Simulator(Echo())
    for request in requests:
        await sim.complete(request)
    assert [e.prompt_tokens for e in sim.log] == [
        sum(count_tokens(t) for t in r.texts()) for r in requests
    ]
    assert [e.shared_tokens for e in sim.log] == brute_force_prefixes(requests)


async def test_executor_usage_matches_the_simulator_ledger() -> None:
    """An executor's own usage is exactly the simulator's, and a growing transcript shares its prefix."""
    scenario = Scenario(
        name="T0", title="t", plan=(Sub(id="s", steps=3),), tool_tokens=30, latency=ZERO_LATENCY
    )
    sim = Simulator(scenario.script(), scenario.latency, tool_tokens=scenario.tool_tokens)

    async def lookup(key: str) -> str:
        return await sim.tool(key)

    report = await Executor(SimChatModel(sim), [lookup_tool(lookup)]).run(scenario.plan[0].goal)
    assert report.ok, report
    assert [e.who for e in sim.log] == [Who("agent", "s", step) for step in range(4)]
    assert report.usage.prompt_tokens == sum(e.prompt_tokens for e in sim.log)
    assert report.usage.completion_tokens == sum(e.completion_tokens for e in sim.log)
    assert report.usage.cached_tokens == sum(e.cached_tokens for e in sim.log)
    # Append-only: each request repeats the whole previous prompt.
    for before, after in zip(sim.log, sim.log[1:], strict=False):
        assert after.shared_tokens == before.prompt_tokens
    assert [t.key for t in sim.tools] == ["s.0", "s.1", "s.2"]


@pytest.mark.parametrize(("http", "eager"), [(False, False), (True, False), (True, True)])
async def test_orchestrator_on_a_tiny_dag(http: bool, eager: bool) -> None:
    """paor runs a three-subtask DAG against the simulator; the run's usage equals the log's.
    With direct calls (`eager`), b and c (one lookup each) make no model call, and a starts
    with its first lookup, which the planner wrote out: one model call fewer. Over HTTP (a
    hosted endpoint, where results are passed on by default) c, which nothing else reads, ends
    on its lookup's result with no answer turn; b, which c reads, is refused and writes one."""
    record = await run_orchestrator(TINY, http=http, eager=eager)
    assert record.error is None, record.error
    kinds = [e.who.kind for e in record.log]
    assert kinds[0] == "plan"
    assert kinds[-1] == "synthesis"
    direct = ["agent:b:0", "agent:b:1", "agent:c:0", *([] if http else ["agent:c:1"])]
    assert sorted(e.who.key for e in record.log if e.who.kind == "agent") == [
        *([] if eager else ["agent:a:0"]),
        "agent:a:1",
        "agent:a:2",
        *([] if eager else direct),
    ]
    assert sorted(t.key for t in record.tools) == ["a.0", "a.1", "b.0", "c.0"]
    assert record.usage is not None
    assert record.usage.prompt_tokens == prompt_tokens(record)
    assert record.usage.cached_tokens == sum(e.cached_tokens for e in record.log)
    assert len(dispatch_gaps(record, TINY)) == 1  # c waits on a and b
    assert 0 < prefix_share(record) < 1


def test_critical_path_follows_the_latency_model() -> None:
    """The critical path is plan, the longer chain (a then c), then synthesis, from the seeded
    model; c, which nothing else reads, ends on its lookup's result (paor's
    `answer_with_results`) with no answer turn."""
    latency = LatencyModel(seed=3, ttft_s=0.1, per_token_s=0.01, tool_s=0.05)
    scenario = Scenario(name="T2", title="t", plan=TINY.plan, latency=latency)
    script = scenario.script()

    def call(who: Who) -> float:
        return latency.model_call(who.key, script.reply(who).completion_tokens)

    def sub(sub_id: str, steps: int, *, passes: bool = False) -> float:
        turns = steps if passes else steps + 1
        models = sum(call(Who("agent", sub_id, i, finishes=passes)) for i in range(turns))
        return models + sum(latency.tool_call(f"{sub_id}.{i}") for i in range(steps))

    chain = max(sub("a", 2), sub("b", 1)) + sub("c", 1, passes=True)
    expected = call(Who("plan", "", 0)) + chain + call(Who("synthesis", "", 0))
    assert scenario.critical_path() == pytest.approx(expected)
    assert latency.model_call("k", 5) == latency.model_call("k", 5)
    assert LatencyModel(seed=4).model_call("k", 5) != LatencyModel(seed=3).model_call("k", 5)


async def test_the_lean_model_ends_a_sub_agent_offered_answer_with_results_on_its_lookup() -> None:
    """The overhead and memory runs' model plays a sub-agent's finishing turns, as the simulator
    does, when paor offers it `answer_with_results` (c, which nothing reads, may end on it)."""
    tools = tuple(
        ToolSpec(name=name, description=".", parameters={"type": "object"})
        for name in ("lookup", "answer_with_results")
    )
    opening = (SystemMessage(content="."), UserMessage(content="Task: [sub:c] find it"))
    model = LeanModel(TINY.script())
    offered = await model.complete(ModelRequest(messages=opening, tools=tools))
    assert [c.name for c in offered.message.tool_calls] == ["lookup", "answer_with_results"]
    plain = await model.complete(ModelRequest(messages=opening, tools=tools[:1]))
    assert [c.name for c in plain.message.tool_calls] == ["lookup"]


def test_requests_are_classified_by_format_tools_and_marker() -> None:
    """Plan and replan by response format, sub-agents and single agents by tools and marker."""
    tools = [{"type": "function", "function": {"name": "lookup"}}]
    task = {"role": "user", "content": "Task: [sub:x1] find it"}
    plan = {"type": "json_schema", "json_schema": {"name": "plan", "schema": {}}}
    assert classify(SimRequest(messages=[task], response_format=plan)) == Who("plan", "", 0)
    assert classify(
        SimRequest(messages=[task, {"role": "assistant", "content": "."}], tools=tools)
    ) == Who("agent", "x1", 1)
    mono = {"role": "user", "content": "Task: [goal:S2] all of it"}
    assert classify(SimRequest(messages=[mono], tools=tools)) == Who("mono", "S2", 0)
    assert classify(SimRequest(messages=[task])) == Who("synthesis", "", 0)


async def test_faults_are_injected_over_http_and_in_process() -> None:
    """A scripted 429 is retried by paor's OpenAI adapter (in its `RetryingModel`); a malformed
    body surfaces in process."""
    sim = Simulator(
        Echo(), faults=Faults(by_key={"synthesis::0": [Fault(code=429, retry_after=0.0)]})
    )
    request = ModelRequest(messages=(UserMessage(content="hi"),))
    async with SimServer(sim) as server:
        model = OpenAIChatModel("sim", base_url=server.base_url, api_key="sim")
        response = await RetryingModel(model, max_retries=1).complete(request)
        await model.aclose()
    assert response.message.content == "hello synthesis  0"  # the retry keeps its number
    assert [e.fault for e in sim.log] == ["status", None]
    assert [e.who.step for e in sim.log] == [0, 0]
    broken = Simulator(Echo(), faults=Faults(by_key={"synthesis::0": [Fault(kind="malformed")]}))
    with pytest.raises(MalformedResponse):
        await SimChatModel(broken).complete(request)


def test_gaps_count_only_dependency_bound_starts() -> None:
    """A dependent's gap runs from its last dependency's answer to its own first request."""
    log = [
        Exchange(who=Who("plan", "", 0), received=0.0, answered=1.0),
        Exchange(who=Who("agent", "a", 0), received=1.1, answered=2.0),
        Exchange(who=Who("agent", "b", 0), received=1.1, answered=3.0),
        Exchange(who=Who("agent", "c", 0), received=3.004, answered=4.0),
    ]
    from benchmarks._run import RunRecord

    record = RunRecord(framework="x", scenario="T1", transport="inproc", log=log)
    scenario = Scenario(
        name="T1", title="t", plan=(Sub(id="a"), Sub(id="b"), Sub(id="c", deps=("a", "b")))
    )
    assert dispatch_gaps(record, scenario) == [pytest.approx(0.004)]


@pytest.mark.parametrize("loser_answered", [9.0, 0.0])
def test_a_hedged_dependency_counts_from_the_copy_that_answered_first(
    loser_answered: float,
) -> None:
    """A request sent twice was answered by its first answer: the copy that lost (answered
    later by the simulator, or never: 0) does not move the dependent's gap."""
    log = [
        Exchange(who=Who("plan", "", 0), received=0.0, answered=1.0),
        Exchange(who=Who("agent", "a", 0), received=1.1, answered=loser_answered),
        Exchange(who=Who("agent", "a", 0), received=1.5, answered=2.0),
        Exchange(who=Who("agent", "c", 0), received=2.003, answered=4.0),
    ]
    from benchmarks._run import RunRecord

    record = RunRecord(framework="x", scenario="T1", transport="inproc", log=log)
    scenario = Scenario(name="T1", title="t", plan=(Sub(id="a"), Sub(id="c", deps=("a",))))
    assert dispatch_gaps(record, scenario) == [pytest.approx(0.003)]


def test_s0_scripts_model_tool_model() -> None:
    """S0 is one lookup then an answer."""
    script = s0().script()
    first, second = (script.reply(Who("agent", "s0", i)) for i in range(2))
    assert [name for name, _ in first.tool_calls] == ["lookup"]
    assert second.content
    assert not second.tool_calls


async def test_sleep_until_wakes_each_sleeper_at_its_deadline_never_before() -> None:
    """Sleepers wake in deadline order, none before its deadline, whatever order they slept in."""
    base = time.perf_counter() + 0.02
    offsets = [0.012, 0.0, 0.018, 0.003, 0.009, 0.006, 0.015]
    woke: list[tuple[float, float]] = []

    async def sleeper(deadline: float) -> None:
        await sleep_until(deadline)
        woke.append((deadline, time.perf_counter()))

    async with anyio.create_task_group() as tg:
        for offset in offsets:
            tg.start_soon(sleeper, base + offset)
    assert [d for d, _ in woke] == sorted(base + o for o in offsets)
    assert all(at >= deadline for deadline, at in woke)


async def test_sleep_until_wakes_every_sleeper_of_a_crowd_some_cancelled() -> None:
    """Two hundred sleepers with random deadlines, every fourth cut short: the rest all wake, none
    early (the timer is re-armed as earlier deadlines arrive and as due ones leave)."""
    rng = random.Random(5)
    woke: list[tuple[float, float]] = []
    cut: list[int] = []

    async def sleeper(i: int, deadline: float) -> None:
        # The cut sleepers' deadlines lie far beyond their cut, so a stalled (loaded) machine
        # cannot wake one first; the others have ample time to wake.
        with anyio.move_on_after(0.01 if i % 4 == 0 else 30) as scope:
            await sleep_until(deadline)
            woke.append((deadline, time.perf_counter()))
        if scope.cancelled_caught:
            cut.append(i)

    async with anyio.create_task_group() as tg:
        for i in range(200):
            later = 20.0 if i % 4 == 0 else rng.uniform(0.02, 0.08)
            tg.start_soon(sleeper, i, time.perf_counter() + later)
            if i % 10 == 0:
                await anyio.lowlevel.checkpoint()
    assert sorted(cut) == list(range(0, 200, 4))
    assert len(woke) == 150
    assert all(at >= deadline for deadline, at in woke)


async def test_sleep_until_a_past_deadline_does_not_yield() -> None:
    """A deadline already past returns at once, without letting another task run first."""
    ran = anyio.Event()
    async with anyio.create_task_group() as tg:
        tg.start_soon(lambda: _set(ran))
        await sleep_until(time.perf_counter() - 1.0)
        assert not ran.is_set()
    assert ran.is_set()


async def _set(event: anyio.Event) -> None:
    event.set()


async def test_a_cancelled_sleep_leaves_later_alarms_working() -> None:
    """A sleep cut short by its scope ends cleanly; its alarm firing later harms no other sleeper."""
    with anyio.move_on_after(0.005) as scope:
        await sleep_until(time.perf_counter() + 0.03)
    assert scope.cancelled_caught
    deadline = time.perf_counter() + 0.05  # outlives the cancelled alarm
    await sleep_until(deadline)
    assert time.perf_counter() >= deadline


async def test_latency_counts_from_receipt_and_a_burst_is_received_before_bookkeeping() -> None:
    """Every caller of a burst is received before the simulator does any request's bookkeeping,
    and each answer comes its latency after its own receipt."""
    accounted: list[float] = []

    class Watched(Simulator):
        def account(self, request: SimRequest) -> tuple[int, int]:
            accounted.append(time.perf_counter())
            return super().account(request)

    latency = LatencyModel(seed=1, ttft_s=0.01, per_token_s=0.0, tool_s=0.01, jitter=0.1)
    sim = Watched(Echo(), latency)
    model = SimChatModel(sim)
    async with anyio.create_task_group() as tg:
        for i in range(4):
            request = ModelRequest(messages=(UserMessage(content=f"Task: [goal:g{i}] q"),))
            tg.start_soon(model.complete, request)
    assert max(e.received for e in sim.log) < min(accounted)
    for exchange in sim.log:
        assert exchange.latency > 0
        assert exchange.answered >= exchange.received + exchange.latency
    text = await sim.tool("k.0")
    (call,) = sim.tools
    assert text == tool_text("k.0", sim.tool_tokens)
    assert call.finished >= call.started + call.latency > call.started


def test_the_steal_share_is_stolen_ticks_over_all_ticks_of_the_run() -> None:
    """The host's share is the stolen ticks over all ticks between the two readings; unknown off
    Linux or with no time between them."""
    from benchmarks._suite import _steal_share

    assert _steal_share((10, 1000), (60, 2000)) == 0.05
    assert _steal_share(None, (60, 2000)) is None
    assert _steal_share((10, 1000), (10, 1000)) is None


async def test_paor_starts_root_subtasks_while_the_plan_streams() -> None:
    """Over HTTP the simulator paces a streamed reply token by token; with `stream_plans` (the
    suite's paor) a subtask with no dependencies starts before the plan has finished arriving.
    S6.1's plan streams for about 0.6 s and its first subtask is written in the first tenth."""
    scenario = SCENARIOS["S6.1"]
    record = await run_orchestrator(scenario, http=True)
    assert record.error is None, record.error
    (plan_call,) = [e for e in record.log if e.who.kind == "plan"]
    assert plan_call.stream_s > 0.3
    first = min(e.received for e in record.log if e.who.kind == "agent")
    assert first < plan_call.answered
    # The same work as any framework: every surviving lookup made once.
    keys = sorted(t.key for t in record.tools)
    assert keys == sorted(set(keys))
    assert set(keys) == set(scenario.mono_keys)
