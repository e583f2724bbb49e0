"""Shared prompt prefixes, exactly, as a provider's prompt cache sees them (`benchmarks._sim`)."""

from __future__ import annotations

import math
from collections.abc import Sequence

__all__ = ["PrefixIndex"]


class PrefixIndex:
    """The longest prompt prefix each request shares with any earlier request, in tokens.

    Prompts are sequences of segments (the tools block, then messages). Whole segments are matched
    through a chain of prefix hashes; at the first segment that differs from every earlier request
    with the same prefix, the shared tokens inside it are counted too, so the figure is exact at
    token level. Each recorded segment carries the time from which it counts (`add`'s `ready`), so
    a provider's cache, which holds a prefix only once the request that wrote it is answered, is
    the same index asked with `match(..., now)`.
    """

    def __init__(self) -> None:
        self._next: dict[int, dict[tuple[str, ...], float]] = {}

    def observe(self, segments: Sequence[Sequence[str]]) -> int:
        """Record a prompt and return how many of its leading tokens an earlier prompt shared."""
        shared = self.match(segments)
        self.add(segments)
        return shared

    def match(self, segments: Sequence[Sequence[str]], now: float = math.inf) -> int:
        """How many leading tokens of a prompt a prompt recorded as ready by `now` shares."""
        shared, node = 0, 0
        for segment in segments:
            seg = segment if isinstance(segment, tuple) else tuple(segment)
            options = self._next.get(node, {})
            if seg in options and options[seg] <= now:
                shared += len(seg)
                node = hash((node, seg))
                continue
            ready = (o for o, t in options.items() if t <= now)
            return shared + max((_common(seg, o) for o in ready), default=0)
        return shared

    def add(self, segments: Sequence[Sequence[str]], ready: float = -math.inf) -> None:
        """Record a prompt, counting from `ready` on."""
        node = 0
        for segment in segments:
            seg = segment if isinstance(segment, tuple) else tuple(segment)
            options = self._next.setdefault(node, {})
            options[seg] = min(options.get(seg, math.inf), ready)
            node = hash((node, seg))


def _common(a: tuple[str, ...], b: tuple[str, ...]) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n
