"""`EventStream`: a run's events as an async context manager and iterator, then its result.

The one shape of every streaming API here (`RunStream` in process, `RemoteRun` on Temporal): entering
starts the producer task, which sends the events and closes the stream when the run is over; the
consumer iterates; leaving early cancels the producer. Errors come out unwrapped from the task
groups.
"""

from __future__ import annotations

import math
from types import TracebackType
from typing import Self

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from orchestrator._events import Event
from orchestrator._state import RunResult

__all__ = ["EventStream"]

_BUFFER = 256


class EventStream:
    """Iterate it for a run's events inside `async with`; `result` once the iteration ended.

    Subclasses implement `_produce`, which sends on `_send` and sets `_result` (the stream ends
    when `_produce` returns and closes `_send`).
    """

    _send: MemoryObjectSendStream[Event]
    _receive: MemoryObjectReceiveStream[Event]

    def __init__(self) -> None:
        self._task_group = anyio.create_task_group()
        self._result: RunResult | None = None
        self._buffer: float = _BUFFER

    def unread(self) -> Self:
        """This stream, to be drained by a caller that reads none of its events (`run()` is
        `stream()` drained): they are buffered without bound instead of holding the producer
        until the drain's next turn. Before entering.

        A reader's back-pressure costs a drain its memory: 10,000 sub-agents ending together each
        waited to send with the whole of its state held (S7 over HTTP: 34.5 against 28.1 KiB a
        sub-agent, `python -m benchmarks._memory "paor (HTTP, 100 in flight)" 2000`).
        """
        self._buffer = math.inf
        return self

    @property
    def result(self) -> RunResult:
        """The run's result (after the stream ended).

        Raises:
            RuntimeError: The run has not finished.
        """
        if self._result is None:
            raise RuntimeError("the run has not finished")
        return self._result

    async def __aenter__(self) -> Self:
        self._send, self._receive = anyio.create_memory_object_stream[Event](self._buffer)
        await self._task_group.__aenter__()
        self._task_group.start_soon(self._produce)
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool | None:
        if self._result is None:
            # The consumer left before the end (break, error): stop producing for no one.
            self._task_group.cancel_scope.cancel()
        try:
            return await self._task_group.__aexit__(exc_type, exc, tb)
        except BaseExceptionGroup as group:
            sole = _sole(group)
            if sole is None:
                raise
            raise sole from sole.__cause__  # hide the groups, keep the exception's own cause
        finally:
            self._receive.close()

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> Event:
        try:
            # What is buffered is taken without a yield: `receive()` checkpoints first, so a
            # consumer would take one turn of the event loop per event, and every sub-agent's step
            # would wait behind it (measured: a quarter of a millisecond on a dispatch's p99).
            return self._receive.receive_nowait()
        except anyio.WouldBlock:
            pass
        except anyio.EndOfStream:
            raise StopAsyncIteration from None
        try:
            return await self._receive.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def _produce(self) -> None:
        raise NotImplementedError


def _sole(group: BaseExceptionGroup[BaseException]) -> BaseException | None:
    """The one exception inside nested single-exception groups (the run's and the stream's)."""
    found: BaseException = group
    while isinstance(found, BaseExceptionGroup):
        if len(found.exceptions) != 1:
            return None
        found = found.exceptions[0]
    return found
