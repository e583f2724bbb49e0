"""Provider-aware admission: send a request only when the endpoint's rate limits will take it.

Hosted endpoints limit requests and tokens per minute and say so in every answer (the
`x-ratelimit-limit-*`, `-remaining-*` and `-reset-*` headers) and in each 429 (Retry-After). One
`Admission` is shared by every caller of a model, so every sub-agent of a run (and every item of a
batch) draws on one budget instead of each finding the limit by being refused.

It models each limit as the provider does, a bucket that refills continuously: the limit is its
size, and its refill rate comes from the reset headers (the time to refill what is missing), or the
limit per minute when the bucket is full. Before a request is sent, `admit` waits, first come first
served, until the bucket holds the request's estimated tokens (its body's characters over the
characters per token measured so far, plus the completion tokens replies have averaged, with
headroom); `settle` then puts back or takes the difference from what the reply's usage reports.
The headroom is what the estimates have been seen to fall short by: the largest ratio of a
reply's tokens to its estimate over the last `_ERRORS_KEPT` replies (at least 1, at most
`_HEADROOM_MAX`: one short prompt with a long answer must not hold the next 32 requests for
several times their tokens), and 15% until `_ERRORS_NEEDED` have settled. A fixed 15% held
every request for tokens it would not spend; under a tight limit the run's last and largest
request, the synthesis, waited for them alone.
Each answer's `remaining` only ever lowers the local level (an answer may describe an older moment
than the bucket has already accounted for). A 429 with a Retry-After holds every caller until it
has passed (at most `max_hold_s`).

Until the endpoint has answered once, one request goes out at a time (`first_contact`): a burst of
sub-agents or batch items would otherwise all be sent, and many refused, before the first answer
says what the limits are. The others go on at that answer's headers, which say them: a streamed
plan, whose whole reply takes seconds, does not hold the subtasks it has already written. Until a
reply's usage has said how the endpoint counts tokens, a request is estimated at
`_UNCALIBRATED_CHARS` characters a token, half what English and JSON usually take, so that what
is admitted on the headers alone stays within the limit; the first usage then sets the measure,
and later ones adjust it. Once the endpoint has answered without showing a limit, nothing waits:
a local server costs nothing.
"""

from __future__ import annotations

import email.utils
import math
import re
import time
from collections import deque
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass

import anyio

from agents._tracing import logger

__all__ = ["Admission", "parse_reset", "retry_after"]

_log = logger("paor.admission")
_HEADROOM = 1.15  # until the estimates' own errors are known; what is over is put back
_HEADROOM_MAX = 1.5
_ERRORS_NEEDED = 8
_ERRORS_KEPT = 32
_UNCALIBRATED_CHARS = 2.0  # characters a token before any usage was seen
_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ms|us|µs|ns|h|m|s)")
_UNIT_S = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9}


def parse_reset(value: str | None) -> float | None:
    """Seconds in a reset header: a Go duration ("6m0s", "1.5s", "20ms") or a plain number of
    seconds; None when it is neither."""
    if not value:
        return None
    text = value.strip()
    try:
        seconds = float(text)
    except ValueError:
        parts = _DURATION.findall(text)
        if not parts or "".join(n + u for n, u in parts) != text:
            return None
        seconds = sum(float(n) * _UNIT_S[u] for n, u in parts)
    return seconds if math.isfinite(seconds) and seconds >= 0 else None


@dataclass(slots=True)
class _Bucket:
    """One limit as the provider keeps it (times are `anyio.current_time()`)."""

    limit: float
    rate: float  # refill per second
    level: float
    at: float

    def refill(self, now: float) -> None:
        if now > self.at:
            self.level = min(self.limit, self.level + (now - self.at) * self.rate)
            self.at = now

    def wait_for(self, amount: float) -> float:
        need = min(amount, self.limit) - self.level
        return 0.0 if need <= 0 else need / self.rate


class Admission:
    """Admits model requests within the limits an endpoint has shown (see the module docstring).

    Args:
        max_hold_s: The longest a 429's Retry-After holds callers (an absurd one is capped).

    Attributes:
        waited_s: Seconds callers have spent waiting to be admitted, in total.
        refused: 429s seen.
    """

    def __init__(self, *, max_hold_s: float = 30.0) -> None:
        self.max_hold_s = max_hold_s
        self._requests: _Bucket | None = None
        self._tokens: _Bucket | None = None
        self._hold_until = -math.inf
        self._lock = anyio.Lock()
        self._chars_per_token: float | None = None  # measured from the replies' usage
        self._completion = 0.0
        self._errors: deque[float] = deque(maxlen=_ERRORS_KEPT)  # reply tokens over estimate
        self._limited = False
        self._answered = False
        self._first: anyio.Event | None = None
        self.waited_s = 0.0
        self.refused = 0

    @property
    def limited(self) -> bool:
        """Whether the endpoint has shown any limit (until then `admit` does not wait)."""
        return self._limited

    @property
    def answered(self) -> bool:
        """Whether a first request has been answered (or has failed)."""
        return self._answered

    @asynccontextmanager
    async def first_contact(self) -> AsyncIterator[None]:
        """Around one attempt: the first caller goes ahead, the others wait until it is done."""
        if self._answered:
            yield
            return
        if self._first is not None:
            start = anyio.current_time()
            await self._first.wait()
            self.waited_s += anyio.current_time() - start
            yield
            return
        self._first = anyio.Event()
        try:
            yield
        finally:
            self._release()

    def _release(self) -> None:
        """The endpoint has answered (its headers are in, or the first attempt ended): the
        callers held by `first_contact` go on, admitted by what the answer said."""
        self._answered = True
        if self._first is not None:
            self._first.set()

    def estimate(self, body_chars: int) -> int:
        """The tokens a request whose body has `body_chars` characters will likely count."""
        return math.ceil(self._guess(body_chars) * self.headroom)

    @property
    def headroom(self) -> float:
        """What estimates are multiplied by: the most they have fallen short by of late (see the
        module docstring)."""
        if len(self._errors) < _ERRORS_NEEDED:
            return _HEADROOM
        return min(_HEADROOM_MAX, max(1.0, max(self._errors)))

    def _guess(self, body_chars: int) -> float:
        measured = self._chars_per_token
        if measured is None:
            return body_chars / _UNCALIBRATED_CHARS
        return body_chars / measured + self._completion

    async def admit(self, tokens: int) -> None:
        """Wait until a request of `tokens` estimated tokens fits the limits, then take them."""
        if not self._limited:
            return
        async with self._lock:  # first come, first served: a big request is not starved
            start = anyio.current_time()
            while True:
                now = anyio.current_time()
                wait = self._hold_until - now
                for bucket, amount in ((self._requests, 1), (self._tokens, tokens)):
                    if bucket is not None:
                        bucket.refill(now)
                        wait = max(wait, bucket.wait_for(amount))
                if wait <= 0:
                    break
                await anyio.sleep(wait)
            if self._requests is not None:
                self._requests.level -= 1
            if self._tokens is not None:
                self._tokens.level -= tokens
            self.waited_s += anyio.current_time() - start

    def settle(self, estimated: int, body_chars: int, prompt: int, completion: int) -> None:
        """Correct the token bucket by what a reply's usage says it cost, and learn from it (a
        reply without usage is taken to have cost the estimate)."""
        if prompt <= 0:
            return
        if self._chars_per_token is None:  # the first usage seen sets the measure
            self._chars_per_token, self._completion = body_chars / prompt, float(completion)
        else:
            self._errors.append((prompt + completion) / max(1.0, self._guess(body_chars)))
            self._chars_per_token += 0.2 * (body_chars / prompt - self._chars_per_token)
            self._completion += 0.2 * (completion - self._completion)
        if self._tokens is not None:
            self._tokens.level += estimated - (prompt + completion)

    def refund(self, estimated: int) -> None:
        """Put back the tokens of a request the endpoint refused (a 429 counts no tokens)."""
        if self._tokens is not None:
            self._tokens.level += estimated

    def observe(self, headers: Mapping[str, str], status: int) -> None:
        """Learn from one answer's headers (any status); a 429 holds every caller. Seen as the
        headers arrive, before the body: a streamed first answer releases the others at once,
        admitted within the limits its headers show."""
        now = anyio.current_time()
        for name in ("requests", "tokens"):
            self._learn(name, headers, now)
        if not self._answered:
            self._release()
        if status != 429:
            return
        self.refused += 1
        wait = retry_after(headers)
        if wait is None:  # no hint: the retry's own backoff is the wait
            return
        self._hold_until = max(self._hold_until, now + min(wait, self.max_hold_s))
        self._limited = True
        _log.info("rate_limited", retry_after_s=round(wait, 3), refused=self.refused)

    def _learn(self, name: str, headers: Mapping[str, str], now: float) -> None:
        limit = _number(headers.get(f"x-ratelimit-limit-{name}"))
        remaining = _number(headers.get(f"x-ratelimit-remaining-{name}"))
        if limit is None or remaining is None or limit <= 0:
            return
        reset = parse_reset(headers.get(f"x-ratelimit-reset-{name}"))
        missing = limit - remaining
        rate = missing / reset if reset and missing >= 0.01 * limit else limit / 60.0
        bucket = self._requests if name == "requests" else self._tokens
        if bucket is None:
            bucket = _Bucket(limit=limit, rate=rate, level=remaining, at=now)
            if name == "requests":
                self._requests = bucket
            else:
                self._tokens = bucket
            self._limited = True
            _log.info("rate_limit_learned", kind=name, limit=limit, per_s=round(rate, 3))
            return
        bucket.refill(now)
        bucket.limit = limit
        if reset and missing >= 0.01 * limit:
            bucket.rate = rate
        bucket.level = min(bucket.level, remaining)


def _number(value: str | None) -> float | None:
    try:
        number = float(value or "")
    except ValueError:
        return None
    return number if math.isfinite(number) and number >= 0 else None


def retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds to wait from Retry-After-Ms, or Retry-After as seconds or an HTTP date.

    A value that is no number of seconds to wait (NaN, negative, unparseable) counts as absent:
    the retry falls back to jittered backoff. An infinite or absurd one is kept; `_delay` caps it.
    """
    millis = _seconds(headers.get("retry-after-ms"))
    if millis is not None:
        return millis / 1000
    value = headers.get("retry-after")
    if not value:
        return None
    seconds = _seconds(value)
    if seconds is not None:
        return seconds
    try:
        parsed = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, float(parsed.timestamp()) - time.time())


def _seconds(value: str | None) -> float | None:
    """`value` as a non-negative number (infinity included), or None."""
    try:
        number = float(value or "")
    except ValueError:
        return None
    return number if number >= 0 else None  # NaN fails the comparison too
