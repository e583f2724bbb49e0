"""OpenTelemetry spans of a run, named by the GenAI semantic conventions (an optional extra).

paor is an instrumented library: its spans go to the global tracer provider
(`opentelemetry.trace.get_tracer("paor")`), so an application that configures OpenTelemetry gets
them and one that does not pays a cheap check per effect. Without `opentelemetry-api`, or with
no SDK provider set (the API's default proxy), no span is made at all.

    invoke_agent run                 the run (gen_ai.conversation.id: the run id)
    ├── paor.plan / paor.replan      the planner, with the plan's version and subtask ids
    │   └── chat <model>             each model call: model, tokens, finish reason, response id
    ├── invoke_agent <subtask>       each sub-agent (concurrent ones side by side)
    │   ├── chat <model>
    │   └── execute_tool <tool>      each tool call (an error status when it fails)
    └── paor.synthesis
        └── chat <model>

The effect boundary makes the model, tool and sub-agent spans (`LiveEffects`, and a journal for
what it serves back, marked `paor.replayed`); the run loop makes the run, plan and synthesis
spans. Prompts, tool arguments and results are captured only when asked (`capture_content`, or
`OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`), and always pass paor's redaction.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from importlib import metadata
from typing import TYPE_CHECKING, Any

from agents._tracing import redact, redact_text
from agents.telemetry._otlp import CLOSE_TIMEOUT, OtlpExport, export_otlp

if TYPE_CHECKING:
    from opentelemetry.trace import Span, Tracer

    from agents._effects import AgentCall, EffectSite
    from agents._report import AgentReport
    from agents._tools import Tool, ToolContext, ToolOutcome
    from agents.models._model import ChatModel, ModelRequest, ModelResponse
    from memory import Message

try:
    from opentelemetry import trace as otel
except ImportError:  # the extra is not installed: every span helper is a no-op
    otel = None  # type: ignore[assignment]

__all__ = [
    "CAPTURE_ENV",
    "CLOSE_TIMEOUT",
    "TRACER_NAME",
    "OtlpExport",
    "agent_done",
    "agent_span",
    "capture_content",
    "capturing",
    "chat_done",
    "chat_span",
    "export_otlp",
    "failed",
    "finished",
    "quiet",
    "span",
    "tool_done",
    "tool_span",
    "tracer",
]

TRACER_NAME = "paor"
"""The instrumentation scope of paor's spans."""
CAPTURE_ENV = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
"""The environment variable (shared with OpenTelemetry's GenAI instrumentations) that turns
content capture on: "true"."""

_NULL: contextlib.nullcontext[None] = contextlib.nullcontext()
_quiet: ContextVar[bool] = ContextVar("paor_telemetry_quiet", default=False)
_agent: ContextVar[bool] = ContextVar("paor_telemetry_agent", default=False)  # in its span
_capture: bool | None = None  # None: follow CAPTURE_ENV
_live = False  # a real provider was seen (one cannot be unset: the answer stays)
_tracer: Tracer | None = None
_FROM_ENV = "OTEL_PYTHON_TRACER_PROVIDER" in os.environ


def _version() -> str:
    try:
        return metadata.version("paor")
    except metadata.PackageNotFoundError:
        return "0"


def tracer() -> Tracer | None:
    """paor's tracer, or None when spans would go nowhere (no API, no SDK provider, quiet)."""
    global _live, _tracer
    if not _live:
        if otel is None or _unset() or not _provided():
            return None
        _live = True
        _tracer = otel.get_tracer(TRACER_NAME, _version())
    return None if _quiet.get() else _tracer


def _unset() -> bool:
    """Whether no provider is set, at the cost of a module attribute read. The API's own check
    (`get_tracer_provider`) reads the environment each time: a few hundred nanoseconds, on
    every effect of a run nobody traces. Where the API's private global is not there, or the
    environment names a provider (which the API loads on its first `get_tracer_provider`), the
    public check decides."""
    return not _FROM_ENV and getattr(otel, "_TRACER_PROVIDER", True) is None


def _provided() -> bool:
    assert otel is not None
    provider = otel.get_tracer_provider()
    return not isinstance(provider, otel.ProxyTracerProvider | otel.NoOpTracerProvider)


@contextlib.contextmanager
def quiet() -> Iterator[None]:
    """No paor span inside this block (a Temporal workflow: its replays would repeat them)."""
    token = _quiet.set(True)
    try:
        yield
    finally:
        _quiet.reset(token)


def capture_content(on: bool | None = True) -> None:
    """Put prompts, tool arguments and results on spans (redacted), or not.

    Args:
        on: True or False; None follows `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`
            (off unless it is "true").
    """
    global _capture
    _capture = on


def capturing() -> bool:
    """Whether content goes on spans now."""
    if _capture is not None:
        return _capture
    return os.environ.get(CAPTURE_ENV, "").strip().lower() in ("true", "1")


@dataclass(frozen=True, slots=True)
class Scope:
    """The span a `span` block opened, for what is known at its end (no span when tracing is off:
    then both methods do nothing)."""

    current: Span | None

    def finish(self, attributes: dict[str, Any]) -> None:
        """Set attributes known at the end (None values are skipped)."""
        finished(self.current, attributes)

    def fail(self, kind: str, description: str = "") -> None:
        """Mark the span failed: error status and `error.type`."""
        failed(self.current, kind, description)


_OFF = Scope(None)


@contextlib.contextmanager
def span(
    name: str,
    attributes: dict[str, Any],
    *,
    content: dict[str, str] | None = None,
    client: bool = False,
) -> Iterator[Scope]:
    """A block in a current span; it yields the span's `Scope`.

    `content` holds attributes that quote what a run was given or wrote (a goal, a reason): they
    go on the span redacted, and only while content is captured (`capture_content`). An
    exception leaving the block sets the span's error status and `error.type`; a cancellation
    (not an `Exception`) ends it as it is, marked `paor.cancelled`.
    """
    found = tracer()
    if found is None:
        yield _OFF
        return
    if content and capturing():
        attributes = {**attributes, **{key: redact_text(v) for key, v in content.items()}}
    with _current(found, name, attributes, client) as current:
        yield Scope(current)


def _traced(found: Tracer | None, name: str, attributes: dict[str, Any], client: bool) -> Any:
    return _NULL if found is None else _current(found, name, attributes, client)


@contextlib.contextmanager
def _current(tracer: Tracer, name: str, attributes: dict[str, Any], client: bool) -> Iterator[Span]:
    assert otel is not None
    kind = otel.SpanKind.CLIENT if client else otel.SpanKind.INTERNAL
    with tracer.start_as_current_span(
        name,
        kind=kind,
        attributes=attributes,
        record_exception=False,
        set_status_on_exception=False,
    ) as current:
        try:
            yield current
        except Exception as exc:
            current.record_exception(exc)
            failed(current, type(exc).__qualname__, str(exc))
            raise
        except BaseException:
            current.set_attribute("paor.cancelled", True)
            raise


def failed(current: Span | None, kind: str, description: str = "") -> None:
    """Mark a span as failed: error status and `error.type`."""
    if current is None or otel is None:
        return
    current.set_attribute("error.type", kind)
    current.set_status(otel.Status(otel.StatusCode.ERROR, description[:500] or None))


def finished(current: Span | None, attributes: dict[str, Any]) -> None:
    """Set attributes known at the end (None values are skipped)."""
    if current is None:
        return
    for key, value in attributes.items():
        if value is not None:
            current.set_attribute(key, value)


def _site(site: EffectSite) -> dict[str, Any]:
    return {
        "gen_ai.conversation.id": site.run_id,
        "paor.run.id": site.run_id,
        "paor.agent.id": site.agent_id,
        "paor.effect.seq": site.seq,
        "paor.step": site.step,
    }


def chat_span(
    site: EffectSite, model: ChatModel, request: ModelRequest, *, replayed: bool = False
) -> Any:
    """The `chat <model>` span of one model call (see `chat_done`)."""
    found = tracer()
    if found is None:
        return _NULL
    attributes = {
        "gen_ai.operation.name": "chat",
        "gen_ai.request.model": model.name,
        "paor.request.purpose": request.purpose,
        **_site(site),
    }
    if request.max_output_tokens is not None:
        attributes["gen_ai.request.max_tokens"] = request.max_output_tokens
    if replayed:
        attributes["paor.replayed"] = True
    if capturing():
        attributes["gen_ai.input.messages"] = _messages(request.messages)
    return _traced(found, f"chat {model.name}", attributes, True)


def chat_done(current: Span | None, response: ModelResponse) -> None:
    """Put what the model answered on its chat span."""
    if current is None:
        return
    usage = response.usage
    reason = response.finish_reason
    finished(
        current,
        {
            "gen_ai.response.model": response.model or None,
            "gen_ai.response.id": response.response_id,
            "gen_ai.response.finish_reasons": None if reason is None else (reason,),
            "gen_ai.usage.input_tokens": usage.prompt_tokens,
            "gen_ai.usage.output_tokens": usage.completion_tokens,
            "gen_ai.usage.cache_read.input_tokens": usage.cached_tokens or None,
            "paor.protocol": response.protocol,
        },
    )
    if capturing():
        current.set_attribute("gen_ai.output.messages", _messages((response.message,)))


def tool_span(
    site: EffectSite, tool: Tool, args: dict[str, Any], ctx: ToolContext, *, replayed: bool = False
) -> Any:
    """The `execute_tool <tool>` span of one tool call (see `tool_done`)."""
    found = tracer()
    if found is None:
        return _NULL
    attributes = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": tool.name,
        "gen_ai.tool.type": "function",
        "gen_ai.tool.call.id": ctx.call_id,
        **_site(site),
    }
    if replayed:
        attributes["paor.replayed"] = True
    if capturing():
        attributes["gen_ai.tool.call.arguments"] = _json(redact(args, tool.sensitive))
    return _traced(found, f"execute_tool {tool.name}", attributes, False)


def tool_done(current: Span | None, outcome: ToolOutcome) -> None:
    """Put a tool's outcome on its span: an error status when it failed."""
    if current is None:
        return
    current.set_attribute("paor.tool.ok", outcome.ok)
    if not outcome.ok:
        failed(current, outcome.error or "failed", outcome.message)
    if capturing():
        shown = outcome.value if outcome.ok else outcome.message
        current.set_attribute("gen_ai.tool.call.result", redact_text(_json(shown)))


def agent_span(call: AgentCall) -> Any:
    """The `invoke_agent <agent>` span of one sub-agent (see `agent_done`)."""
    found = tracer()
    if found is None:
        return _NULL
    attributes = {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": call.agent_id,
        "gen_ai.agent.id": call.agent_id,
        "gen_ai.conversation.id": call.run_id,
        "paor.run.id": call.run_id,
    }
    if capturing():
        attributes["gen_ai.input.messages"] = _text_messages("user", call.task)
    return _agent_scope(_current(found, f"invoke_agent {call.agent_id}", attributes, False))


@contextlib.contextmanager
def _agent_scope(inner: contextlib.AbstractContextManager[Span]) -> Iterator[Span]:
    """`inner`, the agent's span, known as such while it is open (see `in_agent`)."""
    token = _agent.set(True)
    try:
        with inner as span:
            yield span
    finally:
        _agent.reset(token)


def in_agent() -> bool:
    """Whether an agent's `invoke_agent` span is open here (a lone executor opens its own)."""
    return _agent.get()


def agent_done(current: Span | None, report: AgentReport) -> None:
    """Put a sub-agent's report on its span (an error status when it failed)."""
    if current is None:
        return
    finished(
        current,
        {
            "paor.report.status": report.status,
            "paor.stop_reason": report.stop_reason,
            "paor.steps": report.steps,
            "gen_ai.usage.input_tokens": report.usage.prompt_tokens,
            "gen_ai.usage.output_tokens": report.usage.completion_tokens,
        },
    )
    if report.status == "failed":
        failed(current, "failed", "; ".join(report.notes[-2:]))
    if capturing():
        current.set_attribute("gen_ai.output.messages", _text_messages("assistant", report.answer))


def _messages(messages: Sequence[Message]) -> str:
    """Messages in the GenAI conventions' JSON shape (role and parts), redacted."""
    return _json([_message(m) for m in messages])


def _message(message: Message) -> dict[str, Any]:
    parts: list[dict[str, Any]] = []
    if message.role == "tool":
        parts.append(
            {
                "type": "tool_call_response",
                "id": message.tool_call_id,
                "response": redact_text(message.content),
            }
        )
    elif message.content:
        parts.append({"type": "text", "content": redact_text(message.content)})
    for call in getattr(message, "tool_calls", ()):
        parts.append(
            {"type": "tool_call", "id": call.id, "name": call.name, "arguments": _args(call)}
        )
    return {"role": message.role, "parts": parts}


def _args(call: Any) -> Any:
    try:
        args = json.loads(call.arguments)
    except ValueError:
        return redact_text(call.arguments)
    return redact(args) if isinstance(args, dict) else args


def _text_messages(role: str, text: str) -> str:
    return _json([{"role": role, "parts": [{"type": "text", "content": redact_text(text)}]}])


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)
