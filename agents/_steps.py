"""The state of one executor run (`AgentState`), and the small steps of its loop that read it.

`AgentState` is the run's bookkeeping: its transcript, budget, evidence and the open tool turn
(whose two halves are in `agents._turn`). Its methods run one prepared call through the effect
boundary (asking a person first when the call needs approval, and holding the deadline while they
decide) and trace the model's replies. Beside it: what paor says to the model (`tell`), the model's
text streamed to the events (`send_delta`), an agent's opening messages, the digest answer of a run
that stopped early, and the tools an agent may call (`narrow`).
"""

from __future__ import annotations

import json
import math
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import anyio

from agents._answers import Parrot
from agents._approval import ApprovalRequest, Approver, Decision
from agents._effects import Addresses, Effects, EffectSite, EvidenceRule
from agents._errors import ReplayedCancellation
from agents._events import (
    ApprovalDecided,
    ApprovalRequested,
    EventSink,
    LoopWarning,
    ModelCalled,
    TextDelta,
)
from agents._guards import Budget, LoopDetector
from agents._report import AgentReport, ReportStatus
from agents._signals import ASK_USER, asked_outcome
from agents._toolbox import Evidence, Finding, PreparedCall, ToolResult
from agents._tools import ToolContext, ToolOutcome
from agents._tracing import REDACTED, logger, redact
from agents._waits import NOT_ALLOWED, RunWaits
from agents.models._model import ModelResponse, Usage
from memory import AssistantMessage, Message, SystemMessage, ToolCall, Transcript, UserMessage

if TYPE_CHECKING:
    from agents._passing import Passing

__all__ = [
    "EXCERPT_CHARS",
    "AgentState",
    "digest_of",
    "narrow",
    "opening",
    "send_delta",
    "tell",
]

_log = logger("paor.agent")
_ECHO_WORDS = 5
EXCERPT_CHARS = 300  # of a source in a digest, or of a failed call in a note


@dataclass(kw_only=True, slots=True)
class AgentState:
    """Everything one executor run has gathered so far (internal bookkeeping)."""

    @property
    def usage(self) -> Usage:
        """What the agent has spent: its own ledger's use (every charge to it is the agent's)."""
        return self.budget.used

    run_id: str
    agent_id: str
    task: str
    events: EventSink | None = None
    text: bool = False
    now: float = 0.0
    budget: Budget = field(default_factory=Budget)
    transcript: Transcript = field(default_factory=Transcript)
    detector: LoopDetector = field(default_factory=LoopDetector)
    evidence: list[Evidence] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    steps: int = 0
    malformed: int = 0
    rejections: int = 0
    warned: bool = False
    blocked: str | None = None
    invalidates: str | None = None
    seen_ids: set[str] = field(default_factory=set)
    allowed: frozenset[str] | None = None
    direct: ToolCall | None = None  # the task is this one tool call (see `Executor.run`)
    first_call: ToolCall | None = None  # its first turn, written out (see `Executor.run`)
    context: str = ""  # earlier results that came with the task (`Executor.run(context=...)`)
    require_evidence: EvidenceRule = None  # the evidence rule for this run (`Executor.run`)
    passing: Passing | None = None  # it may pass its results on as its answer (`agents._passing`)
    signals: bool = True  # `report_issue` stays on its menu (where the executor offers it)
    turn: tuple[ToolCall, ...] = ()
    results: dict[str, ToolResult] = field(default_factory=dict)
    in_flight: list[tuple[PreparedCall, EffectSite]] = field(default_factory=list)
    outcomes: dict[str, ToolOutcome] = field(default_factory=dict)
    ran_with: dict[str, dict[str, Any]] = field(default_factory=dict)  # a person's arguments
    turn_keys: list[tuple[str, str]] = field(default_factory=list)
    turn_digests: list[str] = field(default_factory=list)
    turn_failed: list[bool] = field(default_factory=list)
    cut: bool = False
    approver: Approver | None = None
    waits: RunWaits | None = None  # the run's (with an approver)
    question_limit: int = 0  # questions the run may ask the user (see agents._signals)
    approval_sites: dict[str, EffectSite] | None = None  # this turn's, made when one is needed
    scope: anyio.CancelScope | None = None  # the loop's, once its deadline is armed
    waiting: int = 0  # approvals of this turn that wait now
    paused_deadline: tuple[float, float] | None = None  # the scope's deadline, the run's offset
    # paor's own words to the model (guard messages): never valid tool arguments. Tool errors are
    # left out: they quote the model's own arguments, which it may rightly use again elsewhere.
    said: Parrot = field(default_factory=lambda: Parrot(words=_ECHO_WORDS))
    addresses: Addresses = field(init=False)

    def __post_init__(self) -> None:
        self.addresses = Addresses(run_id=self.run_id, agent_id=self.agent_id)

    def site(self) -> EffectSite:
        """The address of the next effect."""
        return self.addresses.next(self.steps)

    def unique_ids(self, message: AssistantMessage) -> AssistantMessage:
        """The message with every tool call id made unique in this transcript."""
        calls = []
        for index, call in enumerate(message.tool_calls):
            if not call.id or call.id in self.seen_ids:
                call = call.model_copy(
                    update={"id": f"call_{self.steps}_{index}_{self.addresses.issued}"}
                )
            self.seen_ids.add(call.id)
            calls.append(call)
        if all(new is old for new, old in zip(calls, message.tool_calls, strict=True)):
            return message  # frozen: nothing to copy when every id was already unique
        return message.model_copy(update={"tool_calls": tuple(calls)})

    def own_turn(self, call: ToolCall) -> tuple[ToolCall, ...]:
        """Record `call`, made for the model, as a turn of its own (its id made unique); that
        turn's calls."""
        asked = self.unique_ids(AssistantMessage(tool_calls=(call,)))
        self.transcript.append(asked)
        return asked.tool_calls

    async def run_tool(self, effects: Effects, prepared: PreparedCall, site: EffectSite) -> None:
        """Run one prepared call through the effect boundary and keep its outcome."""
        call = prepared.call
        ctx = ToolContext(
            run_id=self.run_id,
            agent_id=self.agent_id,
            call_id=call.id,
            idempotency_key=f"{self.run_id}:{self.agent_id}:{site.seq}",
        )
        try:
            if prepared.tool is ASK_USER:
                self.outcomes[call.id] = await self._asked(effects, prepared, site)
                return
            args = await self._approved(effects, prepared)
            if isinstance(args, ToolOutcome):
                self.outcomes[call.id] = args
                return
            if args is not prepared.args:
                self.ran_with[call.id] = args
            self.outcomes[call.id] = await effects.tool_call(site, prepared.tool, args, ctx)
        except ReplayedCancellation:
            # Cut short when recorded. Siblings go on to their own recorded ends; the executor
            # then cuts the turn (raising here would cancel siblings that had finished).
            self.cut = True

    async def _approved(
        self, effects: Effects, prepared: PreparedCall
    ) -> dict[str, Any] | ToolOutcome:
        """The arguments to run the call with, once approved; a denial's outcome otherwise."""
        site = None if self.approval_sites is None else self.approval_sites.get(prepared.call.id)
        if site is None or self.approver is None or self.waits is None:
            return prepared.args
        tool = prepared.tool
        request = ApprovalRequest(
            approval_id=site.key, run_id=self.run_id, agent_id=self.agent_id, tool=tool.name,
            description=tool.description, args=redact(prepared.args, tool.sensitive),
        )  # fmt: skip
        await self.emit(ApprovalRequested.of(request, self.steps))
        self._hold_deadline(self.waits)
        try:
            decision = await self.waits.decided(effects, site, request, self.approver)
        finally:
            self._release_deadline(self.waits)
        await self.emit(ApprovalDecided.of(request, decision, self.steps))
        if decision.action == "deny":
            message = f"Denied by a person: {decision.message or 'no reason given'}."
            return ToolOutcome(ok=False, error="rejected", message=message)
        if decision.args is None:
            return prepared.args
        # The person saw sensitive values masked: an edit that leaves a mask keeps the real one.
        kept = {
            k: v for k, v in decision.args.items() if not (k in tool.sensitive and v == REDACTED)
        }
        try:
            return tool.parse(json.dumps({**prepared.args, **kept}, default=str))
        except (ValueError, TypeError) as exc:
            text = f"The arguments a person gave for this call are invalid: {exc}"
            return ToolOutcome(ok=False, error="invalid_arguments", message=text)

    async def model_called(self, response: ModelResponse, *, ms: float) -> None:
        """Trace a model reply."""
        calls = len(response.message.tool_calls)
        _log.info(
            "model_called",
            step=self.steps,
            duration_ms=round(ms, 3),
            prompt_tokens=response.usage.prompt_tokens,
            completion_tokens=response.usage.completion_tokens,
            tool_calls=calls,
            protocol=response.protocol,
        )
        if self.events is None:  # an agent alone: no event is built for no one
            return
        await self.emit(
            ModelCalled(
                run_id=self.run_id,
                agent_id=self.agent_id,
                step=self.steps,
                usage=response.usage,
                duration_ms=ms,
                tool_calls=calls,
                protocol=response.protocol,
            )
        )

    async def loop_warning(self, detail: str) -> None:
        """Trace a loop warning."""
        _log.warning("loop_detected", step=self.steps, detail=detail)
        await self.emit(
            LoopWarning(run_id=self.run_id, agent_id=self.agent_id, step=self.steps, detail=detail)
        )

    def report(self, *, status: ReportStatus, answer: str, stop_reason: Any = None) -> AgentReport:
        """The report for what this run has so far."""
        return AgentReport(
            agent_id=self.agent_id,
            task=self.task,
            status=status,
            answer=answer,
            evidence=tuple(self.evidence),
            invalidates=self.invalidates,
            stop_reason=stop_reason,
            notes=tuple(self.notes),
            usage=self.usage,
            steps=self.steps,
            findings=tuple(self.findings),
        )

    async def _asked(
        self, effects: Effects, prepared: PreparedCall, site: EffectSite
    ) -> ToolOutcome:
        """Ask the user the question, at the call's own address (it runs no tool)."""
        question = str(prepared.args["question"])
        request = ApprovalRequest.question(site, self.agent_id, question)
        await self.emit(ApprovalRequested.of(request, self.steps))
        waits = self.waits
        if waits is not None:
            self._hold_deadline(waits)
        try:
            decision = (
                Decision(action="deny", message=NOT_ALLOWED)
                if waits is None
                else await waits.ask(effects, site, request, self.approver, self.question_limit)
            )
        finally:
            if waits is not None:
                self._release_deadline(waits)
        await self.emit(ApprovalDecided.of(request, decision, self.steps))
        return asked_outcome(decision)

    def _hold_deadline(self, waits: RunWaits) -> None:
        """While a person decides, the agent's deadline waits too (the first approval of a turn
        holds it; see `_release_deadline`)."""
        self.waiting += 1
        if self.waiting == 1 and self.scope is not None:
            self.paused_deadline = (self.scope.deadline, waits.waited())
            self.scope.deadline = math.inf

    def _release_deadline(self, waits: RunWaits) -> None:
        """Re-arm the deadline once no approval of the turn waits: later by the time the run
        spent waiting only for people meanwhile (the run's clock stood still that long)."""
        self.waiting -= 1
        if self.waiting or self.scope is None or self.paused_deadline is None:
            return
        deadline, waited = self.paused_deadline
        self.paused_deadline = None
        self.scope.deadline = deadline + (waits.waited() - waited)

    async def emit(self, event: Any) -> None:
        """Send `event` to the run's event sink, if it has one."""
        if self.events is not None:
            await self.events(event)


def tell(s: AgentState, text: str) -> None:
    """Say something to the model as paor (remembered: it is never a valid tool argument)."""
    s.transcript.append(UserMessage(content=text))
    s.said.add(text)


def digest_of(s: AgentState, reason: str, detail: str) -> str:
    """The answer built from what was gathered, when the model gave none worth keeping: each
    source once, with its first excerpt."""
    lines = [f"Incomplete: stopped early ({reason}{': ' + detail if detail else ''})."]
    excerpts: dict[str, str] = {}
    for e in s.evidence:
        excerpts.setdefault(e.source, e.excerpt)
    if excerpts:
        lines.append("What was gathered:")
        lines += [f"- [{src}] {text[:EXCERPT_CHARS]}" for src, text in excerpts.items()]
    else:
        lines.append("Nothing usable was gathered.")
    return "\n".join(lines)


def narrow(own: frozenset[str] | None, extra: Collection[str] | None) -> frozenset[str] | None:
    """The tools an agent may call: its own restriction narrowed by a run's (None: all)."""
    if extra is None:
        return own
    return frozenset(extra) if own is None else own & frozenset(extra)


async def send_delta(s: AgentState, purpose: str, text: str, restart: bool) -> None:
    """Stream a piece of the model's text to the agent's events."""
    assert s.events is not None
    event = TextDelta(
        run_id=s.run_id, agent_id=s.agent_id, step=s.steps, text=text, purpose=purpose,
        restart=restart,
    )  # fmt: skip
    await s.events(event)


def opening(instructions: str, task: str, context: str, shared: str) -> list[Message]:
    """An agent's first two messages. What every agent of a run is told alike (`shared`) follows
    the instructions, and the task and its own context come last: the prompts of a run's agents
    then share one byte-identical prefix (with the tools) that a provider's cache can hold."""
    system = f"{instructions}\n\nWhat is already known:\n{shared}" if shared else instructions
    body = f"Task: {task}\n\nWhat is already known:\n{context}" if context else f"Task: {task}"
    return [SystemMessage(content=system), UserMessage(content=body)]
