"""A sub-agent's events: what `Executor.run(events=...)` receives."""

from agents._events import (
    AgentEvent,
    ApprovalDecided,
    ApprovalRequested,
    BreakerOpened,
    EventSink,
    LoopWarning,
    ModelCalled,
    TextDelta,
    ToolCalled,
)

__all__ = [
    "AgentEvent",
    "ApprovalDecided",
    "ApprovalRequested",
    "BreakerOpened",
    "EventSink",
    "LoopWarning",
    "ModelCalled",
    "TextDelta",
    "ToolCalled",
]
