"""The two halves of a tool turn.

`start_turn` prepares every call of a model turn (unknown names, open breakers, bad arguments and an
exhausted tool-call budget become results at once). The executor runs the prepared calls
concurrently; each outcome is kept the moment it arrives (`AgentState.run_tool`). `settle_turn`
then gives every call id of the turn exactly one result, in the order the model made the calls,
including calls that were still running when a deadline or a stop request cut the turn short.
Keeping finished outcomes in the state is what lets a cancelled turn lose nothing that had already
completed. `bounded` is the model's message as the transcript keeps it.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Sequence
from typing import Any, Literal

from agents._effects import EffectSite
from agents._events import BreakerOpened, IssueReported, ToolCalled
from agents._own_text import strip_markers
from agents._signals import ANSWER_WITH_RESULTS, ASK_USER, SIGNALS
from agents._steps import AgentState
from agents._toolbox import PreparedCall, Toolbox, ToolResult
from agents._tools import MAX_ARG_CHARS, ToolOutcome
from agents._tracing import REDACTED, digest, logger, redact, redact_text
from agents.models._model import Usage
from memory import AssistantMessage, ToolCall

__all__ = ["bounded", "offered", "run_inline", "settle_turn", "start_turn"]

_log = logger("paor.agent")
_ERROR_CHARS = 300
_Launch = tuple[PreparedCall, EffectSite]
# paor's own tools that may be called with others, and those whose results are no finding
_ALONGSIDE = frozenset({ASK_USER.name, ANSWER_WITH_RESULTS.name})
_NOT_EVIDENCE = frozenset({"report_issue", ANSWER_WITH_RESULTS.name})
_SIGNALS = frozenset(signal.name for signal in SIGNALS)


def bounded(message: AssistantMessage, toolbox: Toolbox) -> AssistantMessage:
    """The message as the transcript keeps it: arguments over their tool's limit are left out.

    The call itself is refused unread (`Tool.parse`); kept, its arguments would be re-sent with
    every later request. The note stands in as valid JSON, which some servers' chat templates
    parse.
    """
    calls = []
    for call in message.tool_calls:
        found = toolbox.get(call.name)
        limit = found.max_arg_chars if found else MAX_ARG_CHARS
        if len(call.arguments) > limit:
            note = {"omitted": f"{len(call.arguments):,} characters of arguments, over the limit"}
            call = call.model_copy(update={"arguments": json.dumps(note)})
        calls.append(call)
    if all(new is old for new, old in zip(calls, message.tool_calls, strict=True)):
        return message
    return message.model_copy(update={"tool_calls": tuple(calls)})


def start_turn(
    s: AgentState,
    calls: tuple[ToolCall, ...],
    toolbox: Toolbox,
    control: Toolbox,
    allowed: Collection[str] | None,
) -> None:
    """Prepare a turn's calls: failures become results now, the rest wait in `s.in_flight`."""
    s.turn, s.results, s.in_flight, s.outcomes, s.ran_with = calls, {}, [], {}, {}
    s.approval_sites = None
    left = s.budget.tool_calls_left()
    launched = 0
    # `answer_with_results` is offered only while the agent may pass its results on
    # (`agents._passing`).
    closed = offered(control, s)
    for call in map(_unmarked, calls):
        is_control = call.name in control.names
        if is_control and len(calls) > 1 and call.name not in _ALONGSIDE:
            # A verdict on the task made in the same breath as looking things up is premature.
            s.results[call.id] = ToolResult.failure(
                call, "bad_call", f"Call {call.name} on its own, after reading your other results."
            )
            continue
        if not is_control and left is not None and launched >= left:
            s.results[call.id] = ToolResult.failure(
                call,
                "skipped",
                "Skipped: the tool-call budget is spent. Answer with what you have.",
            )
            continue
        echoed = _echo(s, call)
        if echoed:
            s.results[call.id] = ToolResult.failure(
                call,
                "bad_call",
                f'Error: the arguments repeat a message you were sent ("{echoed}"). Call '
                f"{call.name} with arguments of your own about the task.",
            )
            continue
        box = control if is_control else toolbox
        prepared = box.prepare(call, s.now, closed if is_control else allowed)
        if isinstance(prepared, ToolResult):
            s.results[call.id] = prepared
            continue
        if _needs_approval(prepared):
            if s.approver is None:
                s.results[call.id] = ToolResult.failure(
                    call, "rejected", f"{call.name} needs a person's approval: none can be asked."
                )
                continue
            if s.approval_sites is None:
                s.approval_sites = {}
            s.approval_sites[call.id] = s.site()  # the decision's address, before the call's
        launched += 0 if is_control else 1
        s.in_flight.append((prepared, s.site()))
    s.budget.charge(Usage(tool_calls=launched))


def run_inline(in_flight: Sequence[_Launch]) -> list[_Launch] | None:
    """The turn's calls in the order to run them one by one in the agent's own task, when that is
    how they run: the usual turn of one call, beside which `answer_with_results` (a signal that
    returns at once) may come; None when two or more calls run concurrently. A task of its own
    for each sub-agent's one lookup is memory that 10,000 waiting sub-agents add up."""
    signals = [c for c in in_flight if c[0].tool is ANSWER_WITH_RESULTS]
    others = [c for c in in_flight if c[0].tool is not ANSWER_WITH_RESULTS]
    return others + signals if len(others) <= 1 else None


def offered(control: Toolbox, s: AgentState) -> frozenset[str] | None:
    """The names of paor's own tools the agent may call now (None: all of them): not
    `answer_with_results` unless it may pass its results on, nor `report_issue` in a run
    without signals (`Executor.run(signals=False)`)."""
    names = control.names
    hidden = _SIGNALS.intersection(names) if not s.signals else frozenset()
    if s.passing is None and ANSWER_WITH_RESULTS.name in names:
        hidden |= {ANSWER_WITH_RESULTS.name}
    return frozenset(name for name in names if name not in hidden) if hidden else None


def _needs_approval(prepared: PreparedCall) -> bool:
    """Whether the call waits for a person (a predicate that fails says it does: the safe side)."""
    try:
        return prepared.tool.wants_approval(prepared.args)
    except Exception:  # user code: a broken predicate must not let a call through unasked
        return True


async def settle_turn(
    s: AgentState, toolbox: Toolbox, control: Toolbox, *, cancelled: bool
) -> None:
    """Give every call of the open turn exactly one result, append them, and trace them."""
    if not s.turn:
        return
    for prepared, _site in s.in_flight:
        box = control if prepared.tool.name in control.names else toolbox
        outcome = s.outcomes.get(prepared.call.id) or ToolOutcome(
            ok=False,
            error="cancelled",
            message="was cancelled before it finished (the agent was stopped or ran out of time)",
        )
        ran_with = s.ran_with.get(prepared.call.id)
        s.results[prepared.call.id] = box.finish(prepared, outcome, s.now, ran_with=ran_with)
    turn, results = s.turn, [s.results[call.id] for call in s.turn]
    args = {prepared.call.id: prepared.args for prepared, _ in s.in_flight}
    issues: list[tuple[Literal["blocked", "invalidates"], str]] = []
    # Record the whole turn before the first await: a stop or deadline landing while an event
    # sink applies back-pressure must neither lose a result nor settle the turn a second time.
    for call, result in zip(turn, results, strict=True):
        s.transcript.append(result.to_message())
        if not (call.name in _NOT_EVIDENCE and call.name in control.names):
            s.evidence.extend(result.evidence)
        s.findings.extend(result.findings)
        if s.passing is not None and result.ok:
            if call.name == ANSWER_WITH_RESULTS.name:
                s.passing.asked = True
            elif call.name not in control.names:
                s.passing.results.append(result.content)
        if result.ok and call.name == "report_issue" and call.id in args:
            issues.append(_apply_signal(s, args[call.id]))
    s.turn_keys = [(call.name, call.arguments) for call in turn]
    s.turn_digests = [digest(r.content) for r in results]
    s.turn_failed = [not r.ok for r in results]
    s.turn, s.in_flight = (), []
    for call, result in zip(turn, results, strict=True):
        await _trace_result(s, call, result, args.get(call.id), toolbox)
    for kind, reason in issues:
        ids = {"run_id": s.run_id, "agent_id": s.agent_id, "step": s.steps}
        await s.emit(IssueReported(**ids, kind=kind, reason=reason))


def _unmarked(call: ToolCall) -> ToolCall:
    """`call` with paor's markers taken out of its string arguments (a small model pastes the
    `[OBSERVE]` line it read into its next query). The transcript keeps the call as written."""
    if "[OBSERVE]" not in call.arguments and "Incomplete:" not in call.arguments:
        return call  # the usual call: no parse
    try:
        args = json.loads(call.arguments)
    except (ValueError, RecursionError):
        return call  # the toolbox answers malformed arguments
    if not isinstance(args, dict):
        return call
    cleaned = {k: strip_markers(v) if isinstance(v, str) else v for k, v in args.items()}
    if cleaned == args:
        return call
    return call.model_copy(update={"arguments": json.dumps(cleaned, ensure_ascii=False)})


def _echo(s: AgentState, call: ToolCall) -> str | None:
    """A phrase of paor's own messages that a call's string arguments repeat, if any."""
    if not s.said:
        return None  # the usual turn: nothing said yet, so no second parse of the arguments
    try:
        args = json.loads(call.arguments)
    except (ValueError, RecursionError):
        return None  # the toolbox answers malformed arguments
    values = args.values() if isinstance(args, dict) else ()
    return next((c for v in values if isinstance(v, str) and (c := s.said.copied(v))), None)


def _apply_signal(
    s: AgentState, args: dict[str, Any]
) -> tuple[Literal["blocked", "invalidates"], str]:
    reason = str(args.get("reason", "")).strip() or "no reason given"
    if args.get("kind") == "blocked":
        s.blocked = reason
        return "blocked", reason
    s.invalidates = reason
    return "invalidates", reason


async def _trace_result(
    s: AgentState, call: ToolCall, result: ToolResult, args: dict[str, Any] | None, toolbox: Toolbox
) -> None:
    found = toolbox.get(call.name)
    sensitive = found.sensitive if found else frozenset[str]()
    shown: Any = redact(args, sensitive) if args is not None else _raw(call, sensitive)
    _log.info(
        "tool_called",
        step=s.steps,
        tool=call.name,
        call_id=call.id,
        args=shown,
        duration_ms=result.duration_ms,
        ok=result.ok,
        error=result.error,
        digest=digest(result.content),
    )
    if result.breaker_opened:
        _log.warning("breaker_opened", tool=call.name)
    if s.events is None:  # an agent alone: no event is built for no one
        return
    problem = None if result.ok else redact_text(result.content.split("\n", 1)[0][:_ERROR_CHARS])
    ids = {"run_id": s.run_id, "agent_id": s.agent_id, "step": s.steps}
    await s.emit(
        ToolCalled(
            **ids,
            tool=call.name,
            call_id=call.id,
            ok=result.ok,
            error=problem,
            error_kind=result.error,
            duration_ms=result.duration_ms,
        )
    )
    if result.breaker_opened:
        await s.emit(BreakerOpened(**ids, tool=call.name, reason=result.content[-300:]))


def _raw(call: ToolCall, sensitive: Collection[str]) -> str:
    """Unparsed arguments, cut short: they failed validation, so no field is known to be safe."""
    try:
        return json.dumps(redact(json.loads(call.arguments), sensitive))[:200]
    except (json.JSONDecodeError, RecursionError, TypeError, AttributeError):
        # Unparseable text of a tool with sensitive arguments may hold them anywhere.
        return REDACTED if sensitive else redact_text(call.arguments[:80])
