"""The run loop's planning steps: the first plan, each replan, and the subtasks a plan drops.

The first plan is the planner's (or, under `direct_questions`, a goal that is one question as its
own one-subtask plan), after any questions it may put to the user, as a person approved
or edited it under review; a streaming planner's subtasks may start before the plan is whole (one
with dependencies once they have ended well), and are kept only if the adopted plan has them as
written and kept what they read. A replan keeps what is in play and adds or
removes subtasks, under review when every plan is reviewed. A subtask whose dependencies died, or
that a replan removed before it ran, is dropped. `RunLoop` (in `orchestrator._run`) takes these
steps from `PlanSteps` and gives them its events and its sub-agent runner.
"""

from __future__ import annotations

import contextvars
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable

import anyio.abc

from agents import AgentReport, telemetry
from agents.events import AgentEvent
from agents.telemetry import logger
from agents.tools import Toolbox
from orchestrator._events import Event, PlanCreated, Replanned, SubtaskInvalidated
from orchestrator._plan import Plan, PlanDiff, PlanError, Subtask
from orchestrator._plan_checks import one_question
from orchestrator._planner import Question
from orchestrator._review import MAX_REJECTIONS, Reviewer, asked_for_planner
from orchestrator._state import FINISHED, Record, RunDeps, RunState

__all__ = ["PlanSteps", "invalidation", "replan_reason", "span_ids"]

_log = logger("paor.run")
_ONE_QUESTION = "the goal is one question: its own plan, made without a planning call"


class _Rejected(PlanError):
    """A person rejected every plan the planner made (no fallback plan runs instead)."""


class PlanSteps(ABC):
    """The loop's Plan and Replan steps; the loop gives them its events and its sub-agents."""

    __slots__ = ()
    toolbox: Toolbox
    deps: RunDeps
    single_on_plan_failure: bool
    direct_questions: bool
    stream_plans: bool
    _early_ended: Callable[[], None]  # starts what waits for an early start that just ended

    @abstractmethod
    async def _emit(self, s: RunState, event: Event) -> None:
        """Publish an event of the run."""

    @abstractmethod
    def _emit_agent(
        self, s: RunState, record: Record | None = None
    ) -> Callable[[AgentEvent], Awaitable[None]]:
        """An event sink for an agent's events (held while `record` is an unkept early start)."""

    @abstractmethod
    async def _run_subtask(self, s: RunState, record: Record) -> None:
        """Run the subtask's sub-agent and send its report back to the loop."""

    async def _make_plan(self, s: RunState, tg: anyio.abc.TaskGroup) -> bool:
        """Make the first plan and adopt it: whether the run has one to schedule (without one
        it ends, unless told to run its goal as one subtask)."""
        now = await self.deps.now(s.step)
        early = self._early_starter(s, tg) if self.stream_plans else None
        try:
            with telemetry.span("paor.plan", span_ids(s)) as span:
                plan = await self._planned(s, now, early)
                span.finish(_plan_attributes(plan))
        except PlanError as exc:
            await self._keep_early(s)  # none is kept: there is no plan
            if self.single_on_plan_failure and not isinstance(exc, _Rejected):
                # Degrade, never come back empty-handed: the whole goal becomes one subtask.
                s.notes.append(f"planning failed, ran the goal as one subtask: {exc}")
                _log.warning("plan_fallback", error=str(exc))
                plan = Plan(subtasks=(Subtask(id="goal", goal=s.goal),), rationale=str(exc))
                s.adopt(plan)
                await self._emit(s, PlanCreated(run_id=s.run_id, step=s.step, plan=plan))
                return True
            s.unplanned = str(exc)
            _log.warning("plan_failed", error=s.unplanned)
            return False
        s.adopt(plan)
        s.notes += self.deps.planner.take_notes()
        _log.info("plan_created", version=plan.version, subtasks=len(plan.subtasks))
        await self._emit(s, PlanCreated(run_id=s.run_id, step=s.step, plan=plan))
        await self._keep_early(s)
        return True

    async def _planned(
        self, s: RunState, now: float, early: Callable[[Subtask], None] | None
    ) -> Plan:
        """The first plan: the planner's, as a person approved or edited it under review (a
        rejection's feedback goes back to the planner, a bounded number of times)."""
        feedback, rejected = "", 0
        while True:  # bounded: by the rejections allowed, and by the questions the run may ask
            may_ask = self._may_ask()
            streams = early is not None and not may_ask and self._reviewer(s) is None
            plan: Plan | Question
            if self.direct_questions and not feedback and one_question(s.goal):
                plan = Plan(subtasks=(Subtask(id="goal", goal=s.goal),), rationale=_ONE_QUESTION)
            else:
                plan = await self.deps.planner.make_plan(
                    s.goal, unavailable=self.toolbox.unavailable(now), known=s.known,
                    feedback=feedback, may_ask=may_ask,
                    on_subtask=early if streams else None,
                )  # fmt: skip
            if isinstance(plan, Question):
                await self._ask_for_planner(s, plan.text)
                continue
            reviewer = self._reviewer(s)
            if reviewer is None:
                return plan
            verdict = await reviewer.review(s.step, plan)
            if isinstance(verdict, Plan):
                return verdict
            feedback, rejected = verdict, rejected + 1
            if rejected > MAX_REJECTIONS:
                raise _Rejected(f"a person rejected {rejected} plans; the last said: {feedback}")

    def _may_ask(self) -> bool:
        """Whether the planner may ask the user a question now (one is left)."""
        deps = self.deps
        return deps.approver is not None and len(deps.waits.questions) < deps.questions

    async def _ask_for_planner(self, s: RunState, question: str) -> None:
        """Ask the user the planner's question; the answer joins what the run knows."""
        deps = self.deps
        site = deps.addresses.next(s.step)
        heard = await asked_for_planner(
            deps.effects, site, question, deps.approver, deps.waits, deps.questions,
            self._emit_agent(s),
        )  # fmt: skip
        said = f"Asked the user: {question}\nThey answered: {heard}"
        s.known = f"{s.known}\n\n{said}" if s.known else said

    def _reviewer(self, s: RunState, *, replan: bool = False) -> Reviewer | None:
        """Who reviews this plan, if anyone: the first plan under any review, replans under
        "every"."""
        deps = self.deps
        if deps.approver is None or deps.review is None or (replan and deps.review != "every"):
            return None
        return Reviewer(
            approver=deps.approver, waits=deps.waits, effects=deps.effects,
            addresses=deps.addresses, max_subtasks=deps.planner.max_subtasks,
            tools=deps.planner.tools.keys(), emit=self._emit_agent(s),
        )  # fmt: skip

    def _early_starter(self, s: RunState, tg: anyio.abc.TaskGroup) -> Callable[[Subtask], None]:
        """What starts each subtask the streaming planner has just written (see `_keep_early`):
        one with dependencies as soon as they have all finished well, if the plan is still
        coming (`_early_ended`); in the run's context as it is now, before the plan's span (a
        task inherits its starter's context, and the planner call's span and text sink are no
        sub-agent's)."""
        run = contextvars.copy_context()

        def release() -> None:
            if s.plan is not None or s.halt_asked is not None or s.exhausted is not None:
                return  # the plan has come (the loop schedules the rest), or nothing may start
            for sub in list(s.streamed.values()):
                if sub.id not in s.early and all(
                    _ended_well(s.early.get(d)) for d in sub.depends_on
                ):
                    record = s.early[sub.id] = Record(subtask=sub, status="running", held=[])
                    run.run(tg.start_soon, self._run_subtask, s, record)

        def start(sub: Subtask) -> None:
            s.streamed.setdefault(sub.id, sub)
            release()

        self._early_ended = release
        return start

    async def _keep_early(self, s: RunState) -> None:
        """Settle the early starts against the adopted plan: one the plan has, exactly as it
        was streamed, and whose dependencies were kept too, is its subtask's run (its events are
        published now, after the plan's); any other is stopped and its report ignored."""
        early, s.early, s.streamed = s.early, {}, {}  # nothing more starts early
        dropped: set[str] = set()
        for sub_id, record in early.items():  # in the order they started: dependencies first
            planned = s.records.get(sub_id)
            if (
                planned is None
                or planned.status != "pending"
                or planned.subtask != record.subtask
                or dropped.intersection(record.subtask.depends_on)
            ):
                record.stop.set()  # its events stay held: it was never part of the run
                dropped.add(sub_id)
                _log.info("early_start_discarded", subtask_id=sub_id)
                continue
            s.records[sub_id] = record
            s.running[sub_id] = None
            held, record.held = record.held or [], None
            for event in held:
                await self._emit(s, event)

    async def _replan(self, s: RunState, trigger: str, reason: str) -> None:
        """Replan around `trigger`'s report and adopt the new plan (a failed replan is noted and
        the plan in play goes on)."""
        s.replans += 1
        dropped = await self._drop_orphans(s)
        assert s.plan is not None
        live = s.ids("pending", "running", "done", "partial")
        in_play = Plan(version=s.plan.version, subtasks=tuple(s.records[i].subtask for i in live))
        now = await self.deps.now(s.step)
        try:
            with telemetry.span(
                "paor.replan",
                {**span_ids(s), "paor.replan.trigger": trigger},
                content={"paor.replan.reason": reason},  # it quotes the report's answer
            ) as span:
                plan, removed = await self._replanned(s, in_play, trigger, reason, now)
                removals = {"paor.plan.removed_ids": tuple(sorted(removed))}
                span.finish({**_plan_attributes(plan), **removals})
        except PlanError as exc:
            s.notes.append(f"replan after {trigger} failed: {exc}")
            _log.warning("replan_failed", trigger=trigger, error=str(exc))
            return
        cancelled = await self._apply_removals(s, removed, plan.version)
        added = tuple(i for i in plan.ids if i not in s.records)
        s.adopt(plan)
        s.notes += self.deps.planner.take_notes()
        diff = PlanDiff(
            version=plan.version,
            trigger=trigger,
            reason=reason,
            added=added,
            removed=(*dropped, *sorted(removed - set(cancelled))),
            cancelled=tuple(cancelled),
            kept=tuple(i for i in in_play.ids if i not in removed),
        )
        s.diffs.append(diff)
        _log.info("replanned", version=plan.version, added=len(added), cancelled=len(cancelled))
        await self._emit(s, Replanned(run_id=s.run_id, step=s.step, diff=diff, plan=plan))

    async def _replanned(
        self, s: RunState, in_play: Plan, trigger: str, reason: str, now: float
    ) -> tuple[Plan, set[str]]:
        """The planner's replan and what it removes, as a person approved or edited it when
        every plan is reviewed (a rejection's feedback goes back to the planner, bounded)."""
        status: dict[str, str] = {i: r.status for i, r in s.records.items()}
        reserved = set(s.records) - set(in_play.ids)
        found = s.records[trigger]
        invalidated = found.issue is not None or bool(found.report and found.report.invalidates)
        feedback = ""
        for _ in range(MAX_REJECTIONS + 1):
            plan, removed = await self.deps.planner.replan(
                s.goal, in_play, status=status,
                reports={i: r.report for i, r in s.records.items() if r.report is not None},
                trigger=trigger, reason=reason, invalidated=invalidated, reserved=reserved,
                unavailable=self.toolbox.unavailable(now), known=s.known, feedback=feedback,
            )  # fmt: skip
            reviewer = self._reviewer(s, replan=True)
            if reviewer is None:
                return plan, removed
            why = f"{trigger} {reason}"
            verdict = await reviewer.review(
                s.step, plan, before=in_play, status=status, reserved=reserved, why=why
            )
            if isinstance(verdict, Plan):
                return verdict, set(in_play.ids) - set(verdict.ids)
            feedback = verdict
        raise _Rejected(
            f"a person rejected {MAX_REJECTIONS + 1} replans; the last said: {feedback}"
        )

    async def _apply_removals(self, s: RunState, removed: set[str], version: int) -> list[str]:
        cancelled = []
        for subtask_id in sorted(removed):
            record = s.records[subtask_id]
            record.obsolete = True  # the planner's choice: not a gap in the final answer
            if record.status == "running":
                record.stop.set()
                cancelled.append(subtask_id)
            else:
                await self._drop(s, record, f"removed by replan v{version}")
        return cancelled

    async def _drop_orphans(self, s: RunState) -> list[str]:
        """Drop pending subtasks whose dependencies died, transitively; scans only after a death."""
        dropped = []
        while s.deaths:
            s.deaths = False
            for record, dead in s.orphans():
                await self._drop(s, record, f"depends on {dead}, which did not finish")
                dropped.append(record.subtask.id)
        return dropped

    async def _drop(self, s: RunState, record: Record, reason: str) -> None:
        record.status = "dropped"
        s.deaths = True
        await self._emit(
            s,
            SubtaskInvalidated(
                run_id=s.run_id, subtask_id=record.subtask.id, step=s.step, reason=reason
            ),
        )


def span_ids(s: RunState) -> dict[str, str | int]:
    """What every planner span of the run carries."""
    return {"gen_ai.conversation.id": s.run_id, "paor.run.id": s.run_id, "paor.step": s.step}


def _plan_attributes(plan: Plan) -> dict[str, int | tuple[str, ...]]:
    return {"paor.plan.version": plan.version, "paor.plan.subtask_ids": plan.ids}


def _ended_well(record: Record | None) -> bool:
    """Whether an early start has reported, done or partial, with nothing to replan around: a
    subtask that reads its result may start before the plan has come."""
    report = None if record is None else record.report
    return report is not None and report.status in FINISHED and replan_reason(report) is None


def replan_reason(report: AgentReport, answered: str | None = None) -> str | None:
    """Why a subtask's report calls for a replan, if it does (`answered`: an invalidation a
    replan already answered as it arrived, not a reason again)."""
    if report.invalidates and report.invalidates != answered:
        return invalidation(report.invalidates)
    if report.status == "blocked":
        return f"it is blocked: {report.answer[:300]}"
    if report.status == "failed":
        return f"it failed: {'; '.join(report.notes[-2:]) or report.answer[:300]}"
    if report.stop_reason == "acceptance":
        return f"its answer was rejected: {report.notes[-1] if report.notes else ''}"
    return None


def invalidation(reason: str) -> str:
    """The replan reason for a sub-agent's finding that invalidates the plan's assumptions."""
    return f"its result invalidates the plan's assumptions: {reason}"
