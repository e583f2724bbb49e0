"""The fields of a chat completion that paor reads (anything else is ignored), its usage, and
how long it may be.

`OUTPUT_TOKENS` is the one table of completion lengths: each request purpose gets a bound that
fits what it asks for, so a model that runs on (a small one that forgot to stop, or loops) stops
at a length that purpose never needs, instead of at the end of its context. A request's own
`max_output_tokens`, then the model's configured one, win over it (`output_tokens`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from types import MappingProxyType

from pydantic import BaseModel, ConfigDict, ValidationError

from agents._errors import MalformedResponse
from agents.models._decisions import parse_decision
from agents.models._model import ModelRequest, RequestPurpose, Usage, WireProtocol
from agents.models._textcalls import recover_calls
from agents.models._wire import FINAL_TOOL
from memory import AssistantMessage, ToolCall

__all__ = [
    "OUTPUT_TOKENS",
    "Completion",
    "TokenUsage",
    "completion_of",
    "message_of",
    "output_tokens",
    "usage_of",
]

OUTPUT_TOKENS: Mapping[RequestPurpose, int] = MappingProxyType(
    {
        # A tool call is tens of tokens; a sub-agent's answer is a paragraph or two.
        "step": 512,
        "wrap_up": 512,  # the same answer, from what was gathered when the agent was cut short
        "output": 1024,  # that answer as a JSON object of the agent's output type
        "plan": 1024,  # a few subtasks as JSON, a sentence or two each
        "replan": 1024,
        "synthesis": 1536,  # the final report's prose, over every agent's findings
        "summary": 512,  # a compaction summary (the executor usually sets its own bound)
    }
)
"""The most tokens a completion may hold, by what the request is for (`ModelRequest.purpose`)."""


def output_tokens(request: ModelRequest, configured: int | None = None) -> int:
    """The completion bound `request` is sent with: its own, else the model's `configured` one,
    else its purpose's (`OUTPUT_TOKENS`)."""
    return request.max_output_tokens or configured or OUTPUT_TOKENS[request.purpose]


class _Wire(BaseModel):
    """The fields of a chat completion that paor reads; anything else is ignored."""

    model_config = ConfigDict(frozen=True, extra="ignore")


class Function(_Wire):
    name: str
    arguments: str | None = None


class Call(_Wire):
    id: str | None = None
    function: Function


class Message(_Wire):
    content: str | None = None
    tool_calls: list[Call] | None = None


class Choice(_Wire):
    message: Message
    finish_reason: str | None = None


class PromptDetails(_Wire):
    cached_tokens: int | None = None


class TokenUsage(_Wire):
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    prompt_tokens_details: PromptDetails | None = None


class Completion(_Wire):
    id: str | None = None
    choices: list[Choice]
    usage: TokenUsage | None = None
    model: str | None = None


def completion_of(data: object) -> Completion:
    """The completion in a response body (decoded JSON; a body sent as another type comes as text)."""
    if isinstance(data, dict) and data.get("choices"):
        try:
            return Completion.model_validate(data)
        except ValidationError as exc:
            where = ".".join(str(p) for p in exc.errors()[0]["loc"])
            raise MalformedResponse(
                f"the completion is malformed at {where}", raw=_excerpt(data)
            ) from None
    raise MalformedResponse("the server returned no choices", raw=_excerpt(data))


def _excerpt(data: object) -> str:
    return (data if isinstance(data, str) else json.dumps(data))[:2000]


def usage_of(usage: TokenUsage | None) -> Usage:
    if usage is None:
        return Usage(requests=1)
    details = usage.prompt_tokens_details
    return Usage(
        requests=1,
        prompt_tokens=usage.prompt_tokens or 0,
        completion_tokens=usage.completion_tokens or 0,
        cached_tokens=(details.cached_tokens or 0) if details else 0,
    )


def message_of(
    completion: Completion, request: ModelRequest, protocol: str
) -> tuple[AssistantMessage, WireProtocol]:
    """What the completion's first choice says, and how its tool calls came: a JSON decision
    (`protocol` "json"), native calls, or calls written as text and recovered (`_textcalls`)."""
    wire = completion.choices[0].message
    text = wire.content or ""
    if protocol == "json" and request.output is None:
        return parse_decision(text), "json"
    calls = tuple(
        ToolCall(id=c.id or "", name=c.function.name, arguments=c.function.arguments or "{}")
        for c in (wire.tool_calls or ())
    )
    if request.output is not None:
        # A typed answer asked for as a final tool's arguments (`_wire.output_kwargs`): they are
        # the answer's text, as a `response_format`'s reply would be.
        final = next((c for c in calls if c.name == FINAL_TOOL), None)
        if final is not None:
            return AssistantMessage(content=final.arguments), "tools"
        if request.tools == () and FINAL_TOOL in text:
            # A template the server cannot parse calls from: the call is written as text.
            final = _final_written(text)
            if final is not None:
                return AssistantMessage(content=final.arguments), "text"
    message = AssistantMessage(content=wire.content, tool_calls=calls)
    how: WireProtocol = "json" if protocol == "json" else "tools"
    if not calls and request.tools and request.output is None and text.strip():
        recovered = recover_calls(text, {t.name for t in request.tools})
        if recovered is not None and recovered.tool_calls:
            return recovered, "text"
        if recovered is not None:
            return recovered, how
    return message, how


def _final_written(text: str) -> ToolCall | None:
    """The final tool's call written in a reply's text, if one is there to read."""
    try:
        recovered = recover_calls(text, {FINAL_TOOL})
    except MalformedResponse:
        return None
    calls = () if recovered is None else recovered.tool_calls
    return next((c for c in calls if c.name == FINAL_TOOL), None)
