"""The loop guards: circuit breakers, the loop detector, and the stop handle."""

from agents._breaker import CircuitBreaker
from agents._guards import LoopDetector, StopReason
from agents._stop import Stop

__all__ = [
    "CircuitBreaker",
    "LoopDetector",
    "Stop",
    "StopReason",
]
