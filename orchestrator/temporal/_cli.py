"""The `--temporal HOST:PORT` side of the command line: submit, inspect and resume runs there.

`research` streams the run's events to the progress display while its workflow runs, and writes
the report here. `show` prints a run's status, plans and sub-agents (a running one's events so far,
read with a query that leaves no trace). `resume` continues a run: it follows one still running,
and restarts one that was terminated, timed out, cancelled or failed from its last completed
workflow step (Temporal's reset), so nothing completed runs again. `worker` serves runs.

Reaching the server is bounded (`CONNECT_TIMEOUT`, 10 s), and for `research` and `batch` so is
everything before the run is submitted, by the command's `--deadline`: a server that never answers
ends the command with one line and exit status 2, not after the SDK's own 30 s of retries.
"""

from __future__ import annotations

import argparse
import math
import sys
import uuid
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from io import StringIO
from pathlib import Path
from typing import Any

import anyio
from temporalio.api.common.v1 import WorkflowExecution
from temporalio.api.enums.v1 import EventType
from temporalio.api.workflowservice.v1 import ResetWorkflowExecutionRequest
from temporalio.client import Client, WorkflowExecutionDescription, WorkflowExecutionStatus
from temporalio.client import WorkflowHandle as Handle
from temporalio.service import RPCError, RPCStatusCode

from agents import AgentLimits as AgentLimits
from agents import ChatModel, ConfigurationError
from agents.approvals import ApprovalRequest, Approver, Decision
from agents.errors import RunError
from agents.toolkits import Corpus, research_tools
from orchestrator._batch import BatchSummary, BatchTask
from orchestrator._events import Event
from orchestrator._limits import Limits
from orchestrator._research import ResearchReport
from orchestrator._state import RunResult
from orchestrator.cli._approve import paused, pick_waiting
from orchestrator.cli._inspect import render_result
from orchestrator.cli._options import mcp_tools
from orchestrator.cli._progress import Progress
from orchestrator.temporal._activities import Registry
from orchestrator.temporal._approvals import decide_on_temporal, waiting_on_temporal
from orchestrator.temporal._backend import TemporalBackend
from orchestrator.temporal._client import CONNECT_TIMEOUT, connect
from orchestrator.temporal._follow import follow_deciding
from orchestrator.temporal._inputs import RunInput
from orchestrator.temporal._remote import RemoteRun, run_result
from orchestrator.temporal._research import follow_research, research_input
from orchestrator.temporal._workflows import RunWorkflow

__all__ = ["approvals", "approve", "batch", "research", "resume", "runs", "show", "worker"]

_ENDED = {
    WorkflowExecutionStatus.FAILED: "failed",
    WorkflowExecutionStatus.TERMINATED: "terminated",
    WorkflowExecutionStatus.TIMED_OUT: "timed out",
    WorkflowExecutionStatus.CANCELED: "cancelled",
}


async def research(
    args: argparse.Namespace, corpus: Corpus, limits: Limits, meta: dict[str, Any]
) -> ResearchReport:
    """`paor research --temporal`: the run on the workers, its events shown as they happen;
    with `--approve`, what waits is asked on the terminal (else the command ends, exit 3, and
    the run waits on Temporal for `paor approve --temporal`)."""
    ends = _ends(args)
    client = await _connect(args, ends)
    tools = await _mcp_names(args, ends)
    approve_mode = getattr(args, "approve", None)
    questions = getattr(args, "questions", 0) or 0
    print(f"paor: submitted to {args.task_queue!r} on {args.temporal}", file=sys.stderr)
    backend = TemporalBackend(client=client, task_queue=args.task_queue)
    if approve_mode is None and not questions:
        return await backend.research(
            args.topic, corpus=corpus, limits=limits, on_event=_progress(), meta=meta, tools=tools
        )
    given = research_input(
        args.topic, limits=limits, meta=meta, tools=tools, approve=approve_mode,
        questions=questions,
    )  # fmt: skip
    run = await backend.start(given)
    return await follow_deciding(client, run, corpus, given.goal, _asker(), _progress())


async def batch(
    args: argparse.Namespace, tasks: list[BatchTask], limits: AgentLimits
) -> BatchSummary:
    """`paor batch --temporal`: the goals in workflows of up to 100; results appended per workflow.
    `--deadline` is one instant for all; `--max-tokens` is split evenly among the workflows."""
    if args.max_cost is not None:
        raise ConfigurationError(
            "--max-cost is not shared across the workflows of `paor batch --temporal` yet: "
            "use --max-tokens, or run the batch without --temporal"
        )
    ends = _ends(args)
    client = await _connect(args, ends)
    tools = await _mcp_names(args, ends)
    print(f"paor: submitting {len(tasks)} goals to {args.task_queue!r}", file=sys.stderr)
    return await TemporalBackend(client=client, task_queue=args.task_queue).batch(
        tasks,
        out=args.out,
        concurrency=args.concurrency,
        limits=limits,
        max_tokens=args.max_tokens,
        deadline_s=args.deadline,
        on_result=lambda key, status: print(f"{key}: {status}", file=sys.stderr),
        tools=tools,
        grounded=not args.ungrounded,
    )


async def runs(args: argparse.Namespace) -> int:
    """`paor runs --temporal`: the server's recent paor workflows."""
    found = await TemporalBackend(client=await _connect(args)).runs()
    print("\n".join(run.line() for run in found) if found else f"no paor runs on {args.temporal}")
    return 0


async def show(args: argparse.Namespace) -> int:
    """`paor show RUN --temporal`: its status, then its result or (running) its events so far."""
    client = await _connect(args)
    handle = client.get_workflow_handle_for(RunWorkflow.run, args.run_id)
    description = await _describe(handle, args.temporal)
    status = _status(description)
    given = await _input(client, handle)
    print(f"run {handle.id}: {status} on {args.temporal}\ngoal: {given.goal}")
    if description.status == WorkflowExecutionStatus.COMPLETED:
        print("\n".join(render_result(await run_result(handle))))
    elif description.status == WorkflowExecutionStatus.RUNNING:
        page = await handle.query(RunWorkflow.progress)
        print(_replay_progress(page.events), end="")
    else:
        try:
            await run_result(handle)
        except RunError as exc:
            print(f"ended: {exc}")
    return 0


async def approvals(args: argparse.Namespace) -> int:
    """`paor approvals --temporal`: what the server's running paor runs wait for."""
    client = await _connect(args)
    lines = []
    for found in await TemporalBackend(client=client).runs():
        if found.status == "running" and found.type == "paor.Run":
            waits = await waiting_on_temporal(client, found.id)
            lines += [f"{found.id}  {w.summary()}" for w in waits]
    print("\n".join(lines) if lines else "nothing waits for a decision")
    return 0


async def approve(
    args: argparse.Namespace,
    decision_for: Callable[[ApprovalRequest], Decision],
    write: Callable[[Path, ResearchReport], int],
) -> int:
    """`paor approve RUN --temporal`: decide what the run waits for (`--id` when several do),
    then follow it to its report, or to what it waits for next."""
    client = await _connect(args)
    handle = client.get_workflow_handle_for(RunWorkflow.run, args.run_id)
    await _describe(handle, args.temporal)
    waiting = await waiting_on_temporal(client, handle.id)
    chosen = pick_waiting(handle.id, [w.approval_id for w in waiting], args.id)
    target = next(w for w in waiting if w.approval_id == chosen)
    await decide_on_temporal(client, handle.id, target.approval_id, decision_for(target))
    given = await _input(client, handle)
    docs = args.docs or (Path(given.meta["docs"]) if given.meta.get("docs") else None)
    corpus = Corpus.from_folder(docs) if docs else Corpus.python_docs()
    report = await follow_deciding(
        client, RemoteRun(handle), corpus, given.goal, _asker(), _progress()
    )
    if report.result.status == "paused":
        return paused(report.result)
    return write(args.out or Path(given.meta.get("out") or "report.md"), report)


async def resume(args: argparse.Namespace, write: Callable[[Path, ResearchReport], int]) -> int:
    """`paor resume RUN --temporal`: follow the run to its end (restarting it if it ended early)."""
    client = await _connect(args)
    handle = client.get_workflow_handle_for(RunWorkflow.run, args.run_id)
    description = await _describe(handle, args.temporal)
    if description.status == WorkflowExecutionStatus.COMPLETED:
        raise ConfigurationError(
            f"run {handle.id} already ended (completed): `paor show {handle.id} --temporal` shows it"
        )
    given = await _input(client, handle)
    if description.status in _ENDED:
        await _restart(client, handle, description)
        print(f"paor: restarted run {handle.id} from its last completed step", file=sys.stderr)
        handle = client.get_workflow_handle_for(RunWorkflow.run, handle.id)  # the new execution
    run = RemoteRun(handle)
    if given.meta.get("command") != "research":
        show_event = _progress()
        async with run:
            async for event in run:
                show_event(event)
        print("\n".join(render_result(run.result)))
        return 0
    docs = args.docs or (Path(given.meta["docs"]) if given.meta.get("docs") else None)
    corpus = Corpus.from_folder(docs) if docs else Corpus.python_docs()
    out = args.out or Path(given.meta.get("out") or "report.md")
    return write(out, await follow_research(run, corpus, on_event=_progress()))


async def worker(
    args: argparse.Namespace, open_model: Callable[[], AbstractAsyncContextManager[ChatModel]]
) -> None:
    """`paor worker`: serve the research tools, the tools of `--mcp FILE`'s servers (connected
    once, for every run the worker serves) and the model (as "default") until interrupted."""
    client = await _connect(args)  # before the model starts: an unreachable server fails fast
    corpus = Corpus.from_folder(args.docs) if args.docs else Corpus.python_docs()
    async with mcp_tools(args.mcp) as mcp, open_model() as model:
        registry = Registry.of({"default": model}, [*research_tools(corpus), *mcp])
        async with registry.worker(client, task_queue=args.task_queue):
            print(f"paor worker: serving {args.task_queue!r} on {args.temporal}", file=sys.stderr)
            await anyio.sleep_forever()


async def _mcp_names(args: argparse.Namespace, ends: float) -> tuple[str, ...]:
    """The names of the tools of `--mcp FILE`'s servers, which the workers serve (they were
    started with the same file): the servers are started here just long enough to list them,
    by `ends` (the command's deadline, on anyio's clock)."""
    async with mcp_tools(args.mcp, within=ends - anyio.current_time()) as tools:
        return tuple(t.name for t in tools)


def _ends(args: argparse.Namespace) -> float:
    """When the command's `--deadline` ends, on anyio's clock (never, without one)."""
    seconds: float | None = getattr(args, "deadline", None)
    return math.inf if seconds is None else anyio.current_time() + seconds


async def _connect(args: argparse.Namespace, ends: float = math.inf) -> Client:
    """A client of the `--temporal` server, waited for `CONNECT_TIMEOUT` at most, and no later
    than `ends` (the command's deadline, on anyio's clock)."""
    if args.blobs is not None:
        args.blobs.mkdir(parents=True, exist_ok=True)  # a wrong path fails now, not mid-run
    left = min(CONNECT_TIMEOUT, ends - anyio.current_time())
    return await connect(args.temporal, blobs=args.blobs, timeout_s=left)


def _asker() -> Approver | None:
    """The person at the terminal, if there is one (else the command stops where a run waits)."""
    if sys.stdin.isatty() and sys.stderr.isatty():
        from orchestrator.cli._approve import TerminalPrompt

        return Approver(decide=TerminalPrompt())
    return None


def _progress() -> Callable[[Event], None]:
    return Progress(out=sys.stderr, live=sys.stderr.isatty()).update


def _replay_progress(events: tuple[Event, ...]) -> str:
    """The plain progress lines of `events`, as `paor research` printed them."""
    out = StringIO()
    progress = Progress(out=out, live=False)
    for event in events:
        progress.update(event)
    return out.getvalue()


async def _describe(
    handle: Handle[RunWorkflow, RunResult], target: str
) -> WorkflowExecutionDescription:
    try:
        description = await handle.describe()
    except RPCError as exc:
        if exc.status == RPCStatusCode.NOT_FOUND:
            raise ConfigurationError(f"no run {handle.id} on {target}") from None
        raise
    if description.workflow_type != "paor.Run":
        raise ConfigurationError(
            f"{handle.id} is a {description.workflow_type} workflow, not a paor run"
        )
    return description


def _status(description: WorkflowExecutionDescription) -> str:
    status = description.status
    return status.name.lower().replace("_", " ") if status else "unknown"


async def _input(client: Client, handle: Handle[RunWorkflow, RunResult]) -> RunInput:
    """The input the run was started with (the first event of its first execution)."""
    async for event in client.get_workflow_handle(handle.id).fetch_history_events():
        attributes = event.workflow_execution_started_event_attributes
        (given,) = await client.data_converter.decode(attributes.input.payloads, [RunInput])
        return RunInput.model_validate(given)
    raise ConfigurationError(f"run {handle.id} has no history")


async def _restart(
    client: Client,
    handle: Handle[RunWorkflow, RunResult],
    description: WorkflowExecutionDescription,
) -> None:
    """Reset the run's workflow to its last completed workflow task: completed activities and
    sub-agents keep their results, and the run goes on from there."""
    last = 0
    async for event in client.get_workflow_handle(
        handle.id, run_id=description.run_id
    ).fetch_history_events():
        if event.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED:
            last = event.event_id
    if not last:
        raise ConfigurationError(f"run {handle.id} never started: submit it again")
    await client.workflow_service.reset_workflow_execution(
        ResetWorkflowExecutionRequest(
            namespace=client.namespace,
            workflow_execution=WorkflowExecution(workflow_id=handle.id, run_id=description.run_id),
            reason="paor resume",
            workflow_task_finish_event_id=last,
            request_id=uuid.uuid4().hex,
        )
    )
