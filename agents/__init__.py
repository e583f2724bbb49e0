"""paor agents: models, tools, guards, the effect boundary, and the executor sub-agent.

```python
from agents import Executor, OpenAIChatModel, tool

@tool(timeout=8.0)
async def search_docs(query: str, top_k: int = 5) -> list[dict[str, str]]:
    '''Search the documentation.'''
    ...

report = await Executor(model=OpenAIChatModel("gpt-4.1-mini"), tools=[search_docs]).run("task")
```
"""

from agents._breaker import BreakerState, CircuitBreaker
from agents._effects import AgentCall, Effects, EffectSite, LiveEffects
from agents._errors import (
    ConfigurationError,
    MalformedResponse,
    ModelError,
    ModelRequestError,
    ModelRetryableError,
    PaorError,
    PlanError,
    ReplayDrift,
    ReplayedCancellation,
    RunError,
    ToolFailure,
)
from agents._events import (
    AgentEvent,
    BreakerOpened,
    EventSink,
    LoopWarning,
    ModelCalled,
    ToolCalled,
)
from agents._executor import DEFAULT_INSTRUCTIONS, Executor, FirstLook
from agents._guards import Budget, Limits, LoopDetector, StopReason
from agents._journaled import Drift, JournaledEffects, JournalMode, RecordSink
from agents._local import LocalModel, local_model_available, open_model
from agents._model import ChatModel, ModelRequest, ModelResponse, OutputSchema, ToolSpec, Usage
from agents._openai import DecisionProtocol, OpenAIChatModel
from agents._report import AcceptanceCheck, AgentReport, ReportStatus, cites_evidence
from agents._shaping import not_empty, shape
from agents._stop import Stop
from agents._toolbox import Evidence, Finding, Toolbox, ToolResult
from agents._tools import Tool, ToolContext, ToolOutcome, tool
from memory import JournalError, RunLocked

__all__ = [
    "DEFAULT_INSTRUCTIONS",
    "AcceptanceCheck",
    "AgentCall",
    "AgentEvent",
    "AgentReport",
    "BreakerOpened",
    "BreakerState",
    "Budget",
    "ChatModel",
    "CircuitBreaker",
    "ConfigurationError",
    "DecisionProtocol",
    "Drift",
    "EffectSite",
    "Effects",
    "EventSink",
    "Evidence",
    "Executor",
    "Finding",
    "FirstLook",
    "JournalError",
    "JournalMode",
    "JournaledEffects",
    "Limits",
    "LiveEffects",
    "LocalModel",
    "LoopDetector",
    "LoopWarning",
    "MalformedResponse",
    "ModelCalled",
    "ModelError",
    "ModelRequest",
    "ModelRequestError",
    "ModelResponse",
    "ModelRetryableError",
    "OpenAIChatModel",
    "OutputSchema",
    "PaorError",
    "PlanError",
    "RecordSink",
    "ReplayDrift",
    "ReplayedCancellation",
    "ReportStatus",
    "RunError",
    "RunLocked",
    "Stop",
    "StopReason",
    "Tool",
    "ToolCalled",
    "ToolContext",
    "ToolFailure",
    "ToolOutcome",
    "ToolResult",
    "ToolSpec",
    "Toolbox",
    "Usage",
    "cites_evidence",
    "local_model_available",
    "not_empty",
    "open_model",
    "shape",
    "tool",
]
