"""What a worker runs paor's workflows with (`Registry.worker`, `Registry.replayer`): the
workflows, and the sandbox they run in.

The paor loops run on anyio inside the workflow sandbox. The sandbox re-imports every module a
workflow uses for each run unless it is passed through; anyio, structlog, pydantic and paor itself
are (they hold no workflow state), and anyio's asyncio backend is imported here, up front, because
anyio imports it lazily and the sandbox forbids that import later.
"""

from __future__ import annotations

from collections.abc import Iterable

import anyio._backends._asyncio  # noqa: F401  (see the module docstring)
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner, SandboxRestrictions

from orchestrator.temporal._batch import BatchWorkflow
from orchestrator.temporal._workflows import AgentWorkflow, RunWorkflow

__all__ = ["PASSTHROUGH", "REPLAY_BUILD", "WORKFLOWS", "sandbox"]

PASSTHROUGH = (
    "anyio", "sniffio", "structlog", "pydantic", "pydantic_core", "typing_inspection",
    "annotated_types", "agents", "memory", "orchestrator", "openai", "httpx", "httpx2",
    "httpcore", "httpcore2", "opentelemetry",
    "jsonschema", "jsonschema_specifications", "referencing", "rpds", "attrs",  # typed runs
)  # fmt: skip
"""Modules the workflow sandbox shares with the worker instead of re-importing them."""

WORKFLOWS = [RunWorkflow, AgentWorkflow, BatchWorkflow]
REPLAY_BUILD = "paor"
"""The build id a replayer's workflows see (their queue is `replay-paor`)."""


def sandbox(passthrough: Iterable[str]) -> SandboxedWorkflowRunner:
    """The workflow sandbox, sharing `PASSTHROUGH` and `passthrough` with the worker."""
    restrictions = SandboxRestrictions.default.with_passthrough_modules(*PASSTHROUGH, *passthrough)
    return SandboxedWorkflowRunner(restrictions=restrictions)
