"""Connecting to Temporal, submitting runs and listing them."""

from __future__ import annotations

import dataclasses
import uuid
from datetime import datetime, timedelta
from pathlib import Path

import anyio
from pydantic import BaseModel, ConfigDict
from temporalio.client import Client, Interceptor, WorkflowHandle
from temporalio.contrib.pydantic import pydantic_data_converter

from agents import ConfigurationError
from orchestrator._config import RunConfig
from orchestrator._limits import Limits
from orchestrator._state import RunResult
from orchestrator.temporal._activities import DEFAULT_TASK_QUEUE
from orchestrator.temporal._codec import DEFAULT_INLINE_LIMIT, BlobStore, PayloadGuard, codec_for
from orchestrator.temporal._inputs import RunInput
from orchestrator.temporal._remote import RemoteRun
from orchestrator.temporal._workflows import RunWorkflow

__all__ = [
    "CONNECT_TIMEOUT",
    "WorkflowRun",
    "config_with",
    "connect",
    "list_runs",
    "new_run_id",
    "start",
    "start_workflow",
]

_PAOR_WORKFLOWS = "WorkflowType IN ('paor.Run', 'paor.Batch')"
CONNECT_TIMEOUT = 10.0
"""Seconds `connect` waits for the server by default (the SDK alone retries for about 30 s)."""


class WorkflowRun(BaseModel):
    """A paor workflow as the server lists it.

    Attributes:
        id: The workflow's id (a run's id, or a batch chunk's).
        type: The workflow type: "paor.Run" or "paor.Batch".
        status: Its status, lower case ("running", "completed", "failed", ...).
        started: When it started (UTC).
    """

    model_config = ConfigDict(frozen=True)

    id: str
    type: str
    status: str
    started: datetime

    def line(self) -> str:
        """The run on one line: id, status, type, start time."""
        return f"{self.id}  {self.status}  {self.type}  {self.started:%Y-%m-%d %H:%M:%S}"


async def connect(
    target: str,
    *,
    namespace: str = "default",
    blobs: BlobStore | Path | None = None,
    inline_limit: int = DEFAULT_INLINE_LIMIT,
    timeout_s: float = CONNECT_TIMEOUT,
) -> Client:
    """A client of the Temporal server at `target` ("HOST:PORT"), with paor's data converter.

    Workers built from the client (`Registry.worker`) use its data converter, codec included, for
    workflows and activities alike. Give the client and every worker the same `blobs`.

    Args:
        target: The server's "HOST:PORT".
        namespace: The Temporal namespace.
        blobs: Where payloads above `inline_limit` bytes are kept (a folder, shared by all
            machines, or any `BlobStore`). Without one, a payload over 1.5 MiB fails with advice
            rather than hitting Temporal's 2 MB limit.
        inline_limit: The largest payload, in serialized bytes, sent inline.
        timeout_s: Seconds to wait for the server to answer (a command gives what is left of
            its deadline, when that is less).

    Raises:
        ConfigurationError: The server cannot be reached, or does not answer within
            `timeout_s`: one line naming it.
    """
    converter = dataclasses.replace(
        pydantic_data_converter, payload_codec=codec_for(blobs, inline_limit=inline_limit)
    )
    try:
        with anyio.fail_after(timeout_s):
            return await Client.connect(
                target, namespace=namespace, data_converter=converter, interceptors=_tracing()
            )
    except TimeoutError:
        shown = f"{max(timeout_s, 0.0):.1f}".removesuffix(".0")
        raise ConfigurationError(
            f"the Temporal server at {target} did not answer within {shown} s"
        ) from None
    except RuntimeError as exc:
        raise ConfigurationError(f"cannot reach the Temporal server at {target}") from exc


def config_with(config: RunConfig, limits: Limits | None) -> RunConfig:
    """`config` with `limits` as its limits, when given."""
    return config if limits is None else config.model_copy(update={"limits": limits})


async def start(
    client: Client,
    given: RunInput,
    *,
    task_queue: str = DEFAULT_TASK_QUEUE,
    execution_timeout: float | None = None,
) -> RemoteRun:
    """Start the workflow of `given` on `task_queue`; iterate what it returns for the run's events.

    ```python
    async with await start(client, given) as run:
        async for event in run:
            ...
    result = run.result
    ```
    """
    return RemoteRun(await start_workflow(client, given, task_queue, execution_timeout))


async def start_workflow(
    client: Client, given: RunInput, task_queue: str, execution_timeout: float | None
) -> WorkflowHandle[RunWorkflow, RunResult]:
    guard = client.data_converter.payload_codec
    if isinstance(guard, PayloadGuard):  # no blob store: the workflow checks its requests' sizes
        given = given.model_copy(update={"payload_limit": guard.limit})
    return await client.start_workflow(
        RunWorkflow.run,
        given,
        id=given.run_id,
        task_queue=task_queue,
        execution_timeout=None
        if execution_timeout is None
        else timedelta(seconds=execution_timeout),
    )


async def list_runs(client: Client, *, limit: int = 20) -> list[WorkflowRun]:
    """The `limit` most recent paor workflows on the server, newest first."""
    found = []
    async for execution in client.list_workflows(_PAOR_WORKFLOWS, limit=limit):
        status = execution.status.name.lower() if execution.status else "unknown"
        found.append(
            WorkflowRun(
                id=execution.id,
                type=execution.workflow_type,
                status=status,
                started=execution.start_time,
            )
        )
    return found


def _tracing() -> list[Interceptor]:
    """Temporal's OpenTelemetry interceptor, when the extra is installed: the trace context of the
    caller travels in workflow and activity headers, so activity-side spans join the caller's
    trace (the workers built from this client use it too)."""
    try:
        from temporalio.contrib.opentelemetry import TracingInterceptor
    except ImportError:
        return []
    return [TracingInterceptor()]


def new_run_id() -> str:
    """A fresh run id (also the workflow's id)."""
    return uuid.uuid4().hex[:12]
