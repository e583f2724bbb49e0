"""Message types and the transcript of one agent.

A transcript is the isolated history of one sub-agent. Its one hard invariant, checked before every
model call: every tool call an assistant message makes is answered by exactly one tool message, and
no tool message answers a call that was never made. Providers reject transcripts that break it, and a
loop that lost a result would silently forget work.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from memory._errors import PaorError

__all__ = [
    "AssistantMessage",
    "Message",
    "SystemMessage",
    "ToolCall",
    "ToolMessage",
    "Transcript",
    "TranscriptError",
    "UserMessage",
]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ToolCall(_Frozen):
    """One tool call requested by the model.

    Attributes:
        id: The call id; its tool message answers it.
        name: The tool name, as the model spelled it (it may not exist).
        arguments: The raw JSON text of the arguments (it may be malformed).
    """

    id: str
    name: str
    arguments: str = "{}"


class SystemMessage(_Frozen):
    """Instructions that frame the whole conversation."""

    role: Literal["system"] = "system"
    content: str


class UserMessage(_Frozen):
    """A task, a piece of context, or feedback from the loop to the model."""

    role: Literal["user"] = "user"
    content: str


class AssistantMessage(_Frozen):
    """What the model said: text, tool calls, or both."""

    role: Literal["assistant"] = "assistant"
    content: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()


class ToolMessage(_Frozen):
    """The single result of one tool call, whatever happened to the call."""

    role: Literal["tool"] = "tool"
    tool_call_id: str
    name: str
    content: str
    ok: bool = True


Message = Annotated[
    SystemMessage | UserMessage | AssistantMessage | ToolMessage, Field(discriminator="role")
]
"""Any message of a transcript (a tagged union on `role`)."""


class TranscriptError(PaorError):
    """The transcript breaks the one-result-per-tool-call invariant (its place in paor's error tree
    is drawn in `agents.errors`)."""


class Transcript:
    """An append-only message history with an integrity check.

    Args:
        messages: Initial messages (usually a system message and the task).
    """

    __slots__ = ("_messages", "_open", "_problem", "_seen")

    def __init__(self, messages: Iterable[Message] = ()) -> None:
        self._messages: list[Message] = []
        # The invariant is tracked as messages arrive, so `check` before every model call costs
        # nothing however long the history grows.
        self._open: set[str] = set()
        self._seen: set[str] = set()
        self._problem: str | None = None
        self.extend(messages)

    def append(self, message: Message) -> None:
        """Add one message at the end."""
        self._track(len(self._messages), message)
        self._messages.append(message)

    def extend(self, messages: Iterable[Message]) -> None:
        """Add several messages at the end, in order."""
        for message in messages:
            self.append(message)

    @property
    def messages(self) -> tuple[Message, ...]:
        """A snapshot of the history."""
        return tuple(self._messages)

    def __len__(self) -> int:
        return len(self._messages)

    def __iter__(self) -> Iterator[Message]:
        return iter(tuple(self._messages))

    def unanswered_calls(self) -> list[ToolCall]:
        """Tool calls that have no tool message yet, in the order they were made."""
        answered = {m.tool_call_id for m in self._messages if isinstance(m, ToolMessage)}
        return [
            call
            for m in self._messages
            if isinstance(m, AssistantMessage)
            for call in m.tool_calls
            if call.id not in answered
        ]

    def check(self) -> None:
        """Raise `TranscriptError` unless every tool call has exactly one result, placed after it."""
        if self._problem is not None:
            raise TranscriptError(self._problem)
        if self._open:
            raise TranscriptError(f"calls {sorted(self._open)} unanswered at the end")

    def _track(self, index: int, message: Message) -> None:
        if self._problem is None:
            self._problem = self._violation(index, message)

    def _violation(self, index: int, message: Message) -> str | None:
        """What `message`, arriving at `index`, breaks (updating the open calls), if anything."""
        if isinstance(message, ToolMessage):
            if message.tool_call_id not in self._open:
                return (
                    f"message {index}: result for unknown or answered call {message.tool_call_id!r}"
                )
            self._open.discard(message.tool_call_id)
            return None
        if self._open:
            return f"message {index}: calls {sorted(self._open)} unanswered"
        if isinstance(message, AssistantMessage):
            ids = [call.id for call in message.tool_calls]
            if len(set(ids)) != len(ids) or self._seen.intersection(ids):
                return f"message {index}: duplicate tool call id"
            self._open = set(ids)
            self._seen.update(ids)
        return None
