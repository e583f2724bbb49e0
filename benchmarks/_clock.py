"""`sleep_until`: the simulator's latencies, on time to a tenth of a millisecond.

The event loop's own timers wait in epoll, which counts whole milliseconds and rounds up, so
`anyio.sleep` came out 0.5 to 1 ms long: every simulated model and tool call did, and the figures
charged that to the framework under test. A real endpoint's answer wakes the loop through its socket
the moment it arrives. Here one thread keeps the due instants and waits on a condition variable
(precise to about 0.1 ms); when one comes due it wakes its sleeper through the loop's self-pipe,
which is also a socket wake-up.
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import itertools
import os
import threading
import time
from collections.abc import Callable

import anyio

__all__ = ["sleep_until"]


class _Alarms:
    """Due instants in a heap, served by one daemon thread started on first use."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        """Forget every alarm and the thread (a forked child has no thread to serve them)."""
        self._due: list[tuple[float, int, Callable[[], None]]] = []
        self._order = itertools.count()  # ties keep arrival order; callables never compare
        self._changed = threading.Condition()
        self._thread: threading.Thread | None = None

    def add(self, deadline: float, wake: Callable[[], None]) -> None:
        """Call `wake` from the alarm thread at the `time.perf_counter()` instant `deadline`."""
        with self._changed:
            if self._thread is None:
                self._thread = threading.Thread(target=self._serve, name="sim-alarms", daemon=True)
                self._thread.start()
            heapq.heappush(self._due, (deadline, next(self._order), wake))
            self._changed.notify()

    def _serve(self) -> None:
        with self._changed:
            while True:
                if not self._due:
                    self._changed.wait()
                    continue
                left = self._due[0][0] - time.perf_counter()
                if left > 0:
                    self._changed.wait(left)  # an earlier alarm may arrive meanwhile: re-check
                    continue
                heapq.heappop(self._due)[2]()


_alarms = _Alarms()
os.register_at_fork(after_in_child=_alarms.reset)  # nobody in the child waits on the parent's


async def sleep_until(deadline: float) -> None:
    """Sleep until the `time.perf_counter()` instant `deadline`; a past deadline never yields.

    Cancellation works as for any wait: the alarm then fires into an event nobody waits on.
    The asyncio backend only (the suite's).
    """
    if deadline <= time.perf_counter():
        return
    loop = asyncio.get_running_loop()
    woken = anyio.Event()

    def wake() -> None:
        # RuntimeError: the loop closed while the alarm was pending, so nobody is waiting.
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(woken.set)

    _alarms.add(deadline, wake)
    await woken.wait()
