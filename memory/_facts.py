"""Long-term facts: what an agent should not forget, with where it came from and how sure it is.

A fact is one keyed value in a scope (a user id or a session id): an entity, a figure the user
committed to (a budget), the task's stage, a preference. Its `source` is its provenance ("user",
"tool:NAME", "agent:ID") and its `confidence` how far it can be trusted. Storing a fact whose key
exists already is an upsert with one rule, the same in every store (`merge_fact`): the value with
the higher confidence stays (a tie goes to the newer), and the kept value keeps its own source.

Facts come from two places: the user, through the API (`Fact.from_user`), and tool results whose
keys a tool's caller declares (`facts_from_tool_result`). They reach prompts as a compact block
(`Fact.render`), passed as the `context` of `Executor.run` or into a planner prompt.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Mapping, Sequence
from typing import Any, Literal, Protocol, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from memory._sqlite import SQLiteFile

__all__ = [
    "Fact",
    "FactKind",
    "FactStore",
    "InMemoryFactStore",
    "SQLiteFactStore",
    "facts_from_tool_result",
    "merge_fact",
]

FactKind = Literal["entity", "figure", "stage", "preference", "other"]
"""What a fact is about, which decides how a newer value merges with an older one."""
_VALUE_CHARS = 200
_T = TypeVar("_T")
_COLUMNS = ("scope", "key", "value", "kind", "source", "confidence", "created", "updated")
_SELECT = f"SELECT {', '.join(_COLUMNS)} FROM facts"
_SCHEMA = """
CREATE TABLE IF NOT EXISTS facts (
    scope TEXT NOT NULL,
    key TEXT NOT NULL,
    value TEXT NOT NULL,
    kind TEXT NOT NULL,
    source TEXT NOT NULL,
    confidence REAL NOT NULL,
    created REAL NOT NULL,
    updated REAL NOT NULL,
    PRIMARY KEY (scope, key)
);
CREATE INDEX IF NOT EXISTS facts_by_kind ON facts (scope, kind);
"""


class Fact(BaseModel):
    """One remembered fact with its provenance.

    Attributes:
        key: What the fact is about, unique within its scope ("budget").
        value: The value, as text ("500 EUR").
        kind: entity, figure, stage, preference or other.
        scope: The user id or session id the fact belongs to.
        source: Its provenance: "user", "tool:NAME" or "agent:ID".
        confidence: How far it can be trusted, from 0 to 1.
        created: When the key was first stored (seconds since the epoch).
        updated: When the value was last set.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    key: str = Field(min_length=1)
    value: str
    kind: FactKind = "other"
    scope: str = Field(min_length=1)
    source: str = Field(pattern=r"^(user|tool:.+|agent:.+)$")
    confidence: float = Field(default=1.0, ge=0.0, le=1.0)
    created: float = Field(default_factory=time.time)
    updated: float = Field(default_factory=time.time)

    @classmethod
    def from_user(
        cls,
        scope: str,
        key: str,
        value: Any,
        *,
        kind: FactKind = "preference",
        at: float | None = None,
    ) -> Fact:
        """A fact the user committed to: source "user", full confidence.

        Args:
            scope: The user or session id.
            key: The fact's key ("budget").
            value: Its value (stored as text).
            kind: Its kind; a user's budget is a "figure".
            at: The time it was stated (now if omitted).
        """
        now = time.time() if at is None else at
        return cls(
            key=key,
            value=_text(value),
            kind=kind,
            scope=scope,
            source="user",
            created=now,
            updated=now,
        )

    @staticmethod
    def render(facts: Sequence[Fact], max_chars: int = 1500) -> str:
        """Facts as a compact block for a prompt, at most `max_chars` long ("" if there are none).

        User facts come first, then the rest by confidence (highest first), then by key; facts
        that do not fit are counted in a last line. Long values are cut short.

        ```
        Known facts (source, confidence):
        - budget = 500 EUR (user, 1.0)
        - flight_price = 420 EUR (tool:search_flights, 0.8)
        - (2 more not shown)
        ```
        """
        if not facts:
            return ""
        ordered = sorted(facts, key=lambda f: (f.source != "user", -f.confidence, f.key))
        lines = ["Known facts (source, confidence):"]
        for shown, fact in enumerate(ordered):
            line = f"- {fact.key} = {_cut(fact.value)} ({fact.source}, {round(fact.confidence, 2)})"
            rest = len(ordered) - shown - 1
            # Room is kept for the "more" line, so the block can always end with it.
            if _size([*lines, line, *_more(rest)]) <= max_chars:
                lines.append(line)
                continue
            block = [*lines, *_more(rest + 1)]
            return "\n".join(block) if _size(block) <= max_chars else ""
        return "\n".join(lines)


class FactStore(Protocol):
    """Where facts live. Every store applies `merge_fact` on `put`."""

    async def put(self, fact: Fact) -> Fact:
        """Store `fact` (an upsert by scope and key); return what is stored now."""
        ...

    async def get(self, scope: str, key: str) -> Fact | None:
        """The fact stored under `key` in `scope`, if any."""
        ...

    async def query(self, scope: str, *, kind: FactKind | None = None) -> list[Fact]:
        """The facts of `scope` (of one `kind` if given), ordered by key."""
        ...

    async def delete(self, scope: str, key: str) -> bool:
        """Forget one fact; return whether it existed."""
        ...


def merge_fact(old: Fact | None, new: Fact) -> Fact:
    """The fact to keep when `new` is stored over `old` (same scope and key).

    The higher confidence wins and a tie goes to `new`; the key's `created` time is the first one.
    """
    if old is None:
        return new
    if new.confidence < old.confidence:
        return old
    return new.model_copy(update={"created": min(old.created, new.created)})


class InMemoryFactStore:
    """A `FactStore` in a dict: for tests and short-lived sessions."""

    def __init__(self) -> None:
        self._facts: dict[tuple[str, str], Fact] = {}

    async def put(self, fact: Fact) -> Fact:
        """Store `fact` by the upsert rule; return what is stored now."""
        kept = merge_fact(self._facts.get((fact.scope, fact.key)), fact)
        self._facts[fact.scope, fact.key] = kept
        return kept

    async def get(self, scope: str, key: str) -> Fact | None:
        """The fact under `key` in `scope`, if any."""
        return self._facts.get((scope, key))

    async def query(self, scope: str, *, kind: FactKind | None = None) -> list[Fact]:
        """The facts of `scope` (of one `kind` if given), ordered by key."""
        found = [f for (s, _), f in self._facts.items() if s == scope and kind in (None, f.kind)]
        return sorted(found, key=lambda f: f.key)

    async def delete(self, scope: str, key: str) -> bool:
        """Forget one fact; return whether it existed."""
        return self._facts.pop((scope, key), None) is not None


class SQLiteFactStore(SQLiteFile):
    """A `FactStore` in a SQLite file, in WAL mode, kept off the event loop.

    Every call runs in a worker thread (`anyio.to_thread.run_sync`) on one connection, which a
    lock hands to one thread at a time; an upsert is one `BEGIN IMMEDIATE` transaction, so other
    processes writing the same file are safe too (they wait up to `timeout` for the lock). The
    schema is created on open. Use it as an async context manager, or call `open` and `aclose`.

    ```python
    async with SQLiteFactStore("facts.db") as store:
        await store.put(Fact.from_user("user-1", "budget", "500 EUR", kind="figure"))
        block = Fact.render(await store.query("user-1"))
    ```

    Args:
        path: The database file (created if missing).
        timeout: Seconds to wait for another writer's lock.
    """

    schema = _SCHEMA
    synchronous = "NORMAL"

    def __init__(self, path: str | os.PathLike[str], *, timeout: float = 5.0) -> None:
        super().__init__(path, timeout=timeout)

    async def put(self, fact: Fact) -> Fact:
        """Store `fact` by the upsert rule, in one transaction; return what is stored now."""
        return await self._run(lambda conn: _put(conn, fact))

    async def get(self, scope: str, key: str) -> Fact | None:
        """The fact under `key` in `scope`, if any."""
        return await self._run(lambda conn: _get(conn, scope, key))

    async def query(self, scope: str, *, kind: FactKind | None = None) -> list[Fact]:
        """The facts of `scope` (of one `kind` if given), ordered by key."""
        sql = f"{_SELECT} WHERE scope = ? AND (? IS NULL OR kind = ?) ORDER BY key"
        params = (scope, kind, kind)
        return await self._run(lambda conn: [_fact(r) for r in conn.execute(sql, params)])

    async def delete(self, scope: str, key: str) -> bool:
        """Forget one fact; return whether it existed."""
        sql = "DELETE FROM facts WHERE scope = ? AND key = ?"
        return await self._run(lambda conn: conn.execute(sql, (scope, key)).rowcount > 0)

    def _kind(self) -> str:
        return "fact store"


def _put(conn: sqlite3.Connection, fact: Fact) -> Fact:
    # IMMEDIATE takes the write lock before the read, so no other writer slips in between.
    conn.execute("BEGIN IMMEDIATE")
    try:
        old = _get(conn, fact.scope, fact.key)
        kept = merge_fact(old, fact)
        if kept is not old:
            row = tuple(getattr(kept, column) for column in _COLUMNS)
            conn.execute(f"INSERT OR REPLACE INTO facts VALUES ({', '.join('?' * 8)})", row)
    except Exception:
        conn.rollback()
        raise
    conn.commit()
    return kept


def _get(conn: sqlite3.Connection, scope: str, key: str) -> Fact | None:
    row = conn.execute(f"{_SELECT} WHERE scope = ? AND key = ?", (scope, key)).fetchone()
    return None if row is None else _fact(row)


def _fact(row: tuple[Any, ...]) -> Fact:
    return Fact.model_validate(dict(zip(_COLUMNS, row, strict=True)))


def facts_from_tool_result(
    tool: str,
    value: Any,
    keys: Mapping[str, str],
    *,
    scope: str,
    kind: FactKind = "other",
    confidence: float = 0.8,
    at: float | None = None,
) -> list[Fact]:
    """Facts taken from a tool's dict result, for the result keys a caller declares.

    ```python
    facts_from_tool_result("search_flights", {"cheapest": "420 EUR", "id": "x1"},
                           {"cheapest": "flight_price"}, scope="session-1", kind="figure")
    ```

    Args:
        tool: The tool's name (the facts' source is "tool:NAME").
        value: The tool's result: a mapping or a pydantic model; anything else gives no facts.
        keys: Result key to fact key. Result keys missing or None are skipped.
        scope: The user or session id.
        kind: The kind of every fact taken.
        confidence: Their confidence.
        at: The time of the result (now if omitted).
    """
    if isinstance(value, BaseModel):
        value = value.model_dump(mode="json")
    if not isinstance(value, Mapping):
        return []
    now = time.time() if at is None else at
    return [
        Fact(
            key=fact_key,
            value=_text(value[result_key]),
            kind=kind,
            scope=scope,
            source=f"tool:{tool}",
            confidence=confidence,
            created=now,
            updated=now,
        )
        for result_key, fact_key in keys.items()
        if value.get(result_key) is not None
    ]


def _more(count: int) -> list[str]:
    return [f"- ({count} more not shown)"] if count else []


def _size(lines: list[str]) -> int:
    return len("\n".join(lines))


def _text(value: Any) -> str:
    return value if isinstance(value, str) else str(value)


def _cut(value: str) -> str:
    flat = " ".join(value.split())
    return flat if len(flat) <= _VALUE_CHARS else flat[: _VALUE_CHARS - 1] + "…"
