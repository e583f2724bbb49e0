"""`Stop`: a stop request that cancels the agents it is given to, at once and without a task.

An `anyio.Event` can only be waited on, so an agent stopped by one needs a watcher task that
waits and then cancels the agent's scope; starting it and cancelling it costs each agent two turns
of the event loop. A `Stop` holds the scopes of the agents that use it and cancels them itself.
"""

from __future__ import annotations

import anyio

__all__ = ["Stop", "set_when"]


class Stop:
    """A stop request for one or more running agents (`Executor.run(stop=...)`).

    Setting it cancels, at once, every agent loop it was handed to; an agent handed a stop that
    is already set stops at its first step. Like `anyio.Event`, it is for one event loop.
    """

    __slots__ = ("_scopes", "_set")

    def __init__(self) -> None:
        self._set = False
        self._scopes: set[anyio.CancelScope] = set()

    def set(self) -> None:
        """Request the stop."""
        self._set = True
        for scope in tuple(self._scopes):
            scope.cancel()

    def is_set(self) -> bool:
        """Whether the stop was requested."""
        return self._set

    def attach(self, scope: anyio.CancelScope) -> None:
        """Have `set()` cancel `scope` (at once, if it is already set)."""
        if self._set:
            scope.cancel()
        else:
            self._scopes.add(scope)

    def detach(self, scope: anyio.CancelScope) -> None:
        """Forget `scope` (its loop is over)."""
        self._scopes.discard(scope)


async def set_when(event: anyio.Event, stop: Stop) -> None:
    """Set `stop` once `event` is: the one watcher task a caller's `anyio.Event` needs."""
    await event.wait()
    stop.set()
