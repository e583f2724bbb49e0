"""The stop handle: `Executor.run(stop=...)` ends a sub-agent early, with a partial report.

The other guards work inside every loop, with nothing to build: the loop detector
(`agents/_guards.py`) warns a model repeating itself, then stops it; a tool's circuit breaker
(`agents/_breaker.py`) takes a failing tool off the menu for a while (set by a `Toolbox`'s
`breaker_threshold` and `breaker_cooldown`, which share the breakers between users).
"""

from agents._stop import Stop

__all__ = ["Stop"]
