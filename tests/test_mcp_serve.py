"""`paor mcp`: paor's research and runs as MCP tools, called by the SDK's own client over stdio and
over streamable HTTP, with progress notifications as the run goes (the model is the fake OpenAI
server, over real HTTP)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from agents.testing import FakeOpenAIServer, ServerAction
from orchestrator import RunConfig
from tests.test_cli import (
    API_KEY,
    GEN,
    PARALLEL,
    STOP,
    USAGE,
    _endpoint,
    citations,
    closed_port,
    docs,
)
from tests.test_mcp import _wait_for_port

SYNTHESIS = RunConfig().synthesis_instructions

pytestmark = pytest.mark.anyio

__all__ = ["_endpoint", "docs"]

ENTRY = "from orchestrator.cli import entry; entry()"
GUARD_S = 120  # a guard against a hang, not a timing claim


def _paor_mcp(server: FakeOpenAIServer, docs: Path, *extra: str) -> list[str]:
    return [
        "-c", ENTRY, "mcp", "--docs", str(docs), "--base-url", server.base_url,
        "--protocol", "tools", *extra,
    ]  # fmt: skip


def _env() -> dict[str, str]:
    return {"OPENAI_API_KEY": API_KEY, "PAOR_HOME": os.environ["PAOR_HOME"]}


def planner_and_agents(body: dict[str, Any]) -> ServerAction:
    """For `run`: a plan of two subtasks, agents that search once and then say what the passage
    says, and a synthesis that says what their results say (a run over the corpus tools cites,
    and holds every answer to what its tools showed)."""
    if "response_format" in body:
        subtasks = [{"id": "x", "goal": GEN}, {"id": "y", "goal": STOP}]
        return ServerAction.json_content({"subtasks": subtasks}, usage=USAGE)
    if body["messages"][0]["content"] == SYNTHESIS:
        return ServerAction.text(RUN_ANSWER, usage=USAGE)
    task = str(body["messages"][1]["content"])
    query = "generator yield" if GEN in task else "StopIteration iteration"
    if not any(m["role"] == "tool" for m in body["messages"]):
        return ServerAction.tool_calls([("search_docs", {"query": query})], usage=USAGE)
    if GEN in task:
        return ServerAction.text("A generator function pauses at each yield.", usage=USAGE)
    return ServerAction.text("StopIteration ends the iteration.", usage=USAGE)


RUN_ANSWER = "A generator function pauses at each yield; StopIteration ends the iteration."


async def test_research_over_stdio_reports_progress_and_returns_the_report(docs: Path) -> None:
    told: list[tuple[float, str | None]] = []

    async def seen(progress: float, total: float | None, message: str | None) -> None:
        told.append((progress, message))

    async with FakeOpenAIServer(PARALLEL) as model:
        params = StdioServerParameters(
            command=sys.executable, args=_paor_mcp(model, docs), env=_env()
        )
        with anyio.fail_after(GUARD_S):
            async with Client(params, read_timeout_seconds=GUARD_S) as client:
                listed = {t.name: t for t in (await client.list_tools()).tools}
                assert set(listed) == {"research", "run"}
                assert listed["research"].input_schema["required"] == ["topic"]
                result = await client.call_tool(
                    "research", {"topic": "How do generators work?"}, progress_callback=seen
                )
    assert not result.is_error
    report = result.content[0].text  # type: ignore[union-attr]
    assert report.startswith("# ")
    assert citations(report) <= {"generators", "iterators", "guide/coroutines"}
    messages = [m for _, m in told]
    assert messages[0] is not None
    assert messages[0].startswith("plan: ")
    assert messages[-1] == "run complete"
    assert [v for v, _ in told] == sorted({v for v, _ in told})  # increasing


async def test_run_over_streamable_http_answers_with_its_status(docs: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    async with FakeOpenAIServer(planner_and_agents) as model:
        command = [sys.executable, *_paor_mcp(model, docs, "--http", f"127.0.0.1:{port}")]
        quiet = subprocess.DEVNULL
        env = {**os.environ, **_env()}
        async with await anyio.open_process(command, stdout=quiet, stderr=quiet, env=env) as proc:
            try:
                await _wait_for_port(port)
                with anyio.fail_after(GUARD_S):
                    async with Client(f"http://127.0.0.1:{port}/mcp") as client:
                        goal = "What does a generator do at yield, and what ends an iteration?"
                        result = await client.call_tool("run", {"goal": goal})
            finally:
                proc.terminate()
                await proc.wait()
    # SIGTERM shuts the server down gracefully; the status is paor's, not death by the signal.
    assert proc.returncode == 130
    assert not result.is_error
    assert result.structured_content is not None
    assert result.structured_content["status"] == "complete"
    assert result.structured_content["answer"] == RUN_ANSWER
    assert json.loads(result.content[0].text)["status"] == "complete"  # type: ignore[union-attr]


def test_a_bad_http_address_is_a_one_line_error(capsys: pytest.CaptureFixture[str]) -> None:
    from orchestrator.cli import main

    assert main(["mcp", "--http", "nowhere", "--base-url", "http://127.0.0.1:9/v1"]) == 2
    assert capsys.readouterr().err.strip() == "paor: error: --http wants HOST:PORT, not 'nowhere'"


def test_a_port_in_use_is_one_line_and_nothing_is_announced(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """`--http` on a port another server listens on: one line and exit status 2, before the
    model is reached, and "serving on" is never said."""
    from orchestrator.cli import main

    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        status = main(["mcp", "--http", f"127.0.0.1:{port}", "--base-url", "http://127.0.0.1:9/v1"])
    assert status == 2
    captured = capsys.readouterr()
    assert (
        captured.err == f"paor: error: cannot listen on 127.0.0.1:{port}: address already in use\n"
    )
    assert captured.out == ""


async def test_a_librarys_exit_is_one_line_and_a_documented_status(
    docs: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A `sys.exit(3)` inside the command (uvicorn's, when its app cannot start) exits with
    status 1 and one line, never with its own 3, which paor documents as "paused"."""
    import orchestrator.cli._mcp_serve
    from orchestrator.cli import main

    async def refused(*_args: Any) -> None:
        raise SystemExit(3)

    monkeypatch.setattr(orchestrator.cli._mcp_serve, "serve_http", refused)
    async with FakeOpenAIServer([]) as model:
        argv = _paor_mcp(model, docs, "--http", f"127.0.0.1:{closed_port()}")[2:]
        status = await anyio.to_thread.run_sync(main, argv)
    assert status == 1
    err = capsys.readouterr().err
    assert err.endswith("paor: error: the command was ended by a library (sys.exit(3))\n")
