"""`RemoteRun`: a run on Temporal as its caller sees it, its events as they happen, then its result.

```python
async with RemoteRun.of(client, run_id) as run:
    async for event in run:
        ...
print(run.result.answer)
```

The events come from the run's workflow a page at a time, through an update that waits for news
(`RunWorkflow.events`). A caller that attaches to a run that has already ended gets no events,
only the result. A run that failed raises the paor error it failed with, in one line.
"""

from __future__ import annotations

import anyio
import anyio.lowlevel
from temporalio.client import (
    Client,
    WorkflowFailureError,
    WorkflowHandle,
    WorkflowUpdateFailedError,
    WorkflowUpdateRPCTimeoutOrCancelledError,
)
from temporalio.exceptions import CancelledError, TerminatedError, TimeoutError
from temporalio.service import RPCError

from agents.errors import RunError
from orchestrator._state import RunResult
from orchestrator._stream import EventStream
from orchestrator.temporal._eventlog import EventPage
from orchestrator.temporal._workflows import RunWorkflow

__all__ = ["RemoteRun", "run_result"]


class RemoteRun(EventStream):
    """A run on Temporal: iterate it for its events; `result` once it has ended.

    Args:
        handle: The run's workflow handle (what `client.start_workflow(RunWorkflow.run, ...)`
            returned; `RemoteRun.of` makes one from a run id).
    """

    def __init__(self, handle: WorkflowHandle[RunWorkflow, RunResult]) -> None:
        super().__init__()
        self.handle = handle

    @classmethod
    def of(cls, client: Client, run_id: str) -> RemoteRun:
        """The run `run_id` on `client`'s server (started, running or ended)."""
        return cls(client.get_workflow_handle_for(RunWorkflow.run, run_id))

    @property
    def run_id(self) -> str:
        """The run's id (its workflow's)."""
        return self.handle.id

    async def _produce(self) -> None:
        async with self._send:  # closed once the result is in: the iteration ends with the run
            await self._follow()
            self._result = await run_result(self.handle)

    async def _follow(self) -> None:
        after = 0
        while True:
            try:
                page: EventPage = await self.handle.execute_update(
                    "events", after, result_type=EventPage
                )
            except WorkflowUpdateRPCTimeoutOrCancelledError:
                # The SDK turns our cancellation into this error: let a cancellation through;
                # otherwise the wait outlived the RPC's timeout, and we ask again.
                await anyio.lowlevel.checkpoint()
                continue
            except (RPCError, WorkflowUpdateFailedError):
                return  # the run had ended before this read: its result says how
            for event in page.events:
                await self._send.send(event)
            if page.done:
                return
            after = page.next


async def run_result(handle: WorkflowHandle[RunWorkflow, RunResult]) -> RunResult:
    """The result of the run `handle` names, once it ends.

    Raises:
        RunError: The run's workflow failed, was cancelled or terminated, or timed out.
    """
    try:
        return await handle.result()
    except WorkflowFailureError as exc:
        raise _run_error(handle.id, exc) from None


def _run_error(run_id: str, exc: WorkflowFailureError) -> RunError:
    """The paor error a failed run's workflow ended with, as one line."""
    cause = exc.cause
    if isinstance(cause, TerminatedError):
        how = "was terminated"
    elif isinstance(cause, CancelledError):
        how = "was cancelled"
    elif isinstance(cause, TimeoutError):
        how = "ran out of time (its execution timeout)"
    else:
        how = f"failed: {getattr(cause, 'message', None) or cause or exc}"
    return RunError(f"run {run_id} {how}; `paor resume {run_id} --temporal ...` continues it")
