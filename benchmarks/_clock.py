"""`sleep_until`: the simulator's latencies, on time to a few tenths of a millisecond.

The event loop's own timers wait in epoll, whose timeout counts whole milliseconds and rounds up,
so `anyio.sleep` came out 0.5 to 1 ms long: every simulated model and tool call did, and the
figures charged that to the framework under test. A real endpoint's answer wakes the loop the
moment it arrives, through its socket. A Linux timerfd does the same: one per event loop, armed to
the earliest deadline and watched by the loop like a socket, wakes it when that deadline comes
(about 0.2 ms late on this machine). Without timerfd (not Linux), `anyio.sleep` is the fallback.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import heapq
import itertools
import os
import time
import weakref
from typing import Any

import anyio

__all__ = ["sleep_until"]


class _Timespec(ctypes.Structure):
    _fields_ = (("tv_sec", ctypes.c_long), ("tv_nsec", ctypes.c_long))


class _Itimerspec(ctypes.Structure):
    _fields_ = (("it_interval", _Timespec), ("it_value", _Timespec))


def _load_libc() -> Any | None:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None
    return libc if hasattr(libc, "timerfd_create") else None


_LIBC = _load_libc()


class _TimerFd:
    """A timerfd armed to the earliest deadline among one loop's sleepers.

    `time.perf_counter()` is CLOCK_MONOTONIC on Linux, the clock the timer counts on, and it is
    armed with the time left, so it never fires before a deadline.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        assert _LIBC is not None
        self._libc: Any = _LIBC
        fd = self._libc.timerfd_create(time.CLOCK_MONOTONIC, os.O_NONBLOCK | os.O_CLOEXEC)
        if fd < 0:
            raise OSError(ctypes.get_errno(), "timerfd_create failed")
        self._fd: int = fd
        self._due: list[tuple[float, int, anyio.Event]] = []
        self._order = itertools.count()  # ties keep arrival order; events never compare
        loop.add_reader(fd, self._fire)
        weakref.finalize(loop, os.close, fd)

    def add(self, deadline: float, woken: anyio.Event) -> None:
        """Set `woken` at the `time.perf_counter()` instant `deadline`."""
        heapq.heappush(self._due, (deadline, next(self._order), woken))
        if self._due[0][2] is woken:
            self._arm()

    def _fire(self) -> None:
        with contextlib.suppress(BlockingIOError):  # re-armed since it became readable
            os.read(self._fd, 8)
        now = time.perf_counter()
        while self._due and self._due[0][0] <= now:
            heapq.heappop(self._due)[2].set()  # a cancelled sleeper's event: set, unread
        self._arm()

    def _arm(self) -> None:
        seconds, nanos = 0, 0  # all zero disarms it
        if self._due:
            left = max(self._due[0][0] - time.perf_counter(), 0.0)
            seconds, nanos = int(left), max(int(left % 1.0 * 1e9), 1)
        spec = _Itimerspec(_Timespec(0, 0), _Timespec(seconds, nanos))
        if self._libc.timerfd_settime(self._fd, 0, ctypes.byref(spec), None) != 0:
            raise OSError(ctypes.get_errno(), "timerfd_settime failed")


_timers: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _TimerFd] = (
    weakref.WeakKeyDictionary()
)


async def sleep_until(deadline: float) -> None:
    """Sleep until the `time.perf_counter()` instant `deadline`; a past deadline never yields.

    Cancellation works as for any wait. The asyncio backend only (the suite's).
    """
    left = deadline - time.perf_counter()
    if left <= 0:
        return
    if _LIBC is None:
        await anyio.sleep(left)
        return
    loop = asyncio.get_running_loop()
    timer = _timers.get(loop)
    if timer is None:
        timer = _timers[loop] = _TimerFd(loop)
    woken = anyio.Event()
    timer.add(deadline, woken)
    await woken.wait()
