"""The toolbox: the menu, call preparation, circuit breakers, and turning outcomes into results.

A tool call passes three stages. `prepare` checks the name (answering a miss with the valid names),
the breaker, and the arguments; any problem becomes a `ToolResult` the model reads. The executor then
runs the prepared call through the effect boundary, which yields a `ToolOutcome`. `finish` applies the
success check, shapes the observation, extracts evidence and updates the breaker. Both stages are
deterministic given the clock value passed in, so a replayed run takes the same path.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict

from agents._breaker import CircuitBreaker
from agents._errors import ConfigurationError
from agents._first_look import FirstLook
from agents._observe import not_run, observed
from agents._shaping import shaped
from agents._tools import ErrorKind, Tool, ToolOutcome
from agents._tracing import logger, redact
from agents.models._model import ToolSpec
from memory import ToolCall, ToolMessage

__all__ = ["Evidence", "Finding", "PreparedCall", "ToolResult", "Toolbox"]

_EXCERPT_CHARS = 500
_log = logger("paor.tools")
# What says something about a tool's health. Not: calls the model got wrong (bad_call), results
# the business check rejected (empty data for one query is not an outage), calls cut short by the
# agent itself (cancelled).
_BREAKER_ERRORS: frozenset[ErrorKind] = frozenset({"timeout", "failed", "crashed"})


class Evidence(BaseModel):
    """A piece of gathered evidence: where it came from and what it said.

    Attributes:
        source: A citable source (a document id, a URL, or the tool call).
        excerpt: The relevant text.
        tool: The tool that produced it.
    """

    model_config = ConfigDict(frozen=True)

    source: str
    excerpt: str
    tool: str = ""


class Finding(BaseModel):
    """A value a tool declared worth remembering (`@tool(facts=...)`).

    Attributes:
        key: The fact key.
        value: The value, as text.
        tool: The tool that found it.
    """

    model_config = ConfigDict(frozen=True)

    key: str
    value: str
    tool: str


class ToolResult(BaseModel):
    """The single result of one tool call, whatever happened to it.

    Attributes:
        call_id: The call it answers.
        name: The tool name as called.
        ok: Whether the call produced a usable result.
        content: The result the model reads (after `header`).
        error: The kind of failure, if any.
        duration_ms: Time spent in the tool.
        evidence: Citable evidence from a successful call.
        breaker_opened: This failure opened the tool's circuit breaker.
        findings: Values the tool declared worth remembering.
        header: The line of execution facts the model reads first (see `agents._observe`).
    """

    model_config = ConfigDict(frozen=True)

    call_id: str
    name: str
    ok: bool
    content: str
    error: ErrorKind | None = None
    duration_ms: float = 0.0
    evidence: tuple[Evidence, ...] = ()
    breaker_opened: bool = False
    findings: tuple[Finding, ...] = ()
    header: str = ""

    def to_message(self) -> ToolMessage:
        """The transcript message for this result: its header line, then the result."""
        content = f"{self.header}\n{self.content}" if self.header else self.content
        return ToolMessage(tool_call_id=self.call_id, name=self.name, content=content, ok=self.ok)

    @classmethod
    def failure(cls, call: ToolCall, error: ErrorKind, content: str) -> ToolResult:
        """A failed result for `call` that never reached the tool."""
        return cls(
            call_id=call.id, name=call.name, ok=False, error=error, content=content,
            header=not_run(call.name, error),
        )  # fmt: skip


@dataclass(kw_only=True, slots=True, frozen=True)
class PreparedCall:
    """A call that passed every check and is ready to run."""

    call: ToolCall
    tool: Tool
    args: dict[str, Any]
    bound: tuple[str, ...] = ()  # what was bound of the model's arguments (see agents._binding)


class Toolbox:
    """The tools of a run, with one circuit breaker per tool shared by every agent that uses it.

    Args:
        tools: The tools.
        breaker_threshold: Consecutive failures that take a tool off the menu.
        breaker_cooldown: Seconds a tool stays off the menu.

    Raises:
        ConfigurationError: Two tools share a name.
    """

    def __init__(
        self, tools: Iterable[Tool], *, breaker_threshold: int = 3, breaker_cooldown: float = 30.0
    ) -> None:
        self._tools: dict[str, Tool] = {}
        for t in tools:
            if t.name in self._tools:
                raise ConfigurationError(f"two tools are named {t.name!r}")
            self._tools[t.name] = t
        self._breakers = {
            name: CircuitBreaker(threshold=breaker_threshold, cooldown=breaker_cooldown)
            for name in self._tools
        }

    @property
    def names(self) -> tuple[str, ...]:
        """Every tool name, available or not."""
        return tuple(self._tools)

    @property
    def sourced(self) -> bool:
        """Whether a tool declares the sources its results come from (an `evidence` hook:
        documents, pages, records), so that an answer can be held to what they say."""
        return any(t.evidence is not None for t in self._tools.values())

    @property
    def first_look(self) -> FirstLook | None:
        """The first look its tools offer: a call of the first tool that declares one
        (`@tool(first_look=...)`), with the task's question; None when none does."""
        for t in self._tools.values():
            if t.first_look is not None:
                return FirstLook(tool=t.name, argument=t.first_look)
        return None

    def descriptions(self) -> dict[str, str]:
        """Each tool's name and description, for a planner's menu."""
        return {name: t.description for name, t in self._tools.items()}

    def signatures(self) -> dict[str, str]:
        """Each tool's parameters in one line ("key: string, limit?: integer"), for a planner that
        writes tool calls out."""
        found = {}
        for name, t in self._tools.items():
            schema = t.spec().parameters
            required = set(schema.get("required", ()))
            found[name] = ", ".join(
                f"{p}{'' if p in required else '?'}: {_type_of(spec)}"
                for p, spec in schema.get("properties", {}).items()
            )
        return found

    def get(self, name: str) -> Tool | None:
        """The tool called `name`, if there is one."""
        return self._tools.get(name)

    def menu(self, now: float, allowed: Collection[str] | None = None) -> tuple[ToolSpec, ...]:
        """The specs of the tools the model may call now: allowed, and not behind an open breaker."""
        return tuple(
            t.spec()
            for name, t in self._tools.items()
            if (allowed is None or name in allowed) and self._breakers[name].state(now) != "open"
        )

    def unavailable(self, now: float) -> dict[str, str]:
        """Tools behind an open breaker, with the reason, for the planner and the model."""
        return {
            name: self._breaker_message(name, now)
            for name, breaker in self._breakers.items()
            if breaker.state(now) == "open"
        }

    def prepare(
        self, call: ToolCall, now: float, allowed: Collection[str] | None = None
    ) -> PreparedCall | ToolResult:
        """Check a call's name, breaker and arguments; a problem becomes a failed result."""
        found = self._tools.get(call.name)
        if found is None or (allowed is not None and call.name not in allowed):
            valid = [spec.name for spec in self.menu(now, allowed)]
            return ToolResult.failure(
                call,
                "unknown_tool",
                f"Unknown tool {call.name!r}. Valid tools: {', '.join(valid) or '(none)'}.",
            )
        if self._breakers[call.name].state(now) == "open":
            return ToolResult.failure(call, "unavailable", self._breaker_message(call.name, now))
        try:
            args, bound = found.parse_bound(call.arguments)
        except ValueError as exc:
            kind: ErrorKind = (
                "malformed_arguments" if "not valid JSON" in str(exc) else "invalid_arguments"
            )
            schema = json.dumps(found.spec().parameters, separators=(",", ":"))
            return ToolResult.failure(
                call, kind, f"Error: {exc}. Call {call.name} again with arguments matching {schema}"
            )
        return PreparedCall(call=call, tool=found, args=args, bound=bound)

    def finish(
        self,
        prepared: PreparedCall,
        outcome: ToolOutcome,
        now: float,
        *,
        ran_with: dict[str, Any] | None = None,
    ) -> ToolResult:
        """Judge an outcome (success check), shape it, and update the tool's breaker; `ran_with`
        are the arguments the tool ran with when a person changed the model's (its evidence hook
        reads those, as it did for a result cut where the tool returned it)."""
        tool, call = prepared.tool, prepared.call
        error, content = outcome.error, f"Error: {tool.name} {outcome.message}"
        truncated = False
        cut = outcome.cut
        if outcome.ok:
            verdict = _judge(tool, outcome.value) if cut is None else cut.verdict
            if verdict is None or verdict is True:
                error = None
                content, truncated = shaped(
                    outcome.value,
                    fields=tool.fields,
                    max_chars=tool.max_chars,
                    total=None if cut is None else cut.chars,
                )
            else:
                reason = verdict if isinstance(verdict, str) else "the result failed its check"
                error, content = "rejected", f"Error: {tool.name}: {reason}"
        opened = False
        # A call the agent itself cut short (cancelled) says nothing about the tool's health.
        if error is None or error in _BREAKER_ERRORS:
            opened = self._breakers[tool.name].record(ok=error is None, now=now, error=content)
        if opened:
            content = f"{content}\n{self._breaker_message(tool.name, now)}"
        return ToolResult(
            call_id=call.id,
            name=tool.name,
            ok=error is None,
            content=content,
            error=error,
            duration_ms=outcome.duration_ms,
            evidence=_evidence(prepared, outcome, content, ran_with) if error is None else (),
            findings=_findings_of(tool, outcome) if error is None else (),
            breaker_opened=opened,
            header=observed(
                tool.name, prepared.args, sensitive=tool.sensitive, error=error,
                truncated=truncated, bound=prepared.bound,
            ),
        )  # fmt: skip

    def _breaker_message(self, name: str, now: float) -> str:
        breaker = self._breakers[name]
        return (
            f"Tool {name!r} is disabled for {breaker.retry_in(now):.0f}s after "
            f"{breaker.failures} consecutive failures (last: {breaker.last_error[:200]}). "
            "Use another tool or answer with what you have."
        )


Pairs = tuple[tuple[str, str], ...]
"""(source, excerpt) or (fact key, value) pairs."""


def judged(
    tool: Tool, args: dict[str, Any], value: Any
) -> tuple[bool | str | None, Pairs | None, Pairs]:
    """What a tool's own code makes of a whole result (the success check's verdict, the
    evidence hook's pairs, the declared facts), for an outcome that will carry only its start
    (see `agents._capped`). A rejected value has neither evidence nor facts."""
    verdict = _judge(tool, value)
    if verdict is not None and verdict is not True:
        # As `finish` reads a whole result's verdict: a reason, or any other value a failure.
        return (verdict if isinstance(verdict, str) else False), None, ()
    findings = tuple((f.key, f.value) for f in _findings(tool, value))
    return verdict, _hook_evidence(tool, args, value), findings


def _evidence(
    prepared: PreparedCall, outcome: ToolOutcome, content: str, ran_with: dict[str, Any] | None
) -> tuple[Evidence, ...]:
    """A successful result's evidence: the hook's pairs (judged on the whole value, for a cut
    one), else the call itself (with the arguments it ran with), cited with the start of its
    observation."""
    tool = prepared.tool
    cut = outcome.cut
    ran = prepared.args if ran_with is None else ran_with
    pairs = _hook_evidence(tool, ran, outcome.value) if cut is None else cut.evidence
    if pairs is not None:
        return tuple(Evidence(source=s, excerpt=e, tool=tool.name) for s, e in pairs)
    shown = json.dumps(redact(ran, tool.sensitive), ensure_ascii=False, sort_keys=True, default=str)
    excerpt = content[:_EXCERPT_CHARS]
    return (Evidence(source=f"{tool.name}({shown})", excerpt=excerpt, tool=tool.name),)


def _hook_evidence(tool: Tool, args: dict[str, Any], value: Any) -> Pairs | None:
    """The evidence hook's pairs; None without a hook, or when it raises (a broken hook must
    not cost the result: the call is cited instead)."""
    if tool.evidence is None:
        return None
    try:
        found = [
            Evidence(source=s, excerpt=e, tool=tool.name) for s, e in tool.evidence(args, value)
        ]
    except Exception:
        _log.exception("evidence_hook_failed", tool=tool.name)
        return None
    return tuple((e.source, e.excerpt) for e in found)


def _findings_of(tool: Tool, outcome: ToolOutcome) -> tuple[Finding, ...]:
    """A successful result's findings: of its value, or as judged on the whole of a cut one."""
    if outcome.cut is None:
        return _findings(tool, outcome.value)
    return tuple(Finding(key=k, value=v, tool=tool.name) for k, v in outcome.cut.findings)


def _judge(tool: Tool, value: Any) -> bool | str | None:
    """Run a tool's success check; a check that raises rejects the result, saying why."""
    if tool.success is None:
        return True
    try:
        return tool.success(value)
    except Exception as exc:
        return f"its success check raised {type(exc).__name__}: {str(exc)[:200]}"


def _findings(tool: Tool, value: Any) -> tuple[Finding, ...]:
    """The declared fact keys of a dict result; missing, empty and nested values are skipped."""
    if not tool.facts or not isinstance(value, dict):
        return ()
    return tuple(
        Finding(key=fact_key, value=str(value[key]), tool=tool.name)
        for key, fact_key in tool.facts.items()
        if value.get(key) not in (None, "") and not isinstance(value[key], dict | list)
    )


def _type_of(spec: Any) -> str:
    """A JSON schema's type in a word or two ("string", "array of integer", "any")."""
    if not isinstance(spec, dict):
        return "any"
    kind = spec.get("type")
    if kind == "array":
        return f"array of {_type_of(spec.get('items'))}"
    if isinstance(kind, str):
        return kind
    options = spec.get("anyOf") or spec.get("oneOf")
    if isinstance(options, list):
        return " or ".join(_type_of(o) for o in options)
    return "any"
