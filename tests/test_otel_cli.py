"""`paor research --otel`: the command's spans go over OTLP/HTTP to a receiver on 127.0.0.1 (the
command runs in a process of its own, as the global tracer provider is set once per process)."""

from __future__ import annotations

import os
import sys
import threading
from http.server import HTTPServer
from pathlib import Path

import anyio
import pytest

from agents.testing import FakeOpenAIServer
from tests.test_cli import API_KEY, PARALLEL, _endpoint, docs, research_args
from tests.test_otel import _Receiver

pytestmark = pytest.mark.anyio

__all__ = ["_endpoint", "docs"]


async def test_research_with_otel_exports_its_spans(docs: Path, tmp_path: Path) -> None:
    _Receiver.received = []
    receiver = HTTPServer(("127.0.0.1", 0), _Receiver)
    threading.Thread(target=receiver.serve_forever, daemon=True).start()
    env = {
        **os.environ,
        "OPENAI_API_KEY": API_KEY,
        "OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{receiver.server_address[1]}",
        "OTEL_SERVICE_NAME": "paor-cli-test",
    }
    out = tmp_path / "report.md"
    try:
        async with FakeOpenAIServer(PARALLEL) as server:
            argv = [*research_args(server, docs, out), "--otel", "--no-journal"]
            command = [sys.executable, "-c", "from orchestrator.cli import entry; entry()", *argv]
            with anyio.fail_after(120):
                done = await anyio.run_process(command, env=env, check=False)
    finally:
        receiver.shutdown()
        receiver.server_close()
    assert done.returncode == 0, done.stderr.decode()
    spans = [
        span
        for request in _Receiver.received
        for resource in request.resource_spans
        for scope in resource.scope_spans
        for span in scope.spans
    ]
    names = {span.name for span in spans}
    assert {"invoke_agent run", "paor.plan", "paor.synthesis"} <= names
    assert any(name.startswith("execute_tool search_docs") for name in names)
    assert any(name.startswith("chat") for name in names)
    assert len({span.trace_id for span in spans}) == 1  # one run, one trace
