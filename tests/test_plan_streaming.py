"""Plan streaming (`RunConfig(stream_plans=True)`): a subtask with no dependencies starts as
soon as the planner has written it, before the plan's reply is complete, and one with
dependencies as soon as it is written and they have ended well, if the plan is still coming.

The planner here streams its reply in two halves and holds the second back until the early
subtask's first request has arrived (that agent then waits for the whole plan before it answers)
or until its agent has ended: without an early start the run cannot finish (the guard fails the
test), so the checks hold by construction, not by timing. Then: the whole plan is still
validated; an early start the final plan does not keep is stopped, its report and events left
out, and so is an early start that read its result; the events read in order (the plan before its
subtasks); nothing starts early under review, with a journal, or when the option is off; and the
scanner finds each subtask at any cut.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any, Literal

import anyio
import pytest

from agents import ChatModel, OpenAIChatModel, Usage
from agents._streaming import live_sink
from agents.approvals import ApprovalRequest, Decision
from agents.effects import AgentCall, LiveEffects
from agents.errors import ModelRequestError
from agents.events import ModelCalled
from agents.models import ModelRequest, ModelResponse, RetryingModel
from agents.testing import ScriptedModel
from memory import AssistantMessage, Journal
from orchestrator import Limits, Orchestrator, RunConfig
from orchestrator._plan_stream import SubtaskScanner
from orchestrator._prompts import CHAINS_FIRST
from orchestrator._setup import _streams_plans
from orchestrator.events import PlanCreated, SubtaskStarted
from tests._team import goal, lookup, plan, sub

pytestmark = pytest.mark.anyio

GUARD_S = 10  # a deadlock guard, not a timing claim


class StreamingPlanner:
    """One model for the whole team: streams each plan reply in two halves, the second held back
    until subtask `early`'s first request has come (`hold="asked"`: that agent answers only once
    the plan is complete) or until its agent has ended (`hold="ended"`, with the `ends` fixture;
    then, with `then`, the reply up to that subtask is sent, and the rest once its first request
    has come); sub-agents answer at once (those in `failing` with an error), the writer sums
    up."""

    def __init__(
        self,
        plans: list[dict[str, Any] | str],
        *,
        early: str = "a",
        hold: Literal["asked", "ended", "no"] = "asked",
        ended: dict[str, anyio.Event] | None = None,
        failing: frozenset[str] = frozenset(),
        then: str | None = None,
    ):
        self.plans = plans
        self.then = then
        self.first: dict[str, anyio.Event] = defaultdict(anyio.Event)
        self.early = early
        self.hold = hold
        self.ended = ended
        self.failing = failing
        self.asked = anyio.Event()
        self.planned = anyio.Event()
        self.order: list[str] = []  # "plan-done" and each sub-agent's first request, in order
        self.firsts: dict[str, list[str]] = defaultdict(list)  # each first request's text
        self.streamed: list[bool] = []  # per plan request: was it asked to stream
        self.prompts: list[str] = []  # per plan request: its prompt (the user message)
        self.agent_sinks: list[object] = []  # the live text sink each sub-agent call saw

    @property
    def name(self) -> str:
        return "streaming-planner"

    async def complete(self, request: ModelRequest) -> ModelResponse:
        if request.purpose == "plan":
            self.prompts.append(str(request.messages[-1].content))
            return await self._plan()
        if request.purpose == "synthesis":
            return _reply("The final answer.")
        task = str(request.messages[1].content).removeprefix("Task: ").split("\n")[0]
        who = next(i for i in "abcdef" if task == goal(i))
        self.agent_sinks.append(live_sink())
        if sum(isinstance(m, AssistantMessage) for m in request.messages) == 0:
            self.order.append(who)
            self.firsts[who].append("\n".join(str(m.content) for m in request.messages))
            self.first[who].set()
            if who == self.early and self.hold == "asked":
                self.asked.set()
                with anyio.fail_after(GUARD_S):
                    await self.planned.wait()
        if who in self.failing:
            raise ModelRequestError(f"{who} cannot be answered", status=400)
        return _reply(f"{who} found [lookup]")

    async def _plan(self) -> ModelResponse:
        body = self.plans.pop(0)
        text = body if isinstance(body, str) else json.dumps(body)
        sink = live_sink()
        self.streamed.append(sink is not None)
        if sink is not None:
            cut = text.index("}", text.index(f'"id": "{self.early}"')) + 1
            await sink.send(text[:cut])
            with anyio.fail_after(GUARD_S):
                if self.hold == "asked":
                    await self.asked.wait()
                elif self.hold == "ended":
                    assert self.ended is not None
                    await self.ended[self.early].wait()
            if self.then is not None:
                then = text.index("}", text.index(f'"id": "{self.then}"')) + 1
                await sink.send(text[cut:then])
                with anyio.fail_after(GUARD_S):
                    await self.first[self.then].wait()
                cut = then
            await sink.send(text[cut:])
        self.order.append("plan-done")
        self.planned.set()
        return _reply(text)


class _Events(dict[str, anyio.Event]):
    """An event per key, made as it is first asked for."""

    def __missing__(self, key: str) -> anyio.Event:
        return self.setdefault(key, anyio.Event())


@pytest.fixture
def ends(monkeypatch: pytest.MonkeyPatch) -> dict[str, anyio.Event]:
    """An event per sub-agent, set as its report comes back through the live effects: the run
    has its report before any other task runs (no checkpoint between)."""
    events = _Events()
    run = LiveEffects.sub_agent

    async def sub_agent(self: LiveEffects, executor: Any, call: AgentCall) -> Any:
        report = await run(self, executor, call)
        events[call.agent_id].set()
        return report

    monkeypatch.setattr(LiveEffects, "sub_agent", sub_agent)
    return events


def _reply(text: str) -> ModelResponse:
    usage = Usage(requests=1, prompt_tokens=10, completion_tokens=5)
    return ModelResponse(message=AssistantMessage(content=text), usage=usage)


async def _approve(request: ApprovalRequest) -> Decision:
    return Decision.approve()


async def _run(model: StreamingPlanner, **config: Any) -> Any:
    orch = Orchestrator(model, [lookup], config=RunConfig(stream_plans=True, **config))
    with anyio.fail_after(GUARD_S):
        return await orch.run("Find a, b and c for the report.")


async def test_a_root_subtask_starts_before_the_plan_is_complete() -> None:
    model = StreamingPlanner([plan(sub("a"), sub("b", "a"), sub("c"))])
    result = await _run(model)
    assert result.status == "complete"
    assert model.order.index("a") < model.order.index("plan-done")
    assert model.order.index("b") > model.order.index("plan-done")  # it waits for a
    assert sorted(r.agent_id for r in result.reports) == ["a", "b", "c"]
    # The events read as a run always reads: the plan first, then a's start and its calls.
    kinds = [(type(e).__name__, getattr(e, "agent_id", None) or getattr(e, "subtask_id", None))
             for e in result.events]  # fmt: skip
    plan_at = kinds.index(("PlanCreated", None))
    assert plan_at < kinds.index(("SubtaskStarted", "a"))
    assert plan_at < min(i for i, k in enumerate(kinds) if k == ("ModelCalled", "a"))
    assert len([e for e in result.events if isinstance(e, SubtaskStarted)]) == 3
    # Told that its roots start as written, the planner is asked to write the long chains first.
    assert CHAINS_FIRST in model.prompts[0]


async def test_an_early_start_the_final_plan_does_not_keep_is_stopped_and_left_out() -> None:
    """The streamed a is valid alone; the whole plan is not (a cycle), so the planner repairs it
    into a plan whose a has another goal: the early a is stopped, and the run is the repaired
    plan's alone."""
    cyclic = plan(sub("a"), sub("b", "c"), sub("c", "b"))
    repaired = plan(sub("a", goal=goal("d")), sub("c"))
    model = StreamingPlanner([cyclic, repaired])
    result = await _run(model)
    assert result.status == "complete"
    (created,) = [e for e in result.events if isinstance(e, PlanCreated)]
    assert [s.goal for s in created.plan.subtasks] == [goal("d"), goal("c")]
    reports = {r.agent_id: r.task for r in result.reports}
    assert reports == {"a": goal("d"), "c": goal("c")}
    started = [e.goal for e in result.events if isinstance(e, SubtaskStarted)]
    assert sorted(started) == [goal("c"), goal("d")]
    assert model.streamed == [True, False]  # a repair is not streamed
    assert "a" in model.order  # the discarded early start did run, and was stopped


async def test_a_dependent_written_before_what_it_needs_has_ended_waits_for_the_plan() -> None:
    """b needs a, which answers only once the plan is complete: b starts from the plan."""
    model = StreamingPlanner([plan(sub("a"), sub("b", "a"))])
    result = await _run(model)
    assert result.status == "complete"
    assert model.order == ["a", "plan-done", "b"]


async def test_a_dependent_starts_early_once_what_it_needs_has_ended(
    ends: dict[str, anyio.Event],
) -> None:
    """Written after a has ended, while the plan is still coming, b (which needs a) starts at
    once, reading a's answer as any dependent does; c too, and the run reads as always."""
    model = StreamingPlanner(
        [plan(sub("a"), sub("b", "a"), sub("c"))], hold="ended", ended=ends, then="b"
    )
    result = await _run(model)
    assert result.status == "complete"
    assert model.order[:2] == ["a", "b"]  # b before the plan was complete
    assert sorted(model.order) == ["a", "b", "c", "plan-done"]
    assert "a found" in model.firsts["b"][0]  # its dependency's result, in its context
    kinds = [(type(e).__name__, getattr(e, "subtask_id", None)) for e in result.events]
    plan_at = kinds.index(("PlanCreated", None))
    assert plan_at < kinds.index(("SubtaskStarted", "a")) < kinds.index(("SubtaskStarted", "b"))
    assert sorted(r.agent_id for r in result.reports) == ["a", "b", "c"]


async def test_a_dependent_of_a_subtask_that_failed_does_not_start_early(
    ends: dict[str, anyio.Event],
) -> None:
    """a fails before b is written: b does not start; the plan's run drops it (no replans)."""
    model = StreamingPlanner(
        [plan(sub("a"), sub("b", "a"), sub("c"))], hold="ended", ended=ends,
        failing=frozenset({"a"}),
    )  # fmt: skip
    result = await _run(model, limits=Limits(max_replans=0))
    assert result.status == "incomplete"
    assert "b" not in model.order
    assert {r.agent_id: r.status for r in result.reports} == {"a": "failed", "c": "done"}


async def test_an_early_start_that_read_a_discarded_one_is_discarded_too(
    ends: dict[str, anyio.Event],
) -> None:
    """a and then b (reading a) start early; the whole plan has a cycle, and its repair gives a
    another goal but keeps b as written: b read the discarded a, so it is stopped as well, and
    both run again from the repaired plan."""
    cyclic = plan(sub("a"), sub("b", "a"), sub("c", "d"), sub("d", "c"))
    repaired = plan(sub("a", goal=goal("e")), sub("b", "a"))
    model = StreamingPlanner([cyclic, repaired], hold="ended", ended=ends, then="b")
    result = await _run(model)
    assert result.status == "complete"
    assert model.order[:2] == ["a", "b"]  # both early
    assert model.order.count("b") == 2  # then again, from the repaired plan
    reports = {r.agent_id: r.task for r in result.reports}
    assert reports == {"a": goal("e"), "b": goal("b")}
    started = [e.goal for e in result.events if isinstance(e, SubtaskStarted)]
    assert started == [goal("e"), goal("b")]  # the repaired plan's runs alone


@pytest.mark.parametrize("option", ["off", "review", "journal"])
async def test_nothing_starts_early_when_it_must_not(option: str, tmp_path: Path) -> None:
    model = StreamingPlanner([plan(sub("a"), sub("c"))], hold="no")
    reviewed = option == "review"
    config = RunConfig(stream_plans=option != "off", review="first" if reviewed else None)
    async with Journal(tmp_path / "j.db") as journal:
        recorded = journal if option == "journal" else None
        orch = Orchestrator(model, [lookup], config=config, journal=recorded)
        with anyio.fail_after(GUARD_S):
            result = await orch.run(
                "Find a and c for the report.", approver=_approve if reviewed else None
            )
    assert result.status == "complete"
    assert model.streamed == [False]
    assert model.order[0] == "plan-done"
    assert CHAINS_FIRST not in model.prompts[0]


async def test_an_early_start_does_not_inherit_the_planners_text_sink() -> None:
    """Started from inside the planner's streaming call, a sub-agent's own calls must not write
    into the plan's stream (nor be traced as the planner's)."""
    model = StreamingPlanner([plan(sub("a"), sub("c"))])
    result = await _run(model)
    assert model.order.index("a") < model.order.index("plan-done")
    assert model.agent_sinks == [None] * len(model.agent_sinks)
    calls = [e for e in result.events if isinstance(e, ModelCalled)]
    assert sorted(e.agent_id for e in calls) == ["a", "c"]


@pytest.mark.parametrize("step", [1, 2, 5, 17, 10_000])
def test_the_scanner_finds_each_subtask_at_any_cut(step: int) -> None:
    body = {
        "rationale": 'braces } { and "subtasks" in text',
        "subtasks": [
            {"id": "a", "goal": 'say "}" and \\ then {', "depends_on": []},
            {"id": "b", "goal": "g", "call": {"tool": "t", "arguments": {"k": [1, {"z": 2}]}}},
        ],
        "other": [{"id": "not-a-subtask"}],
    }
    text = json.dumps(body)
    scanner, found = SubtaskScanner(), []
    for i in range(0, len(text), step):
        found += scanner.feed(text[i : i + step])
    assert found == body["subtasks"]


def test_the_scanner_skips_what_does_not_parse_and_ignores_nested_keys() -> None:
    scanner = SubtaskScanner()
    assert scanner.feed('{"x": {"subtasks": [{"id": "nested"}]}, "subtasks": [{"id": "a", ') == []
    assert scanner.feed('"goal": "g"}, {"id": tru}, {"id": "b"}]}') == [
        {"id": "a", "goal": "g"},
        {"id": "b"},
    ]


@pytest.mark.parametrize(
    ("model", "configured", "streams"),
    [
        (OpenAIChatModel("m", base_url="https://api.example/v1", api_key="k"), None, True),
        (OpenAIChatModel("m", base_url="http://127.0.0.1:9/v1", local=True), None, False),
        (RetryingModel(OpenAIChatModel("m", base_url="https://api.example/v1")), None, True),
        (ScriptedModel([]), None, False),
        (OpenAIChatModel("m", base_url="https://api.example/v1", api_key="k"), False, False),
        (ScriptedModel([]), True, True),
    ],
    ids=["hosted", "local", "hosted-wrapped", "own-model", "turned-off", "turned-on"],
)
def test_plans_stream_by_default_only_from_a_hosted_endpoint(
    model: ChatModel, configured: bool | None, streams: bool
) -> None:
    """`RunConfig(stream_plans=None)`, the default: on where early sub-agents cannot wait on the
    planner's own slot (a hosted endpoint), off for a server on this machine and for models of
    one's own; a value given wins."""
    assert _streams_plans(RunConfig(stream_plans=configured), model) is streams
