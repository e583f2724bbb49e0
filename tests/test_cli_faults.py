"""The command line when its surroundings fail: a log sink that cannot be written, other
libraries' `logging` records, and SIGTERM (what a service manager or `kill` sends).

The signal tests run the real `paor` in a process of its own, with an MCP server over stdio (the
SDK-built test server, which tells its pid through its `pid` tool), against `FakeOpenAIServer`.
"""

from __future__ import annotations

import json
import os
import re
import signal
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

from agents.testing import FakeOpenAIServer, ServerAction
from tests.test_cli import (  # the fixtures are shared with the rest of the CLI's tests
    GEN,
    PARALLEL,
    STOP,
    TOPIC,
    USAGE,
    _endpoint,
    docs,
    paor,
    research_args,
    research_team,
    role_of,
)
from tests.test_mcp import SERVER

pytestmark = pytest.mark.anyio

__all__ = ["_endpoint", "docs"]

ROOT = Path(__file__).resolve().parent.parent
GUARD_S = 25  # a guard against a hang, not a timing claim
NO_SPACE = "[Errno 28] No space left on device"


def _mcp_file(folder: Path, *args: str) -> Path:
    """A `--mcp` file naming the test server, run by this Python with `args`."""
    path = folder / "mcp.json"
    config = {"mcpServers": {"test": {"command": sys.executable, "args": list(args)}}}
    path.write_text(json.dumps(config), encoding="utf-8")
    return path


def _alive(pid: int) -> bool:
    """Whether process `pid` still runs (a zombie nobody reaped has ended)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8")
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


class _PidTeam:
    """Research where STOP's agent asks the MCP server's `pid`, then waits on the model for ever,
    once the other agents have answered; the writer answers, or with `stuck_writer` never does."""

    def __init__(self, *, stuck_writer: bool = False) -> None:
        self.team = research_team({"id": "gen", "goal": GEN}, {"id": "stop", "goal": STOP})
        self.stuck_writer = stuck_writer
        self.answered: set[str] = set()
        self.pid = 0
        self.waiting = anyio.Event()  # the MCP server runs, and the run is under way
        self.writing = anyio.Event()

    def decide(self, body: dict[str, Any]) -> ServerAction:
        """The fake server's answer to one request."""
        who = role_of(body)
        if who == "writer":
            self.writing.set()
            if self.stuck_writer:
                return ServerAction.hang()
            return ServerAction.text("Generators pause [generators].", usage=USAGE)
        if who != STOP:
            self.answered.add(who)
            self._check_waiting()
            return self.team(body)
        told = [m["content"] for m in body["messages"] if m["role"] == "tool"]
        if not told:
            return ServerAction.tool_calls([("pid", {})], usage=USAGE)
        self.pid = int(re.findall(r"\d+", str(told[-1]))[-1])
        self._check_waiting()
        return ServerAction.hang()

    def _check_waiting(self) -> None:
        if self.pid and {TOPIC, GEN} <= self.answered:
            self.waiting.set()


async def _signalled(
    team: _PidTeam,
    tmp_path: Path,
    docs: Path,
    send: Callable[[Callable[[signal.Signals], None]], Awaitable[None]],
) -> tuple[int, str, str]:
    """`paor research --mcp` in a process of its own; `send(signal)` is awaited once the MCP
    server runs and the run waits on the model. Its exit status, stdout and stderr."""
    out, said, err = tmp_path / "report.md", tmp_path / "stdout", tmp_path / "stderr"
    mcp = _mcp_file(tmp_path, SERVER)
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    with anyio.fail_after(GUARD_S):
        async with FakeOpenAIServer(team.decide) as server:
            argv = research_args(server, docs, out, "--no-journal", "--mcp", str(mcp))
            command = [sys.executable, "-m", "orchestrator.cli", *argv]
            with said.open("wb") as stdout, err.open("wb") as stderr:
                async with await anyio.open_process(
                    command, cwd=ROOT, env=env, stdout=stdout, stderr=stderr
                ) as child:
                    await team.waiting.wait()
                    assert _alive(team.pid)
                    await send(child.send_signal)
                    status = await child.wait()
    return status, said.read_text(encoding="utf-8"), err.read_text(encoding="utf-8")


async def test_sigterm_stops_the_run_like_ctrl_c_and_stops_the_mcp_server(
    docs: Path, tmp_path: Path
) -> None:
    """The first SIGTERM is the first Ctrl-C: the run stops, the report is written from what
    exists (exit status 0), the message names SIGTERM, and the MCP server it started is gone."""
    team = _PidTeam()

    async def send(signal_child: Callable[[signal.Signals], None]) -> None:
        signal_child(signal.SIGTERM)

    status, said, err = await _signalled(team, tmp_path, docs, send)

    assert status == 0, err
    assert "paor: stopping on SIGTERM: the report will hold what was found so far" in err
    assert "Ctrl-C again" not in err
    assert said.startswith(f"wrote {tmp_path / 'report.md'}: incomplete (stopped by the user")
    assert "Generators pause [generators]." in (tmp_path / "report.md").read_text(encoding="utf-8")
    assert not _alive(team.pid)


@pytest.mark.parametrize("second", [signal.SIGTERM, signal.SIGINT], ids=["sigterm", "sigint"])
async def test_a_second_signal_of_either_kind_aborts_and_stops_the_mcp_server(
    second: signal.Signals, docs: Path, tmp_path: Path
) -> None:
    """SIGTERM, then SIGTERM or Ctrl-C while the report is being written: the command aborts
    (status 130) without a traceback or a report, and the MCP server it started is gone."""
    team = _PidTeam(stuck_writer=True)

    async def send(signal_child: Callable[[signal.Signals], None]) -> None:
        signal_child(signal.SIGTERM)
        await team.writing.wait()
        signal_child(second)

    status, _, err = await _signalled(team, tmp_path, docs, send)

    assert status == 130, err
    assert "Traceback" not in err, err
    assert err.rstrip().endswith("paor: interrupted")
    assert not (tmp_path / "report.md").exists()
    assert not _alive(team.pid)


async def test_an_mcp_servers_stray_output_is_one_log_line_not_a_traceback(
    docs: Path, tmp_path: Path
) -> None:
    """A line that is not JSON-RPC on an MCP server's stdout: the SDK logs it with a traceback
    through stdlib `logging`; paor shows one line (logger, message, `type: message`) and the
    run goes on."""
    prints_first = (
        "import runpy, sys; print('not json-rpc', flush=True); "
        f"sys.argv = [{SERVER!r}]; runpy.run_path({SERVER!r}, run_name='__main__')"
    )
    mcp, out = _mcp_file(tmp_path, "-c", prints_first), tmp_path / "report.md"
    with anyio.fail_after(GUARD_S):
        async with FakeOpenAIServer(PARALLEL) as server:
            argv = research_args(server, docs, out, "--no-journal", "--mcp", str(mcp))
            done = await anyio.run_process(
                [sys.executable, "-m", "orchestrator.cli", *argv], cwd=ROOT, check=False
            )
    err = done.stderr.decode()

    assert done.returncode == 0, err
    assert "Traceback" not in err, err
    (line,) = [line for line in err.splitlines() if "Failed to parse JSONRPC message" in line]
    assert "[error" in line
    assert "mcp.client.stdio" in line
    assert re.search(r"error=[\"']ValidationError: 1 validation error", line), line
    assert out.exists()


async def test_other_libraries_records_reach_the_json_log(docs: Path, tmp_path: Path) -> None:
    """With `--log-json`, stdlib `logging` records from INFO up (the HTTP client's requests) are JSON lines
    in the same file as paor's events, naming their logger."""
    log = tmp_path / "trace.jsonl"
    async with FakeOpenAIServer(PARALLEL) as server:
        status = await paor(*research_args(server, docs, tmp_path / "r.md", "--log-json", str(log)))

    assert status == 0
    records = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    requests = [r for r in records if str(r.get("logger")).startswith("httpx")]
    posts = [r for r in requests if r["event"].startswith("HTTP Request: POST http://127.0.0.1:")]
    assert len(posts) == len(server.requests)  # one line for each request the model was asked
    assert {r["level"] for r in requests} == {"info"}
    assert any(r["event"] == "run_finished" for r in records)


async def test_a_log_on_a_full_device_does_not_fail_the_run(
    docs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--log-json /dev/full` (every write is ENOSPC): the run goes on and writes its report;
    the command then says the log could not be written, in one line, status 2."""
    out = tmp_path / "report.md"
    async with FakeOpenAIServer(PARALLEL) as server:
        status = await paor(*research_args(server, docs, out, "--log-json", "/dev/full"))

    err = capsys.readouterr().err
    assert status == 2, err
    assert out.read_text(encoding="utf-8").startswith(f"# {TOPIC}")
    assert "Traceback" not in err
    assert err.splitlines()[-1] == f"paor: error: cannot write /dev/full: {NO_SPACE}"


@pytest.mark.parametrize("how", ["unread", "closed"])
async def test_a_stderr_that_cannot_be_written_does_not_end_the_run(
    how: str, docs: Path, tmp_path: Path
) -> None:
    """stderr whose reader left (every write EPIPE) or closed outright: the progress lines and
    log records are dropped, and the run writes its report and says so on stdout (status 0)."""
    out = tmp_path / "report.md"
    read, write = os.pipe()
    os.close(read)
    try:
        async with FakeOpenAIServer(PARALLEL) as server:
            argv = research_args(server, docs, out, "--no-journal")
            command = [sys.executable, "-m", "orchestrator.cli", *argv]
            if how == "closed":
                command = ["sh", "-c", 'exec "$0" "$@" 2>&-', *command]
            with anyio.fail_after(GUARD_S):
                done = await anyio.run_process(command, cwd=ROOT, stderr=write, check=False)
    finally:
        os.close(write)

    assert done.returncode == 0
    assert done.stdout.decode() == f"wrote {out}: complete\n"
    assert out.read_text(encoding="utf-8").startswith(f"# {TOPIC}")
