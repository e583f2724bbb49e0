"""`--mcp FILE` on the command line: the agents of `research` and `batch` get the tools of the
servers in a Claude Desktop-style file (the SDK-built test server over stdio), and `replay`
rebuilds them from the recorded run."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from agents.testing import FakeOpenAIServer, ServerAction, observation
from tests.test_cli import (  # the fixtures are shared with the rest of the CLI's tests
    GEN,
    USAGE,
    _endpoint,
    batch_args,
    docs,
    paor,
    research_args,
    result_lines,
    role_of,
    write_tasks,
)
from tests.test_mcp import SERVER

pytestmark = pytest.mark.anyio

__all__ = ["_endpoint", "docs"]


@pytest.fixture
def mcp_file(tmp_path: Path) -> Path:
    path = tmp_path / "mcp.json"
    config = {"mcpServers": {"test": {"command": sys.executable, "args": [SERVER]}}}
    path.write_text(json.dumps(config), encoding="utf-8")
    return path


def _tool_results(server: FakeOpenAIServer) -> list[str]:
    return [
        observation(str(m["content"]))
        for body in server.requests
        for m in body["messages"]
        if m["role"] == "tool"
    ]


def echoing_researcher(body: dict[str, Any]) -> ServerAction:
    """One sub-question; its agent calls the MCP server's `echo` once, then answers."""
    who = role_of(body)
    if who == "plan":
        return ServerAction.json_content({"subtasks": [{"id": "gen", "goal": GEN}]}, usage=USAGE)
    if who == "writer":
        return ServerAction.text("Generators pause at yield [generators].", usage=USAGE)
    if sum(m["role"] == "assistant" for m in body["messages"]) == 0:
        assert "echo" in {t["function"]["name"] for t in body["tools"]}
        return ServerAction.tool_calls([("echo", {"text": "over MCP"})], usage=USAGE)
    return ServerAction.text("A generator pauses at each yield [generators].", usage=USAGE)


async def test_research_with_mcp_tools_records_and_replays_them(
    docs: Path, tmp_path: Path, mcp_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    journal, out = tmp_path / "journal.db", tmp_path / "report.md"
    extra = ("--journal", str(journal), "--mcp", str(mcp_file))
    async with FakeOpenAIServer(echoing_researcher) as server:
        assert await paor(*research_args(server, docs, out, *extra)) == 0
    assert "echo: over MCP" in " ".join(_tool_results(server))
    run_id = capsys.readouterr().err.split("paor: run ")[1].split()[0]

    assert await paor("replay", run_id, "--journal", str(journal)) == 0
    assert capsys.readouterr().out == f"replayed {run_id}: complete, no drift\n"
    assert out.read_text(encoding="utf-8").startswith("# ")


async def test_batch_agents_call_mcp_tools(docs: Path, tmp_path: Path, mcp_file: Path) -> None:
    def adder(body: dict[str, Any]) -> ServerAction:
        if sum(m["role"] == "assistant" for m in body["messages"]) == 0:
            return ServerAction.tool_calls([("add", {"a": 2, "b": 40})], usage=USAGE)
        return ServerAction.text("The sum is 42.", usage=USAGE)

    tasks, out = write_tasks(tmp_path / "tasks.jsonl", "a"), tmp_path / "out.jsonl"
    async with FakeOpenAIServer(adder) as server:
        status = await paor(*batch_args(server, docs, tasks, out), "--mcp", str(mcp_file))
    assert status == 0
    assert [r["answer"] for r in result_lines(out)] == ["The sum is 42."]
    assert '{"sum": 42}' in _tool_results(server)


async def test_a_bad_mcp_file_is_a_one_line_error_before_any_work(
    docs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "mcp.json"
    bad.write_text('{"mcpServers": {"x": {"url": "http://h/sse", "type": "sse"}}}', "utf-8")
    out = tmp_path / "report.md"
    async with FakeOpenAIServer([]) as server:
        status = await paor(*research_args(server, docs, out, "--mcp", str(bad)))
    assert status == 2
    assert (
        capsys.readouterr()
        .err.strip()
        .endswith("SSE is not supported; use streamable HTTP (a url)")
    )
    assert not out.exists()
    assert server.requests == []
