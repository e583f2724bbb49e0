"""Test doubles: scripted and function models, a fake OpenAI server, and a request blocker.

```python
from agents.testing import ScriptedModel, call, reply

model = ScriptedModel([call("search", query="x"), reply("done [search]")])
report = await Executor(model, tools=[search]).run("task")
model.assert_complete()
assert model.requests[1].messages[-1].role == "tool"
```

Over real HTTP, with the real `openai` client:

```python
from agents.testing import FakeOpenAIServer, status, text, tool_calls

script = [tool_calls([("search", {"query": "x"})]), status(429, headers={"Retry-After": "0.1"}),
          text("done")]
async with FakeOpenAIServer(script) as server:
    model = OpenAIChatModel(base_url=server.base_url, api_key="test")
    report = await Executor(model, tools=[search]).run("task")
server.assert_complete()
assert server.requests[0]["tools"]
```
"""

from agents._openai import block_model_requests
from agents.testing._actions import (
    Completion,
    Hang,
    MalformedBody,
    ServerAction,
    ServerScript,
    Status,
    TokenUsage,
    hang,
    json_content,
    malformed_body,
    status,
    text,
    tool_calls,
)
from agents.testing._loopback import LoopbackServer
from agents.testing._scripted import FunctionModel, ScriptedModel, Turn, call, calls, reply
from agents.testing._server import FakeOpenAIServer

__all__ = [
    "Completion",
    "FakeOpenAIServer",
    "FunctionModel",
    "Hang",
    "LoopbackServer",
    "MalformedBody",
    "ScriptedModel",
    "ServerAction",
    "ServerScript",
    "Status",
    "TokenUsage",
    "Turn",
    "block_model_requests",
    "call",
    "calls",
    "hang",
    "json_content",
    "malformed_body",
    "reply",
    "status",
    "text",
    "tool_calls",
]
