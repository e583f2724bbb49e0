"""The planner: makes the plan, replans around surprises, and synthesises the final answer.

Plans and replans are structured output (`ModelRequest.output`), so they work with native tool
calling and with the JSON decision protocol alike. Whatever the model writes is validated; problems
go back to it for a bounded number of repairs, and past that a `PlanError` says what was wrong.
Every model call goes through the effect boundary under the agent id `PLANNER_AGENT` ("planner").
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

import anyio
from pydantic import BaseModel, ValidationError

from agents import AgentReport, Budget, ChatModel, Usage
from agents.effects import PLANNER_AGENT, Addresses, Effects, EffectSite
from agents.errors import MalformedResponse, ModelError, ReplayedCancellation
from agents.events import TextSink, streaming
from agents.executor import Parrot, sourced, unseen_numbers, unsupported, unusable_answer
from agents.models import ModelRequest, ModelResponse, OutputSchema
from agents.telemetry import logger
from memory import AssistantMessage, Message, SystemMessage, UserMessage
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
from orchestrator._plan_checks import anchored, first_plan_repairs, goal_problems, subtask_ids
from orchestrator._plan_stream import SubtaskScanner

__all__ = [
    "PLANNER_INSTRUCTIONS",
    "SYNTHESIS_INSTRUCTIONS",
    "Planner",
    "Question",
    "ReplanDraft",
    "Synthesis",
]

T = TypeVar("T")
M = TypeVar("M", bound=BaseModel)

PLANNER_INSTRUCTIONS = (
    "You are the planner of a team of research and action agents. Split the goal into a few "
    "subtasks (at most {max_subtasks}) that agents can do independently; give each a short id, a "
    "self-contained goal, the ids it depends on (only when it truly needs their results, so that "
    "the rest run in parallel), the tools it may use (empty for all), what a good result contains, "
    "and the expected output. Reply with JSON only."
)
SYNTHESIS_INSTRUCTIONS = (
    "You write the final answer to the goal from the results your agents reported. Use only those "
    "results; keep their citations in [brackets]; say plainly what is missing or uncertain."
)
_RESULT_CHARS = 1500
_log = logger("paor.planner")
_LIVE = ("pending", "running")
_MIN_GOAL_WORDS = 3
_PROBLEM_CHARS = 300
_SYNTHESIS_TRIES = 2  # the answer, and once more with the reason it was not accepted


@dataclass(frozen=True, slots=True)
class Synthesis:
    """The run's final answer, and why it is not the model's when it is not."""

    answer: str
    problem: str | None = None


@dataclass(frozen=True, slots=True)
class Question:
    """What a planner that may ask asked the user instead of planning."""

    text: str


_DIRECT_CALLS = (
    "A subtask that is exactly one tool call whose arguments you already know needs no agent: "
    'write the call in "call" ({"tool": name, "arguments": {...}}) and it runs as it is, its '
    'result being the tool\'s output. An argument written "$ID" is replaced by the result of '
    'subtask ID, which it must depend on. Leave "call" out wherever a step needs reasoning.'
)
_MAY_ASK = (
    "Only if the goal lacks something only the user can tell you, without which the plan would "
    'be wrong (a budget, a city, a date), also write one short question in "question": you will '
    "plan again with the answer. Otherwise leave it out."
)


class ReplanDraft(BaseModel):
    """A replan as the planner model writes it: what to drop and what to add."""

    remove: list[str] = []
    add: list[SubtaskDraft] = []
    rationale: str = ""


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
            planner writes out (`Orchestrator(direct_calls=True)`); None: every subtask is a
            sub-agent.
        cite: The run asks for citations (`Orchestrator(cite=True)`): the synthesis of a run
            that would be complete must say what a result says about the goal (the support
            rule, `agents.executor.unsupported`).
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
    _addresses: Addresses = field(init=False)
    _parrot: Parrot | None = field(default=None, init=False)
    notes: list[str] = field(default_factory=list, init=False)

    def __post_init__(self) -> None:
        self._addresses = Addresses(run_id=self.run_id, agent_id=PLANNER_AGENT)

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
        streamed and each subtask with no dependencies goes there as soon as it is written and
        valid on its own, before the plan is complete (the plan itself may still be repaired).

        Raises:
            PlanError: No valid plan within the repair budget, or the model failed.
        """
        prompt = f"{_goal(goal, known)}\n\n{self._menu(unavailable)}{_feedback(feedback)}"
        schema: type[PlanDraft] = AskingPlanDraft if may_ask else PlanDraft
        if may_ask:
            prompt += f"\n\n{_MAY_ASK}"

        def build(text: str, last: bool) -> Plan | Question | list[str]:
            draft = _parse(text, schema)
            if isinstance(draft, list):
                return draft
            if isinstance(draft, AskingPlanDraft) and draft.question.strip():
                return Question(" ".join(draft.question.split())[:500])
            if self.ask_goal:
                draft = _asking(draft, goal, self.max_subtasks)
            draft, repairs = first_plan_repairs(draft, self.tools)
            offered = self.calls is not None
            checked = self._checked(
                lambda: build_plan(draft, version=1, calls=offered), reserved=()
            )
            if isinstance(checked, list):
                return checked
            worded = self._worded(checked, goal, last=last)
            if not isinstance(worded, list):
                self.notes += [f"plan v1: {r}" for r in repairs]
            return worded

        early = None if on_subtask is None else self._early(on_subtask)
        return await self._structured(prompt, "plan", schema, build, on_text=early)

    def _early(self, on_subtask: Callable[[Subtask], None]) -> TextSink:
        """A text sink that hands each streamed root subtask, valid on its own, to `on_subtask`."""
        scanner, seen = SubtaskScanner(), set[str]()

        async def sink(text: str, restart: bool) -> None:
            nonlocal scanner
            if restart:
                scanner = SubtaskScanner()
            for raw in scanner.feed(text):
                draft = _parse(json.dumps(raw), SubtaskDraft)
                if isinstance(draft, list) or draft.depends_on or len(seen) >= self.max_subtasks:
                    continue
                alone = PlanDraft(subtasks=[draft])
                checked = self._checked(
                    functools.partial(build_plan, alone, version=1, calls=self.calls is not None),
                    reserved=seen,
                )
                if isinstance(checked, Plan) and not goal_problems(checked, tools=self.tools):
                    (sub,) = checked.subtasks
                    seen.add(sub.id)
                    on_subtask(sub)

        return sink

    async def replan(
        self,
        goal: str,
        plan: Plan,
        *,
        status: dict[str, str],
        reports: dict[str, AgentReport],
        trigger: str,
        reason: str,
        reserved: Collection[str],
        unavailable: dict[str, str],
        known: str = "",
        feedback: str = "",
    ) -> tuple[Plan, set[str]]:
        """A new plan version around a surprise; returns it with the ids the model removed.

        `plan` holds only subtasks still in play (done, running or pending); `reserved` ids may
        not be reused. Completed subtasks are always kept. `feedback`: a person's reason for
        rejecting the last replan.

        Raises:
            PlanError: No valid replan within the repair budget, or the model failed.
        """
        prompt = "\n\n".join(
            [
                _goal(goal, known),
                f"Subtask {trigger} reported a problem: {reason}",
                "Current plan and status:\n" + _plan_status(plan, status, reports),
                self._menu(unavailable),
                "Remove pending or running subtasks that are no longer useful, and add new "
                "subtasks (new ids) that route around the problem. Keep everything still valid. "
                'Reply with JSON: {"remove": [ids], "add": [subtasks], "rationale": "..."}',
            ]
        ) + _feedback(feedback)
        surprise = reports.get(trigger)
        removable = _removable(
            plan, status, trigger, invalidated=bool(surprise and surprise.invalidates)
        )
        remaining = {i for i, st in status.items() if st in _LIVE}
        taken = set(reserved) | set(plan.ids)

        def build(text: str, last: bool) -> tuple[Plan, set[str]] | list[str]:
            draft = _parse(text, ReplanDraft)
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
                lambda: build_plan(
                    add, version=plan.version + 1, keep=keep, calls=self.calls is not None
                ),
                reserved=reserved,
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
    ) -> Synthesis:
        """The final answer from the reports; never raises. An answer that fails the answer check
        (`agents._answers`: paor's own text or layout, a copy of the goal or the prompt, a raw
        call, nothing) is sent back once with the reason; if the second is no better, or the
        model fails, the answer is the results joined as they were reported, and `problem` says
        why. With `on_text`, its text goes there as the model writes it (see `agents._streaming`).
        """
        alone = _answered_alone(goal, reports, note, known)
        if alone is not None:
            if on_text is not None:
                await on_text(alone, False)
            return Synthesis(answer=alone)
        body = "\n\n".join(_report_text(r) for r in reports) or "(no results)"
        prompt = f"{_goal(goal, known)}\n\nResults from the agents:\n\n{body}"
        if note:
            prompt += f"\n\nNote: the run is incomplete ({note}); say what is missing."
        messages: list[Message] = [
            SystemMessage(content=self.synthesis_instructions),
            UserMessage(content=prompt),
        ]
        problem = ""
        for attempt in range(_SYNTHESIS_TRIES):
            try:
                request = ModelRequest(messages=tuple(messages), purpose="synthesis")
                response = await self._ask(request, _restarted(on_text) if attempt else on_text)
            except (ModelError, TimeoutError) as exc:
                problem = f"the synthesis failed ({str(exc) or 'the deadline was reached'})"
                break
            answer = (response.message.content or "").strip()
            problem = self._unusable(goal, answer, prompt) or ""
            if not problem and self.cite and note is None:
                problem = unsupported(answer, goal, _passages(reports)) or ""
            if not problem:
                return Synthesis(answer=answer)
            _log.warning("synthesis_rejected", problem=problem)
            messages += [
                AssistantMessage(content=answer or "(empty)"),
                UserMessage(content=f"Your answer was not accepted: {problem}. Write it again."),
            ]
        why = f"{problem}; the answer is the agents' results as they reported them"
        return Synthesis(answer=_joined(reports, note), problem=why)

    def _unusable(self, goal: str, answer: str, prompt: str) -> str | None:
        """Why a synthesis is no answer: the executor's check, with the planner's prompts, and
        numbers the results (`prompt`) never showed."""
        if self._parrot is None:
            told = [self.instructions, self.synthesis_instructions, *self.tools.values()]
            self._parrot = Parrot(told)
        names = (*self.tools, "report_issue", "ask_user")
        problem = unusable_answer(answer, parrot=self._parrot, tools=names, task=goal)
        unseen = [] if problem else unseen_numbers(answer, [prompt])
        if unseen:
            problem = (
                f"your answer has numbers that none of the results shows ({', '.join(unseen[:5])}); "
                "give only the numbers the agents reported"
            )
        return problem

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
        output = OutputSchema(name=name, schema_=self._schema(schema, removable))
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

    def _schema(self, schema: type[BaseModel], removable: Sequence[str] = ()) -> dict[str, Any]:
        """The JSON schema with this run's limits in it: the plan size, tool names and the ids a
        replan may remove as enums, so a grammar-constrained model cannot break them."""
        json_schema: dict[str, Any] = json.loads(_base_schema(schema))  # a fresh copy to edit
        if schema in (PlanDraft, AskingPlanDraft):  # a question comes with a plan all the same
            json_schema["properties"]["subtasks"].update(minItems=1, maxItems=self.max_subtasks)
        if schema is ReplanDraft:
            remove = json_schema["properties"]["remove"]
            remove["items"] = {"enum": list(removable)} if removable else {"type": "string"}
            remove["maxItems"] = len(removable)
        defs = json_schema.get("$defs", {})
        draft = defs.get("SubtaskDraft")
        if draft is not None:
            names = sorted(self.tools)
            draft["properties"]["tools"]["items"] = {"enum": names} if names else {"type": "string"}
            draft["properties"]["tools"]["maxItems"] = len(names)
            if self.calls is None or not names:  # a subtask is always a sub-agent
                draft["properties"].pop("call", None)
                defs.pop("CallDraft", None)
            else:
                defs["CallDraft"]["properties"]["tool"] = {"enum": names}
        return json_schema

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
            return _validation_problems(exc)
        found = problems(
            plan, max_subtasks=self.max_subtasks, tools=self.tools.keys(), reserved=reserved
        )
        return found or plan

    async def _ask(self, request: ModelRequest, on_text: TextSink | None = None) -> ModelResponse:
        now = await self.effects.now(self._site())
        # While the planner replays, the recording says whether the deadline cut a call.
        left = self.effects.time_limit(PLANNER_AGENT, self.budget.time_left(now))
        site = self._site()
        call = functools.partial(self.effects.model_call, site, self.model, request)
        try:
            with anyio.fail_after(left):
                response = await (call() if on_text is None else streaming(call, on_text))
        except ReplayedCancellation:
            raise TimeoutError from None  # cut by the deadline when recorded
        self.budget.charge(response.usage)
        self.usage = self.usage + response.usage
        return response

    def _site(self) -> EffectSite:
        return self._addresses.next(step=self._addresses.issued + 1)  # each call is a step

    def _menu(self, unavailable: dict[str, str]) -> str:
        calls = self.calls  # with direct calls, each tool's parameters: "- lookup(key: string)"
        shown = {n: n if calls is None else f"{n}({calls.get(n, '')})" for n in self.tools}
        lines = [f"- {shown[n]}: {desc}" for n, desc in self.tools.items() if n not in unavailable]
        lines += [f"- {name}: UNAVAILABLE ({why})" for name, why in unavailable.items()]
        menu = "Tools the agents can use:\n" + ("\n".join(lines) or "(none)")
        return menu if calls is None else f"{menu}\n\n{_DIRECT_CALLS}"


@functools.cache
def _base_schema(schema: type[BaseModel]) -> str:
    """The model's JSON schema, made once: pydantic takes about a millisecond to generate it, on
    the critical path of every plan and replan."""
    return json.dumps(schema.model_json_schema())


def _parse(text: str, model: type[M]) -> M | list[str]:
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        return [f"the reply is not valid JSON ({exc.msg} at char {exc.pos})"]
    except RecursionError:
        return ["the reply is not valid JSON (nested too deep)"]
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        return [f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors()[:5]]


def _validation_problems(exc: ValidationError) -> list[str]:
    """Subtask field errors in words (a regex means nothing to a model, or to a report reader)."""
    found = []
    for error in exc.errors()[:5]:
        field = ".".join(map(str, error["loc"]))
        if error["type"] == "string_pattern_mismatch":
            shown = str(error.get("input", ""))[:60]
            found.append(
                f"{field}: {shown!r} is not a valid id: use 1 to 40 letters, digits, '_', '-' or '.'"
            )
        else:
            found.append(f"{field}: {error['msg']}")
    return found


def _asking(draft: PlanDraft, goal: str, room: int) -> PlanDraft:
    """The draft with the goal itself as its first subtask (added if the planner left it out,
    the last subtask making room), and without subtasks that ask nothing (see `_asks`) or ask
    what an earlier one asks, word for word (a small model repeats the goal N times)."""
    wanted = _words(goal)
    kept, asked = [], set()
    for d in draft.subtasks:
        words = tuple(_words(d.goal))
        if _asks(d.goal) and words not in asked:
            kept.append(d)
            asked.add(words)
    dropped = {d.id for d in draft.subtasks} - {d.id for d in kept}
    kept = [
        d.model_copy(update={"depends_on": [x for x in d.depends_on if x not in dropped]})
        for d in kept
    ]
    if any(_words(d.goal) == wanted for d in kept):
        return draft.model_copy(update={"subtasks": kept})
    ids = {d.id for d in kept}
    first = SubtaskDraft(
        id=next(i for i in ("goal", "goal-0", "goal-00") if i not in ids), goal=goal
    )
    return draft.model_copy(update={"subtasks": [first, *kept][: max(room, 1)]})


def _asks(goal: str) -> bool:
    """Whether a subtask's goal is words at all (not an id, a number, a date or a URL)."""
    return "://" not in goal and len(re.findall(r"\b[^\W\d_]{2,}\b", goal)) >= _MIN_GOAL_WORDS


def _words(text: str) -> list[str]:
    return re.findall(r"\w+", text.lower())


def _removable(plan: Plan, status: dict[str, str], trigger: str, *, invalidated: bool) -> set[str]:
    """What a replan may remove: pending subtasks; running ones only when the trigger's finding
    invalidates the plan's assumptions, or when they depend on the trigger. A subtask that merely
    failed says nothing about the running agents on other questions: they keep their work."""
    downstream = plan.dependents(trigger)
    return {
        i
        for i, st in status.items()
        if st == "pending" or (st == "running" and (invalidated or i in downstream))
    }


def _plan_status(plan: Plan, status: dict[str, str], reports: dict[str, AgentReport]) -> str:
    lines = []
    for sub in plan.subtasks:
        line = f"- {sub.id} [{status.get(sub.id, 'pending')}] {sub.goal}"
        if sub.depends_on:
            line += f" (after {', '.join(sub.depends_on)})"
        report = reports.get(sub.id)
        if report is not None:
            line += f"\n  result: {report.answer[:300]}"
        lines.append(line)
    return "\n".join(lines)


def _report_text(report: AgentReport) -> str:
    sources = ", ".join(dict.fromkeys(f"[{e.source}]" for e in report.evidence))
    text = f"## {report.agent_id} ({report.status})\nTask: {report.task}\n{report.answer[:_RESULT_CHARS]}"
    return f"{text}\nSources: {sources}" if sources else text


def _passages(reports: Sequence[AgentReport]) -> list[str]:
    """What a synthesis may rest on: each answer under the task it answers (checked against its
    own sources when the run cites), and each excerpt its tools showed, under its source."""
    passages = [f"# {r.task}\n{r.answer}" for r in reports]
    return passages + [sourced(e.source, e.excerpt) for r in reports for e in r.evidence]


def _joined(reports: Sequence[AgentReport], note: str | None) -> str:
    """The fallback answer when synthesis fails: every result, as it was reported."""
    head = f"Incomplete ({note}). " if note else ""
    parts = [f"{head}Results gathered by the agents:"]
    parts += [_report_text(r) for r in reports]
    return "\n\n".join(parts) if reports else f"{head}No results were gathered."


def _answered_alone(
    goal: str, reports: Sequence[AgentReport], note: str | None, known: str
) -> str | None:
    """The one result's answer when it is the whole run's: a complete run whose one subtask
    asked the goal itself needs no join. Its answer passed the sub-agent's checks; a second
    model call rewriting it could only lose what it says (or spend a small model's deadline)."""
    if note or known or len(reports) != 1:
        return None
    (report,) = reports
    wanted = _words(goal)
    # The task is the subtask's brief: its goal, then what a good answer looks like.
    if report.status != "done" or _words(report.task)[: len(wanted)] != wanted:
        return None
    return report.answer


def _restarted(sink: TextSink | None) -> TextSink | None:
    """`sink` for a second reply: its first piece replaces what the first reply streamed."""
    if sink is None:
        return None
    first = True

    async def send(text: str, restart: bool) -> None:
        nonlocal first
        restart, first = restart or first, False
        await sink(text, restart)

    return send


def _feedback(feedback: str) -> str:
    """What a person said of the last plan they rejected, for the prompt."""
    if not feedback:
        return ""
    return f"\n\nA person rejected your last plan. Their feedback: {feedback}\nPlan again with it."


def _goal(goal: str, known: str) -> str:
    """The goal, with the long-term facts the run knows (rendered) when there are any."""
    return f"Goal: {goal}\n\n{known}" if known else f"Goal: {goal}"
