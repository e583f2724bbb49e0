"""The planner: makes the plan, replans around surprises, and has the final answer written
(`orchestrator._synthesis`).

Plans and replans are structured output (`ModelRequest.output`), so they work with native tool
calling and with the JSON decision protocol alike. Whatever the model writes is validated; problems
go back to it for a bounded number of repairs, and past that a `PlanError` says what was wrong.
Every model call goes through the effect boundary as agent `ReservedAgent.PLANNER` ("planner").
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal, TypeVar

import anyio
from pydantic import BaseModel, ValidationError

from agents import AgentReport, Budget, ChatModel, Usage
from agents.effects import Addresses, Effects, EffectSite, ReservedAgent
from agents.errors import MalformedResponse, ModelError, ReplayedCancellation
from agents.events import TextSink, streaming
from agents.executor import AnswerCheck
from agents.models import ModelRequest, ModelResponse, OutputSchema, OutputSpec
from agents.telemetry import logger
from memory import AssistantMessage, Message, SystemMessage, UserMessage
from orchestrator._drafts import (
    ReplanDraft,
    parse_draft,
    plan_status,
    removable_ids,
    run_schema,
    validation_problems,
)
from orchestrator._plan import (
    AskingPlanDraft,
    Plan,
    PlanDraft,
    PlanError,
    Subtask,
    SubtaskDraft,
    build_plan,
    problems,
    salvage,
)
from orchestrator._plan_checks import (
    anchored,
    asking_goal,
    first_plan_repairs,
    goal_problems,
    subtask_ids,
)
from orchestrator._plan_stream import early_subtasks
from orchestrator._prompts import (
    CHAINS_FIRST,
    DIRECT_CALLS,
    MAY_ASK,
    PLANNER_INSTRUCTIONS,
    TYPED,
    rejected,
)
from orchestrator._synthesis import (
    RESULT_CHARS,
    SYNTHESIS_INSTRUCTIONS,
    Synthesis,
    Writer,
    goal_text,
    left_out,
)

__all__ = [
    "PLANNER_INSTRUCTIONS",
    "SYNTHESIS_INSTRUCTIONS",
    "Planner",
    "Question",
    "ReplanDraft",
    "Synthesis",
]

T = TypeVar("T")

_log = logger("paor.planner")
_LIVE = ("pending", "running")
_PROBLEM_CHARS = 300


@dataclass(frozen=True, slots=True)
class Question:
    """What a planner that may ask asked the user instead of planning."""

    text: str


@dataclass(kw_only=True, slots=True)
class Planner:
    """Plans, replans and synthesises for one run.

    Attributes:
        model: The planner's chat model.
        effects: The effect boundary.
        run_id: The run.
        budget: The run's ledger (charged for every planner call).
        tools: Tool names and descriptions the plan may use.
        max_subtasks: The largest plan accepted.
        max_repairs: Chances to fix an invalid plan.
        instructions: The planner's system prompt.
        synthesis_instructions: The joiner's system prompt.
        ask_goal: Every first plan asks the goal itself (see `Orchestrator`).
        calls: Each tool's parameters ("key: string"), when a subtask may be one tool call the
            planner writes out (`RunConfig(direct_calls=True)`); None: every subtask is a
            sub-agent.
        schemas: A subtask may have an output schema the planner writes
            (`RunConfig(typed_subtasks=True)`).
        cite: The run asks for citations (`RunConfig(cite=True)`): the synthesis of a run
            that would be complete must say what a result says about the goal (the support
            rule, `agents.executor.AnswerCheck`).
        result_chars: The most of one result the synthesis reads (`RunConfig.result_chars`).
    """

    model: ChatModel
    effects: Effects
    run_id: str
    budget: Budget
    tools: dict[str, str]
    max_subtasks: int = 8
    max_repairs: int = 2
    instructions: str = PLANNER_INSTRUCTIONS
    synthesis_instructions: str = SYNTHESIS_INSTRUCTIONS
    usage: Usage = field(default_factory=Usage)
    ask_goal: bool = False
    calls: dict[str, str] | None = None
    cite: bool = False
    schemas: bool = False
    result_chars: int | None = RESULT_CHARS
    _addresses: Addresses = field(init=False)
    _check: AnswerCheck | None = field(default=None, init=False)
    notes: list[str] = field(default_factory=list, init=False)

    def __post_init__(self) -> None:
        self._addresses = Addresses(run_id=self.run_id, agent_id=ReservedAgent.PLANNER)

    async def make_plan(
        self,
        goal: str,
        *,
        unavailable: dict[str, str],
        known: str = "",
        feedback: str = "",
        may_ask: bool = False,
        on_subtask: Callable[[Subtask], None] | None = None,
    ) -> Plan | Question:
        """The first plan for `goal` (`feedback`: a person's reason for rejecting the last one);
        with `may_ask`, perhaps a question for the user instead. With `on_subtask`, the reply is
        streamed and each subtask goes there as soon as it is written and valid on its own (with
        what it depends on written before it), before the plan is complete (the plan itself may
        still be repaired).

        Raises:
            PlanError: No valid plan within the repair budget, or the model failed.
        """
        prompt = f"{goal_text(goal, known)}\n\n{self._menu(unavailable)}{rejected(feedback)}"
        schema: type[PlanDraft] = AskingPlanDraft if may_ask else PlanDraft
        if may_ask:
            prompt += f"\n\n{MAY_ASK}"
        if on_subtask is not None:
            prompt += f"\n\n{CHAINS_FIRST}"

        def build(text: str, last: bool) -> Plan | Question | list[str]:
            draft = parse_draft(text, schema)
            if isinstance(draft, list):
                return draft
            if isinstance(draft, AskingPlanDraft) and draft.question.strip():
                return Question(" ".join(draft.question.split())[:500])
            if self.ask_goal:
                draft = asking_goal(draft, goal, self.max_subtasks)
            draft, repairs = first_plan_repairs(draft, self.tools)
            checked = self._checked(functools.partial(self._build, draft, 1), reserved=())
            if isinstance(checked, list):
                return checked
            worded = self._worded(checked, goal, last=last)
            if not isinstance(worded, list):
                self.notes += [f"plan v1: {r}" for r in repairs]
            return worded

        early = None if on_subtask is None else self._early(on_subtask)
        return await self._structured(prompt, "plan", schema, build, on_text=early)

    def _early(self, on_subtask: Callable[[Subtask], None]) -> TextSink:
        """A text sink that hands each streamed subtask, valid on its own, to `on_subtask`
        (`early_subtasks`)."""
        return early_subtasks(on_subtask, self._valid_last, most=self.max_subtasks)

    def _valid_last(self, drafts: list[SubtaskDraft]) -> Subtask | None:
        """The last of `drafts` as a subtask, if it is valid in the plan they make."""
        made = functools.partial(self._build, PlanDraft(subtasks=drafts), 1)
        checked = self._checked(made, reserved=())
        if not isinstance(checked, Plan):
            return None
        last = drafts[-1].id
        return (
            None if goal_problems(checked, tools=self.tools, only={last}) else checked.subtasks[-1]
        )

    async def replan(
        self,
        goal: str,
        plan: Plan,
        *,
        status: dict[str, str],
        reports: dict[str, AgentReport],
        trigger: str,
        reason: str,
        invalidated: bool,
        reserved: Collection[str],
        unavailable: dict[str, str],
        known: str = "",
        feedback: str = "",
    ) -> tuple[Plan, set[str]]:
        """A new plan version around a surprise; returns it with the ids the model removed.

        `plan` holds only subtasks still in play (done, running or pending); `reserved` ids may
        not be reused. Completed subtasks are always kept, and so is the trigger (while it runs,
        it writes its answer). `invalidated`: the trigger found the plan's assumptions wrong
        (running subtasks that do not depend on it may go too). `feedback`: a person's reason
        for rejecting the last replan.

        Raises:
            PlanError: No valid replan within the repair budget, or the model failed.
        """
        prompt = "\n\n".join(
            [
                goal_text(goal, known),
                f"Subtask {trigger} reported a problem: {reason}",
                "Current plan and status:\n" + plan_status(plan, status, reports),
                self._menu(unavailable),
                "Remove pending or running subtasks that are no longer useful, and add new "
                "subtasks (new ids) that route around the problem. Keep everything still valid. "
                'Reply with JSON: {"remove": [ids], "add": [subtasks], "rationale": "..."}',
            ]
        ) + rejected(feedback)
        removable = removable_ids(plan, status, trigger, invalidated=invalidated)
        remaining = {i for i, st in status.items() if st in _LIVE}
        taken = set(reserved) | set(plan.ids)

        def build(text: str, last: bool) -> tuple[Plan, set[str]] | list[str]:
            draft = parse_draft(text, ReplanDraft)
            if isinstance(draft, list):
                return draft
            # Repaired, not refused: a running agent that does not depend on the trigger keeps
            # its work whatever the model asks, and additions are salvaged where the intent is plain.
            bad = [r for r in draft.remove if r not in status or status[r] not in _LIVE]
            if bad:
                return [f"only pending or running subtasks can be removed, not: {', '.join(bad)}"]
            remove = {r for r in draft.remove if r in removable}
            keep = [s for s in plan.subtasks if s.id not in remove]
            add, notes = salvage(
                PlanDraft(subtasks=draft.add, rationale=draft.rationale),
                taken=taken,
                room=self.max_subtasks - len(keep),
            )
            if not add.subtasks and remaining and remaining <= remove:
                return [
                    "this replan removes all remaining work and adds nothing; add subtasks that "
                    "route around the problem, or remove less"
                ]
            if notes:
                _log.info("replan_repaired", notes=notes)
            checked = self._checked(
                functools.partial(self._build, add, plan.version + 1, keep), reserved=reserved
            )
            if isinstance(checked, list):
                return checked
            added = {sub.id for sub in add.subtasks}
            worded = self._worded(checked, goal, last=last, only=added)
            return worded if isinstance(worded, list) else (worded, remove)

        return await self._structured(
            prompt, "replan", ReplanDraft, build, removable=sorted(removable)
        )

    async def synthesise(
        self,
        goal: str,
        reports: Sequence[AgentReport],
        note: str | None,
        *,
        known: str = "",
        on_text: TextSink | None = None,
        output: OutputSpec[Any] | None = None,
        needs: Mapping[str, Sequence[str]] | None = None,
    ) -> Synthesis:
        """The answer from the reports (`Writer.write`), or one of `output`'s type; never raises."""
        writer = Writer(
            ask=self._ask, instructions=self.synthesis_instructions, judge=self._unusable,
            cite=self.cite, result_chars=self.result_chars,
        )  # fmt: skip
        if output is not None:
            made = await writer.write_object(goal, reports, note, output, known=known)
        else:
            made = await writer.write(
                goal, reports, note, known=known, on_text=on_text, needs=needs
            )
        missing = None if note or made.problem else left_out(goal, made.answer, reports)
        return made if missing is None else replace(made, problem=missing)

    def _unusable(self, goal: str, answer: str, shown: str) -> str | None:
        """Why a synthesis is no answer: the executor's check, with the planner's prompts, and
        numbers or names the results and their excerpts (`shown`) never showed."""
        if self._check is None:
            told = [self.instructions, self.synthesis_instructions, *self.tools.values()]
            self._check = AnswerCheck(told, names=self.tools)
        return self._check.unusable(answer, task=goal, seen=[shown])

    async def _structured(
        self,
        prompt: str,
        name: Literal["plan", "replan"],
        schema: type[BaseModel],
        build: Callable[[str, bool], T | list[str]],
        *,
        removable: Sequence[str] = (),
        on_text: TextSink | None = None,
    ) -> T:
        system = self.instructions.replace("{max_subtasks}", str(self.max_subtasks))
        messages: list[Message] = [SystemMessage(content=system), UserMessage(content=prompt)]
        shaped = run_schema(
            schema,
            tools=self.tools,
            max_subtasks=self.max_subtasks,
            calls=self.calls is not None,
            schemas=self.schemas,
            removable=removable,
        )
        output = OutputSchema(name=name, schema_=shaped)
        found: list[str] = []
        for attempt in range(self.max_repairs + 1):
            try:
                response = await self._ask(
                    ModelRequest(messages=tuple(messages), output=output, purpose=name), on_text
                )
                on_text = None  # only the first reply is streamed: a repair starts over
                text = response.message.content or ""
            except MalformedResponse as exc:
                text = exc.raw
            except (ModelError, TimeoutError) as exc:
                raise PlanError(
                    f"the planner model failed: {str(exc) or 'the deadline was reached'}"
                ) from exc
            result = build(text, attempt == self.max_repairs)
            if not isinstance(result, list):
                return result
            # Problems quote the model's own ids and names: cap them, a tiny model writes kilobytes.
            found = [p if len(p) <= _PROBLEM_CHARS else p[:_PROBLEM_CHARS] + "…" for p in result]
            feedback = "Your reply has problems:\n- " + "\n- ".join(found)
            messages += [
                AssistantMessage(content=text or "(empty)"),
                UserMessage(content=f"{feedback}\nReply again with the whole corrected JSON."),
            ]
        raise PlanError(
            f"no valid {name} after {self.max_repairs + 1} attempts: {'; '.join(found)}"
        )

    def _worded(
        self, plan: Plan, goal: str, *, last: bool, only: Collection[str] | None = None
    ) -> Plan | list[str]:
        """The plan if its subtask goals stand alone (`orchestrator._plan_checks`); else the
        problems, for the planner to repair, or on the last attempt the plan repaired here."""
        found = goal_problems(plan, tools=self.tools, only=only)
        if not found:
            return plan
        if not last:
            return found
        ids = subtask_ids(found, plan)
        self.notes.append(
            f"plan v{plan.version}: the run's goal was added to {', '.join(sorted(ids))}, whose "
            "goals did not stand alone"
        )
        return anchored(plan, goal, ids)

    def take_notes(self) -> list[str]:
        """What the planner repaired itself since the last call (for the run's notes)."""
        notes, self.notes = self.notes, []
        return notes

    def _checked(self, make: Callable[[], Plan], *, reserved: Collection[str]) -> Plan | list[str]:
        try:
            plan = make()
        except ValidationError as exc:
            return validation_problems(exc)
        found = problems(
            plan, max_subtasks=self.max_subtasks, tools=self.tools.keys(), reserved=reserved
        )
        return found or plan

    async def _ask(self, request: ModelRequest, on_text: TextSink | None = None) -> ModelResponse:
        now = await self.effects.now(self._site())
        # While the planner replays, the recording says whether the deadline cut a call.
        left = self.effects.time_limit(ReservedAgent.PLANNER, self.budget.time_left(now))
        call = functools.partial(self.effects.model_call, self._site(), self.model, request)
        try:
            with anyio.fail_after(left):
                response = await (call() if on_text is None else streaming(call, on_text))
        except ReplayedCancellation:
            raise TimeoutError from None  # cut by the deadline when recorded
        except MalformedResponse as exc:
            if exc.usage is not None:  # answered and billed, though unreadable: still spent
                self.usage = self.usage + self.budget.spend(exc.usage, self.model.name)
            raise
        response = self.budget.charged(response, self.model.name)
        self.usage = self.usage + response.usage
        return response

    def _build(self, draft: PlanDraft, version: int, keep: Sequence[Subtask] = ()) -> Plan:
        """`build_plan` with what this planner offered (written-out calls, output schemas)."""
        offered = {"calls": self.calls is not None, "schemas": self.schemas}
        return build_plan(draft, version=version, keep=keep, **offered)

    def _site(self) -> EffectSite:
        return self._addresses.next(step=self._addresses.issued + 1)  # each call is a step

    def _menu(self, unavailable: dict[str, str]) -> str:
        calls = self.calls  # with direct calls, each tool's parameters: "- lookup(key: string)"
        shown = {n: n if calls is None else f"{n}({calls.get(n, '')})" for n in self.tools}
        lines = [f"- {shown[n]}: {desc}" for n, desc in self.tools.items() if n not in unavailable]
        lines += [f"- {name}: UNAVAILABLE ({why})" for name, why in unavailable.items()]
        menu = "Tools the agents can use:\n" + ("\n".join(lines) or "(none)")
        offers = ([] if calls is None else [DIRECT_CALLS]) + ([TYPED] if self.schemas else [])
        return "\n\n".join([menu, *offers])
