"""`Orchestrator`: the public face of a run, as a result or as a stream of typed events.

`stream()` is the one code path: it returns an async context manager that runs the loop in its own
task group and hands back the receiving end of the event stream. `run()` drains that same stream.
Leaving the `async with` block early cancels the run, and so does cancelling the caller's scope:
both abandon it. `RunStream.cancel()` stops it and keeps its work: the running sub-agents end with
their partial reports and the run ends `incomplete`, with a synthesis of what exists.

With a journal every run is recorded; `resume()` continues a crashed run from its records and
`replay()` re-runs a recorded one offline. Both take the same code path, through `RunStream`.
"""

from __future__ import annotations

import contextlib
import time
import uuid
from collections.abc import Iterable, Mapping
from functools import partial
from typing import Any, Literal

import anyio
import structlog
from anyio.streams.memory import MemoryObjectSendStream

from agents import AcceptanceCheck, Budget, ChatModel, ConfigurationError, Executor, Tool
from agents import _telemetry as telemetry
from agents._approval import Approver, Decide, Decision
from agents._configured import Configured
from agents._streaming import wanting_text
from agents._tracing import redact_text
from agents._waits import Pending, RunWaits, run_waits
from agents.effects import (
    RUN_AGENT,
    Addresses,
    Drift,
    Effects,
    JournaledEffects,
    JournalMode,
    LiveEffects,
)
from agents.errors import ReplayDrift
from agents.executor import DEFAULT_INSTRUCTIONS, FirstLook
from agents.tools import Toolbox
from memory import Compactor, FactStore, Journal
from memory.facts import FactKind, render_facts, user_fact
from memory.journal import RunInfo
from orchestrator._durable import ReplayReport, hold_lease, open_run, run_ended
from orchestrator._events import Event, RunPaused
from orchestrator._limits import Limits
from orchestrator._planner import PLANNER_INSTRUCTIONS, SYNTHESIS_INSTRUCTIONS, Planner
from orchestrator._run import RunLoop
from orchestrator._state import Answered, Halt, RunDeps, RunResult, RunState
from orchestrator._stream import EventStream

__all__ = ["Orchestrator", "RunStream"]

_FACTS_CHARS = 1500
PAUSE_SETTLE_S = 0.5
"""How long a run with a pausing approver stays quiet (only approvals waiting, nothing in flight)
before it pauses: a sub-agent between two effects is about to start the next."""


class Orchestrator(Configured):
    """Plans a goal into subtasks, runs them in concurrent sub-agents, replans, and synthesises.

    Args:
        model: The model of the sub-agents (and of the planner, unless `planner_model` is given).
        tools: The tools, or a `Toolbox` whose breakers are shared with other users.
        limits: The run's budget and exits.
        planner_model: A separate model for planning and synthesis.
        instructions: The sub-agents' system prompt.
        planner_instructions: The planner's system prompt (`{max_subtasks}` is filled in).
        synthesis_instructions: The final writer's system prompt.
        acceptance: A check every sub-agent's final answer must pass.
        effects: The effect boundary (live by default).
        keep_events: Keep every event in `RunResult.events`.
        on_plan_failure: "raise" a `PlanError` when no valid plan can be made, or run the goal
            as a "single" subtask (noted in `RunResult.notes`).
        compactor: Keeps every sub-agent's history under a token budget.
        facts: Long-term facts; those of `scope` are read once at the start of each run and shown
            to the planner and every sub-agent (once per run, so prompt prefixes stay stable), and
            what tools declare worth remembering (`@tool(facts=...)`) is stored there.
        scope: The user or session whose facts apply.
        journal: Record every run here (an open `Journal`), which makes `resume` and `replay`
            possible.
        first_look: A tool call every sub-agent makes before its first decision, with its
            subtask's goal (`FirstLook("search_docs", "query")`).
        cite: Sub-agents' answers cite the sources they gathered (see `Executor`).
        ask_goal: Every first plan asks the goal itself: a subtask for it is put first when the
            planner left it out (the last subtask making room), and subtasks of one or two words
            are dropped, so a plan that strays still answers the question.
        approver: Decides on the calls of tools that need approval, for every sub-agent, and
            on the plans under `review` (see `agents.approvals`); a call approved "always" is
            so for the rest of the run. With `agents.approvals.PAUSE` the caller decides while
            the run streams (`RunStream.decide`), and a journaled run pauses once nothing but
            approvals is left: it ends "paused", and `resume(run_id, decisions=...)` goes on.
        review: Plans the approver reviews before they run: the "first" plan, or "every"
            version (each replan's too). A person may approve a plan, edit it (validated like
            the planner's) or reject it with feedback the planner reads (see
            `orchestrator._review`).
        questions: How many clarifying questions a run may ask the user, its planner's and
            its sub-agents' together (the approver answers; see `agents._signals`).
        direct_calls: The planner may write a subtask out as one tool call (`Subtask.call`),
            which then runs without a sub-agent's model calls (LLMCompiler's tasks).
        stream_plans: Stream the first plan, and start each subtask with no dependencies as
            soon as the planner has written it (LLMCompiler's trick); the plan is still
            validated whole, and an early start the final plan does not keep is stopped. For
            a hosted endpoint; off for a single local server, where early sub-agents would
            wait on the planner's slot. Live runs only (not journaled, nor in Temporal), and
            not with `review` or `questions`.

    Raises:
        ConfigurationError: `review` or `questions` without an `approver`.
    """

    def __init__(
        self,
        model: ChatModel,
        tools: Iterable[Tool] | Toolbox = (),
        *,
        limits: Limits | None = None,
        planner_model: ChatModel | None = None,
        instructions: str = DEFAULT_INSTRUCTIONS,
        planner_instructions: str = PLANNER_INSTRUCTIONS,
        synthesis_instructions: str = SYNTHESIS_INSTRUCTIONS,
        acceptance: AcceptanceCheck | None = None,
        effects: Effects | None = None,
        keep_events: bool = True,
        on_plan_failure: Literal["raise", "single"] = "raise",
        compactor: Compactor | None = None,
        facts: FactStore | None = None,
        scope: str = "default",
        journal: Journal | None = None,
        first_look: FirstLook | None = None,
        cite: bool = False,
        ask_goal: bool = False,
        approver: Approver | Decide | None = None,
        review: Literal["first", "every"] | None = None,
        questions: int = 0,
        direct_calls: bool = False,
        stream_plans: bool = False,
    ) -> None:
        if review is not None and approver is None:
            raise ConfigurationError("review= needs an approver= to ask (see agents.approvals)")
        if questions and approver is None:
            raise ConfigurationError("questions= needs an approver= to answer them")
        self.model = model
        self.planner_model = planner_model or model
        self.toolbox = tools if isinstance(tools, Toolbox) else Toolbox(tools)
        self._keep(
            {
                "model": model, "tools": self.toolbox, "limits": limits,
                "planner_model": planner_model, "instructions": instructions,
                "planner_instructions": planner_instructions,
                "synthesis_instructions": synthesis_instructions, "acceptance": acceptance,
                "effects": effects, "keep_events": keep_events,
                "on_plan_failure": on_plan_failure, "compactor": compactor, "facts": facts,
                "scope": scope, "journal": journal, "first_look": first_look, "cite": cite,
                "ask_goal": ask_goal, "approver": approver, "review": review,
                "questions": questions, "direct_calls": direct_calls,
                "stream_plans": stream_plans,
            }
        )  # fmt: skip
        self.limits = limits or Limits()
        self.planner_instructions = planner_instructions
        self.synthesis_instructions = synthesis_instructions
        self.effects: Effects = effects or LiveEffects()
        self.keep_events = keep_events
        self.on_plan_failure = on_plan_failure
        self.facts = facts
        self.scope = scope
        self.journal = journal
        self.ask_goal = ask_goal
        self.approver = Approver.of(approver)
        self.review = review
        self.questions = questions
        self.direct_calls = direct_calls
        self.stream_plans = stream_plans
        self.executor = Executor(
            model,
            self.toolbox,
            instructions=instructions,
            limits=self.limits.agent,
            acceptance=acceptance,
            effects=self.effects,
            compactor=compactor,
            first_look=first_look,
            cite=cite,
            approver=self.approver,
            questions=questions,
        )
        self._seal()

    def stream(
        self,
        goal: str,
        *,
        run_id: str | None = None,
        meta: dict[str, Any] | None = None,
        text: bool = False,
    ) -> RunStream:
        """Run `goal`, as `async with orch.stream(goal) as events: async for event in events: ...`.

        Args:
            goal: What to do.
            run_id: The run's id (generated if omitted).
            meta: JSON data stored with the run in the journal (e.g. how to rebuild its tools).
            text: Also stream the models' text as it is generated (`TextDelta` events: each
                sub-agent's replies and the synthesis, by agent id), for chat-style displays.

        Raises:
            ConfigurationError: The goal is blank, or not valid UTF-8 text.
        """
        if not goal.strip():
            raise ConfigurationError("the goal is empty: say what the run should do")
        if not goal.isascii():
            try:
                goal.encode("utf-8")
            except UnicodeEncodeError:
                raise ConfigurationError("the goal is not valid UTF-8 text") from None
        return RunStream(self, goal, run_id or uuid.uuid4().hex[:12], meta=meta, text=text)

    async def run(self, goal: str, *, run_id: str | None = None) -> RunResult:
        """Run `goal` to the end and return the result.

        Raises:
            ConfigurationError: The goal is blank, or not valid UTF-8 text.
            PlanError: The planner could not produce a valid plan.
        """
        return await _drain(self.stream(goal, run_id=run_id))

    def stream_resume(
        self,
        run_id: str,
        *,
        text: bool = False,
        decisions: Mapping[str, Decision] | None = None,
    ) -> RunStream:
        """Continue a crashed or paused run, as a stream: the same run id and goal, recorded
        results first (nothing completed runs again), then live. Its events are the whole run's
        (with `text`, the recorded replies' text too, in the pieces it first came in).

        Args:
            run_id: The run.
            text: Stream the models' text too (see `stream`).
            decisions: For a paused run, decisions on what it waits for, by approval id (taken
                in the journal first: of two people deciding one approval, one wins).

        Raises:
            ConfigurationError: The orchestrator has no journal.
            RunLocked: Another live process holds the run (raised when the stream starts).
            JournalError: The run is unknown or already ended, or a decision is for an approval
                it does not wait for (raised when the stream starts).
        """
        self._needs_journal("resume")
        return RunStream(self, "", run_id, mode="resume", text=text, decisions=decisions)

    def stream_replay(self, run_id: str, *, text: bool = False) -> RunStream:
        """Re-run a recorded run offline, as a stream of its events (see `replay`): with `text`,
        the same text deltas it streamed live.

        Raises:
            ConfigurationError: The orchestrator has no journal.
        """
        self._needs_journal("replay")
        return RunStream(self, "", run_id, mode="replay", text=text)

    async def resume(
        self, run_id: str, *, decisions: Mapping[str, Decision] | None = None
    ) -> RunResult:
        """Continue a crashed or paused run to its end, or its next pause (see `stream_resume`)."""
        return await _drain(self.stream_resume(run_id, decisions=decisions))

    async def replay(self, run_id: str) -> ReplayReport:
        """Re-run a recorded run offline from the journal: no model, tool or clock is touched.

        The orchestrator must be set up as it was (same tools, instructions and limits). The
        first effect asked for that differs from the recording stops the replay and is reported.

        Raises:
            ConfigurationError: The orchestrator has no journal.
            JournalError: The run is unknown.
            PlanError: The recorded run ended with it, and so does its replay.
        """
        stream = self.stream_replay(run_id)
        try:
            await _drain(stream)
        except* ReplayDrift:
            pass  # reported below, from the effects that saw it
        return ReplayReport(run_id=run_id, result=stream.ended_with, drift=tuple(stream.drift))

    def _needs_journal(self, what: str) -> Journal:
        if self.journal is None:
            raise ConfigurationError(f"{what}() needs Orchestrator(journal=...)")
        return self.journal

    async def _loop(self, state: RunState, deps: RunDeps) -> RunResult:
        """Run the main loop over `state` with `deps` (the stream that made them holds them)."""
        effects = deps.effects
        executor = self.executor if effects is self.effects else self.executor.with_effects(effects)
        loop = RunLoop(
            executor=executor,
            toolbox=self.toolbox,
            deps=deps,
            max_replans=self.limits.max_replans,
            single_on_plan_failure=self.on_plan_failure == "single",
            facts=self.facts,
            scope=self.scope,
            stream_plans=self.stream_plans and type(effects) is LiveEffects,
        )
        return await loop.execute(state)

    async def _new_run(
        self,
        goal: str,
        run_id: str,
        send: MemoryObjectSendStream[Event],
        effects: Effects,
        waits: RunWaits,
    ) -> tuple[RunState, RunDeps]:
        """What a new (or resumed, or replayed) run knows, and what it uses."""
        limits = self.limits
        addresses = Addresses(run_id=run_id, agent_id=RUN_AGENT)
        now = await effects.now(addresses.next(step=0))
        budget = Budget(
            max_tokens=limits.max_tokens,
            max_requests=limits.max_requests,
            max_tool_calls=limits.max_tool_calls,
            deadline=None if limits.deadline_s is None else now + limits.deadline_s,
        )
        # Sub-agents stop early enough to leave the synthesis its share of the deadline.
        agent_deadline = (
            None
            if limits.deadline_s is None
            else now + limits.deadline_s * (1 - limits.synthesis_reserve)
        )
        planner = Planner(
            model=self.planner_model,
            effects=effects,
            run_id=run_id,
            budget=budget,
            tools=self.toolbox.descriptions(),
            max_subtasks=limits.max_subtasks,
            max_repairs=limits.max_plan_repairs,
            instructions=self.planner_instructions,
            synthesis_instructions=self.synthesis_instructions,
            ask_goal=self.ask_goal,
            calls=self.toolbox.signatures() if self.direct_calls else None,
        )
        state = RunState(
            run_id=run_id,
            goal=goal,
            budget=budget,
            agent_budget=Budget(deadline=agent_deadline, parent=budget),
        )
        deps = RunDeps(
            effects=effects,
            addresses=addresses,
            planner=planner,
            events=send,
            limiter=anyio.CapacityLimiter(limits.max_concurrency),
            keep_events=self.keep_events,
            waits=waits,
            approver=self.approver,
            review=self.review,
            questions=self.questions,
        )
        # Read through the boundary: a replay sees the facts the run saw, whatever changed since.
        state.known = await deps.choose(state.step, self._known_facts)
        return state, deps

    async def remember(self, key: str, value: str, *, kind: FactKind = "preference") -> None:
        """Store a fact the user committed to (a budget, a preference) for this scope's runs.

        Raises:
            ConfigurationError: The orchestrator has no fact store.
        """
        if self.facts is None:
            raise ConfigurationError("remember() needs Orchestrator(facts=...)")
        await self.facts.put(user_fact(self.scope, key, value, kind=kind))

    async def _known_facts(self) -> str:
        if self.facts is None:
            return ""
        return render_facts(await self.facts.query(self.scope), _FACTS_CHARS)


class RunStream(EventStream):
    """A running run: iterate it for events; `result` once it ends; `cancel`, `cancel_subtask`
    or `decide` meanwhile."""

    def __init__(
        self,
        orchestrator: Orchestrator,
        goal: str,
        run_id: str,
        *,
        mode: JournalMode = "record",
        meta: dict[str, Any] | None = None,
        text: bool = False,
        decisions: Mapping[str, Decision] | None = None,
    ) -> None:
        super().__init__()
        self.run_id = run_id
        self.text = text
        self.mode: JournalMode = mode
        self.meta = meta
        self._orchestrator = orchestrator
        self._goal = goal
        self._effects: JournaledEffects | None = None
        self._state: RunState | None = None
        self._deps: RunDeps | None = None
        self._cancelled: str | None = None
        self._decisions = dict(decisions or {})
        self._waits = RunWaits()
        self._held: list[Pending] | None = None  # what waited when the run paused

    @property
    def drift(self) -> list[Drift]:
        """Where this run parted from its recording (resume and replay), so far."""
        return [] if self._effects is None else list(self._effects.drift)

    def cancel(self, reason: str = "cancelled by the caller") -> bool:
        """Stop the whole run and keep its work; returns whether this request was the first.

        Nothing new starts and nothing is replanned; running sub-agents stop at their next step
        with partial reports; the synthesis is written from what exists, and the run ends
        `incomplete` with `reason`. A synthesis already under way finishes (leave the stream, or
        cancel its scope, to abandon the run instead). On a journaled run the point where the
        request landed is recorded, so a replay stops there too.
        """
        if self._cancelled is not None or self._result is not None:
            return False
        self._cancelled = reason
        if self._deps is not None:
            with contextlib.suppress(anyio.ClosedResourceError):  # the loop just ended
                self._deps.done_send.send_nowait(Halt(reason))
        return True

    def decide(self, approval_id: str, decision: Decision) -> bool:
        """Decide an approval the run waits for (`ApprovalRequested.approval_id`); returns
        whether it waited (False: unknown, or decided already, by the approver or a timeout)."""
        return self._waits.answer(approval_id, decision)

    def cancel_subtask(self, subtask_id: str) -> bool:
        """Stop one running or pending subtask; the run goes on. Returns whether it was live."""
        return self._state is not None and self._state.cancel_subtask(subtask_id)

    @property
    def ended_with(self) -> RunResult | None:
        """The run's result, or None while it runs (or if it ended with an error)."""
        return self._result

    async def _produce(self) -> None:
        orch = self._orchestrator
        async with self._send:  # closing it ends the consumer's iteration
            if orch.journal is None:
                self._result = await self._run(self._goal, orch.effects)
                return
            before = await self._take_decisions(orch.journal) if self.mode == "resume" else None
            goal, self._effects = await open_run(
                orch.journal, orch.effects, self.run_id, mode=self.mode, goal=self._goal,
                meta=self.meta,
            )  # fmt: skip
            if self.mode == "resume":
                await self._resume_waits(orch.journal, before)
            if self.mode == "replay":
                self._result = await self._run(goal, self._effects)
                return
            body = partial(self._run, goal, self._effects)
            self._result = await hold_lease(orch.journal, self.run_id, body, run_ended)

    async def _run(self, goal: str, effects: Effects) -> RunResult:
        """The run, in its `invoke_agent run` span (every other span of the run nests in it), its
        id bound for every log event of the run."""
        with (
            structlog.contextvars.bound_contextvars(run_id=self.run_id),
            wanting_text() if self.text else contextlib.nullcontext(),
            run_waits(self._waits),  # its approvals and clock, for all its sub-agents
            telemetry.span("invoke_agent run", _run_attributes(self, goal)) as span,
        ):
            orch = self._orchestrator
            self._state, self._deps = await orch._new_run(
                goal, self.run_id, self._send, effects, self._waits
            )
            if self._cancelled is not None:  # asked before the run had a state
                self._deps.done_send.send_nowait(Halt(self._cancelled))
            result: RunResult | None = None
            with anyio.CancelScope() as pausing:
                async with anyio.create_task_group() as tg:
                    if self._pauses():
                        tg.start_soon(self._pause_when_quiet, pausing)
                    result = await orch._loop(self._state, self._deps)
                    tg.cancel_scope.cancel()
            if result is None:  # paused: nothing was in flight, so nothing was cut
                result = await self._paused(self._state, self._deps)
            else:
                answered = tuple(
                    Answered(agent_id=a, question=q, answer=t) for a, q, t in self._waits.answers
                )
                update = {"waited_s": self._waits.waited(), "answered": answered}
                result = result.model_copy(update=update)
            _run_done(span, result)
            return result

    def _pauses(self) -> bool:
        """Whether the run pauses once only approvals wait: a journaled run, recorded or
        resumed, whose approver leaves decisions to later."""
        orch = self._orchestrator
        approver = orch.approver
        return (
            orch.journal is not None
            and self.mode != "replay"
            and approver is not None
            and approver.pauses
        )

    async def _pause_when_quiet(self, pausing: anyio.CancelScope) -> None:
        await self._waits.until_quiet(PAUSE_SETTLE_S)
        # Taken before the cut: each wait forgets its request as it is cancelled.
        self._held = [p for p in self._waits.pending.values() if p.decision is None]
        pausing.cancel()

    async def _paused(self, s: RunState, deps: RunDeps) -> RunResult:
        """Journal what the run waits for, announce it, and end the stream with the paused result."""
        held = self._held or []
        journal = self._orchestrator.journal
        assert journal is not None
        rows = [(p.request.approval_id, p.request.model_dump(mode="json"), p.asked) for p in held]
        with anyio.CancelScope(shield=True):  # what waits must be known before the run stops
            await journal.pause(self.run_id, rows, status=True)
        waiting = tuple(p.request for p in held)
        event = RunPaused(run_id=s.run_id, step=s.step, waiting=waiting)
        if deps.keep_events:
            s.trace.append(event)
        await deps.publish(event)
        what = "; ".join(r.summary() for r in waiting)
        return RunResult(
            run_id=s.run_id, goal=s.goal, answer="", status="paused",
            reason=f"waits for a decision: {what}", plans=tuple(s.plans), diffs=tuple(s.diffs),
            reports=tuple(r.report for r in s.records.values() if r.report is not None),
            usage=s.budget.used, events=tuple(s.trace), notes=tuple(s.notes),
            waiting=waiting, waited_s=self._waits.waited(),
        )  # fmt: skip

    async def _take_decisions(self, journal: Journal) -> RunInfo | None:
        """This call's decisions on a paused run, taken in the journal first (so two deciders
        cannot both win); the run as it was before it is claimed."""
        for approval_id, decision in self._decisions.items():
            await journal.decide(self.run_id, approval_id, decision.model_dump(mode="json"))
        return await journal.run(self.run_id)

    async def _resume_waits(self, journal: Journal, before: RunInfo | None) -> None:
        """Once the run is claimed: every decision taken while it was paused (a resumed run
        that crashed keeps them too), and its clock, which stood still while it waited (kept
        in the journal, so a crash after this resume does not lose it)."""
        waits = await journal.waits_of(self.run_id)
        decided = {
            w.approval_id: Decision.model_validate(w.decision)
            for w in waits
            if w.decision is not None
        }
        self._waits.give(decided, {w.approval_id: w.asked for w in waits if w.decision is None})
        if before is None or before.result is None:
            return
        waited = float(before.result.get("waited_s", 0.0))
        if before.status == "paused":
            waited += max(0.0, time.time() - before.updated)
            await journal.keep(self.run_id, {**before.result, "waited_s": waited})
        self._waits.offset = waited


def _run_attributes(stream: RunStream, goal: str) -> dict[str, str]:
    attributes = {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": RUN_AGENT,
        "gen_ai.conversation.id": stream.run_id,
        "paor.run.id": stream.run_id,
        "paor.run.mode": stream.mode,
    }
    if telemetry.capturing():
        attributes["paor.goal"] = redact_text(goal)
    return attributes


def _run_done(span: Any, result: RunResult) -> None:
    usage = result.usage
    ended = {
        "paor.run.status": result.status,
        "paor.plan.version": result.plans[-1].version if result.plans else None,
        "gen_ai.usage.input_tokens": usage.prompt_tokens,
        "gen_ai.usage.output_tokens": usage.completion_tokens,
    }
    telemetry.finished(span, ended)
    if result.status == "failed":
        telemetry.failed(span, "failed", result.reason or "")


async def _drain(stream: RunStream) -> RunResult:
    async with stream as events:
        async for _event in events:
            pass
    return stream.result
