"""The bookkeeping of one run: subtask records, the completion channel, and the event emitter."""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable, Collection
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Generic, Literal

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from pydantic import BaseModel, ConfigDict
from pydantic_core import to_json
from typing_extensions import TypeVar

from agents import AgentReport, Budget, Usage
from agents.approvals import ApprovalRequest, Approver, RunWaits
from agents.effects import Addresses, AgentCall, Effects
from agents.events import AgentEvent
from agents.guards import Stop
from memory import ToolCall
from orchestrator._events import BudgetWarning, Event
from orchestrator._plan import Plan, PlanDiff, PlannedCall, Subtask
from orchestrator._plan_checks import evidence_rule, same_question
from orchestrator._planner import Planner
from orchestrator._synthesis import RESULT_CHARS

__all__ = [
    "Answered",
    "Arrival",
    "Completion",
    "Halt",
    "Issue",
    "Record",
    "RunDeps",
    "RunResult",
    "RunState",
    "SubtaskStatus",
]

OutputT = TypeVar("OutputT", default=Any)
"""A run's output type (`Orchestrator.run(goal, output_type=T)`); Any when it has none."""
SubtaskStatus = Literal[
    "pending", "running", "done", "partial", "failed", "blocked", "cancelled", "dropped"
]
"""Where a subtask is in its life: pending, running, or how it ended."""
FINISHED: frozenset[SubtaskStatus] = frozenset({"done", "partial"})
DEAD: frozenset[SubtaskStatus] = frozenset({"failed", "blocked", "cancelled", "dropped"})


class Answered(BaseModel):
    """A question the run asked the user, and the answer.

    Attributes:
        agent_id: Who asked ("run" for the planner).
        question: What was asked.
        answer: What the user said.
    """

    model_config = ConfigDict(frozen=True)

    agent_id: str
    question: str
    answer: str


class RunResult(BaseModel, Generic[OutputT]):
    """The outcome of a run; `RunResult[T]` for a run asked for an `output_type` T.

    Attributes:
        run_id: The run.
        goal: The goal it was given.
        answer: The synthesised answer (empty only for a paused run, or one that could make no
            plan).
        status: complete; incomplete (a budget ran out, subtasks failed or the caller cancelled
            the run: `reason` says which); failed (nothing usable was gathered); paused (it
            waits for people's decisions: `waiting`; `Orchestrator.resume` continues it).
        reason: Why the run is not complete, if it is not.
        plans: Every plan version, first to last.
        diffs: What each replan changed.
        reports: Every sub-agent report, cancelled ones included.
        usage: Tokens, requests and tool calls of the whole run.
        events: The run's events, in order (when the orchestrator keeps them).
        notes: Problems the run worked around (a replan the planner could not produce...).
        waiting: What a paused run waits for.
        waited_s: Seconds the run waited only for people (not counted against its deadline).
        answered: The questions the run asked the user, with their answers.
        output: The answer as an instance of the run's `output_type`, validated (None without
            one, or when no object of its shape was written). An object of the right shape
            whose content failed a check (a number no result shows) is kept here as the best
            there is, and the run is `incomplete`, `reason` saying why.
    """

    model_config = ConfigDict(frozen=True)

    run_id: str
    goal: str
    answer: str
    status: Literal["complete", "incomplete", "failed", "paused"]
    reason: str | None = None
    plans: tuple[Plan, ...] = ()
    diffs: tuple[PlanDiff, ...] = ()
    reports: tuple[AgentReport, ...] = ()
    usage: Usage = Usage()
    events: tuple[Event, ...] = ()
    notes: tuple[str, ...] = ()
    waiting: tuple[ApprovalRequest, ...] = ()
    waited_s: float = 0.0
    answered: tuple[Answered, ...] = ()
    output: OutputT | None = None

    @property
    def complete(self) -> bool:
        """Whether every part of the plan was done within budget."""
        return self.status == "complete"


@dataclass(kw_only=True, slots=True)
class Record:
    """One subtask's life in the run."""

    subtask: Subtask
    status: SubtaskStatus = "pending"
    report: AgentReport | None = None
    stop: Stop = field(default_factory=Stop)
    obsolete: bool = False
    held: list[Event] | None = None  # started while the plan streamed: its events, until kept
    issue: str | None = None  # the invalidation a replan already answered as it arrived


@dataclass(frozen=True, slots=True)
class Completion:
    """A sub-agent's report arriving at the main loop."""

    subtask_id: str
    report: AgentReport
    source: Record | None = None  # the record that ran it (an early start may be discarded)


@dataclass(frozen=True, slots=True)
class Issue:
    """A running sub-agent's report that what it found invalidates the plan's assumptions,
    arriving at the main loop before its answer (which follows as its `Completion`)."""

    subtask_id: str
    reason: str
    source: Record | None = None


@dataclass(frozen=True, slots=True)
class Halt:
    """The caller's request to stop the whole run, keeping its work (`RunStream.cancel`)."""

    reason: str


Arrival = Completion | Issue | Halt
"""What reaches the main loop on its channel."""


@dataclass(kw_only=True, slots=True)
class RunDeps:
    """What the main loop of one run uses, apart from what it knows (`RunState`): the effect
    boundary and the run's effect addresses, the planner, the event stream, the concurrency
    limiter, and the channel on which sub-agents report (and the caller's halt arrives)."""

    effects: Effects
    addresses: Addresses
    planner: Planner
    events: MemoryObjectSendStream[Event]
    limiter: anyio.CapacityLimiter
    keep_events: bool = True
    waits: RunWaits = field(default_factory=RunWaits)
    approver: Approver | None = None
    review: Literal["first", "every"] | None = None
    questions: int = 0
    done_send: MemoryObjectSendStream[Arrival] = field(init=False)
    done_receive: MemoryObjectReceiveStream[Arrival] = field(init=False)

    def __post_init__(self) -> None:
        # Unbounded: at most one completion per subtask (its issues before it, and one halt),
        # and senders never block. A halt travels the same channel as the reports, so the loop
        # waits on one thing.
        self.done_send, self.done_receive = anyio.create_memory_object_stream[Arrival](math.inf)

    async def now(self, step: int) -> float:
        """Read the clock through the effect boundary."""
        return await self.effects.now(self.addresses.next(step))

    async def choose(
        self, step: int, pick: Callable[[], Awaitable[str]], *, options: Collection[str] = ()
    ) -> str:
        """Make a nondeterministic decision of the run through the effect boundary."""
        return await self.effects.choice(self.addresses.next(step), pick, options=options)

    async def publish(self, event: Event) -> None:
        """Send an event to the stream (waits only if the consumer is behind)."""
        try:
            # No yield while the buffer has room: every yield on the path from one subtask's
            # report to its dependent's first request lets all other agents run a step first.
            self.events.send_nowait(event)
        except anyio.WouldBlock:
            await self.events.send(event)


@dataclass(kw_only=True, slots=True)
class RunState:
    """Everything the main loop of one run knows (what it uses is in `RunDeps`)."""

    run_id: str
    goal: str
    budget: Budget
    agent_budget: Budget
    known: str = ""  # the long-term facts the run read at its start, rendered
    result_chars: int | None = RESULT_CHARS  # the most of a result a dependent sub-agent reads
    plan: Plan | None = None
    plans: list[Plan] = field(default_factory=list)
    diffs: list[PlanDiff] = field(default_factory=list)
    records: dict[str, Record] = field(default_factory=dict)
    early: dict[str, Record] = field(default_factory=dict)  # started while the plan streamed
    streamed: dict[str, Subtask] = field(default_factory=dict)  # written so far, while it streams
    # What arrived and awaits the loop, by subtask, in order (an issue before the report).
    arrived: dict[str, list[Completion | Issue]] = field(default_factory=dict)
    trace: list[Event] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    warned: set[str] = field(default_factory=set)
    replans: int = 0
    running: dict[str, None] = field(default_factory=dict)
    dependents: dict[str, list[str]] = field(default_factory=dict)
    deaths: bool = False
    step: int = 0
    exhausted: str | None = None
    halt_asked: str | None = None
    halted: str | None = None
    unplanned: str | None = None  # why no plan could be made: the run ends failed, with it

    def cancel_subtask(self, subtask_id: str) -> bool:
        """Stop one running or pending subtask (the caller's request); whether it was live."""
        record = self.records.get(subtask_id)
        if record is None or record.status not in ("pending", "running"):
            return False
        record.stop.set()
        if record.status == "pending":
            record.status = "cancelled"
            self.deaths = True  # its dependents are orphans now
        return True

    def ids(self, *statuses: SubtaskStatus) -> list[str]:
        """Subtask ids with one of these statuses, in plan order."""
        return [i for i, r in self.records.items() if r.status in statuses]

    def ready(self, after: str | None = None) -> list[Record]:
        """Pending subtasks whose dependencies all finished: among `after`'s dependents if given
        (only they can have become ready when it finished), else among all."""
        candidates = (
            self.records.values()
            if after is None
            else [self.records[i] for i in self.dependents.get(after, ())]
        )
        return [
            r
            for r in candidates
            if r.status == "pending"
            and all(self.records[d].status in FINISHED for d in r.subtask.depends_on)
        ]

    def agent_call(
        self,
        record: Record,
        events: Callable[[AgentEvent], Awaitable[None]],
        *,
        text: bool,
        pass_results: int,
    ) -> AgentCall:
        """The sub-agent run `record`'s subtask is: its brief, what it reads and may spend, and
        whether it may end by passing its tool results on (`pass_results`, up to that many
        characters; `passes_on`). One started while the plan streamed in (live runs only) is
        offered that before its readers are known, and asked again once the plan has come.
        The sole subtask of a plan is not offered `report_issue`: nothing later could change."""
        sub = record.subtask
        early = record.held is not None
        return AgentCall(
            task=sub.brief(),
            context=self.context_for(sub.depends_on),
            shared=self.known,
            run_id=self.run_id,
            agent_id=sub.id,
            budget=self.agent_budget,
            events=events,
            text=text,
            stop=record.stop,
            allowed_tools=sub.tools or None,
            require_evidence=evidence_rule(sub, self.goal),
            call=self._made(sub, sub.call),
            first_call=self._made(sub, sub.first_call),
            output_schema=sub.output_schema,
            pass_results=0 if self.passes_on(sub) is False else pass_results,
            may_pass=partial(self.passes_on, sub) if early and pass_results else None,
            signals=early or self.plan is None or len(self.plan.subtasks) > 1,
        )

    def _made(self, sub: Subtask, planned: PlannedCall | None) -> ToolCall | None:
        """A call of `sub` the planner wrote out, its references to results filled in."""
        if planned is None:
            return None
        return planned.call(f"{sub.id}-call", self.answers(sub.depends_on))

    def passes_on(self, sub: Subtask) -> bool | None:
        """Whether `sub`'s sub-agent may pass its tool results on as its answer: its subtask only
        gathers (no answer shape or check asked, not the goal itself) and no other subtask reads
        its result. While the first plan streams in, False once a subtask written so far reads
        it, else None (its readers are not all known yet)."""
        if sub.output_schema or sub.acceptance or sub.expected_output:
            return False
        if self.plan is None:
            return False if any(sub.id in w.depends_on for w in self.streamed.values()) else None
        return not self.read_by_others(sub.id) and not same_question(sub.goal, self.goal)

    def read_by_others(self, subtask_id: str) -> bool:
        """Whether a subtask of the plan in play (not yet ended, or ended with a result) reads
        `subtask_id`'s result."""
        return any(
            self.records[i].status in ("pending", "running", "done", "partial")
            and not self.records[i].obsolete
            for i in self.dependents.get(subtask_id, ())
        )

    def adopt(self, plan: Plan) -> None:
        """Make `plan` current: new subtasks get records, and the dependents index learns them."""
        self.plan = plan
        self.plans.append(plan)
        for sub in plan.subtasks:
            if sub.id in self.records:
                continue
            self.records[sub.id] = Record(subtask=sub)
            for dep in sub.depends_on:
                self.dependents.setdefault(dep, []).append(sub.id)

    def context_for(self, depends_on: tuple[str, ...]) -> str:
        """The compressed results of a subtask's dependencies (a typed one's as its object, in
        JSON): with the run's known facts (its agents' shared prefix, `Executor.run`), all a
        sub-agent's history starts with.

        Only a `done` answer is passed on as a result. A `partial` one failed its checks (or
        was cut short), so it is no ground for another agent's answer, whose support rule
        reads this context as a passage: what its tools showed is passed on instead."""
        parts: list[str] = []
        for dep in depends_on:
            report = self._of(dep).report
            if report is None:
                continue
            sources = ", ".join(dict.fromkeys(e.source for e in report.evidence[:8]))
            goal = self._of(dep).subtask.goal
            if report.status != "done":
                parts.append(f"[{dep}] {goal}\n{_unaccepted(report, self.result_chars)}")
                continue
            result = (
                f"Result ({report.status}): {report.answer[: self.result_chars]}"
                if report.output is None
                else f"Result ({report.status}), as data: {to_json(report.output).decode()}"
            )
            text = f"[{dep}] {goal}\n{result}"
            parts.append(f"{text}\nSources: {sources}" if sources else text)
        return "\n\n".join(parts)

    def answers(self, ids: tuple[str, ...]) -> dict[str, str]:
        """The answers of the subtasks `ids` that have reported."""
        reports = ((i, self._of(i).report) for i in ids)
        return {i: report.answer for i, report in reports if report is not None}

    def _of(self, subtask_id: str) -> Record:
        """A subtask's record: the plan's, or while the first plan streams in, its early start's."""
        return self.records.get(subtask_id) or self.early[subtask_id]

    def incompleteness(self) -> str | None:
        """Why the run is not complete (None: it is)."""
        reasons = [self.halted] if self.halted else []
        if self.exhausted:
            reasons.append(f"the {self.exhausted} budget ran out")
        statuses: tuple[SubtaskStatus, ...] = (
            "failed",
            "blocked",
            "cancelled",
            "dropped",
            "partial",
        )
        for status in statuses:
            ids = [i for i in self.ids(status) if not self.records[i].obsolete]
            if ids:
                reasons.append(f"{status}: {', '.join(ids)}")
        return "; ".join(reasons) or None

    def orphans(self) -> list[tuple[Record, str]]:
        """Pending subtasks that depend on a dead one (failed, blocked, cancelled, dropped)."""
        found = []
        for r in self.records.values():
            dead = [d for d in r.subtask.depends_on if self.records[d].status in DEAD]
            if r.status == "pending" and dead:
                found.append((r, dead[0]))
        return found

    def budget_warnings(self) -> list[BudgetWarning]:
        """A warning for each resource that passed 80% of its cap since the last call."""
        used = self.budget.used
        caps: list[tuple[str, float, float | None]] = [
            ("tokens", used.total_tokens, self.budget.max_tokens),
            ("cost", used.cost, self.budget.max_cost),
            ("requests", used.requests, self.budget.max_requests),
            ("tool_calls", used.tool_calls, self.budget.max_tool_calls),
        ]
        found = []
        for name, spent, cap in caps:
            if cap and spent >= 0.8 * cap and name not in self.warned:
                self.warned.add(name)
                found.append(
                    BudgetWarning(
                        run_id=self.run_id, step=self.step, resource=name, used=spent, limit=cap
                    )
                )
        return found


def _unaccepted(report: AgentReport, chars: int | None) -> str:
    """What a subtask that did not finish `done` hands on: not its answer (it was not
    accepted), but each source its tools showed, once, with its first excerpt."""
    head = f"Not finished ({report.status}); its answer was not accepted."
    excerpts: dict[str, str] = {}
    for e in report.evidence:
        excerpts.setdefault(e.source, " ".join(e.excerpt.split()))
    if not excerpts:
        return f"{head} Its tools showed nothing usable."
    shown = "\n".join(f"- [{source}] {text}" for source, text in list(excerpts.items())[:8])
    return f"{head} What its tools showed:\n{shown[:chars]}"
