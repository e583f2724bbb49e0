"""Every outside service a command opens is bounded, and by the run's deadline when it has one:
an MCP server's start (process or connection, handshake, tool listing), the OTLP exporter's flush
and shutdown, and the connection to Temporal. A failure is one line naming the service and what
happened, with an MCP server's last words on stderr; never the SDKs' own 30 to 60 s waits.

The silent services are real: a script that never answers, and a port of 127.0.0.1 whose
connections the kernel accepts and nobody answers. Commands run in processes of their own, so
a command that overran would be stopped by the test's own bound, not hang the session.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from agents import ConfigurationError
from agents.mcp import MCPServer, MCPServers
from agents.testing import FakeOpenAIServer
from tests.test_cli import TOPIC, _endpoint, docs, research_args

pytestmark = pytest.mark.anyio

__all__ = ["_endpoint", "docs"]

ROOT = Path(__file__).resolve().parents[1]
DIES = """
import sys
print("error: API token is not set", file=sys.stderr)
sys.exit(1)
"""
SILENT = """
import sys, time
print("waiting for the licence server", file=sys.stderr, flush=True)
time.sleep(120)
"""
OTLP_CLOSE = """
import time
from opentelemetry import trace
from agents.telemetry import export_otlp

export = export_otlp("http://127.0.0.1:{port}")
tracer = trace.get_tracer("test")
for i in range(1100):  # three batches: the SDK would wait for each in turn
    with tracer.start_as_current_span(f"span {{i}}"):
        pass
began = time.monotonic()
flushed = export.flush(0.5)
flushing = time.monotonic() - began
began = time.monotonic()
export.close()
print(flushed, round(flushing, 2), round(time.monotonic() - began, 2))
"""


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A port of 127.0.0.1 whose connections are accepted (into the listen backlog) and whose
    requests are never answered."""
    with socket.create_server(("127.0.0.1", 0)) as listener:
        yield listener.getsockname()[1]


def _script(tmp_path: Path, text: str) -> str:
    path = tmp_path / "server.py"
    path.write_text(text, encoding="utf-8")
    return str(path)


def _mcp_file(tmp_path: Path, name: str, script: str, **options: object) -> Path:
    path = tmp_path / "mcp.json"
    config = {"mcpServers": {name: {"command": sys.executable, "args": [script], **options}}}
    path.write_text(json.dumps(config), encoding="utf-8")
    return path


async def _command(*argv: str) -> tuple[int, str, float]:
    """`paor ARGV` in a process of its own: its exit status, stderr and seconds taken."""
    command = [sys.executable, "-c", "from orchestrator.cli import entry; entry()", *argv]
    began = time.monotonic()
    with anyio.fail_after(45):
        done = await anyio.run_process(command, cwd=ROOT, env=dict(os.environ), check=False)
    return done.returncode, done.stderr.decode(), time.monotonic() - began


async def test_a_server_that_exits_at_start_says_what_it_wrote_on_stderr(tmp_path: Path) -> None:
    """A stdio server that exits at once is named with its last words, not "Connection closed"."""
    with pytest.raises(ConfigurationError) as caught:
        async with MCPServer.stdio("vault", sys.executable, [_script(tmp_path, DIES)]):
            pass
    assert str(caught.value) == "MCP server vault exited at start: error: API token is not set"


async def test_a_silent_stdio_server_fails_within_its_start_timeout(tmp_path: Path) -> None:
    """A stdio server that never answers `initialize` fails at its start timeout, with its
    stderr, and not after the SDK's 60 s handshake timeout."""
    server = MCPServer.stdio("quiet", sys.executable, [_script(tmp_path, SILENT)], start_timeout=2)
    began = time.monotonic()
    with anyio.fail_after(30), pytest.raises(ConfigurationError) as caught:
        async with server:
            pass
    assert str(caught.value) == (
        "MCP server quiet did not start within 2 s; its stderr: waiting for the licence server"
    )
    assert time.monotonic() - began < 15  # the bound, and the SDK's stop of the process


async def test_a_silent_http_server_fails_within_its_start_timeout(silent_port: int) -> None:
    """A streamable HTTP server that accepts and never answers fails at its start timeout."""
    url = f"http://127.0.0.1:{silent_port}/mcp"
    with anyio.fail_after(20), pytest.raises(ConfigurationError) as caught:
        async with MCPServer.http("remote", url, start_timeout=1):
            pass
    assert str(caught.value) == "MCP server remote did not start within 1 s"


async def test_the_servers_of_a_file_start_within_what_is_left(tmp_path: Path) -> None:
    """`MCPServers.from_file(..., within=S)` bounds the start by S, below each server's own 30 s."""
    path = _mcp_file(tmp_path, "quiet", _script(tmp_path, SILENT))
    with anyio.fail_after(20), pytest.raises(ConfigurationError, match=r"within 1\.5 s"):
        async with MCPServers.from_file(path, within=1.5):
            pass


async def test_a_file_s_start_timeout_bounds_its_server(tmp_path: Path) -> None:
    """`"start_timeout"` beside a server's `command` bounds its start."""
    path = _mcp_file(tmp_path, "quiet", _script(tmp_path, SILENT), start_timeout=2)
    with anyio.fail_after(20), pytest.raises(ConfigurationError, match="within 2 s; its stderr"):
        async with MCPServers.from_file(path):
            pass


async def test_research_with_a_silent_mcp_server_ends_by_its_deadline(
    docs: Path, tmp_path: Path
) -> None:
    """`paor research --deadline 3` with a server silent at `initialize`: one line naming it,
    with its stderr, exit status 2, in seconds (it took 70 s), and no model request."""
    mcp = _mcp_file(tmp_path, "quiet", _script(tmp_path, SILENT))
    out = tmp_path / "report.md"
    async with FakeOpenAIServer([]) as server:
        extra = ("--mcp", str(mcp), "--deadline", "3", "--no-journal")
        status, err, took = await _command(*research_args(server, docs, out, *extra))
    assert status == 2, err
    assert err.strip().splitlines() == [
        "paor: error: MCP server quiet did not start within 3 s; its stderr: waiting for the "
        "licence server"
    ]
    assert took < 20
    assert server.requests == []
    assert not out.exists()


async def test_closing_the_otlp_export_is_bounded(silent_port: int) -> None:
    """A collector that accepts and never answers: `flush(0.5)` says it did not finish within
    its bound, and closing gives up after its default 5 s, where the SDK waited 10 s a batch."""
    code = textwrap.dedent(OTLP_CLOSE.format(port=silent_port))
    with anyio.fail_after(45):
        done = await anyio.run_process([sys.executable, "-c", code], cwd=ROOT, check=False)
    assert done.returncode == 0, done.stderr.decode()
    flushed, flushing, closing = done.stdout.decode().split()
    assert flushed == "False"
    assert float(flushing) < 3
    assert 4 < float(closing) < 10


async def test_connecting_to_a_silent_temporal_server_is_bounded(silent_port: int) -> None:
    """`connect(..., timeout_s=1)` to a server that never answers: one line naming it, in
    seconds (the SDK alone retries for about 30 s)."""
    from orchestrator.temporal import connect

    target = f"127.0.0.1:{silent_port}"
    with anyio.fail_after(20), pytest.raises(ConfigurationError) as caught:
        await connect(target, timeout_s=1)
    assert str(caught.value) == f"the Temporal server at {target} did not answer within 1 s"


async def test_research_on_a_silent_temporal_server_ends_by_its_deadline(
    docs: Path, tmp_path: Path, silent_port: int
) -> None:
    """`paor research --temporal ... --deadline 2` against a silent server: one line naming it,
    exit status 2, within seconds (it took 32 s with `--deadline 8`)."""
    target = f"127.0.0.1:{silent_port}"
    argv = ("research", TOPIC, "--docs", str(docs), "--out", str(tmp_path / "report.md"))
    status, err, took = await _command(*argv, "--temporal", target, "--deadline", "2")
    assert status == 2, err
    assert err.strip().splitlines() == [
        f"paor: error: the Temporal server at {target} did not answer within 2 s"
    ]
    assert took < 20


SLOW_START = """
import runpy, sys, time
time.sleep(2)  # a server that takes its time to come up
sys.argv = [sys.argv[0], "stdio"]
runpy.run_path({server!r}, run_name="__main__")
"""


def test_the_run_gets_the_deadline_less_what_starting_took(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from orchestrator import Limits
    from orchestrator.cli._mcp import left_of

    monkeypatch.setattr("orchestrator.cli._mcp.time.monotonic", lambda: 104.0)
    assert left_of(Limits(deadline_s=10), since=100.0).deadline_s == 6.0
    assert left_of(Limits(deadline_s=10), since=90.0).deadline_s == 1e-9  # passed: start nothing
    assert left_of(Limits(), since=0.0).deadline_s is None


async def test_a_slow_mcp_server_spends_the_research_deadline(docs: Path, tmp_path: Path) -> None:
    """`paor research --deadline 30` with a server that takes 2 s to start: the run is given
    (and its journal records) what is left, not 30 s more."""
    from memory import Journal
    from tests.test_cli import PARALLEL, _only_run

    server_py = str(ROOT / "tests" / "_mcp_server.py")
    mcp = _mcp_file(tmp_path, "slow", _script(tmp_path, SLOW_START.format(server=server_py)))
    out, journal = tmp_path / "report.md", tmp_path / "runs.db"
    async with FakeOpenAIServer(PARALLEL) as server:
        extra = ("--mcp", str(mcp), "--deadline", "30", "--journal", str(journal))
        status, err, _took = await _command(*research_args(server, docs, out, *extra))
    assert status == 0, err
    async with Journal(journal) as opened:
        info = await opened.run(_only_run(journal))
    assert info is not None
    assert info.config is not None
    assert info.config["limits"]["deadline_s"] <= 28.0
