"""What paor remembers: transcripts (and, later, their compaction, facts and the durable journal)."""

from memory._transcript import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolCall,
    ToolMessage,
    Transcript,
    TranscriptError,
    UserMessage,
)

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
