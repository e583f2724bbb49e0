"""MCP tools on Temporal: the worker holds the server's connection, and the run's sub-agents (child
workflows, their tool calls activities) call it like any tool the worker serves."""

from __future__ import annotations

import sys

import pytest

from agents.mcp import MCPServer
from agents.testing import call, observation, reply
from orchestrator.temporal import Registry, TemporalBackend, connect
from tests._team import Team, plan, script, sub
from tests.test_mcp import SERVER
from tests.test_temporal import anyio_backend, server  # noqa: F401  (fixtures)

pytestmark = [pytest.mark.slow, pytest.mark.anyio]


async def test_sub_agents_on_temporal_share_the_worker_s_mcp_server(
    server: str,  # noqa: F811
) -> None:
    team = Team(
        [plan(sub("a"), sub("b"))],
        {
            "a": script(call("pid"), reply("A [pid]")),
            "b": script(call("pid"), call("echo", text="on temporal"), reply("B [echo]")),
        },
    )
    client = await connect(server)
    async with MCPServer.stdio("t", sys.executable, [SERVER], allow=["pid", "echo"]) as mcp:
        registry = Registry.of({"default": team.model}, mcp.tools)
        async with registry.worker(client, task_queue="mcp", sticky_timeout=1.0):
            result = await TemporalBackend(client=client, task_queue="mcp").run(
                "g", tools=["pid", "echo"], run_id="mcp1"
            )
        assert mcp.restarts == 0
    assert result.status == "complete"
    seen = [
        observation(str(m.content))
        for r in team.model.requests
        for m in r.messages
        if m.role == "tool"
    ]
    pids = {text for text in seen if text.startswith('{"result": ') and "echo" not in text}
    assert len(pids) == 1  # one server process for both sub-agents
    assert '{"result": "echo: on temporal"}' in seen
