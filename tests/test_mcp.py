"""MCP servers as tools, against real servers: the registry's `mcp-server-time` and `mcp-server-git`
over stdio, and the SDK-built test server (tests/_mcp_server.py) over stdio and streamable HTTP."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import pytest

from agents import ConfigurationError, Executor
from agents._toolbox import ToolResult
from agents.mcp import MCPServer, MCPServers
from agents.testing import ScriptedModel, call, observation, reply
from agents.tools import Toolbox
from memory import Journal, ToolCall
from orchestrator import Orchestrator
from tests._team import Team, plan, script, sub

pytestmark = pytest.mark.anyio
SERVER = str(Path(__file__).with_name("_mcp_server.py"))


def _test_server(**options: object) -> MCPServer:
    return MCPServer.stdio("t", sys.executable, [SERVER], timeout=20, **options)  # type: ignore[arg-type]


def _tool_texts(model: ScriptedModel) -> list[str]:
    return [observation(str(m.content)) for m in model.requests[-1].messages if m.role == "tool"]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.fixture
def git_repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    git = ["git", "-C", str(repo), "-c", "user.email=t@example.com", "-c", "user.name=T"]
    subprocess.run([*git, "init", "-q"], check=True)
    (repo / "notes.txt").write_text("hello\n", encoding="utf-8")
    subprocess.run([*git, "add", "notes.txt"], check=True)
    subprocess.run([*git, "commit", "-qm", "The first commit of the test"], check=True)
    return repo


@pytest.fixture
async def http_server() -> AsyncIterator[str]:
    """The test server over streamable HTTP on a free port of 127.0.0.1, stopped after."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    command = [sys.executable, SERVER, "http", str(port)]
    quiet = subprocess.DEVNULL
    async with await anyio.open_process(command, stdout=quiet, stderr=quiet) as process:
        try:
            await _wait_for_port(port)
            yield f"http://127.0.0.1:{port}/mcp"
        finally:
            process.terminate()
            with anyio.fail_after(10):
                await process.wait()


async def _wait_for_port(port: int) -> None:
    with anyio.fail_after(30):
        while True:
            try:
                stream = await anyio.connect_tcp("127.0.0.1", port)
            except OSError:
                await anyio.sleep(0.05)
                continue
            await stream.aclose()
            return


async def test_the_time_server_s_tools_take_its_schemas_and_annotations() -> None:
    """mcp-server-time over stdio: its schemas reach the model as they are, arguments are
    checked against them before anything is sent, and read-only tools may be re-run."""
    async with MCPServer.stdio("time", sys.executable, ["-m", "mcp_server_time"]) as time:
        tools = {t.name: t for t in time.tools}
        assert set(tools) == {"get_current_time", "convert_time"}
        spec = tools["get_current_time"].spec().parameters
        assert spec["required"] == ["timezone"]
        assert spec["properties"]["timezone"]["type"] == "string"
        assert all(t.read_only and not t.side_effects for t in tools.values())
        with pytest.raises(ValueError, match=r"timezone.*required"):
            tools["get_current_time"].parse("{}")
        with pytest.raises(ValueError, match="not of type 'string'"):
            tools["get_current_time"].parse('{"timezone": 3}')
        # The loop's path (with schema binding first) checks them against the server's schema too.
        prepared = Toolbox(time.tools).prepare(
            ToolCall(id="c1", name="get_current_time", arguments='{"timezone": 3}'), 0.0
        )
        assert isinstance(prepared, ToolResult)
        assert prepared.error == "invalid_arguments"
        assert "not of type 'string'" in prepared.content


async def test_an_agent_calls_the_time_server_and_reads_its_errors() -> None:
    """A result is the server's structured content; an error result is a failure the model reads."""
    model = ScriptedModel(
        [
            call("get_current_time", timezone="Asia/Tokyo"),
            call("get_current_time", timezone="Nowhere/Atlantis"),
            reply("It is morning [get_current_time]"),
        ]
    )
    async with MCPServer.stdio("time", sys.executable, ["-m", "mcp_server_time"]) as time:
        report = await Executor(model, time.tools).run("What time is it in Tokyo?")
    assert report.status == "done"
    first, second = _tool_texts(model)
    assert json.loads(first)["timezone"] == "Asia/Tokyo"
    assert "Nowhere/Atlantis" in second
    assert second.startswith("Error")


async def test_the_git_server_reads_a_repository_the_test_made(git_repo: Path) -> None:
    """mcp-server-git over stdio, filtered to two read-only tools."""
    git = MCPServer.stdio(
        "git",
        sys.executable,
        ["-m", "mcp_server_git", "--repository", str(git_repo)],
        allow=["git_log", "git_status"],
    )
    model = ScriptedModel([call("git_log", repo_path=str(git_repo)), reply("one commit [git_log]")])
    async with git:
        assert sorted(t.name for t in git.tools) == ["git_log", "git_status"]
        report = await Executor(model, git.tools).run("What was committed?")
    assert report.status == "done"
    assert "The first commit of the test" in _tool_texts(model)[0]


async def test_an_allowed_tool_the_server_lacks_is_a_configuration_error() -> None:
    with pytest.raises(ConfigurationError, match="has no tool nonesuch"):
        async with _test_server(allow=["echo", "nonesuch"]):
            pass


async def test_a_server_that_cannot_start_is_one_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="MCP server t did not start"):
        async with MCPServer.stdio("t", str(tmp_path / "no-such-command")):
            pass


async def test_a_server_that_dies_fails_its_call_and_is_restarted() -> None:
    """The call in flight fails with the server's last words; the next call starts it again."""
    model = ScriptedModel([call("pid"), call("die"), call("pid"), reply("done [pid]")])
    async with _test_server() as server:
        report = await Executor(model, server.tools).run("die and come back")
        assert server.restarts == 1
    first, died, second = _tool_texts(model)
    assert "MCP server t exited" in died
    assert "dying on request" in died
    assert first != second
    assert report.status == "done"


async def test_a_server_that_keeps_dying_trips_the_breaker() -> None:
    """Given up after its restarts, its calls fail at once and the breaker takes it off the menu."""
    model = ScriptedModel([call("die"), call("die"), call("die"), reply("gave up")])
    async with _test_server(max_restarts=1) as server:
        await Executor(model, server.tools, require_evidence=False).run("keep dying")
    last = model.requests[-1]
    assert "die" not in {t.name for t in last.tools}
    assert "not available (gave up after 1 restarts)" in _tool_texts(model)[-1]


async def test_leaving_the_block_stops_the_server_even_mid_call() -> None:
    """Cancelling a run with a call in flight stops the server process promptly."""
    async with _test_server() as server:
        pid = (await server.call("pid", {}))["result"]
        with anyio.move_on_after(0.5):
            await server.call("slow", {"seconds": 30})
    for _ in range(100):
        if not _alive(pid):
            break
        await anyio.sleep(0.05)
    assert not _alive(pid)


async def test_streamable_http_sub_agents_share_one_server(http_server: str) -> None:
    """Over HTTP on 127.0.0.1: two concurrent sub-agents call the same server process."""
    team = Team(
        [plan(sub("a"), sub("b"))],
        {"a": script(call("pid"), reply("A [pid]")), "b": script(call("pid"), reply("B [pid]"))},
    )
    async with MCPServer.http("web", http_server) as web:
        result = await Orchestrator(team.model, web.tools).run("two at once")
    assert result.status == "complete"
    pids = {
        observation(m.content) for r in team.model.requests for m in r.messages if m.role == "tool"
    }
    assert len(pids) == 1


async def test_clashing_names_are_prefixed_by_server(tmp_path: Path) -> None:
    """Two servers offering `echo`: both are renamed; a name only one has stays."""
    config = {
        "mcpServers": {
            "one": {"command": sys.executable, "args": [SERVER], "allow": ["echo", "add"]},
            "two": {"command": sys.executable, "args": [SERVER], "allow": ["echo"]},
            "off": {"command": "nonesuch", "disabled": True},
        }
    }
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    async with MCPServers.from_file(path) as servers:
        assert sorted(t.name for t in servers.tools) == ["add", "one_echo", "two_echo"]
        model = ScriptedModel([call("two_echo", text="hi"), reply("ok [two_echo]")])
        await Executor(model, servers.tools).run("echo")
    assert _tool_texts(model) == ['{"result": "echo: hi"}']


@pytest.mark.parametrize(
    ("config", "problem"),
    [
        ([], "expected a JSON object with mcpServers"),
        ({"mcpServers": []}, "expected an object under mcpServers"),
        ({"mcpServers": {"x": {"command": "a", "colour": 1}}}, "unknown key 'colour'"),
        ({"mcpServers": {"x": {"url": "http://h/sse", "type": "sse"}}}, "SSE is not supported"),
        ({"mcpServers": {"x": {"args": ["a"]}}}, "needs a command"),
        ({"mcpServers": {"x": {"command": "a", "args": "b"}}}, "args must be a list"),
        ({"mcpServers": {"x": {"command": "a", "env": {"K": 1}}}}, "env must map names"),
        ({"mcpServers": {"x": {"command": "a", "timeout": -1}}}, "timeout must be positive"),
        ({"mcpServers": {"x": {"command": "a", "allow": "echo"}}}, "allow must be a list"),
    ],
)
def test_a_bad_config_is_one_line_naming_the_server(config: object, problem: str) -> None:
    with pytest.raises(ConfigurationError, match=problem) as caught:
        MCPServers.from_config(config)
    assert "\n" not in str(caught.value)


def test_an_unreadable_config_file_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    path.write_text("{not json", encoding="utf-8")
    with pytest.raises(ConfigurationError, match="is not valid JSON"):
        MCPServers.from_file(path)
    with pytest.raises(ConfigurationError, match="cannot read"):
        MCPServers.from_file(tmp_path / "missing.json")


async def test_a_journaled_run_replays_without_calling_the_server(tmp_path: Path) -> None:
    """MCP calls are recorded like any tool's: a replay serves them and the side effect (a line
    appended to a file by the server) happens once."""
    notes = tmp_path / "notes.txt"
    await _record_and_replay(tmp_path, notes)
    assert notes.read_text(encoding="utf-8") == "remember me\n"


async def _record_and_replay(tmp_path: Path, notes: Path) -> None:
    team = Team(
        [plan(sub("a"))], {"a": script(call("write_note", text="remember me"), reply("noted"))}
    )
    server = MCPServer.stdio(
        "t", sys.executable, [SERVER], env={"PAOR_TEST_NOTES": str(notes)}, allow=["write_note"]
    )
    async with server:
        (note,) = server.tools
        assert note.side_effects
        assert note.destructive
        async with Journal(tmp_path / "journal.db") as journal:
            orch = Orchestrator(team.model, server.tools, journal=journal)
            live = await orch.run("take a note", run_id="r1")
            replayed = await orch.replay("r1")
    assert live.status == "complete"
    assert replayed.ok
    assert replayed.result is not None
    assert replayed.result.answer == live.answer
