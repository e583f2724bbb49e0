"""The executor's loop: one ReAct sub-agent with its own history, as a small state machine.

    Direct (a task that is one tool call) ──▶ Finish
    (a first call: Act, or Look ──▶) Decide ──tool calls──▶ Act ──▶ Decide
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

from dataclasses import dataclass
from functools import partial
from typing import Literal

import anyio
import anyio.abc
import anyio.lowlevel

from agents._brief import asked
from agents._effects import Effects
from agents._errors import MalformedResponse, ModelError, ReplayedCancellation
from agents._first_look import FirstLook
from agents._guards import AgentLimits, StopReason
from agents._passing import passed, withdrawn
from agents._report import AgentReport, ReportStatus
from agents._steps import AgentState, digest_of, send_delta, tell
from agents._stop import Stop
from agents._streaming import streaming
from agents._toolbox import Toolbox, ToolResult
from agents._turn import bounded, offered, run_inline, settle_turn, start_turn
from agents._verdict import LOOK_INTRO, AnswerRules
from agents.models._model import ChatModel, ModelRequest, ModelResponse
from memory import Compactor, Message, ToolCall, Transcript, UserMessage

__all__ = ["AgentLoop"]

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
    last_word: bool = False  # ask for one, whatever the reason


@dataclass(frozen=True, slots=True)
class _Finish:
    report: AgentReport


_Step = _Decide | _Look | _Direct | _Act | _Check | _WrapUp | _Finish


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentLoop:
    """The loop of one `Executor`, with what its steps use (the executor's own parts).

    Attributes:
        model: Decides each step.
        toolbox: The tools.
        control: paor's own tools (`report_issue`, `ask_user`, `answer_with_results`).
        effects: The effect boundary.
        limits: The loop's exits.
        compactor: Keeps the transcript under a token budget, if set.
        first_look: The call made for the model before its first decision, if any.
        cite: The run asks for citations.
        max_rejections: Failed acceptance checks before the answer is returned as partial.
        max_malformed: Unusable replies in a row before the agent gives up.
        rules: What an answer must pass to be done (the caller's acceptance check included).
    """

    model: ChatModel
    toolbox: Toolbox
    control: Toolbox
    effects: Effects
    limits: AgentLimits
    compactor: Compactor | None
    first_look: FirstLook | None
    cite: bool
    max_rejections: int
    max_malformed: int
    rules: AnswerRules

    async def drive(self, s: AgentState, stop: Stop | None) -> AgentReport:
        """Run the loop over `s` to its report; `stop` ends it early with what was gathered."""
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

    async def _loop(self, s: AgentState, scope: anyio.CancelScope, stop: Stop | None) -> _Step:
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
        """Decide, after the caller's `first_call` (the agent's own turn) or the `first_look` (its
        tool on this agent's menu); a task that is one tool call makes it and nothing else."""
        if s.direct is not None:
            return _Direct(s.direct)
        if s.first_call is not None:
            return _Act(s.own_turn(s.first_call))
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
        await withdrawn(s, self.effects)  # is `answer_with_results` still offered?
        mine = self.control.menu(s.now, offered(self.control, s))
        menu = self.toolbox.menu(s.now, s.allowed) + mine
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
        return await self.call(s, request)

    async def call(self, s: AgentState, request: ModelRequest) -> ModelResponse:
        """One model call of the agent, through the effect boundary, charged to its budget."""
        site = s.site()
        start = anyio.current_time()
        try:
            if s.events is not None and s.text:
                response = await streaming(
                    lambda: self.effects.model_call(site, self.model, request),
                    partial(send_delta, s, request.purpose),
                    may_call=bool(request.tools),
                )
            else:
                response = await self.effects.model_call(site, self.model, request)
        except MalformedResponse as exc:
            if exc.usage is not None:  # answered and billed, though unreadable: still spent
                s.budget.spend(exc.usage, self.model.name)
            raise
        response = s.budget.charged(response, self.model.name)
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
            response = await self.call(s, request)
        except ModelError as exc:
            s.notes.append(f"summary call failed: {exc}")
            return None
        return response.message.content

    def _citable(self, s: AgentState) -> tuple[str, ...]:
        if not self.cite:
            return ()
        sources = dict.fromkeys(e.source for e in s.evidence)  # paor's own tools' left out
        return tuple(sources)[:_MAX_CITABLE]

    def _malformed(self, s: AgentState, raw: str, problem: str) -> _Step:
        s.malformed += 1
        s.notes.append(f"unusable model reply: {problem}")
        if s.malformed > self.max_malformed:
            # A small model that keeps imitating a call often answers well once no tool is on
            # the menu: with something gathered, it gets the last word a limit gets.
            detail = f"{s.malformed} unusable replies in a row"
            return _WrapUp("error", detail, last_word=bool(s.evidence))
        # The unusable reply is quoted, not replayed as an assistant turn: in the JSON protocol a
        # replayed turn would read as a valid answer, and it would break turn alternation.
        quoted = f' It began: "{raw[:200]}"' if raw.strip() else ""
        tell(s, f"Your last reply could not be used: {problem}.{quoted} Try again.")
        return _Decide()

    async def _act(self, s: AgentState, calls: tuple[ToolCall, ...]) -> _Step:
        await self._run_turn(s, calls)
        if s.blocked is not None:
            return _Finish(s.report(status="blocked", answer=s.blocked))
        # It ended its turn with `answer_with_results` (agents._passing): done, unless refused.
        if s.passing and s.passing.asked and (report := await passed(s, self.rules, self.effects)):
            return _Finish(report)
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
        if (inline := run_inline(s.in_flight)) is not None:
            for prepared, site in inline:  # no task group (same cancellation, less memory)
                await s.run_tool(self.effects, prepared, site)
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
        result to the model as part of the task, without the call's `[OBSERVE]` line. Shown as
        a call of its own, a small model repeats it, or copies that line as a call of its own;
        shown as what is known, it answers from it."""
        before = s.transcript.messages
        found = (await self._call_once(s, call)).content
        s.transcript = Transcript([*before, UserMessage(content=f"{LOOK_INTRO}\n{found}")])
        return _Decide()

    async def _call_once(self, s: AgentState, call: ToolCall) -> ToolResult:
        """Make `call` for the model, as a turn of its own; its result."""
        (call,) = s.own_turn(call)
        await self._run_turn(s, (call,))
        return s.results[call.id]

    async def _direct(self, s: AgentState, call: ToolCall) -> _Step:
        """The task is one tool call: its result is the answer, if it is one (`called`)."""
        return _Finish(self.rules.called(s, call.name, await self._call_once(s, call)))

    def _check(self, s: AgentState, answer: str) -> _Step:
        """Accept the answer, send it back with the reason, or end `partial` with the reason: an
        unusable answer or one resting on no tool result is sent back once, an answer failing
        the acceptance check up to `max_rejections` times."""
        s.malformed = 0
        junk = self.rules.unusable(s, answer)
        problem = junk or self.rules.unfounded(s, answer)
        strict = problem is not None  # paor's own rules: one more chance, not several
        if problem is None and self.rules.acceptance is not None:
            problem = self.rules.acceptance(answer, s.evidence)
        if problem is None:
            return _Finish(s.report(status="done", answer=answer))
        s.rejections += 1
        s.notes.append(f"answer not accepted: {problem}")
        if s.rejections > (1 if strict else self.max_rejections):
            if junk or self.rules.unusable(s, answer):
                # Never keep a junk answer, nor quote it (the problem may quote the copy).
                answer = digest_of(s, "acceptance", "no usable answer")
            return _Finish(s.report(status="partial", answer=answer, stop_reason="acceptance"))
        tell(s, f"Your answer was not accepted: {problem}. Fix it.")
        return _Decide()

    async def _wrap_up(self, s: AgentState, step: _WrapUp, stop: Stop | None) -> _Finish:
        """End early with the best answer available: one last tool-less call, else a digest."""
        await settle_turn(s, self.toolbox, self.control, cancelled=True)
        answer = None
        if step.reason in ("steps", "tool_calls", "stuck") or step.last_word:
            answer = await self._last_word(s, step, stop)
        if answer is not None and self.rules.holds_up(s, answer):
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
            problem = self.rules.unusable(s, answer)
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
