"""The executor: one ReAct sub-agent with its own history, as a small state machine.

    Direct (a task that is one tool call) ──▶ Finish
    (Look ──▶) Decide ──tool calls──▶ Act ──▶ Decide
      │                            └─stuck twice / limit─▶ WrapUp
      ├──answer──▶ Check ──accepted──▶ Finish
      │              └──rejected──▶ Decide (a bounded number of times)
      └──limit, error, deadline, stop──▶ WrapUp ──▶ Finish (partial, never empty-handed)

Every step returns the next step as data. Model calls, tool calls and clock reads go through the
effect boundary. The loop never raises for a run failure: limits, model errors, deadlines and a
caller's stop request all end in a report built from what was gathered.

Replays take the same path. Whether a cut was a stop or a deadline is a recorded choice; an effect
that was cut short when recorded raises `ReplayedCancellation`, which the loop treats exactly as a
cancellation of its own scope at that point.
"""

from __future__ import annotations

import uuid
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from functools import partial
from typing import Literal

import anyio
import anyio.abc
import anyio.lowlevel
import structlog

from agents import _telemetry as telemetry
from agents._answers import Parrot, described
from agents._approval import Approver, Decide
from agents._brief import asked
from agents._configured import Configured
from agents._effects import AgentCall, Effects, LiveEffects
from agents._errors import (
    ConfigurationError,
    MalformedResponse,
    ModelError,
    ReplayedCancellation,
)
from agents._events import EventSink
from agents._first_look import FirstLook
from agents._guards import AgentLimits, Budget, StopReason
from agents._model import ChatModel, ModelRequest, ModelResponse
from agents._report import AcceptanceCheck, AgentReport, ReportStatus
from agents._signals import ASK_USER, SIGNALS
from agents._steps import (
    EXCERPT_CHARS,
    AgentState,
    bounded,
    digest_of,
    narrow,
    opening,
    send_delta,
    settle_turn,
    start_turn,
    tell,
)
from agents._stop import Stop, set_when
from agents._streaming import streaming, wants_text
from agents._toolbox import Toolbox
from agents._tools import Tool
from agents._verdict import LOOK_INTRO, AnswerRules
from agents._waits import check_decider, run_waits
from memory import (
    AssistantMessage,
    Compactor,
    Message,
    ToolCall,
    Transcript,
    UserMessage,
)

__all__ = ["DEFAULT_INSTRUCTIONS", "SIGNALS", "Executor", "FirstLook"]

DEFAULT_INSTRUCTIONS = (
    "You are a focused research and action agent. Work on the task step by step: call tools to "
    "gather facts, read their results, and when you know enough, reply with the final answer as "
    "plain text. Do not repeat a call that already returned. If the task cannot be done, or what "
    "you found contradicts the task's assumptions, call report_issue."
)
_MAX_CITABLE = 16
_CUT_REASONS = ("cancelled", "deadline")


@dataclass(frozen=True, slots=True)
class _Decide:
    pass


@dataclass(frozen=True, slots=True)
class _Act:
    calls: tuple[ToolCall, ...]


@dataclass(frozen=True, slots=True)
class _Look:
    call: ToolCall


@dataclass(frozen=True, slots=True)
class _Direct:
    call: ToolCall


@dataclass(frozen=True, slots=True)
class _Check:
    answer: str


@dataclass(frozen=True, slots=True)
class _WrapUp:
    reason: StopReason | Literal["cancelled"]
    detail: str = ""


@dataclass(frozen=True, slots=True)
class _Finish:
    report: AgentReport


_Step = _Decide | _Look | _Direct | _Act | _Check | _WrapUp | _Finish


class Executor(Configured):
    """Runs one ReAct sub-agent and returns a structured `AgentReport`.

    Args:
        model: The chat model that decides each step.
        tools: The tools, or a shared `Toolbox` (whose breakers other agents see too).
        instructions: The system prompt.
        limits: The loop's exits.
        acceptance: A check on the final answer; a failure is fed back to the model.
        max_rejections: Failed acceptance checks before the answer is returned as partial.
        max_malformed: Unusable model replies in a row before the agent gives up.
        allowed_tools: Restrict the menu to these tool names.
        signals: Offer the built-in `report_issue` tool (blocked / invalidates).
        questions: How many clarifying questions the run may ask the user (the built-in
            `ask_user` tool, answered by the approver; 0: none; see `agents._signals`).
        effects: The effect boundary (live by default).
        compactor: Keeps the transcript under a token budget before each model call (its
            summary calls go through the effect boundary and are charged to the budget).
        first_look: A tool call made for the model before its first decision (see `FirstLook`).
        require_evidence: Whether a final answer must rest on a successful tool call, and its
            numbers on what the tools returned (a number no tool result, nor the task, showed
            is invented, unless it is the sum, difference, product or ratio of two shown; a run may
            say otherwise for itself: `run(require_evidence=...)`). The rule (None, the
            default): it must when the agent has tools on its menu and was given no earlier
            results to work from (`run(context=...)`). An answer resting on nothing is sent back
            once, then the report is `partial`, saying so. True: whenever it has tools; False:
            never (a task the model may answer from what it knows). In an `Orchestrator`'s run a
            subtask must when its plan names the tools it needs (`Subtask.tools`).
        cite: Ask for citations: each request names the sources gathered so far
            (`ModelRequest.citable`), so a protocol that constrains replies makes the final
            answer cite one of them.
        approver: Decides on calls of tools that need approval (`@tool(needs_approval=...)`):
            an `Approver`, or an async function of the `ApprovalRequest` returning a
            `Decision`. Without one, such calls are refused. `agents.approvals.PAUSE` leaves
            the decisions to the run the executor is part of (an `Orchestrator`'s, or a batch's).
    """

    def __init__(
        self,
        model: ChatModel,
        tools: Iterable[Tool] | Toolbox = (),
        *,
        instructions: str = DEFAULT_INSTRUCTIONS,
        limits: AgentLimits | None = None,
        acceptance: AcceptanceCheck | None = None,
        max_rejections: int = 2,
        max_malformed: int = 3,
        allowed_tools: Collection[str] | None = None,
        signals: bool = True,
        effects: Effects | None = None,
        compactor: Compactor | None = None,
        first_look: FirstLook | None = None,
        require_evidence: bool | None = None,
        cite: bool = False,
        approver: Approver | Decide | None = None,
        questions: int = 0,
    ) -> None:
        if questions and approver is None:
            raise ConfigurationError("questions= needs an approver= to answer them")
        self.model = model
        self.toolbox = tools if isinstance(tools, Toolbox) else Toolbox(tools)
        self._keep(
            {
                "model": model, "tools": self.toolbox, "instructions": instructions,
                "limits": limits, "acceptance": acceptance, "max_rejections": max_rejections,
                "max_malformed": max_malformed, "allowed_tools": allowed_tools,
                "signals": signals, "effects": effects, "compactor": compactor,
                "first_look": first_look, "require_evidence": require_evidence, "cite": cite,
                "approver": approver, "questions": questions,
            }
        )  # fmt: skip
        self.instructions = instructions
        self.limits = limits or AgentLimits()
        self.acceptance = acceptance
        self.max_rejections = max_rejections
        self.max_malformed = max_malformed
        self.allowed_tools = None if allowed_tools is None else frozenset(allowed_tools)
        self.questions = questions
        asking = (ASK_USER,) if questions else ()
        self.control = Toolbox((*SIGNALS, *asking) if signals else asking)
        self.effects: Effects = effects or LiveEffects()
        self.compactor = compactor
        self.first_look = first_look
        self.require_evidence = require_evidence
        self.cite = cite
        self.approver = Approver.of(approver)
        # What the model is told, so that an answer copying it is refused (see `_answers`).
        specs = (*self.toolbox.menu(0.0), *self.control.menu(0.0))
        self._rules = AnswerRules(
            parrot=Parrot([instructions, *described(specs)]),
            names=frozenset((*self.toolbox.names, *self.control.names)),
            tools=frozenset(self.toolbox.names),
            cite=cite,
            acceptance=acceptance,
        )
        self._seal()

    def with_effects(self, effects: Effects) -> Executor:
        """A copy of this executor that reaches the world through `effects` (same toolbox)."""
        return self.clone(effects=effects)

    async def run(
        self,
        task: str,
        *,
        context: str = "",
        shared: str = "",
        run_id: str | None = None,
        agent_id: str | None = None,
        budget: Budget | None = None,
        events: EventSink | None = None,
        stop: anyio.Event | Stop | None = None,
        allowed_tools: Collection[str] | None = None,
        call: ToolCall | None = None,
        require_evidence: bool | None = None,
    ) -> AgentReport:
        """Run the agent on `task` until it answers or an exit is reached.

        Args:
            task: What to do.
            context: What the caller already knows for this task (e.g. results of earlier
                subtasks): the end of its prompt.
            shared: What every agent of the caller's run is told alike (e.g. the run's known
                facts): kept after the instructions, so the prompts of a run's agents share one
                byte-identical prefix a provider can cache, and what differs comes last.
            run_id: The run this agent belongs to (generated if omitted).
            agent_id: This agent's id (generated if omitted).
            budget: A parent ledger to charge and to be bounded by.
            events: Receives the agent's events.
            stop: Setting it ends the run early with a partial report (graceful cancellation).
                A `Stop` does it without a watcher task (cheaper for many agents).
            allowed_tools: Restrict the menu further for this run (intersected with the
                executor's own restriction).
            call: The task is this one tool call: it runs as the agent's only turn (checked,
                approved, bounded and journaled like any call) and its result is the answer,
                with no model call. A call that fails makes a failed report.
            require_evidence: For this run, instead of the executor's `require_evidence`.

        Returns:
            The report; never raises for model, tool or budget failures.

        Raises:
            ConfigurationError: The approver is `PAUSE`, and no run takes its decisions.
        """
        check_decider(self.approver)
        run_id = run_id or uuid.uuid4().hex[:12]
        agent_id = agent_id or f"agent-{uuid.uuid4().hex[:8]}"
        if telemetry.tracer() is None or telemetry.in_agent():
            return await self._run(task, context, shared, run_id, agent_id, budget, events, stop,
                                   allowed_tools, call, require_evidence)  # fmt: skip
        # A lone executor (not a run's sub-agent, whose span the run opened) opens its own.
        with telemetry.agent_span(AgentCall(task=task, run_id=run_id, agent_id=agent_id)) as span:
            report = await self._run(task, context, shared, run_id, agent_id, budget, events,
                                     stop, allowed_tools, call, require_evidence)  # fmt: skip
            telemetry.agent_done(span, report)
            return report

    async def _run(
        self,
        task: str,
        context: str,
        shared: str,
        run_id: str,
        agent_id: str,
        budget: Budget | None,
        events: EventSink | None,
        stop: anyio.Event | Stop | None,
        allowed_tools: Collection[str] | None,
        call: ToolCall | None,
        require_evidence: bool | None,
    ) -> AgentReport:
        with structlog.contextvars.bound_contextvars(run_id=run_id, agent_id=agent_id):
            s = AgentState(
                run_id=run_id, agent_id=agent_id, task=task, events=events,
                approver=self.approver, question_limit=self.questions,
            )  # fmt: skip
            s.allowed = narrow(self.allowed_tools, allowed_tools)
            s.direct = call
            s.context = context
            s.require_evidence = (
                self.require_evidence if require_evidence is None else require_evidence
            )
            s.now = await self.effects.now(s.site())
            s.budget = Budget.from_limits(self.limits, now=s.now, parent=budget)
            s.transcript = Transcript(opening(self.instructions, task, context, shared))
            try:
                if self.approver is None:  # nothing to share: no run-wide set (10,000 agents...)
                    return await self._drive(s, stop)
                with run_waits() as s.waits:
                    return await self._drive(s, stop)
            except ExceptionGroup as group:
                # What escapes the loop (a replay's drift, a bug) is one error, not a group.
                if len(group.exceptions) != 1:
                    raise
                sole = group.exceptions[0]
                raise sole from sole.__cause__

    async def _drive(self, s: AgentState, stop: anyio.Event | Stop | None) -> AgentReport:
        if not isinstance(stop, anyio.Event):
            return await self._drive_scoped(s, stop)
        # An anyio.Event can only be waited on: one watcher task turns it into the loop's one way
        # of stopping, a `Stop`.
        handle = Stop()
        async with anyio.create_task_group() as tg:
            tg.start_soon(set_when, stop, handle)
            report = await self._drive_scoped(s, handle)
            tg.cancel_scope.cancel()
        return report

    async def _drive_scoped(self, s: AgentState, stop: Stop | None) -> AgentReport:
        replayed_cut = False
        with anyio.CancelScope() as scope:
            try:
                step = await self._loop(s, scope, stop)
            except ReplayedCancellation:
                replayed_cut = True  # cut here when recorded: as if `scope` were cancelled now
            finally:
                if stop is not None:
                    stop.detach(scope)
        if scope.cancelled_caught or replayed_cut:
            step = _WrapUp(await self._cut_reason(s, stop))
        if isinstance(step, _WrapUp):
            step = await self._wrap_up(s, step, stop)
        assert isinstance(step, _Finish)
        return step.report

    async def _loop(
        self,
        s: AgentState,
        scope: anyio.CancelScope,
        stop: Stop | None,
    ) -> _Step:
        step = self._first_step(s)
        armed = False
        while not isinstance(step, _WrapUp | _Finish):
            if not armed and self.effects.obeys_stops(s.agent_id):
                # The live exits are armed at the first step with no recorded model or tool
                # result ahead of the agent (at once, when nothing is recorded). While it
                # replays, the recording says where a stop or deadline cut it; a live one would
                # cut it somewhere else. (A turn mixing recorded and re-run tool calls runs
                # unarmed until it ends; the next step arms them.)
                armed = True
                self._arm(s, scope, stop)
            # A stop request lands at the next step even if no effect yields (a fast model);
            # checked directly, because a yield per step would let every other agent run first.
            if armed and stop is not None and stop.is_set():
                scope.cancel()
            await anyio.lowlevel.checkpoint_if_cancelled()
            step = await self._advance(s, step)
        return step

    def _first_step(self, s: AgentState) -> _Step:
        """Decide, or first take the `first_look` (when its tool is on this agent's menu); a
        task that is one tool call makes that call and nothing else."""
        if s.direct is not None:
            return _Direct(s.direct)
        look = self.first_look
        if look is None or self.toolbox.get(look.tool) is None:
            return _Decide()
        if s.allowed is not None and look.tool not in s.allowed:
            return _Decide()
        return _Look(look.call(asked(s.task)))

    def _arm(self, s: AgentState, scope: anyio.CancelScope, stop: Stop | None) -> None:
        if stop is not None:
            stop.attach(scope)
        left = s.budget.time_left(s.now)
        if left is not None:
            scope.deadline = anyio.current_time() + left
            s.scope = scope  # an approval's wait holds the deadline

    async def _cut_reason(
        self, s: AgentState, stop: Stop | None
    ) -> Literal["cancelled", "deadline"]:
        """Why the loop was cut short: a recorded choice, so a replay gives the same reason."""

        async def pick() -> str:
            return "cancelled" if stop is not None and stop.is_set() else "deadline"

        # The stop record: made at most once per agent, last, found wherever the cut landed.
        reason = await self.effects.choice(s.addresses.stop(s.steps), pick, options=_CUT_REASONS)
        return "cancelled" if reason == "cancelled" else "deadline"

    async def _advance(self, s: AgentState, step: _Step) -> _Step:
        match step:
            case _Decide():
                return await self._decide(s)
            case _Act(calls):
                return await self._act(s, calls)
            case _Look(call):
                return await self._look(s, call)
            case _Direct(call):
                return await self._direct(s, call)
            case _Check(answer):
                return self._check(s, answer)
            case _:
                raise AssertionError(f"not a loop step: {step!r}")

    async def _decide(self, s: AgentState) -> _Step:
        s.now = await self.effects.now(s.site())
        reason = s.budget.exhausted(s.now) or (
            "steps" if s.steps >= self.limits.max_steps else None
        )
        if reason:
            return _WrapUp(reason)
        await self._compact(s)
        s.transcript.check()
        menu = self.toolbox.menu(s.now, s.allowed) + self.control.menu(s.now)
        try:
            request = ModelRequest(
                messages=s.transcript.messages, tools=menu, citable=self._citable(s), purpose="step"
            )
            response = await self._ask(s, request)
        except MalformedResponse as exc:
            return self._malformed(s, exc.raw, str(exc))
        except ModelError as exc:
            s.notes.append(f"model error: {exc}")
            return _WrapUp("error", str(exc))
        message = s.unique_ids(response.message)
        if not message.tool_calls and not (message.content or "").strip():
            # Never recorded: an empty assistant turn is invalid for most chat APIs.
            return self._malformed(s, "", "the reply was empty: call a tool or give an answer")
        s.transcript.append(bounded(message, self.toolbox))
        if message.tool_calls:
            s.malformed = 0
            return _Act(message.tool_calls)
        return _Check(message.content or "")

    async def _ask(self, s: AgentState, request: ModelRequest) -> ModelResponse:
        s.steps += 1
        return await self._call(s, request)

    async def _call(self, s: AgentState, request: ModelRequest) -> ModelResponse:
        site = s.site()
        start = anyio.current_time()
        if s.events is not None and wants_text():
            response = await streaming(
                lambda: self.effects.model_call(site, self.model, request),
                partial(send_delta, s, request.purpose),
            )
        else:
            response = await self.effects.model_call(site, self.model, request)
        s.budget.charge(response.usage)
        s.usage = s.usage + response.usage
        await s.model_called(response, ms=(anyio.current_time() - start) * 1000)
        return response

    async def _compact(self, s: AgentState) -> None:
        """Shrink the transcript under the compactor's budget (nothing changes while it fits)."""
        if self.compactor is None:
            return
        done = await self.compactor.compact(
            s.transcript, model=self.model.name, summariser=partial(self._summarise, s)
        )
        if done.changed:
            s.transcript = Transcript(done.messages)

    async def _summarise(
        self, s: AgentState, prompt: tuple[Message, ...], max_tokens: int
    ) -> str | None:
        """The compactor's summary call: a model effect like any other, charged to the budget."""
        try:
            request = ModelRequest(messages=prompt, max_output_tokens=max_tokens, purpose="summary")
            response = await self._call(s, request)
        except ModelError as exc:
            s.notes.append(f"summary call failed: {exc}")
            return None
        return response.message.content

    def _citable(self, s: AgentState) -> tuple[str, ...]:
        if not self.cite:
            return ()
        sources = dict.fromkeys(e.source for e in s.evidence if e.tool != "report_issue")
        return tuple(sources)[:_MAX_CITABLE]

    def _malformed(self, s: AgentState, raw: str, problem: str) -> _Step:
        s.malformed += 1
        s.notes.append(f"unusable model reply: {problem}")
        if s.malformed > self.max_malformed:
            return _WrapUp("error", f"{s.malformed} unusable replies in a row")
        # The unusable reply is quoted, not replayed as an assistant turn: in the JSON protocol a
        # replayed turn would read as a valid answer, and it would break turn alternation.
        quoted = f' It began: "{raw[:200]}"' if raw.strip() else ""
        tell(s, f"Your last reply could not be used: {problem}.{quoted} Try again.")
        return _Decide()

    async def _act(self, s: AgentState, calls: tuple[ToolCall, ...]) -> _Step:
        await self._run_turn(s, calls)
        if s.blocked is not None:
            return _Finish(s.report(status="blocked", answer=s.blocked))
        stuck = s.detector.observe(s.turn_keys, s.turn_digests, s.turn_failed)
        if stuck is None:
            return _Decide()
        if s.warned:
            s.notes.append(f"stopped in a loop: {stuck}")
            return _WrapUp("stuck", stuck)
        s.warned = True
        await s.loop_warning(stuck)
        tell(s, f"Loop warning: {stuck}. Change approach, or give your final answer now.")
        return _Decide()

    async def _run_turn(self, s: AgentState, calls: tuple[ToolCall, ...]) -> None:
        """Run a turn's calls, concurrently, and give each its result in the transcript."""
        s.now = await self.effects.now(s.site())
        start_turn(s, calls, self.toolbox, self.control, s.allowed)
        if len(s.in_flight) == 1:
            # The usual turn: one call needs no task group (same cancellation, less overhead).
            await s.run_tool(self.effects, *s.in_flight[0])
        else:
            async with anyio.create_task_group() as tg:
                for prepared, site in s.in_flight:
                    tg.start_soon(s.run_tool, self.effects, prepared, site)
        if s.cut:
            # A call was cut short when recorded: the turn ends as it did then, finished calls kept.
            raise ReplayedCancellation("a tool call of this turn was cut short")
        s.now = await self.effects.now(s.site())
        await settle_turn(s, self.toolbox, self.control, cancelled=False)

    async def _look(self, s: AgentState, call: ToolCall) -> _Step:
        """The first look: run it as a turn (journaled, its results evidence), then hand its
        result to the model as part of the task. Shown as a call of its own, a small model
        repeats it; shown as what is known, it answers from it."""
        before = s.transcript.messages
        s.transcript.append(s.unique_ids(AssistantMessage(tool_calls=(call,))))
        await self._run_turn(s, (call,))
        found = s.transcript.messages[-1].content or ""
        if found.startswith("[OBSERVE]"):
            # The call's line is for a call the model made; shown here, a small model copies
            # it as a call of its own (`{"name": "search_docs", "arguments": "[OBSERVE] ..."}`).
            found = found.partition("\n")[2]
        s.transcript = Transcript([*before, UserMessage(content=f"{LOOK_INTRO}\n{found}")])
        return _Decide()

    async def _direct(self, s: AgentState, call: ToolCall) -> _Step:
        """The task is one tool call: its result is the answer (a failure, a failed report)."""
        asked = s.unique_ids(AssistantMessage(tool_calls=(call,)))
        s.transcript.append(asked)
        (call,) = asked.tool_calls
        await self._run_turn(s, (call,))
        result = s.results[call.id]
        if not result.ok:
            s.notes.append(
                f"{call.name} failed: {' '.join(result.content.split())[:EXCERPT_CHARS]}"
            )
            return _Finish(s.report(status="failed", answer=""))
        return _Finish(s.report(status="done", answer=result.content))

    def _check(self, s: AgentState, answer: str) -> _Step:
        """Accept the answer, send it back with the reason, or end `partial` with the reason: an
        unusable answer or one resting on no tool result is sent back once, an answer failing
        the acceptance check up to `max_rejections` times."""
        s.malformed = 0
        junk = self._rules.unusable(s, answer)
        problem = junk or self._rules.unfounded(s, answer)
        strict = problem is not None  # paor's own rules: one more chance, not several
        if problem is None and self.acceptance is not None:
            problem = self.acceptance(answer, s.evidence)
        if problem is None:
            return _Finish(s.report(status="done", answer=answer))
        s.rejections += 1
        s.notes.append(f"answer not accepted: {problem}")
        if s.rejections > (1 if strict else self.max_rejections):
            if junk or self._rules.unusable(s, answer):
                # Never keep a junk answer, nor quote it (the problem may quote the copy).
                answer = digest_of(s, "acceptance", "no usable answer")
            return _Finish(s.report(status="partial", answer=answer, stop_reason="acceptance"))
        tell(s, f"Your answer was not accepted: {problem}. Fix it.")
        return _Decide()

    async def _wrap_up(self, s: AgentState, step: _WrapUp, stop: Stop | None) -> _Finish:
        """End early with the best answer available: one last tool-less call, else a digest."""
        await settle_turn(s, self.toolbox, self.control, cancelled=True)
        answer = None
        if step.reason in ("steps", "tool_calls", "stuck") or self._garbled(s, step):
            answer = await self._last_word(s, step, stop)
        if answer is not None and self._rules.holds_up(s, answer):
            return _Finish(s.report(status="done", answer=answer))
        fallback = answer is None
        status: ReportStatus = "partial" if (s.evidence or not fallback) else "failed"
        return _Finish(
            s.report(
                status=status,
                answer=answer or digest_of(s, step.reason, step.detail),
                stop_reason=step.reason,
            )
        )

    def _garbled(self, s: AgentState, step: _WrapUp) -> bool:
        """Whether the agent stopped on a run of unusable replies with something gathered: a
        small model that keeps imitating a tool call often answers well once no tool is on the
        menu, so it gets the tool-less last word that a limit gets."""
        return step.reason == "error" and s.malformed > self.max_malformed and bool(s.evidence)

    async def _last_word(self, s: AgentState, step: _WrapUp, stop: Stop | None) -> str | None:
        why = step.detail or f"the {step.reason.replace('_', ' ')} limit was reached"
        tell(
            s,
            f"Stop now: {why}. Using only what you gathered above, give your best final answer "
            "and say plainly what is missing.",
        )
        s.now = await self.effects.now(s.site())
        stopped = await self._stopped(s, stop)
        with anyio.CancelScope() as scope:
            left = self.effects.time_limit(s.agent_id, s.budget.time_left(s.now))
            if left is not None:
                scope.deadline = anyio.current_time() + left
            if stopped:
                scope.cancel()
            try:
                await self._compact(s)
                request = ModelRequest(
                    messages=s.transcript.messages, citable=self._citable(s), purpose="wrap_up"
                )
                response = await self._ask(s, request)
            except ModelError as exc:
                s.notes.append(f"final answer call failed: {exc}")
                return None
            except ReplayedCancellation:
                return None  # the deadline cut this call when it was recorded
            s.transcript.append(response.message)
            answer = (response.message.content or "").strip()
            problem = self._rules.unusable(s, answer)
            if problem:
                s.notes.append(f"last answer unusable: {problem}")
                return None
            return answer
        return None

    async def _stopped(self, s: AgentState, stop: Stop | None) -> bool:
        """Whether a stop request is in, as a recorded choice (a replay meets it at this point)."""

        async def pick() -> str:
            return "stopped" if stop is not None and stop.is_set() else "going on"

        choice = await self.effects.choice(s.site(), pick, options=("stopped", "going on"))
        return choice == "stopped"
