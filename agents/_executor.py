"""The executor: runs one ReAct sub-agent with its own history and returns its report.

`Executor` holds what an agent is (model, tools, instructions, limits, checks); each `run` sets up
the agent's state and hands it to its loop (`agents._agent_loop`, the state machine).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Collection, Iterable
from functools import partial
from typing import Any

import anyio
import anyio.abc
import anyio.lowlevel
import structlog

from agents._agent_loop import AgentLoop
from agents._answer_check import AnswerCheck
from agents._approval import Approver, Decide
from agents._configured import Configured
from agents._effects import AgentCall, Effects, EvidenceRule, LiveEffects
from agents._errors import (
    ConfigurationError,
)
from agents._events import EventSink
from agents._first_look import FirstLook
from agents._guards import AgentLimits, Budget
from agents._passing import Passing
from agents._report import AcceptanceCheck, AgentReport
from agents._signals import ANSWER_WITH_RESULTS, ASK_USER, SIGNALS
from agents._steps import (
    AgentState,
    narrow,
    opening,
)
from agents._stop import Stop, set_when
from agents._toolbox import Toolbox
from agents._tools import Tool
from agents._verdict import AnswerRules
from agents._waits import RunWaits, check_decider
from agents.models._model import ChatModel
from agents.models._output import OutputSpec, typed_report
from agents.telemetry import _telemetry as telemetry
from memory import (
    Compactor,
    ToolCall,
    Transcript,
)

__all__ = ["DEFAULT_INSTRUCTIONS", "SIGNALS", "Executor", "FirstLook"]

# Short: it opens every request of every sub-agent. The tools say what they are for, so it names
# none (report_issue's own description says when to call it, and it is not always offered).
DEFAULT_INSTRUCTIONS = (
    "Work on the task step by step: call tools to gather what you need, then reply with the "
    "final answer as plain text. Do not repeat a call that already returned."
)


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
            never (a task the model may answer from what it knows); "facts": when its answer
            states a number or a name that nothing it was given shows (the task's question, the
            earlier results, the instructions), not the expected output written after the
            question, where a small planner puts its own guess. In an `Orchestrator`'s run a
            subtask must when its plan names the tools it needs (`Subtask.tools`), by the rule
            when it asks the goal itself, and by "facts" otherwise.
        cite: Ask for citations: each request names the sources gathered so far
            (`ModelRequest.citable`), so a protocol that constrains replies makes the final
            answer cite one of them.
        approver: Decides on calls of tools that need approval (`@tool(needs_approval=...)`):
            an `Approver`, or an async function of the `ApprovalRequest` returning a
            `Decision`. Without one, such calls are refused. `agents.approvals.PAUSE` leaves
            the decisions to the run the executor is part of (an `Orchestrator`'s, or a batch's).
        output_type: The type of the answer as data (a pydantic model, a dataclass, a
            TypedDict, a `list[...]`, a primitive, or a union of them; or an `OutputSpec`, such
            as a JSON Schema's): once the agent has answered, its answer is written as an
            object of it, validated (`report.output`; see `agents.models._output`).

    Raises:
        ConfigurationError: `questions` without an approver, or an output type with no JSON
            schema.
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
        require_evidence: EvidenceRule = None,
        cite: bool = False,
        approver: Approver | Decide | None = None,
        questions: int = 0,
        output_type: Any = None,
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
                "approver": approver, "questions": questions, "output_type": output_type,
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
        # A tool of the caller's named like the built-in `answer_with_results` wins: not offered.
        passing = () if ANSWER_WITH_RESULTS.name in self.toolbox.names else (ANSWER_WITH_RESULTS,)
        self.control = Toolbox((*SIGNALS, *asking, *passing) if signals else (*asking, *passing))
        self.effects: Effects = effects or LiveEffects()
        self.compactor = compactor
        self.first_look = first_look
        self.require_evidence = require_evidence
        self.cite = cite
        self.approver = Approver.of(approver)
        self.output: OutputSpec[Any] | None = None if output_type is None else _spec(output_type)
        # What the model is told, so that an answer copying it is refused (see `_answers`).
        specs = (*self.toolbox.menu(0.0), *self.control.menu(0.0))
        rules = AnswerRules(
            check=AnswerCheck(
                [instructions], tools=specs, names=(*self.toolbox.names, *self.control.names)
            ),
            tools=frozenset(self.toolbox.names),
            cite=cite,
            acceptance=acceptance,
        )
        self._loop = AgentLoop(
            model=model, toolbox=self.toolbox, control=self.control, effects=self.effects,
            limits=self.limits, compactor=compactor, first_look=first_look, cite=cite,
            max_rejections=max_rejections, max_malformed=max_malformed, rules=rules,
        )  # fmt: skip
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
        text: bool = False,
        stop: anyio.Event | Stop | None = None,
        allowed_tools: Collection[str] | None = None,
        call: ToolCall | None = None,
        first_call: ToolCall | None = None,
        require_evidence: EvidenceRule = None,
        output_type: Any = None,
        pass_results: int = 0,
        may_pass: Callable[[], bool | None] | None = None,
        signals: bool = True,
    ) -> AgentReport:
        """Run the agent on `task` until it answers or an exit is reached.

        Args:
            task: What to do.
            context: What the caller already knows for this task (e.g. results of earlier
                subtasks): the end of its prompt.
            shared: What every agent of the caller's run is told alike (e.g. the run's known
                facts): kept after the instructions, so the prompts of a run's agents share one
                byte-identical prefix a provider can cache (those offered the same tools), and
                what differs comes last.
            run_id: The run this agent belongs to (generated if omitted).
            agent_id: This agent's id (generated if omitted).
            budget: A parent ledger to charge and to be bounded by.
            events: Receives the agent's events.
            text: Also send its models' text to `events` as it is generated (`TextDelta`), for
                chat-style displays.
            stop: Setting it ends the run early with a partial report (graceful cancellation).
                A `Stop` does it without a watcher task (cheaper for many agents).
            allowed_tools: Restrict the menu further for this run (intersected with the
                executor's own restriction).
            call: The task is this one tool call: it runs as the agent's only turn (checked,
                approved, bounded and journaled like any call) and its result is the answer,
                with no model call. A call that fails makes a failed report.
            first_call: The agent's first turn is this tool call, made for it before its first
                decision (a planner wrote it out): it is shown as the agent's own call, with its
                result, and is checked, approved, bounded and journaled like any call. Taken
                instead of the executor's `first_look`; not made when `call` is given (the task
                is then that call alone).
            require_evidence: For this run, instead of the executor's `require_evidence`.
            output_type: For this run, instead of the executor's `output_type` (a type, or an
                `agents.models.OutputSpec`, e.g. of a JSON Schema).
            pass_results: Offer the built-in `answer_with_results` tool: the agent may end with
                its tool results as its answer, when they total at most this many characters,
                cover the task and its last calls all succeeded, instead of writing one (the
                caller reads the results themselves; see `agents._passing`). 0 (the default):
                it writes its answer. Never offered with an acceptance check, an output type or
                citations, which all judge a written answer, nor when a tool of the caller's
                has that name.
            may_pass: For a caller that cannot yet tell whether it will read the results
                itself (None: not known yet): asked before the agent's second decision (False:
                the tool leaves the menu for good, and the agent writes its answer), and when
                it calls the tool (anything but True: it is refused). Recorded choices.
            signals: False leaves the built-in `report_issue` off this run's menu where the
                executor offers it (`Executor(signals=True)`): for a caller that has nothing
                an issue could change (an orchestrator's plan of one subtask).

        Returns:
            The report; never raises for model, tool or budget failures.

        Raises:
            ConfigurationError: The approver is `PAUSE`, and no run takes its decisions.
        """
        check_decider(self.approver)
        output = self.output if output_type is None else _spec(output_type)
        if not (run_id and agent_id):
            token = uuid.uuid4().hex  # one draw of randomness names both
            run_id = run_id or token[:12]
            agent_id = agent_id or f"agent-{token[12:20]}"
        passing = self._passing(pass_results, may_pass, output)
        if telemetry.tracer() is None or telemetry.in_agent():
            return await self._run(task, context, shared, run_id, agent_id, budget, events,
                                   text, stop, allowed_tools, call, first_call,
                                   require_evidence, output, passing, signals)  # fmt: skip
        # A lone executor (not a run's sub-agent, whose span the run opened) opens its own.
        with telemetry.agent_span(AgentCall(task=task, run_id=run_id, agent_id=agent_id)) as span:
            report = await self._run(task, context, shared, run_id, agent_id, budget, events,
                                     text, stop, allowed_tools, call, first_call,
                                     require_evidence, output, passing, signals)  # fmt: skip
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
        text: bool,
        stop: anyio.Event | Stop | None,
        allowed_tools: Collection[str] | None,
        call: ToolCall | None,
        first_call: ToolCall | None,
        require_evidence: EvidenceRule,
        output: OutputSpec[Any] | None,
        passing: Passing | None,
        signals: bool,
    ) -> AgentReport:
        with structlog.contextvars.bound_contextvars(run_id=run_id, agent_id=agent_id):
            s = AgentState(
                run_id=run_id, agent_id=agent_id, task=task, events=events, text=text,
                approver=self.approver, question_limit=self.questions, signals=signals,
            )  # fmt: skip
            s.allowed = narrow(self.allowed_tools, allowed_tools)
            s.direct, s.first_call = call, first_call
            s.passing = passing
            s.context = context
            s.require_evidence = _evidence_rule(self.require_evidence, require_evidence)
            s.now = await self.effects.now(s.site())
            s.budget = Budget.from_limits(self.limits, now=s.now, parent=budget)
            s.budget.check_priced(self.model.name)
            s.transcript = Transcript(opening(self.instructions, task, context, shared))
            try:
                if self.approver is None:  # nothing to share: no run-wide set (10,000 agents...)
                    report = await self._drive(s, stop)
                else:
                    with RunWaits.shared() as s.waits:
                        report = await self._drive(s, stop)
            except ExceptionGroup as group:
                # What escapes the loop (a replay's drift, a bug) is one error, not a group.
                if len(group.exceptions) != 1:
                    raise
                sole = group.exceptions[0]
                raise sole from sole.__cause__
            if output is None:
                return report
            return await typed_report(output, report, partial(self._loop.call, s), s.context)

    def _passing(
        self, bound: int, may_pass: Callable[[], bool | None] | None, output: OutputSpec[Any] | None
    ) -> Passing | None:
        """What the agent may pass on as its answer (`run(pass_results=...)`), if anything."""
        if bound <= 0 or self.acceptance is not None or output is not None or self.cite:
            return None
        if ANSWER_WITH_RESULTS.name not in self.control.names:
            return None  # a tool of the caller's has its name
        return Passing(bound=bound, may_pass=may_pass)

    async def _drive(self, s: AgentState, stop: anyio.Event | Stop | None) -> AgentReport:
        if not isinstance(stop, anyio.Event):
            return await self._loop.drive(s, stop)
        # An anyio.Event can only be waited on: one watcher task turns it into the loop's one way
        # of stopping, a `Stop`.
        handle = Stop()
        async with anyio.create_task_group() as tg:
            tg.start_soon(set_when, stop, handle)
            report = await self._loop.drive(s, handle)
            tg.cancel_scope.cancel()
        return report


def _spec(output_type: Any) -> OutputSpec[Any]:
    return output_type if isinstance(output_type, OutputSpec) else OutputSpec(output_type)


def _evidence_rule(own: EvidenceRule, asked: EvidenceRule) -> EvidenceRule:
    """One run's evidence rule: the run's (`asked`), else the executor's own; a run's "facts" does
    not hold an executor made to answer from what it knows (`require_evidence=False`, as research
    without grounding is)."""
    if asked is None or (asked == "facts" and own is False):
        return own
    return asked
