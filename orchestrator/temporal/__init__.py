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
from orchestrator.temporal._batch import batch_on_temporal
from orchestrator.temporal._client import connect, list_runs, run_on_temporal, start
from orchestrator.temporal._codec import BlobError, BlobStore, FileBlobStore
from orchestrator.temporal._inputs import RunInput
from orchestrator.temporal._research import research_on_temporal
from orchestrator.temporal._worker import build_replayer, build_worker

__all__ = [
    "BlobError",
    "BlobStore",
    "FileBlobStore",
    "Registry",
    "RunInput",
    "TemporalBackend",
    "batch_on_temporal",
    "build_replayer",
    "build_worker",
    "connect",
    "list_runs",
    "research_on_temporal",
    "run_on_temporal",
    "start",
]
