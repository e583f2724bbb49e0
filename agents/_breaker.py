"""A circuit breaker per tool: closed, open, half-open.

After `threshold` consecutive failures the breaker opens and the tool leaves the menu for `cooldown`
seconds. Then one trial call is let through (half-open): success closes the breaker, failure opens it
again for another cooldown. Time is passed in by the caller (read through the effect boundary), so the
breaker itself stays deterministic under replay.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["BreakerState", "CircuitBreaker"]

BreakerState = Literal["closed", "open", "half_open"]
"""A circuit breaker's state: closed (calls go through), open (refused), half open (one trial)."""


@dataclass(kw_only=True, slots=True)
class CircuitBreaker:
    """The failure memory of one tool.

    Attributes:
        threshold: Consecutive failures that open the breaker.
        cooldown: Seconds the breaker stays open before a trial call.
    """

    threshold: int = 3
    cooldown: float = 30.0
    failures: int = 0
    opened_at: float | None = None
    last_error: str = ""

    def state(self, now: float) -> BreakerState:
        """The state at time `now`."""
        if self.opened_at is None:
            return "closed"
        return "half_open" if now - self.opened_at >= self.cooldown else "open"

    def retry_in(self, now: float) -> float:
        """Seconds until a trial call is allowed (0 when it is)."""
        if self.opened_at is None:
            return 0.0
        return max(0.0, self.cooldown - (now - self.opened_at))

    def record(self, *, ok: bool, now: float, error: str = "") -> bool:
        """Record one call's outcome; return True if this call opened the breaker."""
        if ok:
            self.failures, self.opened_at, self.last_error = 0, None, ""
            return False
        was_half_open = self.state(now) == "half_open"
        self.failures += 1
        self.last_error = error
        if was_half_open or (self.opened_at is None and self.failures >= self.threshold):
            self.opened_at = now
            return True
        return False
