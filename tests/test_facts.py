"""Long-term facts: the upsert rule, scopes, SQLite durability and concurrency, prompt rendering."""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator
from contextlib import closing
from pathlib import Path

import anyio
import pytest
from pydantic import BaseModel, ValidationError

from agents import Executor
from agents.testing import ScriptedModel
from memory import FactStore, InMemoryFactStore, SQLiteFactStore, UserMessage
from memory._facts import facts_from_tool_result
from memory.facts import Fact, FactKind

pytestmark = pytest.mark.anyio


def _fact(
    key: str,
    value: str,
    confidence: float,
    *,
    source: str = "tool:search",
    at: float = 1.0,
    scope: str = "s1",
) -> Fact:
    return Fact(
        key=key,
        value=value,
        scope=scope,
        source=source,
        confidence=confidence,
        created=at,
        updated=at,
    )


@pytest.fixture(params=["memory", "sqlite"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[FactStore]:
    """Each store implementation, empty."""
    if request.param == "memory":
        yield InMemoryFactStore()
        return
    async with SQLiteFactStore(tmp_path / "facts.db") as sqlite_store:
        yield sqlite_store


async def test_the_higher_confidence_value_stays_with_its_provenance(store: FactStore) -> None:
    """A lower-confidence value never overwrites a higher one; the kept value keeps its source."""
    await store.put(_fact("budget", "450 EUR", 0.6, at=1.0))
    kept = await store.put(Fact.from_user("s1", "budget", "500 EUR", kind="figure", at=2.0))
    assert (kept.value, kept.source, kept.confidence, kept.kind) == (
        "500 EUR",
        "user",
        1.0,
        "figure",
    )
    assert (kept.created, kept.updated) == (1.0, 2.0)
    after = await store.put(_fact("budget", "400 EUR", 0.9, at=3.0))
    assert after == kept
    assert await store.get("s1", "budget") == kept


async def test_a_tie_in_confidence_goes_to_the_newer_value(store: FactStore) -> None:
    """The user correcting a figure replaces it; the key's creation time is kept."""
    await store.put(Fact.from_user("s1", "budget", "500 EUR", kind="figure", at=1.0))
    await store.put(Fact.from_user("s1", "budget", "600 EUR", kind="figure", at=5.0))
    fact = await store.get("s1", "budget")
    assert fact is not None
    assert (fact.value, fact.created, fact.updated) == ("600 EUR", 1.0, 5.0)


async def test_scopes_are_isolated(store: FactStore) -> None:
    """The same key in two scopes are two facts; reading or deleting one leaves the other."""
    await store.put(_fact("city", "Lyon", 0.8, scope="alice"))
    await store.put(_fact("city", "Porto", 0.8, scope="bob"))
    assert [f.value for f in await store.query("alice")] == ["Lyon"]
    assert await store.delete("alice", "city") is True
    assert await store.delete("alice", "city") is False
    assert await store.get("alice", "city") is None
    bob = await store.get("bob", "city")
    assert bob is not None
    assert bob.value == "Porto"


async def test_query_filters_by_kind_and_orders_by_key(store: FactStore) -> None:
    """A query lists a scope's facts by key, optionally of one kind."""
    kinds: list[tuple[str, FactKind]] = [
        ("stage", "stage"),
        ("budget", "figure"),
        ("airline", "preference"),
    ]
    for key, kind in kinds:
        await store.put(Fact.from_user("s1", key, f"{key} value", kind=kind, at=1.0))
    assert [f.key for f in await store.query("s1")] == ["airline", "budget", "stage"]
    assert [f.key for f in await store.query("s1", kind="figure")] == ["budget"]
    assert await store.query("nobody") == []


async def test_sqlite_store_is_in_wal_mode_with_its_schema(tmp_path: Path) -> None:
    """Opening creates the file in WAL mode with the facts table."""
    path = tmp_path / "facts.db"
    async with SQLiteFactStore(path):
        pass
    with closing(sqlite3.connect(path)) as raw:
        assert raw.execute("PRAGMA journal_mode").fetchone() == ("wal",)
        tables = raw.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
    assert tables == [("facts",)]


async def test_facts_persist_across_reopening(tmp_path: Path) -> None:
    """What one store wrote, a store opened later on the same file reads back identically."""
    path = tmp_path / "facts.db"
    fact = Fact.from_user("s1", "budget", "500 EUR", kind="figure", at=7.5)
    async with SQLiteFactStore(path) as first:
        await first.put(fact)
    async with SQLiteFactStore(path) as second:
        assert await second.get("s1", "budget") == fact


async def test_concurrent_writers_keep_the_upsert_rule(tmp_path: Path) -> None:
    """Many tasks over two connections to one file lose no write and keep the best value."""
    path = tmp_path / "facts.db"
    async with SQLiteFactStore(path) as one, SQLiteFactStore(path) as two:

        async def write(i: int) -> None:
            target = one if i % 2 else two
            await target.put(_fact(f"k{i}", str(i), 0.5))
            await target.put(_fact("best", f"value {i}", i / 100))

        async with anyio.create_task_group() as tg:
            for i in range(40):
                tg.start_soon(write, i)
        facts = await one.query("s1")
    assert len(facts) == 41
    best = next(f for f in facts if f.key == "best")
    assert (best.value, best.confidence) == ("value 39", 0.39)


async def test_a_closed_store_refuses_calls(tmp_path: Path) -> None:
    """Using a store that is not open is a clear error, and closing twice is harmless."""
    store = SQLiteFactStore(tmp_path / "facts.db")
    with pytest.raises(RuntimeError, match="not open"):
        await store.get("s1", "budget")
    await store.open()
    await store.aclose()
    await store.aclose()
    with pytest.raises(RuntimeError, match="not open"):
        await store.put(_fact("k", "v", 0.5))


def test_facts_validate_source_and_confidence() -> None:
    """Provenance must be user, tool:NAME or agent:ID, and confidence lie in 0..1."""
    assert _fact("k", "v", 0.5, source="agent:a1").source == "agent:a1"
    with pytest.raises(ValidationError):
        _fact("k", "v", 0.5, source="someone")
    with pytest.raises(ValidationError):
        _fact("k", "v", 1.5)


class _Flight(BaseModel):
    cheapest: float
    carrier: str | None = None
    request_id: str = "r-1"


def test_facts_are_taken_from_declared_result_keys_only() -> None:
    """Only the declared keys of a dict or model result become facts, sourced to the tool."""
    keys = {"cheapest": "flight_price", "carrier": "carrier"}
    facts = facts_from_tool_result(
        "search_flights",
        {"cheapest": "420 EUR", "carrier": "TAP", "request_id": "x"},
        keys,
        scope="s1",
        kind="figure",
        at=3.0,
    )
    assert [(f.key, f.value, f.source, f.kind, f.confidence) for f in facts] == [
        ("flight_price", "420 EUR", "tool:search_flights", "figure", 0.8),
        ("carrier", "TAP", "tool:search_flights", "figure", 0.8),
    ]
    from_model = facts_from_tool_result("search_flights", _Flight(cheapest=420.0), keys, scope="s1")
    assert [(f.key, f.value) for f in from_model] == [("flight_price", "420.0")]
    assert facts_from_tool_result("search_flights", "420 EUR", keys, scope="s1") == []


def test_fact_render_puts_user_facts_first_and_respects_the_cap() -> None:
    """The block lists user facts, then by confidence, and counts what did not fit."""
    facts = [
        _fact("hotel", "Ibis", 0.6),
        _fact("flight_price", "420 EUR", 0.8, source="tool:search_flights"),
        Fact.from_user("s1", "budget", "500 EUR", kind="figure"),
    ]
    full = Fact.render(facts)
    assert full == (
        "Known facts (source, confidence):\n"
        "- budget = 500 EUR (user, 1.0)\n"
        "- flight_price = 420 EUR (tool:search_flights, 0.8)\n"
        "- hotel = Ibis (tool:search, 0.6)"
    )
    capped = Fact.render(facts, max_chars=100)
    assert capped == (
        "Known facts (source, confidence):\n- budget = 500 EUR (user, 1.0)\n- (2 more not shown)"
    )
    assert len(capped) <= 100
    assert Fact.render(facts, max_chars=20) == ""
    assert Fact.render([]) == ""
    long = Fact.render([_fact("notes", "word " * 200, 0.5)])
    assert len(long) < 300
    assert long.endswith("… (tool:search, 0.5)")


async def test_rendered_facts_reach_the_executor_as_context() -> None:
    """Facts are injected by passing Fact.render(...) as the context of Executor.run."""
    facts = InMemoryFactStore()
    await facts.put(Fact.from_user("user-1", "budget", "500 EUR", kind="figure", at=1.0))
    model = ScriptedModel(["Within budget."])
    await Executor(model).run("Plan a trip.", context=Fact.render(await facts.query("user-1")))
    assert model.requests[0].messages[1] == UserMessage(
        content="Task: Plan a trip.\n\nWhat is already known:\n"
        "Known facts (source, confidence):\n- budget = 500 EUR (user, 1.0)"
    )
