"""A sub-agent's events: what `Executor.run(events=...)` receives.

The text of a reply as the model writes it (what `TextDelta` carries), for a loop of one's own:
`wanting_text` marks the block whose consumer wants it, `wants_text` says whether it is wanted
here, and `streaming` makes a model call whose text goes to a `TextSink` as it arrives (or all at
once after the call, in the same pieces, when it was served from a journal or not streamed).
"""

from agents._events import (
    AgentEvent,
    ApprovalDecided,
    ApprovalRequested,
    BreakerOpened,
    IssueReported,
    LoopWarning,
    ModelCalled,
    TextDelta,
    ToolCalled,
)
from agents._streaming import TextSink, streaming, wanting_text, wants_text

__all__ = [
    "AgentEvent",
    "ApprovalDecided",
    "ApprovalRequested",
    "BreakerOpened",
    "IssueReported",
    "LoopWarning",
    "ModelCalled",
    "TextDelta",
    "TextSink",
    "ToolCalled",
    "streaming",
    "wanting_text",
    "wants_text",
]
