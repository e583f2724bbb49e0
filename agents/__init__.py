"""paor agents: models, tools, guards, the effect boundary, and the executor sub-agent.

```python
from agents import Executor, OpenAIChatModel, tool

@tool(timeout=8.0)
async def search_docs(query: str, top_k: int = 5) -> list[dict[str, str]]:
    '''Search the documentation.'''
    ...

report = await Executor(model=OpenAIChatModel("gpt-4.1-mini"), tools=[search_docs]).run("task")
```

The front door holds what a user writes every day. The rest is in public submodules named for
their concept: `agents.errors` (the error tree), `agents.events` (a sub-agent's events),
`agents.models` (what a `ChatModel` is asked and answers), `agents.tools` (results, the toolbox,
shaping), `agents.guards` (breakers, the loop detector, `Stop`), `agents.effects` (the effect
boundary and the journaled effects), `agents.executor` (the prompt, the first look);
`agents.toolkits` (the corpus and research tools) and `agents.testing` (fake models and servers).
"""

from agents._errors import ConfigurationError, ToolFailure
from agents._executor import Executor
from agents._guards import AgentLimits, Budget
from agents._report import AcceptanceCheck, AgentReport, cites_evidence
from agents._tools import Tool, ToolContext, tool
from agents.models._endpoint import open_model
from agents.models._local import LocalModel
from agents.models._model import ChatModel, Usage
from agents.models._openai import OpenAIChatModel
from memory._errors import PaorError

__all__ = [
    "AcceptanceCheck",
    "AgentLimits",
    "AgentReport",
    "Budget",
    "ChatModel",
    "ConfigurationError",
    "Executor",
    "LocalModel",
    "OpenAIChatModel",
    "PaorError",
    "Tool",
    "ToolContext",
    "ToolFailure",
    "Usage",
    "cites_evidence",
    "open_model",
    "tool",
]
