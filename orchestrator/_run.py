"""The main loop of a run, as a state machine.

    Plan ──▶ Schedule ──▶ Join ──▶ Schedule ...        (eager: a finished subtask's dependents
              │  ▲          │                            start the moment its report arrives)
              │  └─ Replan ◀┘ (failed, blocked, invalidated, rejected; bounded by max_replans)
              └──▶ Finish (nothing left to run, or the budget is spent) ──▶ synthesis

Sub-agents run concurrently in the run's task group under one capacity limiter; each reports back
through a memory stream, so the loop waits on arrivals and never polls. An agent that finds the
plan's assumptions invalidated (`report_issue`) says so on that stream before its answer, and the
loop replans at once, while the agent writes it (its dependents still wait for it). Which arrival
the loop takes next is a recorded choice: live the first, on replay the one recorded, so replans
happen at the same points. The caller's request to stop the whole run arrives on the same stream
and is one more option of that choice: from then on nothing new starts and nothing is replanned,
the running sub-agents stop with their partial reports, and the synthesis is written from them.
The run's budget ledger is the parent of every sub-agent's ledger, and sub-agents stop before the
deadline's synthesis reserve, so the final answer is written from whatever exists. The loop knows
its `RunState` and uses its `RunDeps` (effects, planner, events, limiter); its planning steps (the
first plan, replans, and the subtasks a plan drops) are in `_run_plans`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Literal

import anyio
import anyio.abc

from agents import AgentReport, Executor, telemetry
from agents.effects import ReservedAgent
from agents.errors import ReplayDrift
from agents.events import AgentEvent, IssueReported, TextDelta
from agents.models import OutputSpec
from agents.telemetry import logger
from agents.tools import Toolbox
from memory import FactStore
from memory.facts import Fact
from memory.journal import JournalError
from orchestrator._events import (
    BudgetExhausted,
    Event,
    RunFinished,
    SubtaskCancelled,
    SubtaskFailed,
    SubtaskFinished,
    SubtaskStarted,
)
from orchestrator._run_plans import PlanSteps, invalidation, replan_reason, span_ids
from orchestrator._state import (
    FINISHED,
    Completion,
    Halt,
    Issue,
    Record,
    RunDeps,
    RunResult,
    RunState,
)
from orchestrator._synthesis import goal_answered

__all__ = ["RunLoop"]

_log = logger("paor.run")
_Ended = Literal["complete", "incomplete", "failed"]
_HALT = "!halt"  # never a subtask id: "!" is not allowed in one


@dataclass(frozen=True, slots=True)
class _MakePlan:
    pass


@dataclass(frozen=True, slots=True)
class _Schedule:
    after: str | None = None  # the subtask that just finished: only its dependents can be ready


@dataclass(frozen=True, slots=True)
class _Join:
    pass


@dataclass(frozen=True, slots=True)
class _Replan:
    trigger: str
    reason: str


@dataclass(frozen=True, slots=True)
class _Finish:
    pass


_Step = _MakePlan | _Schedule | _Join | _Replan | _Finish


@dataclass(kw_only=True, slots=True)
class RunLoop(PlanSteps):
    """Drives one run: plan, schedule sub-agents, join their reports, replan, finish."""

    executor: Executor
    toolbox: Toolbox
    deps: RunDeps
    max_replans: int
    single_on_plan_failure: bool = False
    direct_questions: bool = False
    facts: FactStore | None = None
    scope: str = "default"
    stream_plans: bool = False
    pass_results: int = 0  # sub-agents that only gather may pass this much of their results on
    text: bool = False
    output: OutputSpec[Any] | None = None
    _early_ended: Callable[[], None] = field(default=lambda: None, init=False)

    async def execute(self, s: RunState) -> RunResult:
        """Run to the end and return the result (a run that could make no plan ends "failed",
        saying why: the loop raises for a broken journal or a replay's drift, never for the
        run's own failure)."""
        step: _Step = _MakePlan()
        # The completion channel lives exactly as long as the sub-agents that send on it.
        with self.deps.done_send, self.deps.done_receive:
            async with anyio.create_task_group() as tg:
                while not isinstance(step, _Finish):
                    s.step += 1
                    step = await self._advance(s, step, tg)
        return await self._finish(s)

    async def _emit(self, s: RunState, event: Event) -> None:
        """Publish an event, keeping it in the run's trace when asked to (text deltas are not
        kept: the trace has the whole replies)."""
        if self.deps.keep_events and not isinstance(event, TextDelta):
            s.trace.append(event)
        await self.deps.publish(event)

    async def _synthesis_delta(self, s: RunState, text: str, restart: bool) -> None:
        delta = TextDelta(
            run_id=s.run_id, agent_id=ReservedAgent.PLANNER, step=s.step, text=text,
            purpose="synthesis", restart=restart,
        )  # fmt: skip
        await self._emit(s, delta)

    def _emit_agent(
        self, s: RunState, record: Record | None = None
    ) -> Callable[[AgentEvent], Awaitable[None]]:
        """A sub-agent's event sink: its events join the run's (held for an unkept early start)."""

        async def emit(event: AgentEvent) -> None:
            # Sent by the run's configuration alone, never its state: a replay sends the same.
            if (
                isinstance(event, IssueReported)
                and event.kind == "invalidates"
                and record is not None
                and self.max_replans > 0
            ):
                issue = Issue(record.subtask.id, event.reason, source=record)
                self.deps.done_send.send_nowait(issue)  # unbounded
            await self._emit_for(s, record, event)

        return emit

    async def _emit_for(self, s: RunState, record: Record | None, event: Event) -> None:
        if record is not None and record.held is not None:
            record.held.append(event)
        else:
            await self._emit(s, event)

    async def _advance(self, s: RunState, step: _Step, tg: anyio.abc.TaskGroup) -> _Step:
        match step:
            case _MakePlan():
                return _Schedule() if await self._make_plan(s, tg) else _Finish()
            case _Schedule(after):
                return await self._schedule(s, tg, after)
            case _Join():
                return await self._join(s)
            case _Replan(trigger, reason):
                await self._replan(s, trigger, reason)
                return _Schedule()
            case _:
                raise AssertionError(f"not a run step: {step!r}")

    async def _schedule(self, s: RunState, tg: anyio.abc.TaskGroup, after: str | None) -> _Step:
        await self._drop_orphans(s)
        await self._check_budget(s)
        if s.exhausted is None and s.halted is None:
            for record in s.ready(after):
                record.status = "running"
                s.running[record.subtask.id] = None
                tg.start_soon(self._run_subtask, s, record)
        if s.running:
            return _Join()
        why = (
            s.halted
            or (f"the {s.exhausted} budget ran out" if s.exhausted else None)
            or "its dependencies never finished"
        )
        for record in [s.records[i] for i in s.ids("pending")]:
            await self._drop(s, record, f"not started: {why}")
        return _Finish()

    async def _join(self, s: RunState) -> _Step:
        completion = await self._next_completion(s)
        if completion is None:
            return await self._halt(s)
        if isinstance(completion, Issue):
            return await self._issue(s, completion)
        s.running.pop(completion.subtask_id, None)
        record = s.records[completion.subtask_id]
        report = record.report = completion.report
        done = _Schedule(after=record.subtask.id)
        await self._remember(report)
        ids = {"run_id": s.run_id, "subtask_id": record.subtask.id, "step": s.step}
        for warning in s.budget_warnings():
            await self._emit(s, warning)
        if record.obsolete or report.stop_reason == "cancelled":
            record.status = "cancelled"
            s.deaths = True
            why = "obsolete after a replan" if record.obsolete else "cancelled by the caller"
            await self._emit(s, SubtaskCancelled(**ids, reason=why, report=report))
            return done
        record.status = report.status
        s.deaths = s.deaths or report.status not in FINISHED
        if report.status in FINISHED:
            await self._emit(s, SubtaskFinished(**ids, report=report))
        else:
            await self._emit(s, SubtaskFailed(**ids, report=report))
        trigger = replan_reason(report, answered=record.issue)
        await self._check_budget(s)
        if trigger and s.replans < self.max_replans and s.exhausted is None and not s.halted:
            return _Replan(record.subtask.id, trigger)
        return done

    async def _issue(self, s: RunState, issue: Issue) -> _Step:
        """A running sub-agent found the plan's assumptions invalidated: replan now, while it
        writes its answer, unless the run may not replan (any more) or the agent's work is no
        longer wanted. Its report, when it comes, does not trigger a replan for the same
        finding."""
        record = s.records[issue.subtask_id]
        await self._check_budget(s)
        if (
            record.status == "running"
            and not record.obsolete
            and record.issue is None
            and s.replans < self.max_replans
            and s.exhausted is None
            and not s.halted
        ):
            record.issue = issue.reason
            return _Replan(record.subtask.id, invalidation(issue.reason))
        return _Join() if s.running else _Schedule()

    async def _next_completion(self, s: RunState) -> Completion | Issue | None:
        """The next arrival to handle: the first to arrive live; the recorded one on replay (the
        loop then waits for that one, keeping any others that arrive first). A subtask's arrivals
        come in the order it sent them (an issue before its report). None: the caller asked to
        stop the run (first, if it asked before the next report arrived)."""

        def halt_pending() -> bool:
            return s.halt_asked is not None and s.halted is None

        async def first_arrival() -> str:
            while not s.arrived and not halt_pending():
                await _receive(s, self.deps)
            return _HALT if halt_pending() else next(iter(s.arrived))

        options = list(s.running) if s.halted else [*s.running, _HALT]
        chosen = await self.deps.choose(s.step, first_arrival, options=options)
        if chosen == _HALT:
            return None
        while chosen not in s.arrived:
            await _receive(s, self.deps)
        queue = s.arrived[chosen]
        if len(queue) == 1:
            del s.arrived[chosen]
        return queue.pop(0)

    async def _halt(self, s: RunState) -> _Step:
        """Stop the whole run, keeping its work: the running sub-agents stop (their partial
        reports still arrive), nothing pending starts, and nothing is replanned."""

        async def asked() -> str:
            return s.halt_asked or "cancelled by the caller"

        # Recorded too: a replay ends with the same reason.
        s.halted = await self.deps.choose(s.step, asked)
        _log.warning("run_cancelled", reason=s.halted)
        for subtask_id in s.running:
            s.records[subtask_id].stop.set()
        for record in [s.records[i] for i in s.ids("pending")]:
            await self._drop(s, record, f"not started: {s.halted}")
        return _Schedule()

    async def _check_budget(self, s: RunState) -> None:
        """Note the first spent budget. The sub-agents' ledger is asked, not the run's: once their
        share of the deadline is gone nothing new can start, and the rest is the synthesis's."""
        reason = s.agent_budget.exhausted(await self.deps.now(s.step))
        if reason and s.exhausted is None:
            s.exhausted = reason
            _log.warning("budget_exhausted", reason=reason)
            await self._emit(s, BudgetExhausted(run_id=s.run_id, step=s.step, reason=reason))

    async def _remember(self, report: AgentReport) -> None:
        """Keep what the sub-agent's tools declared worth remembering, with its provenance."""
        if self.facts is None:
            return
        for found in report.findings:
            fact = Fact(
                key=found.key,
                value=found.value,
                scope=self.scope,
                source=f"tool:{found.tool}",
                confidence=0.8,
            )
            await self.facts.put(fact)

    async def _run_subtask(self, s: RunState, record: Record) -> None:
        sub = record.subtask
        async with _slot(self.deps.limiter):
            started = SubtaskStarted(run_id=s.run_id, subtask_id=sub.id, step=s.step, goal=sub.goal)
            await self._emit_for(s, record, started)
            try:
                events = self._emit_agent(s, record)
                call = s.agent_call(record, events, text=self.text, pass_results=self.pass_results)
                report = await self.executor.effects.sub_agent(self.executor, call)
            except (ReplayDrift, JournalError):
                # A replay that parted from its recording, or a journal that cannot record, ends
                # the run (left resumable): neither is a sub-agent's failure to replan around.
                raise
            except Exception as exc:
                # A bug in a sub-agent must not take its siblings' results down with it.
                _log.exception("subtask_crashed", subtask_id=sub.id)
                report = AgentReport(
                    agent_id=sub.id, task=sub.goal, status="failed", answer="", notes=(repr(exc),)
                )
        if record.held is not None:  # an early start: what reads its result may start early too
            record.report = report
            self._early_ended()
        self.deps.done_send.send_nowait(Completion(sub.id, report, source=record))  # unbounded

    async def _finish(self, s: RunState) -> RunResult:
        if s.unplanned is not None:
            return await self._ended(s, status="failed", answer="", note=s.unplanned, reports=[])
        reports = [r.report for r in s.records.values() if r.report is not None]
        # What a replan removed was the planner's judgement that it no longer holds: not used.
        kept = [r.report for r in s.records.values() if r.report is not None and not r.obsolete]
        usable = [r for r in kept if r.status in FINISHED or r.evidence]
        note = s.incompleteness()
        cut = s.halted or s.exhausted  # the caller or a budget stopped it: it stays incomplete
        answered = goal_answered(s.goal, kept) if note and not cut else None
        if answered is not None:
            # The goal itself was asked and answered (passing every check a done answer must):
            # the other subtasks that ended partial or failed are noted, not the run's fate.
            s.notes.append(f"{answered.agent_id} answered the goal itself; besides: {note}")
            usable, note = [answered], None
        used = {"paor.synthesis.subtask_ids": tuple(r.agent_id for r in usable)}
        with telemetry.span("paor.synthesis", {**span_ids(s), **used}):
            on_text = partial(self._synthesis_delta, s) if self.text else None
            needs = {sub.id: sub.depends_on for plan in s.plans[-1:] for sub in plan.subtasks}
            synthesis = await self.deps.planner.synthesise(
                s.goal,
                usable,
                note,
                known=s.known,
                on_text=on_text,
                output=self.output,
                needs=needs,
            )
        answer = synthesis.answer
        if synthesis.problem:
            s.notes.append(synthesis.problem)
            note = f"{note}; {synthesis.problem}" if note else synthesis.problem
        status: _Ended = (
            "failed" if not (usable or s.halted) else ("incomplete" if note else "complete")
        )
        return await self._ended(
            s, status=status, answer=answer, note=note, reports=reports, output=synthesis.output
        )

    async def _ended(
        self,
        s: RunState,
        *,
        status: _Ended,
        answer: str,
        note: str | None,
        reports: list[AgentReport],
        output: Any = None,
    ) -> RunResult:
        await self._emit(
            s,
            RunFinished(
                run_id=s.run_id, step=s.step, status=status, reason=note, usage=s.budget.used
            ),
        )
        _log.info("run_finished", status=status, reason=note, tokens=s.budget.used.total_tokens)
        return RunResult(
            run_id=s.run_id,
            goal=s.goal,
            answer=answer,
            status=status,
            reason=note,
            plans=tuple(s.plans),
            diffs=tuple(s.diffs),
            reports=tuple(reports),
            usage=s.budget.used,
            events=tuple(s.trace),
            notes=tuple(s.notes),
            output=output,
        )


async def _receive(s: RunState, deps: RunDeps) -> None:
    try:
        arrival = deps.done_receive.receive_nowait()  # one already sent: no turn of the loop
    except anyio.WouldBlock:
        arrival = await deps.done_receive.receive()
    if isinstance(arrival, Halt):
        s.halt_asked = s.halt_asked or arrival.reason
    elif arrival.source is None or s.records.get(arrival.subtask_id) is arrival.source:
        # (else: an early start the plan did not keep)
        s.arrived.setdefault(arrival.subtask_id, []).append(arrival)


@asynccontextmanager
async def _slot(limiter: anyio.CapacityLimiter) -> AsyncIterator[None]:
    """Hold a concurrency slot, taking a free one without yielding to the other agents first."""
    try:
        limiter.acquire_nowait()
    except anyio.WouldBlock:
        await limiter.acquire()
    try:
        yield
    finally:
        limiter.release()
