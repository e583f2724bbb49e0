"""A worker process of the Temporal tests: `python -m tests._temporal_worker TARGET`.

It prints "ready" once it polls the task queue, then runs until it is killed.
"""

from __future__ import annotations

import os
import sys

import anyio

from orchestrator.temporal import connect
from tests._temporal_team import registry


async def main(target: str) -> None:
    """Serve the test registry on the default task queue."""
    client = await connect(target)
    worker = registry().worker(
        client,
        passthrough=["tests"],
        heartbeat_every=0.3,
        sticky_timeout=1.0,
        identity=f"test-worker-{os.getpid()}",
    )
    async with worker:
        print("ready", flush=True)
        await anyio.sleep_forever()


if __name__ == "__main__":
    anyio.run(main, sys.argv[1])
