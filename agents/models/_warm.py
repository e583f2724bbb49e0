"""Cache warming: one request writes a long shared prompt prefix into the provider's cache before
the requests that share it are sent.

A provider caches a prompt's leading tokens once a request carrying them has been answered (OpenAI:
prefixes from 1,024 tokens, billed at a quarter of the input price when read, kept for minutes of
inactivity). The sub-agents a plan starts together send their first requests at one instant with
one prefix (the tools, the instructions, the run's known facts: `Executor.run`'s `shared`), so every
one of them misses the cache and pays the whole prefix at full price.

```
  first request with a cold prefix ── sent ─────────────── answered: the prefix is warm
  the others with that prefix ──────── wait ─────────────────────────┘ sent, prefix read cached
```

`CacheWarming` lets the first request of a cold prefix go alone and holds the others with the same
prefix until it is answered (at most `max_wait_s`). A prefix too short to be cached, or warm
already (used within `ttl_s`), never waits. A writer that fails releases the others, and the
next of them writes the prefix. The trade: the first wave of a fan-out waits for one request, and
the rest of it reads the prefix at the cached price.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import AsyncIterator, Iterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio

from agents._tracing import logger

__all__ = ["CACHED_FROM", "CacheWarming", "prefix_of"]

_log = logger("paor.model")
CACHED_FROM = 1024
"""The shortest prompt, in tokens, that a provider caches (OpenAI's and Anthropic's minimum)."""
_CHARS_PER_TOKEN = 4  # the estimate `memory._tokens` makes without a tokenizer
_MAX_PREFIXES = 1024  # prefixes remembered before the expired ones are dropped
_LEADING_ROLES = ("system", "developer")


@dataclass(kw_only=True)
class CacheWarming:
    """When a request waits for another to write its prefix into the cache (see the module).

    Attributes:
        min_tokens: The shortest prefix the provider caches (estimated at four characters a
            token); a shorter one is never waited for.
        ttl_s: How long a prefix stays warm after a request last used it.
        max_wait_s: The longest a request waits for the writer of its prefix.
    """

    min_tokens: int = CACHED_FROM
    ttl_s: float = 300.0
    max_wait_s: float = 10.0
    waited: int = field(default=0, init=False)
    _prefixes: dict[str, _Prefix] = field(default_factory=dict, init=False, repr=False)

    def __post_init__(self) -> None:
        if self.min_tokens < 1 or self.ttl_s <= 0 or self.max_wait_s <= 0:
            raise ValueError("need min_tokens >= 1, ttl_s > 0 and max_wait_s > 0")

    @asynccontextmanager
    async def turn(self, body: Mapping[str, Any]) -> AsyncIterator[None]:
        """Hold a request until its prefix is warm or this request is the one to write it."""
        key = self._key(body)
        if key is None:
            yield
            return
        writing = await self._wait(key)
        ok = False
        try:
            yield
            ok = True
        finally:
            self._done(key, writing, ok=ok)

    def _key(self, body: Mapping[str, Any]) -> str | None:
        parts = prefix_of(body)
        if len(parts) < _CHARS_PER_TOKEN * self.min_tokens:
            return None
        keyed = f"{body.get('model')}\n{parts}"  # each model has its own cache
        return hashlib.blake2b(keyed.encode(), digest_size=16).hexdigest()

    async def _wait(self, key: str) -> _Prefix | None:
        """Wait for the prefix `key`; return it when this request is the one to write it."""
        counted = False
        with anyio.move_on_after(self.max_wait_s):
            while True:
                now = anyio.current_time()
                prefix = self._prefixes.get(key)
                if prefix is None or (
                    prefix.warm_at is not None and now - prefix.used > self.ttl_s
                ):
                    return self._remember(key, _Prefix(used=now))
                if prefix.warm_at is not None:
                    prefix.used = now
                    return None
                if not counted:
                    self.waited, counted = self.waited + 1, True
                await prefix.written.wait()  # answered, or failed (then one of us writes it)
        _log.info("cache_warming_gave_up", waited_s=self.max_wait_s)
        return None

    def _done(self, key: str, writing: _Prefix | None, *, ok: bool) -> None:
        prefix = self._prefixes.get(key)
        if ok and prefix is not None:
            prefix.used = anyio.current_time()
            if prefix.warm_at is None:  # answered: the provider holds the prefix now
                prefix.warm_at = prefix.used
        if writing is None:
            return
        if writing.warm_at is None and prefix is writing:  # failed: the next waiter writes it
            del self._prefixes[key]
        writing.written.set()

    def _remember(self, key: str, prefix: _Prefix) -> _Prefix:
        if len(self._prefixes) >= _MAX_PREFIXES:
            now = anyio.current_time()
            for stale in [k for k, p in self._prefixes.items() if now - p.used > self.ttl_s]:
                del self._prefixes[stale]
        self._prefixes[key] = prefix
        return prefix


@dataclass(kw_only=True)
class _Prefix:
    used: float
    warm_at: float | None = None
    written: anyio.Event = field(default_factory=anyio.Event)


def prefix_of(body: Mapping[str, Any]) -> str:
    """What a cache sees first in a chat completion request: the tools, the reply format and the
    leading system messages, serialized."""
    return json.dumps(
        [body.get("tools"), body.get("response_format"), list(_leading(body))],
        separators=(",", ":"),
        ensure_ascii=False,
    )


def _leading(body: Mapping[str, Any]) -> Iterator[Any]:
    for message in body.get("messages", ()):
        if not isinstance(message, Mapping) or message.get("role") not in _LEADING_ROLES:
            return
        yield message.get("content")
