"""`build_worker`: a Temporal worker that runs paor workflows and their activities.

The paor loops run on anyio inside the workflow sandbox. The sandbox re-imports every module a
workflow uses for each run unless it is passed through; anyio, structlog, pydantic and paor itself
are (they hold no workflow state), and anyio's asyncio backend is imported here, up front, because
anyio imports it lazily and the sandbox forbids that import later.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import timedelta

import anyio._backends._asyncio  # noqa: F401  (see the module docstring)
from temporalio.client import Client
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.converter import DataConverter
from temporalio.worker import Replayer, Worker
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner, SandboxRestrictions

from orchestrator.temporal._activities import DEFAULT_TASK_QUEUE, Activities, Registry, register
from orchestrator.temporal._batch import BatchWorkflow
from orchestrator.temporal._workflows import AgentWorkflow, RunWorkflow

__all__ = ["DEFAULT_TASK_QUEUE", "PASSTHROUGH", "build_replayer", "build_worker"]

PASSTHROUGH = (
    "anyio", "sniffio", "structlog", "pydantic", "pydantic_core", "typing_inspection",
    "annotated_types", "agents", "memory", "orchestrator", "openai", "httpx", "httpx2",
    "httpcore", "httpcore2", "opentelemetry",
    "jsonschema", "jsonschema_specifications", "referencing", "rpds", "attrs",  # typed runs
)  # fmt: skip
"""Modules the workflow sandbox shares with the worker instead of re-importing them."""

WORKFLOWS = [RunWorkflow, AgentWorkflow, BatchWorkflow]
_REPLAY_BUILD = "paor"


def build_worker(
    client: Client,
    registry: Registry,
    *,
    task_queue: str = DEFAULT_TASK_QUEUE,
    passthrough: Iterable[str] = (),
    heartbeat_every: float = 1.0,
    sticky_timeout: float = 5.0,
    identity: str | None = None,
) -> Worker:
    """A worker for `task_queue`: run it with `await worker.run()` (or `async with worker`).

    Args:
        client: A client made by `connect` (it carries the pydantic data converter).
        registry: The models and tools this worker serves (every worker of a queue needs the same).
        task_queue: The queue to poll.
        passthrough: More modules the sandbox should share (those defining your tools and models).
        heartbeat_every: Seconds between a running tool's heartbeats.
        sticky_timeout: Seconds a run's next workflow task waits for this worker before any
            worker may take it (how soon a dead worker's runs move on).
        identity: The worker's name in Temporal's records.
    """
    register(task_queue, registry)
    activities = Activities(registry, heartbeat_every=heartbeat_every)
    return Worker(
        client,
        task_queue=task_queue,
        workflows=WORKFLOWS,
        activities=[activities.model_call, activities.tool_call],
        workflow_runner=_sandbox(passthrough),
        sticky_queue_schedule_to_start_timeout=timedelta(seconds=sticky_timeout),
        identity=identity,
    )


def build_replayer(
    registry: Registry,
    *,
    passthrough: Iterable[str] = (),
    data_converter: DataConverter = pydantic_data_converter,
) -> Replayer:
    """A `Replayer` of paor workflow histories: `await replayer.replay_workflow(history)` raises
    if today's code would not make the recorded decisions (check a new version against old runs).

    Args:
        registry: What the recorded runs' workers served (workflows resolve names in it).
        passthrough: More modules the sandbox should share (as for `build_worker`).
        data_converter: The client's (`client.data_converter`: it holds the blob codec).
    """
    register(f"replay-{_REPLAY_BUILD}", registry)  # the queue a replayed workflow sees
    return Replayer(
        workflows=WORKFLOWS,
        build_id=_REPLAY_BUILD,
        data_converter=data_converter,
        workflow_runner=_sandbox(passthrough),
    )


def _sandbox(passthrough: Iterable[str]) -> SandboxedWorkflowRunner:
    restrictions = SandboxRestrictions.default.with_passthrough_modules(*PASSTHROUGH, *passthrough)
    return SandboxedWorkflowRunner(restrictions=restrictions)
