"""The run: the eager scheduler, replanning, exits, cancellation, events and sub-agent isolation."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TypeVar

import anyio
import anyio.lowlevel
import pytest

from agents import ConfigurationError, Tool, Usage, cites_evidence, tool
from agents.errors import ModelRequestError
from agents.events import ToolCalled
from agents.models import ModelRequest
from agents.testing import FunctionModel, ScriptedModel, call, reply
from memory import InMemoryFactStore, Journal
from orchestrator import Event, Limits, Orchestrator, RunConfig
from orchestrator._stream import _BUFFER, EventStream
from orchestrator.events import (
    BudgetExhausted,
    BudgetWarning,
    PlanCreated,
    Replanned,
    RunFinished,
    SubtaskCancelled,
    SubtaskFailed,
    SubtaskFinished,
    SubtaskInvalidated,
    SubtaskStarted,
)
from tests._team import PLANNER, WRITER, Behaviour, Team, goal, opening, plan, script, sub

pytestmark = pytest.mark.anyio

E = TypeVar("E")

# A guard against deadlocks, not a timing claim: every test here finishes in milliseconds when
# the behaviour holds, and hangs forever on an event handshake when it breaks.
GUARD_S = 10


def only(events: Sequence[Event], kind: type[E]) -> list[E]:
    """The events of one kind, in order."""
    return [e for e in events if isinstance(e, kind)]


def position(events: Sequence[Event], kind: type[Any], subtask_id: str) -> int:
    """The index of the first `kind` event about `subtask_id`."""
    return next(
        i for i, e in enumerate(events) if isinstance(e, kind) and e.subtask_id == subtask_id
    )


def started(events: Sequence[Event]) -> list[str]:
    """The subtask ids that started, in order."""
    return [e.subtask_id or "" for e in only(events, SubtaskStarted)]


@tool
async def lookup(key: str) -> str:
    """Look a fact up.

    Args:
        key: What to look up.
    """
    return f"the value of {key}"


def hold(entered: anyio.Event, log: list[str] | None = None, *, name: str = "hold") -> Tool:
    """A tool that signals `entered` and then never returns (until cancelled)."""

    @tool(name=name, timeout=None)
    async def hold_(key: str) -> str:
        """Wait for something that never comes.

        Args:
            key: What to wait for.
        """
        entered.set()
        try:
            await anyio.sleep_forever()
        finally:
            if log is not None:
                log.append(f"{key} cancelled")
        raise AssertionError("unreachable")

    return hold_


def answers(text: str) -> Behaviour:
    """A sub-agent that answers at once."""
    return script(text)


def looks_up(key: str, text: str) -> Behaviour:
    """A sub-agent that calls `lookup` once, then answers."""
    return script(call("lookup", key=key), text)


# The scheduler


async def test_independent_subtasks_run_concurrently() -> None:
    """Two independent subtasks overlap: each one's tool waits for the other's to begin."""
    here = {"a": anyio.Event(), "b": anyio.Event()}
    log: list[str] = []

    @tool(timeout=None)
    async def meet(who: str) -> str:
        """Wait until the other subtask is here too.

        Args:
            who: Who arrived.
        """
        log.append(f"start {who}")
        here[who].set()
        await here["b" if who == "a" else "a"].wait()
        log.append(f"end {who}")
        return f"{who} met the other"

    team = Team(
        [plan(sub("a"), sub("b"))],
        {"a": script(call("meet", who="a"), "A"), "b": script(call("meet", who="b"), "B")},
    )
    with anyio.fail_after(GUARD_S):
        result = await Orchestrator(team.model, [meet]).run("goal")
    assert result.status == "complete"
    assert sorted(log[:2]) == ["start a", "start b"]
    assert sorted(log[2:]) == ["end a", "end b"]


async def test_slow_subtask_does_not_hold_back_an_unrelated_branch() -> None:
    """A finished subtask's dependent starts and finishes while an unrelated one is still blocked."""
    released = anyio.Event()

    @tool(timeout=None)
    async def wait_release() -> str:
        """Wait until the fast branch is done."""
        await released.wait()
        return "released"

    team = Team(
        [plan(sub("slow"), sub("fast"), sub("after_fast", "fast"))],
        {
            "slow": script(call("wait_release"), "slow result"),
            "fast": answers("fast result"),
            "after_fast": answers("after result"),
        },
    )
    seen: list[Event] = []
    with anyio.fail_after(GUARD_S):
        async with Orchestrator(team.model, [wait_release]).stream("goal") as events:
            async for event in events:
                seen.append(event)
                # slow is released only once after_fast has finished: a scheduler that waited
                # for slow before starting after_fast would never get here.
                if isinstance(event, SubtaskFinished) and event.subtask_id == "after_fast":
                    released.set()
    assert events.result.status == "complete"
    assert started(seen)[2:] == ["after_fast"]
    assert position(seen, SubtaskFinished, "after_fast") < position(seen, SubtaskFinished, "slow")


async def test_max_concurrency_one_runs_subtasks_one_at_a_time() -> None:
    """With max_concurrency=1 the second subtask starts only after the first one has ended."""
    entered, release = anyio.Event(), anyio.Event()
    log: list[str] = []
    seen_while_first_ran: list[str] = []

    @tool(timeout=None)
    async def work(who: str) -> str:
        """Do some work; the first caller waits to be released.

        Args:
            who: Who works.
        """
        log.append(f"start {who}")
        if not entered.is_set():
            entered.set()
            await release.wait()
        log.append(f"end {who}")
        return f"{who} worked"

    async def referee() -> None:
        await entered.wait()
        # Everything else that could run now has run: a second sub-agent would be inside `work`.
        await anyio.wait_all_tasks_blocked()
        seen_while_first_ran.extend(log)
        release.set()

    team = Team(
        [plan(sub("a"), sub("b"))],
        {"a": script(call("work", who="a"), "A"), "b": script(call("work", who="b"), "B")},
    )
    orch = Orchestrator(team.model, [work], config=RunConfig(limits=Limits(max_concurrency=1)))
    with anyio.fail_after(GUARD_S):
        async with anyio.create_task_group() as tg:
            tg.start_soon(referee)
            result = await orch.run("goal")
    assert result.status == "complete"
    (first_start,) = seen_while_first_ran
    first = first_start.removeprefix("start ")
    (second,) = {"a", "b"} - {first}
    assert log == [f"start {first}", f"end {first}", f"start {second}", f"end {second}"]


# Replanning


async def test_invalidating_report_replans_around_the_surprise() -> None:
    """An "invalidates" report replans: done work is kept, the obsolete running subtask is
    cancelled with its partial report kept, removed pending work is dropped, added work runs."""
    c_waiting = anyio.Event()
    cancelled: list[str] = []
    counts: Counter[str] = Counter()

    @tool(name="lookup")
    async def counting_lookup(key: str) -> str:
        """Look a fact up.

        Args:
            key: What to look up.
        """
        counts[key] += 1
        return f"the value of {key}"

    async def b(request: ModelRequest) -> Any:
        await c_waiting.wait()  # c is in flight before b's surprise arrives
        issue = call("report_issue", kind="invalidates", reason="the premise is false")
        return script(issue, "B: the premise is false")(request)

    team = Team(
        [plan(sub("a"), sub("b", "a"), sub("c"), sub("d", "c"))],
        {
            "a": looks_up("a", "A"),
            "b": b,
            "c": script(call("hold", key="c")),
            "d": answers("D"),
            "e": looks_up("e", "E"),
        },
        replans=[{"remove": ["c", "d"], "add": [sub("e", "a")], "rationale": "c is moot"}],
    )
    orch = Orchestrator(team.model, [counting_lookup, hold(c_waiting, cancelled)])
    with anyio.fail_after(GUARD_S):
        result = await orch.run("goal")
    events = result.events

    assert counts == {"a": 1, "e": 1}  # a was not re-run
    (diff,) = result.diffs
    assert (diff.version, diff.trigger) == (2, "b")
    assert "the premise is false" in diff.reason
    assert (diff.added, diff.removed, diff.cancelled, diff.kept) == (
        ("e",),
        ("d",),
        ("c",),
        ("a", "b"),
    )
    assert [p.ids for p in result.plans] == [("a", "b", "c", "d"), ("a", "b", "e")]
    (replanned,) = only(events, Replanned)
    assert replanned.diff == diff
    # c was stopped mid-call; its partial report is kept.
    assert cancelled == ["c cancelled"]
    (stopped,) = only(events, SubtaskCancelled)
    assert (stopped.subtask_id, stopped.reason) == ("c", "obsolete after a replan")
    assert stopped.report is not None
    assert stopped.report.stop_reason == "cancelled"
    assert stopped.report in result.reports
    c_tool = [e for e in only(events, ToolCalled) if e.agent_id == "c"]
    assert [(e.tool, e.ok, e.error_kind) for e in c_tool] == [("hold", False, "cancelled")]
    # d never started; e started after the replan, with a's result as its context.
    (dropped,) = only(events, SubtaskInvalidated)
    assert (dropped.subtask_id, dropped.reason) == ("d", "removed by replan v2")
    assert sorted(started(events)[:2]) == ["a", "c"]
    assert started(events)[2:] == ["b", "e"]
    assert events.index(replanned) < position(events, SubtaskStarted, "e")
    assert "Result (done): A" in opening(team.of("e")[0])
    # The planner was told what happened and what stands.
    replan_prompt = opening(team.of(PLANNER)[1])
    assert "Subtask b reported a problem: its result invalidates" in replan_prompt
    assert "- a [done]" in replan_prompt
    assert "- c [running]" in replan_prompt
    assert result.status == "complete", result.reason
    team.assert_clean()


async def test_what_a_replan_removed_does_not_reach_the_synthesis() -> None:
    """c looked something up, then a replan removed it: what it found is the planner's to drop,
    so the writer is not shown it (the run's reports still hold c's partial report)."""
    c_waiting = anyio.Event()

    async def b(request: ModelRequest) -> Any:
        await c_waiting.wait()
        issue = call("report_issue", kind="invalidates", reason="c's source was retracted")
        return script(issue, "B: c's source was retracted")(request)

    team = Team(
        [plan(sub("a"), sub("b"), sub("c"))],
        {
            "a": looks_up("a", "A"),
            "b": b,
            "c": script(call("lookup", key="c"), call("hold", key="c")),
        },
        replans=[{"remove": ["c"], "add": [], "rationale": "c is moot"}],
    )
    orch = Orchestrator(team.model, [lookup, hold(c_waiting)])
    with anyio.fail_after(GUARD_S):
        result = await orch.run("goal")
    assert {r.agent_id: r.stop_reason for r in result.reports}["c"] == "cancelled"
    assert any(e.excerpt.startswith("the value of c") for r in result.reports for e in r.evidence)
    writer_prompt = opening(team.of(WRITER)[0])
    assert "## a (done)" in writer_prompt
    assert "## c" not in writer_prompt
    assert "the value of c" not in writer_prompt
    team.assert_clean()


async def test_failed_subtask_keeps_siblings_and_triggers_a_replan() -> None:
    """A sub-agent whose model fails reports failed; its sibling's result stands and a replan
    routes around it (the failed subtask's dependent is dropped, the added ones run)."""
    team = Team(
        [plan(sub("a"), sub("b"), sub("c", "b"))],
        {
            "a": looks_up("a", "A's answer"),
            "b": script(ModelRequestError("400 bad request", status=400)),
            "c": answers("C"),
            "b2": answers("B2's answer"),
        },
        replans=[{"remove": [], "add": [sub("b2")], "rationale": "try b another way"}],
    )
    with anyio.fail_after(GUARD_S):
        result = await Orchestrator(team.model, [lookup]).run("goal")
    events = result.events

    (failed,) = only(events, SubtaskFailed)
    assert failed.subtask_id == "b"
    assert failed.report.status == "failed"
    assert any("400 bad request" in note for note in failed.report.notes)
    (diff,) = result.diffs
    assert (diff.trigger, diff.added, diff.removed, diff.kept) == ("b", ("b2",), ("c",), ("a",))
    assert "it failed: model error: 400 bad request" in diff.reason
    assert len(team.of("a")) == 2  # a ran once: one tool call, one answer
    assert not team.of("c")
    assert {r.agent_id: r.status for r in result.reports} == {
        "a": "done",
        "b": "failed",
        "b2": "done",
    }
    writer_prompt = opening(team.of(WRITER)[0])
    assert "A's answer" in writer_prompt
    assert "B2's answer" in writer_prompt
    assert result.status == "incomplete"
    assert result.reason is not None
    assert "failed: b" in result.reason


async def test_dependents_of_a_failed_subtask_are_dropped_when_replans_are_spent() -> None:
    """With max_replans=0 a failure is not replanned: its dependents are invalidated unstarted."""
    team = Team(
        [plan(sub("a"), sub("b", "a"), sub("c"))],
        {
            "a": script(ModelRequestError("403 forbidden", status=403)),
            "b": answers("B"),
            "c": answers("C"),
        },
    )
    orch = Orchestrator(team.model, config=RunConfig(limits=Limits(max_replans=0)))
    with anyio.fail_after(GUARD_S):
        result = await orch.run("goal")
    events = result.events

    assert not only(events, Replanned)
    assert len(team.of(PLANNER)) == 1
    (dropped,) = only(events, SubtaskInvalidated)
    assert (dropped.subtask_id, dropped.reason) == ("b", "depends on a, which did not finish")
    assert not team.of("b")
    assert "b" not in started(events)
    assert {r.agent_id: r.status for r in result.reports} == {"a": "failed", "c": "done"}
    assert result.status == "incomplete"
    assert result.reason == "failed: a; dropped: b"


async def test_rejected_answer_is_kept_as_partial_and_replanned() -> None:
    """An answer that keeps failing the acceptance check ends partial, which triggers a replan."""
    team = Team(
        [plan(sub("a"))],
        {
            "a": script("no sources", "still none", "none again"),
            "a2": looks_up("x", 'X [lookup({"key": "x"})]'),
        },
        replans=[{"remove": [], "add": [sub("a2")]}],
    )
    orch = Orchestrator(team.model, [lookup], acceptance=cites_evidence)
    with anyio.fail_after(GUARD_S):
        result = await orch.run("goal")

    finished_a, finished_a2 = only(result.events, SubtaskFinished)
    assert (finished_a.subtask_id, finished_a.report.status) == ("a", "partial")
    assert finished_a.report.stop_reason == "acceptance"
    assert (finished_a2.subtask_id, finished_a2.report.status) == ("a2", "done")
    (diff,) = result.diffs
    assert diff.trigger == "a"
    assert diff.reason.startswith("its answer was rejected: answer not accepted:")
    assert diff.added == ("a2",)
    assert result.reason == "partial: a"
    team.assert_clean()


# Exits


@pytest.mark.parametrize(
    ("limits", "resource"),
    [
        (Limits(max_requests=2), "requests"),
        (Limits(max_tokens=30), "tokens"),
    ],
)
async def test_budget_exhaustion_ends_with_a_partial_answer(limits: Limits, resource: str) -> None:
    """A spent budget stops new subtasks; the run synthesises what it has and says why."""
    team = Team(
        [plan(sub("a"), sub("b", "a"))],
        {"a": answers("A's answer"), "b": answers("B")},
        synthesis="Partial: A's answer.",
    )
    with anyio.fail_after(GUARD_S):
        result = await Orchestrator(team.model, config=RunConfig(limits=limits)).run("goal")
    events = result.events

    (exhausted,) = only(events, BudgetExhausted)
    assert exhausted.reason == resource
    (warning,) = only(events, BudgetWarning)
    assert warning.resource == resource
    assert events.index(warning) < events.index(exhausted)
    assert result.status == "incomplete"
    assert result.reason is not None
    assert f"the {resource} budget ran out" in result.reason
    assert result.answer == "Partial: A's answer."
    assert not team.of("b")
    assert "b" not in started(events)
    (dropped,) = only(events, SubtaskInvalidated)
    assert dropped.subtask_id == "b"
    assert dropped.reason == f"not started: the {resource} budget ran out"
    writer_prompt = opening(team.of(WRITER)[0])
    assert "A's answer" in writer_prompt
    assert "the run is incomplete" in writer_prompt


async def test_deadline_with_a_hanging_tool_still_synthesises() -> None:
    """A tool that never returns is cut off by the run's deadline; the answer is still written."""
    entered = anyio.Event()
    team = Team(
        [plan(sub("a"), sub("b"))],
        {"a": script(call("hold", key="a")), "b": answers("B's answer")},
        synthesis="What we know: B's answer.",
    )
    orch = Orchestrator(
        team.model, [hold(entered)], config=RunConfig(limits=Limits(deadline_s=0.5))
    )
    with anyio.fail_after(GUARD_S):
        result = await orch.run("goal")

    assert entered.is_set()
    assert result.answer == "What we know: B's answer."
    assert result.status == "incomplete"
    assert result.reason == "the deadline budget ran out; failed: a"
    assert [e.reason for e in only(result.events, BudgetExhausted)] == ["deadline"]
    report_a = next(r for r in result.reports if r.agent_id == "a")
    assert report_a.stop_reason == "deadline"
    # No replan is spent in the synthesis's reserve of the deadline.
    assert len(team.of(PLANNER)) == 1
    assert len(team.of(WRITER)) == 1
    assert "B's answer" in opening(team.of(WRITER)[0])
    team.assert_clean()


async def test_synthesis_failure_falls_back_to_the_joined_results() -> None:
    """When the writer's model fails, the answer is every result as it was reported, and the run
    is incomplete, saying so."""
    team = Team(
        [plan(sub("a"), sub("b"))],
        {"a": answers("alpha is 1"), "b": answers("beta is 2")},
        synthesis=ModelRequestError("500 from the writer"),
    )
    with anyio.fail_after(GUARD_S):
        result = await Orchestrator(team.model).run("goal")

    assert len(team.of(WRITER)) == 1
    assert result.status == "incomplete"
    assert result.reason == (
        "the synthesis failed (500 from the writer); the answer is the agents' results as they "
        "reported them"
    )
    assert result.answer.startswith("Results gathered by the agents:")
    assert "alpha is 1" in result.answer
    assert "beta is 2" in result.answer


# Events and streaming


async def test_events_follow_the_run_in_order_and_carry_the_run_id() -> None:
    """PlanCreated comes first and RunFinished last; each subtask starts before it finishes; every
    event carries the run id."""
    team = Team(
        [plan(sub("a"), sub("b", "a"))],
        {"a": looks_up("a", "A"), "b": answers("B")},
    )
    with anyio.fail_after(GUARD_S):
        result = await Orchestrator(team.model, [lookup]).run("goal", run_id="run-42")
    events = result.events

    assert isinstance(events[0], PlanCreated)
    assert events[0].plan == result.plans[0]
    assert isinstance(events[-1], RunFinished)
    assert (events[-1].status, events[-1].reason, events[-1].usage) == (
        "complete",
        None,
        result.usage,
    )
    assert len(only(events, RunFinished)) == 1
    for sub_id in ("a", "b"):
        assert position(events, SubtaskStarted, sub_id) < position(events, SubtaskFinished, sub_id)
    assert position(events, SubtaskFinished, "a") < position(events, SubtaskStarted, "b")
    assert {e.run_id for e in events} == {"run-42"}
    assert result.run_id == "run-42"
    assert [e.tool for e in only(events, ToolCalled)] == ["lookup"]


async def test_stream_yields_the_same_events_as_the_result() -> None:
    """`orch.stream()` yields exactly the events `RunResult.events` holds, in order."""
    team = Team(
        [plan(sub("a"), sub("b"), sub("c", "a", "b"))],
        {"a": looks_up("a", "A"), "b": answers("B"), "c": answers("C")},
    )
    seen: list[Event] = []
    with anyio.fail_after(GUARD_S):
        async with Orchestrator(team.model, [lookup]).stream("goal") as events:
            async for event in events:
                seen.append(event)
    assert seen == list(events.result.events)
    assert events.result.status == "complete"
    assert isinstance(seen[-1], RunFinished)


async def test_keep_events_false_streams_events_but_keeps_none() -> None:
    """With keep_events=False the stream still yields every event; the result holds none."""
    team = Team([plan(sub("a"))], {"a": answers("A")})
    with anyio.fail_after(GUARD_S):
        async with Orchestrator(team.model).stream("goal", keep_events=False) as events:
            seen = [event async for event in events]
    assert isinstance(seen[0], PlanCreated)
    assert isinstance(seen[-1], RunFinished)
    assert events.result.events == ()
    assert events.result.status == "complete"


async def test_result_is_unavailable_before_the_run_ends() -> None:
    """`RunStream.result` raises until the run has finished."""
    team = Team([plan(sub("a"))], {"a": answers("A")})
    async with Orchestrator(team.model).stream("goal") as events:
        with pytest.raises(RuntimeError, match="has not finished"):
            _ = events.result
        async for _event in events:
            pass
    assert events.result.status == "complete"


# Cancellation


async def test_cancelling_the_callers_scope_cancels_the_whole_run() -> None:
    """Cancelling the scope around `run` stops every sub-agent and leaves no task behind."""
    entered = {"a": anyio.Event(), "b": anyio.Event()}
    log: list[str] = []
    team = Team(
        [plan(sub("a"), sub("b"))],
        {"a": script(call("hold", key="a")), "b": script(call("hold2", key="b"))},
    )
    orch = Orchestrator(
        team.model, [hold(entered["a"], log), hold(entered["b"], log, name="hold2")]
    )
    tasks_before = {t.id for t in anyio.get_running_tasks()}

    async def cancel_when_both_wait(scope: anyio.CancelScope) -> None:
        await entered["a"].wait()
        await entered["b"].wait()
        scope.cancel()

    with anyio.fail_after(GUARD_S):
        async with anyio.create_task_group() as tg:
            with anyio.CancelScope() as scope:
                tg.start_soon(cancel_when_both_wait, scope)
                await orch.run("goal")
                pytest.fail("the run outlived its cancelled scope")
    assert scope.cancelled_caught
    assert sorted(log) == ["a cancelled", "b cancelled"]
    assert {t.id for t in anyio.get_running_tasks()} == tasks_before
    assert not team.of(WRITER)


async def test_leaving_the_stream_early_cancels_the_run() -> None:
    """Breaking out of `async with orch.stream()` stops the run's sub-agents."""
    entered = anyio.Event()
    log: list[str] = []
    team = Team([plan(sub("a"))], {"a": script(call("hold", key="a"))})
    orch = Orchestrator(team.model, [hold(entered, log)])
    with anyio.fail_after(GUARD_S):
        async with orch.stream("goal") as events:
            async for event in events:
                if isinstance(event, SubtaskStarted):
                    break
            await entered.wait()
    assert log == ["a cancelled"]
    with pytest.raises(RuntimeError):
        _ = events.result


async def test_cancel_subtask_stops_one_subtask_while_the_run_goes_on() -> None:
    """`cancel_subtask` stops a running subtask (partial report kept); its sibling finishes."""
    entered = anyio.Event()
    team = Team(
        [plan(sub("a"), sub("b"))],
        {"a": script(call("hold", key="a")), "b": looks_up("b", "B's answer")},
        synthesis="Only B.",
    )
    orch = Orchestrator(team.model, [lookup, hold(entered)])
    with anyio.fail_after(GUARD_S):
        async with orch.stream("goal") as events, anyio.create_task_group() as tg:

            async def cancel_a() -> None:
                await entered.wait()
                assert events.cancel_subtask("a")

            tg.start_soon(cancel_a)
            seen = [event async for event in events]
    result = events.result

    (cancelled,) = only(seen, SubtaskCancelled)
    assert (cancelled.subtask_id, cancelled.reason) == ("a", "cancelled by the caller")
    assert cancelled.report is not None
    assert cancelled.report.stop_reason == "cancelled"
    assert {r.agent_id: r.status for r in result.reports} == {"a": "failed", "b": "done"}
    assert not only(seen, Replanned)
    assert result.status == "incomplete"
    assert result.reason == "cancelled: a"
    assert result.answer == "Only B."
    assert not events.cancel_subtask("a")  # no longer live
    assert not events.cancel_subtask("nope")


async def test_cancel_subtask_of_a_pending_subtask_means_it_never_starts() -> None:
    """A pending subtask cancelled before its dependencies finish is never started."""
    entered, release = anyio.Event(), anyio.Event()

    @tool(timeout=None)
    async def gate() -> str:
        """Wait to be let through."""
        entered.set()
        await release.wait()
        return "through"

    team = Team(
        [plan(sub("a"), sub("b", "a"))],
        {"a": script(call("gate"), "A"), "b": answers("B")},
    )
    orch = Orchestrator(team.model, [gate])
    with anyio.fail_after(GUARD_S):
        async with orch.stream("goal") as events, anyio.create_task_group() as tg:

            async def cancel_b() -> None:
                await entered.wait()
                assert events.cancel_subtask("b")
                release.set()

            tg.start_soon(cancel_b)
            seen = [event async for event in events]

    assert "b" not in started(seen)
    assert not team.of("b")
    assert events.result.reason == "cancelled: b"


# Isolation and the shared budget


async def test_each_sub_agent_sees_only_its_goal_and_its_dependencies_results() -> None:
    """A sub-agent's first request holds its own goal and its dependencies' compressed results,
    and nothing of its siblings."""
    long_answer = "A's finding. " + "x" * 5000
    team = Team(
        [
            plan(
                sub("a", expected_output="one fact"),
                sub("b", acceptance="cite a source"),
                sub("c", "a"),
            )
        ],
        {"a": looks_up("a", long_answer), "b": answers("B's finding"), "c": answers("C")},
    )
    with anyio.fail_after(GUARD_S):
        result = await Orchestrator(team.model, [lookup]).run("the overall goal")
    assert result.status == "complete"

    first = {who: team.of(who)[0] for who in ("a", "b", "c")}
    for who, request in first.items():
        assert [m.role for m in request.messages] == ["system", "user"]
        text = opening(request)
        assert text.startswith(f"Task: {goal(who)}")
        others = {"a", "b", "c"} - {who}
        assert not any(goal(o) in text for o in others - ({"a"} if who == "c" else set()))
        assert "the overall goal" not in text
    assert "Expected output: one fact" in opening(first["a"])
    assert "A good answer: cite a source" in opening(first["b"])
    c_text = opening(first["c"])
    assert "[a] Find fact a.\nResult (done): A's finding." in c_text
    assert 'Sources: lookup({"key": "a"})' in c_text
    assert "B's finding" not in c_text
    assert len(c_text) < len(long_answer)  # compressed, not the whole result


async def test_planner_and_every_sub_agent_charge_one_budget() -> None:
    """RunResult.usage is the sum of the planner's, every sub-agent's and the writer's spending."""
    team = Team(
        [plan(sub("a"), sub("b"))],
        {
            "a": script(call("lookup", key="a"), reply("A", prompt_tokens=7, completion_tokens=3)),
            "b": script(reply("B", prompt_tokens=11, completion_tokens=2)),
        },
        planner_tokens=(100, 20),
        synthesis=reply("The answer.", prompt_tokens=50, completion_tokens=9),
    )
    with anyio.fail_after(GUARD_S):
        result = await Orchestrator(team.model, [lookup]).run("goal")

    # planner 100+20; a: 10+5 (the call) and 7+3; b: 11+2; writer: 50+9
    assert result.usage == Usage(
        requests=5,
        prompt_tokens=100 + 10 + 7 + 11 + 50,
        completion_tokens=20 + 5 + 3 + 2 + 9,
        tool_calls=1,
    )
    assert result.usage.requests == len(team.model.requests)
    sub_agents = sum((r.usage for r in result.reports), Usage())
    assert (sub_agents.requests, sub_agents.tool_calls) == (3, 1)
    assert only(result.events, RunFinished)[0].usage == result.usage


async def test_a_separate_planner_model_charges_the_same_budget() -> None:
    """With `planner_model`, planning and synthesis go to it, and its usage joins the run's."""
    planner = Team([plan(sub("a"))], {}, planner_tokens=(40, 4), synthesis="Planned answer.")
    workers = Team([], {"a": answers("A")})
    orch = Orchestrator(workers.model, planner_model=planner.model)
    with anyio.fail_after(GUARD_S):
        result = await orch.run("goal")
    assert result.answer == "Planned answer."
    assert (len(planner.model.requests), len(workers.model.requests)) == (2, 1)
    assert result.usage.requests == 3
    assert result.usage.prompt_tokens == 40 + 10 + 10


async def test_remembered_facts_reach_the_planner_and_every_sub_agent() -> None:
    """Facts of the run's scope are shown to the planner and the synthesis with the goal, and to
    each sub-agent after its instructions (the prefix its siblings share)."""
    asked: list[ModelRequest] = []

    def decide(request: ModelRequest) -> str:
        asked.append(request)
        if request.output is not None:
            return '{"subtasks": [{"id": "a", "goal": "find a"}, {"id": "b", "goal": "find b"}]}'
        return "an answer"

    orch = Orchestrator(
        FunctionModel(decide), facts=InMemoryFactStore(), config=RunConfig(scope="user-1")
    )
    await orch.remember("budget", "500 EUR", kind="figure")
    with anyio.fail_after(GUARD_S):
        result = await orch.run("plan a trip")
    assert result.complete
    assert len(asked) == 4  # plan, a, b, synthesis
    told = [str(r.messages[0 if r.purpose == "step" else 1].content) for r in asked]
    assert all("- budget = 500 EUR (user, 1.0)" in text for text in told)


async def test_remember_without_a_fact_store_is_a_configuration_error() -> None:
    """remember() says plainly that it needs a fact store."""
    with pytest.raises(ConfigurationError, match="facts="):
        await Orchestrator(FunctionModel(lambda _r: "x")).remember("k", "v")


async def test_tool_findings_are_stored_as_facts_with_their_provenance() -> None:
    """A value a tool declares worth remembering ends in the fact store, sourced to the tool."""

    @tool(facts={"cheapest": "flight_price", "missing": "never_stored"})
    def flights(route: str) -> dict[str, str]:
        """Search flights."""
        return {"cheapest": "420 EUR", "route": route}

    def decide(request: ModelRequest) -> Any:
        if request.output is not None:
            return '{"subtasks": [{"id": "f", "goal": "find a flight"}]}'
        if not request.tools:
            return "Summary."
        if request.messages[-1].role == "tool":
            return "Cheapest is 420 EUR."
        return call("flights", route="LIS-OPO")

    store = InMemoryFactStore()
    orch = Orchestrator(
        FunctionModel(decide), [flights], facts=store, config=RunConfig(scope="s-1")
    )
    with anyio.fail_after(GUARD_S):
        result = await orch.run("find a flight")
    assert result.complete
    assert [(f.key, f.value) for f in result.reports[0].findings] == [("flight_price", "420 EUR")]
    (fact,) = await store.query("s-1")
    assert (fact.key, fact.value, fact.source) == ("flight_price", "420 EUR", "tool:flights")


async def test_a_stream_consumer_takes_buffered_events_without_a_turn_each() -> None:
    """Iterating a run's stream takes what is already buffered without yielding per event, so a
    consumer does not put itself into every turn of the event loop while the run emits."""
    release = anyio.Event()

    class Burst(EventStream):
        async def _produce(self) -> None:
            with self._send:
                for i in range(100):
                    self._send.send_nowait(BudgetExhausted(run_id="r", step=i, reason="x"))
                await release.wait()

    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await anyio.lowlevel.checkpoint()

    seen: list[int] = []
    ticks_during = -1
    async with anyio.create_task_group() as tg, Burst() as events:
        await anyio.wait_all_tasks_blocked()  # the burst is buffered
        tg.start_soon(ticker)
        async for event in events:
            seen.append(event.step)
            if len(seen) == 100:
                ticks_during = ticks
                release.set()
        tg.cancel_scope.cancel()
    assert seen == list(range(100))
    assert ticks_during <= 1


async def test_a_drained_stream_never_holds_its_producer() -> None:
    """`run()` drains a stream nobody reads (`unread`): its events are buffered without bound, so
    sub-agents ending together are not held, each with its whole state, until the drain's next
    turn. A stream with a reader holds its producer once the buffer is full (back-pressure)."""

    class Burst(EventStream):
        sent = 0

        async def _produce(self) -> None:
            with self._send:
                for i in range(1000):
                    await self._send.send(BudgetExhausted(run_id="r", step=i, reason="x"))
                    self.sent += 1

    for stream, expected in ((Burst().unread(), 1000), (Burst(), _BUFFER)):
        async with stream as events:
            await anyio.wait_all_tasks_blocked()
            sent_unread = stream.sent
            assert [event.step async for event in events] == list(range(1000))
        assert sent_unread == expected


def _halting_team(entered: anyio.Event) -> tuple[Team, list[Tool]]:
    """Plan a, b, and c (after a): a looks something up, then holds; b answers; c waits on a."""
    team = Team(
        [plan(sub("a"), sub("b"), sub("c", "a"))],
        {
            "a": script(call("lookup", key="a"), call("hold", key="a")),
            "b": looks_up("b", "B's answer"),
        },
        synthesis="What a and b found.",
    )
    return team, [lookup, hold(entered)]


async def test_cancel_stops_the_whole_run_and_keeps_its_work() -> None:
    """`cancel()` ends the run `incomplete`: the running sub-agent stops with its partial report,
    the pending subtask never starts, nothing is replanned, and the synthesis uses what exists."""
    entered = anyio.Event()
    team, tools = _halting_team(entered)
    orch = Orchestrator(team.model, tools)
    with anyio.fail_after(GUARD_S):
        async with orch.stream("goal") as events, anyio.create_task_group() as tg:

            async def cancel_when_a_holds() -> None:
                await entered.wait()
                assert events.cancel("stopped by the user")
                assert not events.cancel()  # only the first request counts

            tg.start_soon(cancel_when_a_holds)
            seen = [event async for event in events]
    result = events.result

    assert result.status == "incomplete"
    assert result.reason is not None
    assert result.reason.startswith("stopped by the user")
    assert result.answer == "What a and b found."
    reports = {r.agent_id: r for r in result.reports}
    assert reports["a"].stop_reason == "cancelled"
    assert [e.source for e in reports["a"].evidence] == ['lookup({"key": "a"})']  # kept
    assert reports["b"].status == "done"
    (dropped,) = only(seen, SubtaskInvalidated)
    assert (dropped.subtask_id, dropped.reason) == ("c", "not started: stopped by the user")
    assert not only(seen, Replanned)
    assert not team.of("c")
    (synthesis,) = team.of(WRITER)
    assert "B's answer" in (synthesis.messages[-1].content or "")
    assert not events.cancel()  # the run is over


async def test_cancel_before_the_run_starts_still_ends_with_a_result() -> None:
    """A run cancelled the moment its stream opens plans, stops at once and still reports."""
    entered = anyio.Event()
    team, tools = _halting_team(entered)
    orch = Orchestrator(team.model, tools)
    with anyio.fail_after(GUARD_S):
        async with orch.stream("goal") as events:
            assert events.cancel()
            seen = [event async for event in events]
    assert events.result.status == "incomplete"
    assert not only(seen, Replanned)
    assert only(seen, RunFinished)[0].status == "incomplete"


async def test_a_cancelled_journaled_run_replays_without_drift(tmp_path: Path) -> None:
    """Where the cancel landed is recorded: the replay stops the run at the same point."""
    entered = anyio.Event()
    team, tools = _halting_team(entered)
    async with Journal(tmp_path / "journal.db") as journal:
        orch = Orchestrator(team.model, tools, journal=journal)
        with anyio.fail_after(GUARD_S):
            async with orch.stream("goal") as events, anyio.create_task_group() as tg:

                async def cancel_when_a_holds() -> None:
                    await entered.wait()
                    events.cancel()

                tg.start_soon(cancel_when_a_holds)
                async for _event in events:
                    pass
            offline = Orchestrator(ScriptedModel([]), tools, journal=journal)
            replayed = await offline.replay(events.run_id)
    assert replayed.ok, replayed.drift
    assert replayed.result is not None
    assert replayed.result.reports == events.result.reports
    assert replayed.result.status == "incomplete"


@pytest.mark.parametrize("blank", ["", "  \n\t"])
async def test_a_blank_goal_is_refused_before_anything_runs(blank: str) -> None:
    """A goal with nothing in it is a configuration error; no model is asked."""
    team = Team([plan(sub("a"))], {"a": answers("A")})
    with pytest.raises(ConfigurationError, match="the goal is empty"):
        await Orchestrator(team.model, [lookup]).run(blank)
    assert not team.of(PLANNER)


async def test_a_goal_that_is_not_utf8_is_refused() -> None:
    """A goal holding a lone surrogate (bytes that were not UTF-8) cannot be sent or stored."""
    team = Team([plan(sub("a"))], {"a": answers("A")})
    with pytest.raises(ConfigurationError, match="not valid UTF-8"):
        await Orchestrator(team.model, [lookup]).run("caf\udce9")


def test_orchestrator_clone_keeps_the_rest_of_its_configuration() -> None:
    """`clone` changes what it is given; tools, model and the rest stay, the toolbox shared."""
    team = Team([plan(sub("a"))], {"a": answers("A")})
    base = Orchestrator(
        team.model, [lookup], config=RunConfig(limits=Limits(max_subtasks=2), scope="u1")
    )
    other = base.clone(config=base.config.model_copy(update={"limits": Limits(max_subtasks=5)}))
    assert (other.config.limits.max_subtasks, base.config.limits.max_subtasks) == (5, 2)
    assert (other.config.scope, other.model, other.toolbox) == ("u1", base.model, base.toolbox)
    with pytest.raises(ConfigurationError, match="Orchestrator has no option retries"):
        base.clone(retries=3)
    with pytest.raises(AttributeError, match=r"Orchestrator is frozen: .*clone\(config="):
        base.config = RunConfig(limits=Limits(max_subtasks=9))
    assert base.config.limits.max_subtasks == 2


# --- honest results: nothing wrong is labelled complete ----------------------------------------

LOOP_WARNING = (
    "Loop warning: you already called lookup with these same arguments. Change approach, or give "
    "your final answer now."
)


@pytest.mark.parametrize("junk", [LOOP_WARNING, "Find fact a."])
async def test_a_run_whose_agent_and_writer_answer_with_junk_is_never_complete(junk: str) -> None:
    """A sub-agent and a writer that answer with paor's own warning, or copy the task, end the
    run incomplete, and neither text is passed off as the answer."""
    team = Team([plan(sub("a", tools=["lookup"]))], {"a": script(call("lookup", key="a"), junk, junk)},
                synthesis=[junk, junk])  # fmt: skip
    with anyio.fail_after(GUARD_S):
        result = await Orchestrator(
            team.model, [lookup], config=RunConfig(limits=Limits(max_replans=0))
        ).run("Find fact a.")
    assert result.status == "incomplete"
    assert result.reports[0].status == "partial"
    assert result.answer != junk
    assert result.reason is not None
    assert "the answer is the agents' results as they reported them" in result.reason


async def test_a_writer_sent_back_once_can_still_make_the_run_complete() -> None:
    """A synthesis that copies the prompt's layout is sent back with the reason; a good second
    answer is the run's, and the run is complete."""
    team = Team([plan(sub("a"))], {"a": script("A is 1.")},
                synthesis=["## a (done)\nTask: Find fact a.", "Fact a is 1."])  # fmt: skip
    with anyio.fail_after(GUARD_S):
        result = await Orchestrator(team.model).run("What is fact a?")
    assert (result.status, result.answer) == ("complete", "Fact a is 1.")
    retry = team.of(WRITER)[1].messages[-1].content or ""
    assert retry.startswith("Your answer was not accepted: your answer repeats paor's own text")


async def test_a_subtask_whose_plan_names_its_tools_must_use_them() -> None:
    """The plan said the subtask needs `lookup`: an answer from nothing is sent back once, then
    the subtask is partial and the run incomplete; a subtask naming no tools may answer as is
    when its answer states nothing it was not given."""
    team = Team(
        [plan(sub("a", tools=["lookup"]), sub("b", goal="Say whether fact b is needed."))],
        {"a": script("A is 255.", "A is 255."), "b": script("It is not needed.")},
        synthesis=["A is 255; fact b is not needed."],
    )
    with anyio.fail_after(GUARD_S):
        result = await Orchestrator(
            team.model, [lookup], config=RunConfig(limits=Limits(max_replans=0))
        ).run("g")
    statuses = {r.agent_id: r.status for r in result.reports}
    assert statuses == {"a": "partial", "b": "done"}
    assert result.status == "incomplete"
    assert "no tool result backs your answer" in result.reports[0].notes[-1]


async def test_a_subtask_naming_no_tools_that_states_what_it_was_not_given_must_look() -> None:
    """A subtask the plan gave no tools, in a run that has them, answers from what it is given:
    a number or a name nothing showed it (the model's memory, or the planner's guess written as
    the expected output) is sent back once, then the subtask is partial; once it looks, what
    the tool returned backs the same words."""
    guessed = sub("a", goal="Find the boiling point of water.", expected_output="212 degrees")
    team = Team(
        [plan(guessed, sub("b", goal="Find who directed Titanic."))],
        {
            "a": script("Water boils at 212 degrees.", "Water boils at 212 degrees."),
            "b": script("James Cameron.", call("films", key="Titanic"), "James Cameron."),
        },
        synthesis=["Water boils at 212 degrees; James Cameron directed Titanic."],
    )

    @tool
    def films(key: str) -> str:
        """Look a film up."""
        return f"{key}: directed by James Cameron"

    with anyio.fail_after(GUARD_S):
        result = await Orchestrator(
            team.model, [films], config=RunConfig(limits=Limits(max_replans=0))
        ).run("How hot does water boil, and who directed Titanic?")
    reports = {r.agent_id: r for r in result.reports}
    assert (reports["a"].status, reports["b"].status) == ("partial", "done")
    assert "nothing you were given shows what your answer states (212)" in reports["a"].notes[-1]
    assert reports["b"].answer == "James Cameron."
    assert result.status == "incomplete"


async def test_a_synthesis_naming_only_what_the_planner_guessed_is_not_the_runs_answer() -> None:
    """The planner wrote its guess as a subtask's expected output ("Steve Jobs"); the agent found
    "Tim Cook"; the writer's "Steve Jobs" rests on the guess, not on a result: sent back, then
    the run is incomplete and its answer is the results as reported."""
    guessed = sub(
        "a", goal="Who is the CEO of Apple?", expected_output="A full name, such as Steve Jobs."
    )
    team = Team(
        [plan(guessed)],
        {"a": script("Tim Cook is the CEO of Apple.")},
        synthesis=["The CEO of Apple is Steve Jobs.", "The CEO of Apple is Steve Jobs."],
    )
    with anyio.fail_after(GUARD_S):
        planned = RunConfig(direct_questions=False)  # a plan and a synthesis, not the goal alone
        result = await Orchestrator(team.model, config=planned).run("Who runs Apple?")
    assert result.status == "incomplete"
    assert "Steve Jobs" in (result.reason or "")
    assert "Tim Cook is the CEO of Apple." in result.answer


async def test_a_synthesis_with_a_number_no_result_showed_is_not_the_runs_answer() -> None:
    """The writer's "255 days" from results saying 25 is sent back; written again, the run is
    incomplete and its answer is the results as reported."""
    team = Team([plan(sub("a"))], {"a": script("Staff get 25 days.")},
                synthesis=["Staff get 255 days.", "Staff get 255 days."])  # fmt: skip
    with anyio.fail_after(GUARD_S):
        planned = RunConfig(direct_questions=False)  # a plan and a synthesis, not the goal alone
        result = await Orchestrator(team.model, config=planned).run("How many days of leave?")
    assert result.status == "incomplete"
    assert "255" not in result.answer
    assert "numbers that none of the results shows (255)" in (result.reason or "")
