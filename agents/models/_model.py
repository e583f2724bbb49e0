"""The model interface: requests, responses, usage, and the `ChatModel` protocol.

Every model, real or fake, is reached through `ChatModel.complete`. A response is always an
`AssistantMessage`: the adapters translate native tool calls and JSON decisions into it, so the loops
never see a wire format.
"""

from __future__ import annotations

from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict

from memory import AssistantMessage, Message

__all__ = [
    "ChatModel",
    "ModelRequest",
    "ModelResponse",
    "OutputSchema",
    "RequestPurpose",
    "ToolSpec",
    "Usage",
    "WireProtocol",
]

WireProtocol = Literal["tools", "text", "json"]
"""How a reply's decision came back: native tool calls, calls recovered from the message text, or
a schema-constrained JSON decision."""


RequestPurpose = Literal["plan", "replan", "step", "wrap_up", "output", "synthesis", "summary"]
"""What a model request is for: the planner's first plan, a replan, a sub-agent's next step, its
wrap-up (the last tool-less call when it is cut short), its answer written as its output type's
object, the final synthesis, or a compaction summary."""


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Usage(_Frozen):
    """Tokens and requests spent. Adds up with `+`.

    Attributes:
        requests: Model requests made.
        prompt_tokens: Input tokens, cached ones included.
        completion_tokens: Output tokens.
        cached_tokens: Input tokens served from the provider's prompt cache.
        tool_calls: Tool calls made.
        cost: Dollars the model calls cost, under the run's price table (`agents.models.Price`; 0 for
            a model it has no price for).
    """

    requests: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0
    tool_calls: int = 0
    cost: float = 0.0

    @property
    def total_tokens(self) -> int:
        """Prompt plus completion tokens."""
        return self.prompt_tokens + self.completion_tokens

    def __add__(self, other: Usage) -> Usage:
        # Validated again: pydantic-core checks six numbers faster (about 2 us) than
        # `model_construct`'s Python path builds the model unchecked (about 3.5 us).
        return Usage(
            requests=self.requests + other.requests,
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
            cached_tokens=self.cached_tokens + other.cached_tokens,
            tool_calls=self.tool_calls + other.tool_calls,
            cost=self.cost + other.cost,
        )


class ToolSpec(_Frozen):
    """What the model is told about one tool.

    Attributes:
        name: The tool's name.
        description: What it does and when to use it.
        parameters: The JSON schema of its arguments (an object schema).
    """

    name: str
    description: str
    parameters: dict[str, Any]


class OutputSchema(_Frozen):
    """A JSON schema the final answer must follow (structured output).

    Attributes:
        name: A short identifier for the schema.
        schema_: The JSON schema of the answer object.
    """

    name: str
    schema_: dict[str, Any]


class ModelRequest(_Frozen):
    """One request to a chat model.

    Attributes:
        messages: The transcript so far.
        tools: The tools the model may call now (empty: it must answer).
        output: If set, the answer must be a JSON object matching this schema.
        max_output_tokens: A cap on the completion length.
        citable: Sources a final answer must cite one of (gathered so far). Where the protocol
            constrains the reply (JSON decisions), the answer names them from this list.
        purpose: What the request is for: the planner's first plan ("plan"), a replan, a
            sub-agent's next step ("step") or its tool-less wrap-up ("wrap_up"), its answer as
            its output type's object ("output"), the synthesis, or a compaction summary; fake
            models route on it.
            It is not part of the request's serialized form: adapters never send it, and a
            journal's request digest stays what it was before the field existed.
    """

    messages: tuple[Message, ...]
    tools: tuple[ToolSpec, ...] = ()
    output: OutputSchema | None = None
    max_output_tokens: int | None = None
    citable: tuple[str, ...] = ()
    # Excluded from dumps: the journal digests `model_dump()`, and records made before this
    # field existed must still match (see agents/_journaled.py).
    purpose: RequestPurpose = "step"


class ModelResponse(_Frozen):
    """One reply from a chat model.

    Attributes:
        message: The reply, with tool calls in the native form whatever the protocol.
        usage: Tokens spent on this request.
        model: The model name the server reported.
        protocol: How the decision came back, if the adapter knows (see `WireProtocol`).
        finish_reason: Why the model stopped ("stop", "tool_calls", "length"...), if the server
            said.
        response_id: The server's id of the completion, if it gave one.
        text_chunks: The sizes of the pieces the reply's text arrived in, when it was streamed
            (a replay hands the text out in the same pieces).
    """

    message: AssistantMessage
    usage: Usage = Usage(requests=1)
    model: str = ""
    protocol: WireProtocol | None = None
    finish_reason: str | None = None
    response_id: str | None = None
    text_chunks: tuple[int, ...] = ()


@runtime_checkable
class ChatModel(Protocol):
    """Anything that turns a `ModelRequest` into a `ModelResponse`.

    Implementations raise `ModelRetryableError` for transient failures they gave up retrying,
    `ModelRequestError` for refused requests, and `MalformedResponse` for unparseable replies.
    """

    @property
    def name(self) -> str:
        """A short label for traces."""
        ...

    async def complete(self, request: ModelRequest) -> ModelResponse:
        """Answer one request."""
        ...
