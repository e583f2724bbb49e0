"""What a hosted provider adds to the simulator: prompt caching rules, rate limits, and prices.

- `CacheRules`: a prompt is cached only from `min_tokens` shared leading tokens, in `step`-token
  increments (OpenAI's rules: 1,024 tokens, then steps of 128), and only once the earlier request
  that wrote the prefix has been answered: a burst of siblings sent at once all miss.
- `RateLimits` and `RateLimiter`: requests and tokens per window as two token buckets that refill
  continuously, the way hosted limits behave. A request over a limit is refused with 429, a
  `Retry-After`/`retry-after-ms` saying when it would pass, and it still counts against the request
  limit (a refused request is not free at OpenAI either). Every answer carries the `x-ratelimit-*`
  headers (limit, remaining and reset, resets as Go durations such as "1.5s" or "6m0s").
- `PRICES`: the simulated model's price, from paor's public price table (cached prompt tokens at
  their own price).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from agents.models import PRICES as LIBRARY_PRICES
from agents.models import Price

__all__ = [
    "CACHE_RULES",
    "PRICES",
    "PRICE_MODEL",
    "CacheRules",
    "RateLimiter",
    "RateLimits",
    "go_duration",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class CacheRules:
    """Which shared prefix a provider actually caches.

    Attributes:
        min_tokens: The shortest prefix that is cached at all.
        step: Cached prefixes grow in steps of this many tokens.
    """

    min_tokens: int = 1024
    step: int = 128

    def cached(self, shared: int) -> int:
        """The cached tokens of a prompt whose first `shared` tokens an answered prompt shared."""
        return 0 if shared < self.min_tokens else shared // self.step * self.step


CACHE_RULES = CacheRules()
"""OpenAI's prompt caching rules."""


PRICE_MODEL = "gpt-4.1-mini"
PRICES: Price = LIBRARY_PRICES[PRICE_MODEL]
"""The simulated model's price: gpt-4.1-mini's in paor's own public table (`agents.models.PRICES`),
the one `Limits(max_cost=...)` prices runs with."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RateLimits:
    """A provider's limits: requests and tokens (prompt and completion) per `window_s` seconds.

    The suite's latencies are about a tenth of a hosted model's, so its window is a tenth of a
    minute too: the limits then bite as they would on the real time scale.
    """

    requests: int | None = None
    tokens: int | None = None
    window_s: float = 6.0


@dataclass(slots=True)
class _Bucket:
    capacity: float
    rate: float  # per second
    level: float
    at: float

    def refill(self, now: float) -> None:
        """Add what flowed in since the last refill (nothing for a moment before it)."""
        self.level = min(self.capacity, self.level + max(0.0, now - self.at) * self.rate)
        self.at = max(self.at, now)

    def wait_for(self, amount: float) -> float:
        need = min(amount, self.capacity) - self.level
        return 0.0 if need <= 0 else need / self.rate

    def reset_s(self) -> float:
        return (self.capacity - self.level) / self.rate


@dataclass(slots=True)
class RateLimiter:
    """The provider's side of `RateLimits`, on the simulator's clock (`time.perf_counter()`).

    Counters: `admitted` and `refused` requests.
    """

    limits: RateLimits
    start: float
    admitted: int = 0
    refused: int = 0
    _requests: _Bucket | None = field(init=False, default=None)
    _tokens: _Bucket | None = field(init=False, default=None)

    def __post_init__(self) -> None:
        window = self.limits.window_s
        if self.limits.requests:
            n = float(self.limits.requests)
            self._requests = _Bucket(n, n / window, n, self.start)
        if self.limits.tokens:
            n = float(self.limits.tokens)
            self._tokens = _Bucket(n, n / window, n, self.start)

    def take(self, tokens: int, now: float) -> float | None:
        """Admit a request of `tokens` tokens (None), or refuse it: the seconds until it would pass."""
        buckets = [b for b in (self._requests, self._tokens) if b is not None]
        for bucket in buckets:
            bucket.refill(now)
        wait = max(
            self._requests.wait_for(1) if self._requests else 0.0,
            self._tokens.wait_for(tokens) if self._tokens else 0.0,
        )
        if self._requests is not None:  # a refused request counts against the request limit
            self._requests.level -= 1
        if wait > 0:
            self.refused += 1
            return wait
        if self._tokens is not None:
            self._tokens.level -= tokens
        self.admitted += 1
        return None

    def headers(self, now: float) -> dict[str, str]:
        """The `x-ratelimit-*` headers of an answer sent at `now`."""
        out: dict[str, str] = {}
        for name, bucket in (("requests", self._requests), ("tokens", self._tokens)):
            if bucket is None:
                continue
            bucket.refill(now)
            out[f"x-ratelimit-limit-{name}"] = str(int(bucket.capacity))
            out[f"x-ratelimit-remaining-{name}"] = str(max(0, math.floor(bucket.level)))
            out[f"x-ratelimit-reset-{name}"] = go_duration(max(0.0, bucket.reset_s()))
        return out

    def refusal_headers(self, wait: float, now: float) -> dict[str, str]:
        """The headers of a 429: Retry-After (whole seconds, rounded up) and retry-after-ms."""
        return {
            **self.headers(now),
            "retry-after": str(math.ceil(wait)),
            "retry-after-ms": str(math.ceil(wait * 1000)),
        }


def go_duration(seconds: float) -> str:
    """`seconds` as OpenAI writes a reset: a Go duration such as "20ms", "1.5s" or "6m0s"."""
    if seconds < 1:
        return f"{math.ceil(seconds * 1000)}ms"
    minutes, rest = divmod(seconds, 60)
    rest_text = f"{round(rest, 3):g}s"
    return f"{int(minutes)}m{rest_text}" if minutes else rest_text
