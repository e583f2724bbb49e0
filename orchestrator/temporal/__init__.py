"""paor on Temporal: the same run loop as a durable workflow, its model and tool calls activities.

Needs the `temporal` extra. Start workers on as many machines as you like, then submit runs:

```python
from pathlib import Path

from orchestrator.temporal import Registry, TemporalBackend, connect

client = await connect("127.0.0.1:7233", blobs=Path("/shared/blobs"))  # a folder all machines share
registry = Registry.of({"default": model}, tools=[search_docs])
async with registry.worker(client):  # or `paor worker --temporal 127.0.0.1:7233`
    backend = TemporalBackend(client=client)
    result = await backend.run("goal", tools=["search_docs"])
    report = await backend.research("topic", corpus=corpus)  # `paor research --temporal`
    summary = await backend.batch(tasks, out=path)  # `paor batch --temporal`
    recent = await backend.runs()  # `paor runs --temporal`
```
"""

from orchestrator.temporal._activities import Registry
from orchestrator.temporal._backend import TemporalBackend
from orchestrator.temporal._client import connect
from orchestrator.temporal._codec import BlobError, BlobStore
from orchestrator.temporal._inputs import RunInput

__all__ = [
    "BlobError",
    "BlobStore",
    "Registry",
    "RunInput",
    "TemporalBackend",
    "connect",
]
