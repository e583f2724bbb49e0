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

What is timed is the wait for the reply to begin, where a model that can tell says when its first
token came (`first_token`: paor's `OpenAIChatModel` then streams the request). A reply that has
begun is being written, and a copy would only be written again beside it: a long answer takes
long because it is long, not because it is stuck, and decoding it twice would bill it twice
(a join writing a 250-token answer among 10-token tool calls was hedged every time). The queue,
the slow prefill and the connection that never answers all come before the first token. For a
model that cannot tell, its whole answer is timed.

`Hedging` keeps the recent latencies per kind of request (a sub-agent's step, a plan, a
synthesis: their lengths differ) and says how long to wait before hedging one: `factor` times the
median of the last `window` answers, once `min_samples` have been seen (a request sent before is
judged as soon as they are); never for more than `max_share` of the requests, and one. A kind
seen too seldom to have its own figure (a run's one synthesis, its few replans) is judged by the
waits for a first token over every kind, where the model tells them: that wait does not grow with
what the reply writes, only with the prompt it reads first, so it gets twice `factor` times
their median (one synthesis that hung cost the whole request timeout before). What a
hedge costs is charged: the answer's usage counts twice (the provider bills the copy that lost,
up to where it was cancelled), so budgets stay an upper bound.
"""

from __future__ import annotations

import statistics
from collections import deque
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

import anyio

from agents._tracing import logger

__all__ = ["Hedging", "first_token"]

T = TypeVar("T")
_log = logger("paor.model")
_began: ContextVar[Callable[[], None] | None] = ContextVar("paor_first_token", default=None)


def first_token() -> Callable[[], None] | None:
    """What a model calls when the first piece of its reply arrives, if a hedge is timing the
    request (read by `OpenAIChatModel`, which then streams it); None: nobody is."""
    return _began.get()


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
    _first_tokens: deque[float] = field(init=False, repr=False)
    _waiting: dict[str, set[_Race[Any]]] = field(default_factory=dict, init=False, repr=False)

    def __post_init__(self) -> None:
        if self.factor <= 1.0 or self.min_samples < 1 or self.window < self.min_samples:
            raise ValueError("need factor > 1 and 1 <= min_samples <= window")
        if not 0.0 < self.max_share <= 1.0:
            raise ValueError("need 0 < max_share <= 1")
        self._first_tokens = deque(maxlen=self.window)

    def delay(self, kind: str) -> float | None:
        """Seconds after which a request of `kind` is late, or None while too few of its kind
        (and too few first tokens of any kind) have been seen to tell."""
        seen = self._seen.get(kind)
        if seen is not None and len(seen) >= self.min_samples:
            return self.factor * statistics.median(seen)
        if len(self._first_tokens) >= self.min_samples:
            return 2 * self.factor * statistics.median(self._first_tokens)
        return None

    def observe(self, kind: str, seconds: float, *, first_token: bool = False) -> None:
        """Record the latency of an answered request of `kind`: the seconds to its first token
        (`first_token`), or to its answer."""
        seen = self._seen.get(kind)
        if seen is None:
            seen = self._seen[kind] = deque(maxlen=self.window)
        seen.append(seconds)
        # Requests in flight can now tell whether they are late: of this kind, or of any kind.
        if len(seen) == self.min_samples:
            for race in self._waiting.pop(kind, set()):
                race.wake.set()
        if first_token:
            self._first_tokens.append(seconds)
            if len(self._first_tokens) == self.min_samples:
                for waiting in self._waiting.values():
                    for race in waiting:
                        race.wake.set()
                self._waiting.clear()

    async def send(self, kind: str, attempt: Callable[[], Awaitable[T]]) -> tuple[T, bool]:
        """Run `attempt`, hedged if it is late; return its result and whether a hedge was sent.

        Late is judged by when its reply began, where the model says so (`first_token`), else
        by when it ended. A request sent before enough of its kind were answered is judged once
        they are (the first requests of a run are often its siblings). The first copy to succeed
        wins and the other is cancelled. A copy that fails waits for the other; when both fail,
        the first one's error is raised. A copy that fails before it is late raises at once.
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
        self.observe(kind, race.timed_s, first_token=race.winner in race.began_s)
        return race.won[0], race.copies > 1

    async def _late(self, kind: str, race: _Race[T]) -> bool:
        """Wait until the first copy's reply has begun or ended (False) or it is late and hedges
        are within their share (True)."""
        started = anyio.current_time()
        while (delay := self.delay(kind)) is None:
            waiting = self._waiting.setdefault(kind, set())
            waiting.add(race)
            try:
                await race.wake.wait()  # the first copy began, or enough were timed to tell
            finally:
                waiting.discard(race)
            if race.decided:
                return False
        with anyio.move_on_after(delay - (anyio.current_time() - started)):
            await race.begun.wait()
        # One more than the share, so that two of a run's first requests can both be hedged.
        return not race.decided and self.hedged < self.max_share * self.requests + 1


class _Race(Generic[T]):
    """Copies of one request: the first success, when each copy's reply began, and each copy's
    error."""

    def __init__(self, attempt: Callable[[], Awaitable[T]]) -> None:
        self.attempt = attempt
        self.scope: anyio.CancelScope | None = None
        self.begun = anyio.Event()  # the first copy's reply began (its first token) or it ended
        self.wake = anyio.Event()
        self.errors: dict[int, Exception] = {}
        self.began_s: dict[int, float] = {}
        self.won: tuple[T] | None = None
        self.won_s = 0.0
        self.winner = 0
        self.copies = 0

    @property
    def decided(self) -> bool:
        """Whether the first copy is being answered or has ended (a success ends the race; a
        failure raises)."""
        return self.begun.is_set()

    @property
    def timed_s(self) -> float:
        """The winner's seconds to its first token if its model said, else to its answer."""
        return self.began_s.get(self.winner, self.won_s)

    async def run(self, copy: int) -> None:
        """Send one copy; the first to succeed ends the race (the other is cancelled)."""
        self.copies += 1
        started = anyio.current_time()

        def began() -> None:
            if copy not in self.began_s:
                self.began_s[copy] = anyio.current_time() - started
                if copy == 0:
                    self.begun.set()
                    self.wake.set()

        token = _began.set(began)  # this task's own context: each copy has its own
        try:
            value = await self.attempt()
        except Exception as exc:  # kept: raised if no copy succeeds
            self.errors[copy] = exc
        else:
            if self.won is None:
                self.won, self.won_s, self.winner = (value,), anyio.current_time() - started, copy
                # Only a copy still out needs cancelling: a lone first copy's end is seen
                # through `begun` (cancelling a scope costs more than the whole race).
                if self.copies > 1 and self.scope is not None:
                    self.scope.cancel()
        finally:
            _began.reset(token)
            if copy == 0:
                self.begun.set()
                self.wake.set()
