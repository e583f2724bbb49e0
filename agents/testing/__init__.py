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
from agents.testing import FakeOpenAIServer, ServerAction

script = [ServerAction.tool_calls([("search", {"query": "x"})]),
          ServerAction.status(429, headers={"Retry-After": "0.1"}),
          ServerAction.text("done")]
async with FakeOpenAIServer(script) as server:
    model = OpenAIChatModel(base_url=server.base_url, api_key="test")
    report = await Executor(model, tools=[search]).run("task")
server.assert_complete()
assert server.requests[0]["tools"]
```

A whole run, each request answered by what it is for (`ModelRequest.purpose`), the planner's
replies (`orchestrator.testing`) checked against the planner's own schemas when they are built:

```python
from agents.testing import by_purpose, task_of
from orchestrator.testing import plan_reply, subtask, synthesis_reply

model = FunctionModel(by_purpose(
    plan=plan_reply(subtask("a", "Find the population of Lyon.")),
    step=lambda request: f"Found: {task_of(request)}",
    synthesis=synthesis_reply("Lyon has about 520,000 people."),
), tokens="estimated")
result = await Orchestrator(model).run("How many people live in Lyon?")
```

`tokens="estimated"` makes a fake model report the tokens a real endpoint would count for the
request and the reply (the default reports 10 and 5 a turn), so token limits are hit as live.
Installed, paor is also a pytest plugin (see `agents.testing._pytest_plugin`): real model requests
fail unless a test is marked `paor_allow_model_requests`, and the fixtures `paor_scripted_model`,
`paor_fake_openai` and `paor_journal` are there to use.
"""

from agents.models._http import block_model_requests
from agents.testing._actions import (
    Completion,
    ServerAction,
    TokenUsage,
)
from agents.testing._replies import by_purpose, observation, task_of
from agents.testing._scripted import FunctionModel, ScriptedModel, Turn, call, calls, reply
from agents.testing._server import FakeOpenAIServer

__all__ = [
    "Completion",
    "FakeOpenAIServer",
    "FunctionModel",
    "ScriptedModel",
    "ServerAction",
    "TokenUsage",
    "Turn",
    "block_model_requests",
    "by_purpose",
    "call",
    "calls",
    "observation",
    "reply",
    "task_of",
]
