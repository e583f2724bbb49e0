"""paor on Temporal: the same run loop as a durable workflow, its model and tool calls activities.

Needs the `temporal` extra. Start workers on as many machines as you like, then submit runs:

```python
from pathlib import Path

from orchestrator.temporal import Registry, build_worker, connect, run_on_temporal

client = await connect("127.0.0.1:7233", blobs=Path("/shared/blobs"))  # a folder all machines share
registry = Registry.of({"default": model}, tools=[search_docs])
async with build_worker(client, registry):  # or `paor worker --temporal 127.0.0.1:7233`
    result = await run_on_temporal(client, "goal", tools=["search_docs"])
    report = await research_on_temporal(client, "topic", corpus=corpus)  # `paor research --temporal`
    summary = await batch_on_temporal(client, tasks, out=path)  # `paor batch --temporal`
    recent = await list_runs(client)  # `paor runs --temporal`
```
"""

from orchestrator.temporal._activities import Registry
from orchestrator.temporal._backend import TemporalBackend
from orchestrator.temporal._batch import BatchInput, BatchWorkflow, batch_on_temporal
from orchestrator.temporal._client import WorkflowRun, connect, list_runs, run_on_temporal, start
from orchestrator.temporal._codec import (
    BlobCodec,
    BlobError,
    BlobStore,
    FileBlobStore,
    PayloadGuard,
)
from orchestrator.temporal._effects import ActivityModel, TemporalEffects
from orchestrator.temporal._inputs import Acceptance, AgentInput, Allowance, RunInput
from orchestrator.temporal._remote import RemoteRun, run_result
from orchestrator.temporal._research import RESEARCH_TOOLS, research_input, research_on_temporal
from orchestrator.temporal._worker import (
    DEFAULT_TASK_QUEUE,
    PASSTHROUGH,
    build_replayer,
    build_worker,
)
from orchestrator.temporal._workflows import AgentWorkflow, RunWorkflow

__all__ = [
    "DEFAULT_TASK_QUEUE",
    "PASSTHROUGH",
    "RESEARCH_TOOLS",
    "Acceptance",
    "ActivityModel",
    "AgentInput",
    "AgentWorkflow",
    "Allowance",
    "BatchInput",
    "BatchWorkflow",
    "BlobCodec",
    "BlobError",
    "BlobStore",
    "FileBlobStore",
    "PayloadGuard",
    "Registry",
    "RemoteRun",
    "RunInput",
    "RunWorkflow",
    "TemporalBackend",
    "TemporalEffects",
    "WorkflowRun",
    "batch_on_temporal",
    "build_replayer",
    "build_worker",
    "connect",
    "list_runs",
    "research_input",
    "research_on_temporal",
    "run_on_temporal",
    "run_result",
    "start",
]
