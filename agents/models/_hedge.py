"""Hedged requests: a second copy of a model request that is late, the first answer taken.

A provider's latencies have a heavy tail: a request queued behind a long one, a slow replica, a
connection that takes the request and never answers. Waiting for the timeout costs the timeout;
retrying after it costs the timeout and the retry. A hedge (Dean and Barroso, "The Tail at Scale")
sends the same request again once the first has taken clearly longer than requests of its kind
usually do, and takes whichever answers first; the other is cancelled.

```
  send ──────────── late (factor × median of its kind) ──▶ send the same again
    └── first answer wins, the other is cancelled; a failure waits for the other copy
```

`Hedging` keeps the recent latencies per kind of request (a sub-agent's step, a plan, a
synthesis: their lengths differ) and says how long to wait before hedging one: `factor` times the
median of the last `window` answers, once `min_samples` have been seen (a request sent before is
judged as soon as they are); never for more than `max_share` of the requests, and one. What a hedge costs is charged: the answer's usage counts twice (the
provider bills the copy that lost, up to where it was cancelled), so budgets stay an upper bound.
"""

from __future__ import annotations

import statistics
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

import anyio

from agents._tracing import logger

__all__ = ["Hedging"]

T = TypeVar("T")
_log = logger("paor.model")


@dataclass(kw_only=True)
class Hedging:
    """When to send a late model request again (see the module's docstring).

    Attributes:
        factor: Hedge once a request has taken this many times the median latency of its kind.
        min_samples: Answers of a kind seen before any request of that kind is hedged.
        window: How many recent answers of each kind the median is taken over.
        max_share: The most of all requests that may be hedged.
    """

    factor: float = 2.0
    min_samples: int = 5
    window: int = 50
    max_share: float = 0.1
    requests: int = field(default=0, init=False)
    hedged: int = field(default=0, init=False)
    _seen: dict[str, deque[float]] = field(default_factory=dict, init=False, repr=False)
    _waiting: dict[str, set[_Race[Any]]] = field(default_factory=dict, init=False, repr=False)

    def __post_init__(self) -> None:
        if self.factor <= 1.0 or self.min_samples < 1 or self.window < self.min_samples:
            raise ValueError("need factor > 1 and 1 <= min_samples <= window")
        if not 0.0 < self.max_share <= 1.0:
            raise ValueError("need 0 < max_share <= 1")

    def delay(self, kind: str) -> float | None:
        """Seconds after which a request of `kind` is late, or None while too few of its kind
        have been answered to tell."""
        seen = self._seen.get(kind)
        if seen is None or len(seen) < self.min_samples:
            return None
        return self.factor * statistics.median(seen)

    def observe(self, kind: str, seconds: float) -> None:
        """Record the latency of an answered request of `kind`."""
        seen = self._seen.get(kind)
        if seen is None:
            seen = self._seen[kind] = deque(maxlen=self.window)
        seen.append(seconds)
        if len(seen) == self.min_samples:  # requests in flight can now tell whether they are late
            for race in self._waiting.pop(kind, set()):
                race.wake.set()

    async def send(self, kind: str, attempt: Callable[[], Awaitable[T]]) -> tuple[T, bool]:
        """Run `attempt`, hedged if it is late; return its result and whether a hedge was sent.

        A request sent before enough of its kind were answered is judged once they are (the
        first requests of a run are often its siblings). The first copy to succeed wins and the
        other is cancelled. A copy that fails waits for the other; when both fail, the first
        one's error is raised. A copy that fails before it is late raises at once.
        """
        self.requests += 1
        race = _Race(attempt)
        async with anyio.create_task_group() as tg:
            race.scope = tg.cancel_scope
            tg.start_soon(race.run, 0)
            if await self._late(kind, race):
                self.hedged += 1
                _log.info("model_hedged", kind=kind, hedged=self.hedged, requests=self.requests)
                tg.start_soon(race.run, 1)
        if race.won is None:
            raise race.errors[min(race.errors)]
        self.observe(kind, race.won_s)
        return race.won[0], race.copies > 1

    async def _late(self, kind: str, race: _Race[T]) -> bool:
        """Wait until the first copy is decided (False: a success cancels this wait) or late and
        hedges are within their share (True)."""
        started = anyio.current_time()
        while (delay := self.delay(kind)) is None:
            waiting = self._waiting.setdefault(kind, set())
            waiting.add(race)
            try:
                await race.wake.wait()  # the first copy ended, or enough of its kind answered
            finally:
                waiting.discard(race)
            if race.decided:
                return False
        with anyio.move_on_after(delay - (anyio.current_time() - started)):
            await race.first_done.wait()
        # One more than the share, so that two of a run's first requests can both be hedged.
        return not race.decided and self.hedged < self.max_share * self.requests + 1


class _Race(Generic[T]):
    """Copies of one request: the first success, and each copy's error."""

    def __init__(self, attempt: Callable[[], Awaitable[T]]) -> None:
        self.attempt = attempt
        self.scope: anyio.CancelScope | None = None
        self.first_done = anyio.Event()
        self.wake = anyio.Event()
        self.errors: dict[int, Exception] = {}
        self.won: tuple[T] | None = None
        self.won_s = 0.0
        self.copies = 0

    @property
    def decided(self) -> bool:
        """Whether the first copy has ended (a success ends the race; a failure raises)."""
        return self.first_done.is_set()

    async def run(self, copy: int) -> None:
        """Send one copy; the first to succeed ends the race (the other is cancelled)."""
        self.copies += 1
        started = anyio.current_time()
        try:
            value = await self.attempt()
        except Exception as exc:  # kept: raised if no copy succeeds
            self.errors[copy] = exc
        else:
            if self.won is None:
                self.won, self.won_s = (value,), anyio.current_time() - started
                # Only a copy still out needs cancelling: a lone first copy's end is seen
                # through `first_done` (cancelling a scope costs more than the whole race).
                if self.copies > 1 and self.scope is not None:
                    self.scope.cancel()
        finally:
            if copy == 0:
                self.first_done.set()
                self.wake.set()
