"""A sub-agent's events: what `Executor.run(events=...)` receives.

The text of a reply as the model writes it (what `TextDelta` carries: `Executor.run(text=True)`),
for a loop of one's own: `streaming` makes a model call whose text goes to a `TextSink` as it
arrives (or all at once after the call, in the same pieces, when it was served from a journal or
not streamed).
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
from agents._streaming import TextSink, streaming

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
]
