"""OpenTelemetry spans: the run's tree of GenAI spans, errors, content capture, replay, export.

The global tracer provider can be set once per process: this module sets an SDK provider whose
sampler records only while one of its tests runs, so other modules' runs make no recorded spans.
What must hold without the extra, or without a provider, or over OTLP, runs in a subprocess.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
import textwrap
import threading
from collections.abc import Iterator, Sequence
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any, ClassVar

import anyio
import pytest
from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.trace.sampling import Decision, Sampler, SamplingResult
from opentelemetry.trace import SpanKind, StatusCode
from opentelemetry.util.types import Attributes

from agents import Executor, ToolFailure, tool
from agents.models import ModelResponse
from agents.telemetry import capture_content
from agents.testing import ScriptedModel, call
from memory import AssistantMessage, Journal
from orchestrator import Orchestrator
from tests._team import Team, plan, script, sub

pytestmark = pytest.mark.anyio

GUARD_S = 10  # a guard against deadlocks, not a timing claim
ROOT = Path(__file__).resolve().parent.parent


class _Gate(Sampler):
    """Records spans only while a test of this module runs."""

    open = False

    def should_sample(
        self,
        parent_context: Context | None,
        trace_id: int,
        name: str,
        kind: SpanKind | None = None,
        attributes: Attributes = None,
        links: Any = None,
        trace_state: Any = None,
    ) -> SamplingResult:
        if not self.open:
            return SamplingResult(Decision.DROP)
        return SamplingResult(Decision.RECORD_AND_SAMPLE, attributes)

    def get_description(self) -> str:
        return "paor test gate"


GATE = _Gate()
EXPORTER = InMemorySpanExporter()


def _install() -> None:
    provider = trace.get_tracer_provider()
    if not isinstance(provider, TracerProvider):
        provider = TracerProvider(sampler=GATE)
        trace.set_tracer_provider(provider)
    provider.add_span_processor(SimpleSpanProcessor(EXPORTER))


_install()


@pytest.fixture(autouse=True)
def _recording() -> Iterator[None]:
    """Record this test's spans only; content capture back to its default afterwards."""
    EXPORTER.clear()
    GATE.open = True
    try:
        yield
    finally:
        GATE.open = False
        capture_content(None)
        EXPORTER.clear()


@tool
async def lookup(key: str) -> str:
    """Look a fact up.

    Args:
        key: What to look up.
    """
    return f"the value of {key}"


@tool
async def broken(key: str) -> str:
    """Fail, always.

    Args:
        key: What to look up.
    """
    raise ToolFailure("the index is down")


def finished_spans() -> list[ReadableSpan]:
    """The spans recorded so far."""
    return list(EXPORTER.get_finished_spans())


def named(spans: Sequence[ReadableSpan], name: str) -> list[ReadableSpan]:
    """The spans called `name`."""
    return [s for s in spans if s.name == name]


def one(spans: Sequence[ReadableSpan], name: str) -> ReadableSpan:
    """The one span called `name`."""
    (found,) = named(spans, name)
    return found


def parent_of(span: ReadableSpan, spans: Sequence[ReadableSpan]) -> ReadableSpan:
    """The recorded parent of `span`."""
    assert span.parent is not None, span.name
    return next(s for s in spans if s.context.span_id == span.parent.span_id)


def attrs(span: ReadableSpan) -> dict[str, Any]:
    """A span's attributes as a plain dict."""
    return dict(span.attributes or {})


def answered(text: str) -> ModelResponse:
    """A final answer with the fields an OpenAI-compatible server reports."""
    return ModelResponse(
        message=AssistantMessage(content=text),
        model="team-1",
        finish_reason="stop",
        response_id=f"chatcmpl-{text}",
    )


def two_agent_team() -> Team:
    """Subtask a looks something up; b answers at once."""
    return Team(
        [plan(sub("a"), sub("b"))],
        {"a": script(call("lookup", key="a"), "A's answer"), "b": script(answered("B"))},
    )


async def test_a_run_makes_the_tree_of_genai_spans() -> None:
    """The run span holds plan, sub-agents and synthesis; chat and tool spans nest in them."""
    with anyio.fail_after(GUARD_S):
        result = await Orchestrator(two_agent_team().model, [lookup]).run("goal", run_id="r1")
    assert result.status == "complete"
    spans = finished_spans()
    run = one(spans, "invoke_agent run")
    assert run.parent is None
    assert {s.context.trace_id for s in spans} == {run.context.trace_id}
    assert attrs(run)["gen_ai.conversation.id"] == "r1"
    assert attrs(run)["paor.run.status"] == "complete"
    planning = one(spans, "paor.plan")
    assert attrs(planning)["paor.plan.version"] == 1
    assert attrs(planning)["paor.plan.subtask_ids"] == ("a", "b")
    for name in ("paor.plan", "invoke_agent a", "invoke_agent b", "paor.synthesis"):
        assert parent_of(one(spans, name), spans) is run
    chats = named(spans, "chat team")
    assert len(chats) == 5  # plan, a twice, b, synthesis
    assert {parent_of(c, spans).name for c in chats} == {
        "paor.plan", "invoke_agent a", "invoke_agent b", "paor.synthesis",
    }  # fmt: skip
    tool_span = one(spans, "execute_tool lookup")
    assert parent_of(tool_span, spans).name == "invoke_agent a"
    assert attrs(tool_span)["gen_ai.operation.name"] == "execute_tool"
    assert attrs(tool_span)["gen_ai.tool.call.id"]
    assert tool_span.status.status_code is StatusCode.UNSET


async def test_chat_span_carries_model_usage_finish_reason_and_response_id() -> None:
    """A chat span has the request's and the response's model, tokens, finish reason and id."""
    with anyio.fail_after(GUARD_S):
        await Orchestrator(two_agent_team().model, [lookup]).run("goal")
    spans = finished_spans()
    (chat,) = [c for c in named(spans, "chat team") if parent_of(c, spans).name == "invoke_agent b"]
    found = attrs(chat)
    assert chat.kind is SpanKind.CLIENT
    assert found["gen_ai.operation.name"] == "chat"
    assert found["gen_ai.request.model"] == "team"
    assert found["gen_ai.response.model"] == "team-1"
    assert found["gen_ai.response.id"] == "chatcmpl-B"
    assert found["gen_ai.response.finish_reasons"] == ("stop",)
    assert found["paor.agent.id"] == "b"
    assert isinstance(found["gen_ai.usage.input_tokens"], int)
    assert isinstance(found["gen_ai.usage.output_tokens"], int)
    agent = attrs(one(spans, "invoke_agent b"))
    assert agent["gen_ai.agent.name"] == "b"
    assert agent["paor.report.status"] == "done"


async def test_a_failing_tool_gives_an_error_span() -> None:
    """A tool that fails ends its execute_tool span with an error status and error.type."""
    team = Team([plan(sub("a"))], {"a": script(call("broken", key="a"), "no luck")})
    with anyio.fail_after(GUARD_S):
        await Orchestrator(team.model, [broken]).run("goal")
    span = one(finished_spans(), "execute_tool broken")
    assert span.status.status_code is StatusCode.ERROR
    assert attrs(span)["error.type"]
    assert attrs(span)["paor.tool.ok"] is False


SECRET = "sk-abcdefghijklmnop1234"


def secret_team() -> Team:
    """A sub-agent that passes a key to a tool and says a password."""
    return Team(
        [plan(sub("a"))],
        {"a": script(call("lookup", key=f"api_key={SECRET}"), "done, password=hunter2")},
    )


def content_attributes(spans: Sequence[ReadableSpan]) -> list[str]:
    """Every content-bearing attribute value on the spans."""
    keys = ("gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.tool.call.arguments")
    more = ("gen_ai.tool.call.result", "paor.goal")
    return [str(attrs(s)[k]) for s in spans for k in (*keys, *more) if k in attrs(s)]


async def test_content_is_absent_by_default() -> None:
    """Without the switch, no prompt, argument or result goes on any span."""
    with anyio.fail_after(GUARD_S):
        await Orchestrator(secret_team().model, [lookup]).run("goal")
    assert content_attributes(finished_spans()) == []


async def test_captured_content_is_redacted() -> None:
    """With capture on, messages and tool arguments are on the spans, their secrets masked."""
    capture_content(True)
    with anyio.fail_after(GUARD_S):
        await Orchestrator(secret_team().model, [lookup]).run("goal")
    spans = finished_spans()
    shown = content_attributes(spans)
    assert shown
    assert not any(SECRET in v or "hunter2" in v for v in shown)
    arguments = json.loads(attrs(one(spans, "execute_tool lookup"))["gen_ai.tool.call.arguments"])
    assert arguments == {"key": "api_key=***"}
    assert any("password=***" in v for v in shown)


async def test_the_environment_variable_turns_capture_on(monkeypatch: pytest.MonkeyPatch) -> None:
    """OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true captures content."""
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true")
    with anyio.fail_after(GUARD_S):
        await Orchestrator(secret_team().model, [lookup]).run("goal")
    assert content_attributes(finished_spans())


async def test_concurrent_sub_agents_have_their_own_spans_under_the_run() -> None:
    """Two overlapping sub-agents: two sibling spans under the run, each with its own tool span."""
    here = {"a": anyio.Event(), "b": anyio.Event()}

    @tool(timeout=None)
    async def meet(who: str) -> str:
        """Wait until the other subtask is here too.

        Args:
            who: Who arrived.
        """
        here[who].set()
        await here["b" if who == "a" else "a"].wait()
        return f"{who} met the other"

    team = Team(
        [plan(sub("a"), sub("b"))],
        {"a": script(call("meet", who="a"), "A"), "b": script(call("meet", who="b"), "B")},
    )
    with anyio.fail_after(GUARD_S):
        await Orchestrator(team.model, [meet]).run("goal")
    spans = finished_spans()
    run = one(spans, "invoke_agent run")
    a, b = one(spans, "invoke_agent a"), one(spans, "invoke_agent b")
    assert parent_of(a, spans) is run
    assert parent_of(b, spans) is run
    assert (a.start_time or 0) < (b.end_time or 0)  # they overlapped
    assert (b.start_time or 0) < (a.end_time or 0)
    meets = named(spans, "execute_tool meet")
    assert sorted(parent_of(m, spans).name for m in meets) == ["invoke_agent a", "invoke_agent b"]


async def test_a_replay_marks_the_effects_it_serves(tmp_path: Path) -> None:
    """Replayed model and tool calls have spans marked paor.replayed."""
    async with Journal(tmp_path / "journal.db") as journal:
        orch = Orchestrator(two_agent_team().model, [lookup], journal=journal)
        with anyio.fail_after(GUARD_S):
            await orch.run("goal", run_id="r1")
            EXPORTER.clear()
            await orch.replay("r1")
    spans = finished_spans()
    assert attrs(one(spans, "invoke_agent run"))["paor.run.mode"] == "replay"
    served = [s for s in spans if s.name.startswith(("chat", "execute_tool"))]
    assert len(served) == 6
    assert all(attrs(s)["paor.replayed"] is True for s in served)


_NO_EXTRA = """
import sys
sys.modules["opentelemetry"] = None  # as if the extra were not installed
"""
_RUN = """
import anyio
from agents.telemetry import _telemetry
from agents.testing import ScriptedModel
from orchestrator import Orchestrator

plan = '{"subtasks": [{"id": "a", "goal": "Find a.", "depends_on": []}], "rationale": ""}'
model = ScriptedModel([plan, "A", "The answer."])
result = anyio.run(Orchestrator(model).run, "goal")
assert result.status == "complete", result
assert _telemetry.tracer() is None
print(_telemetry.otel is None)
"""


def run_python(code: str, **env: str) -> str:
    """Run `code` in a fresh interpreter at the repository's root; its stdout."""
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        cwd=ROOT,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_runs_work_without_the_extra() -> None:
    """Without opentelemetry a run works, and no span code runs."""
    assert run_python(_NO_EXTRA + _RUN) == "True"


def test_without_a_provider_no_span_is_made() -> None:
    """With the API but no SDK provider (the default proxy), paor makes no span."""
    assert run_python(_RUN) == "False"


class _Receiver(BaseHTTPRequestHandler):
    """An OTLP/HTTP trace receiver: decodes each POST /v1/traces."""

    received: ClassVar[list[ExportTraceServiceRequest]] = []

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        if self.path == "/v1/traces":
            request = ExportTraceServiceRequest()
            request.ParseFromString(body)
            self.received.append(request)
        self.send_response(200 if self.path == "/v1/traces" else 404)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        pass  # quiet


_EXPORT = """
from agents.telemetry import export_otlp

with export_otlp(service_name="paor-test"):
""" + textwrap.indent(_RUN.replace("assert _telemetry.tracer() is None\n", ""), "    ")


def test_spans_are_exported_over_otlp_http() -> None:
    """export_otlp sends a run's spans to OTEL_EXPORTER_OTLP_ENDPOINT before it closes."""
    _Receiver.received = []
    server = HTTPServer(("127.0.0.1", 0), _Receiver)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        endpoint = f"http://127.0.0.1:{server.server_address[1]}"
        run_python(_EXPORT, OTEL_EXPORTER_OTLP_ENDPOINT=endpoint)
    finally:
        server.shutdown()
        server.server_close()
    resources = [r for request in _Receiver.received for r in request.resource_spans]
    names = {s.name for r in resources for scope in r.scope_spans for s in scope.spans}
    assert {"invoke_agent run", "paor.plan", "invoke_agent a", "paor.synthesis"} <= names
    services = {
        a.value.string_value
        for r in resources
        for a in r.resource.attributes
        if a.key == "service.name"
    }
    assert services == {"paor-test"}


@pytest.mark.slow
async def test_temporal_activity_spans_join_the_callers_trace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On Temporal, the activities' chat and tool spans are in the caller's trace; the workflow
    code makes no paor span (its replays would repeat them)."""
    from temporalio.testing import WorkflowEnvironment

    from orchestrator.temporal import TemporalBackend, connect
    from tests._temporal_team import registry

    monkeypatch.setenv("PAOR_TEST_CALLS", str(tmp_path / "calls.txt"))
    binary = Path(sysconfig.get_path("scripts")) / "temporal"
    env = await WorkflowEnvironment.start_local(
        ip="127.0.0.1", ui=False, dev_server_existing_path=str(binary)
    )
    async with env:
        client = await connect(env.client.service_client.config.target_host)
        caller = trace.get_tracer("tests")
        with caller.start_as_current_span("caller") as span:
            async with registry().worker(client, task_queue="otel", sticky_timeout=1.0):
                result = await TemporalBackend(
                    client=client, task_queue="otel", execution_timeout=60
                ).run("g", model="parallel", tools=["search"], run_id="t1")
    assert result.status == "complete"
    spans = finished_spans()
    chats = [s for s in spans if s.name.startswith("chat ")]
    tools = named(spans, "execute_tool search")
    assert chats
    assert tools
    trace_id = span.get_span_context().trace_id
    assert {s.context.trace_id for s in (*chats, *tools)} == {trace_id}
    assert {attrs(t)["paor.agent.id"] for t in tools} <= {"a", "b", "c"}
    assert all(attrs(t)["paor.run.id"] == "t1" for t in tools)
    assert not named(spans, "invoke_agent run")


async def test_a_lone_executor_opens_its_own_agent_span() -> None:
    """An `Executor.run` outside a run opens its `invoke_agent` span, with its chat and tool spans
    inside and its report on it; a run's sub-agent still has exactly one."""
    model = ScriptedModel([call("lookup", key="x"), "The value of x."])
    report = await Executor(model, [lookup]).run("Find x.", agent_id="solo", run_id="r-solo")
    spans = finished_spans()
    agent = one(spans, "invoke_agent solo")
    assert attrs(agent)["gen_ai.conversation.id"] == "r-solo"
    assert attrs(agent)["paor.report.status"] == report.status == "done"
    assert parent_of(one(spans, "execute_tool lookup"), spans) is agent

    EXPORTER.clear()
    with anyio.fail_after(10):
        await Orchestrator(two_agent_team().model, [lookup]).run("goal")
    assert len(named(finished_spans(), "invoke_agent a")) == 1
