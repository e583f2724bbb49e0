"""The toolbox: the menu, call validation, success checks, shaping, evidence and breakers."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agents import ConfigurationError, Tool, ToolContext, ToolFailure, tool
from agents._toolbox import ToolResult
from agents.tools import Toolbox, ToolOutcome, not_empty
from memory import ToolCall

pytestmark = pytest.mark.anyio

CTX = ToolContext(run_id="r", agent_id="a", call_id="c", idempotency_key="r:a:1")


@tool
async def search(query: str, top_k: int = 3) -> list[str]:
    """Search the corpus.

    Args:
        query: What to look for.
        top_k: How many hits.
    """
    return [f"hit {i} for {query}" for i in range(top_k)]


@tool
async def weather(city: str) -> str:
    """The weather in a city."""
    return f"sunny in {city}"


def _call(name: str, arguments: str | dict[str, Any] = "{}", call_id: str = "c1") -> ToolCall:
    text = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return ToolCall(id=call_id, name=name, arguments=text)


async def _run(box: Toolbox, call: ToolCall, now: float = 0.0) -> ToolResult:
    """Prepare, execute and finish one call, as the executor does."""
    prepared = box.prepare(call, now)
    if isinstance(prepared, ToolResult):
        return prepared
    outcome = await prepared.tool.execute(prepared.args, CTX)
    return box.finish(prepared, outcome, now)


def _returning(value: Any, **options: Any) -> Tool:
    """A tool named "fetch" that returns `value`, built with `options`."""

    async def fetch(key: str = "k") -> Any:
        """Fetch a record."""
        return value

    built: Tool = tool(**options)(fetch)
    return built


def test_duplicate_names_are_rejected() -> None:
    """Two tools with one name cannot share a toolbox."""
    with pytest.raises(ConfigurationError, match="two tools are named 'search'"):
        Toolbox([search, search])


async def test_unknown_tool_is_answered_with_the_valid_names() -> None:
    """A call to a missing tool fails with the menu of valid names, without running anything."""
    result = await _run(Toolbox([search, weather]), _call("serch", {"query": "x"}))
    assert (result.ok, result.error, result.call_id) == (False, "unknown_tool", "c1")
    assert result.content == "Unknown tool 'serch'. Valid tools: search, weather."


async def test_allowed_tools_restrict_menu_and_calls() -> None:
    """Tools outside the allowed set leave the menu and are answered as unknown."""
    box = Toolbox([search, weather])
    assert [s.name for s in box.menu(0.0, {"weather"})] == ["weather"]
    result = box.prepare(_call("search", {"query": "x"}), 0.0, {"weather"})
    assert isinstance(result, ToolResult)
    assert result.error == "unknown_tool"
    assert result.content == "Unknown tool 'search'. Valid tools: weather."
    assert box.prepare(_call("search", {"query": "x"}), 0.0, set()) == ToolResult.failure(
        _call("search"), "unknown_tool", "Unknown tool 'search'. Valid tools: (none)."
    )


async def test_malformed_json_is_answered_with_the_schema() -> None:
    """Arguments that are not JSON fail as malformed, and the model is shown the schema."""
    result = await _run(Toolbox([search]), _call("search", '{"query": "x"'))
    assert (result.ok, result.error) == (False, "malformed_arguments")
    assert "not valid JSON" in result.content
    schema = json.dumps(search.spec().parameters, separators=(",", ":"))
    assert result.content.endswith(f"Call search again with arguments matching {schema}")


async def test_schema_violation_is_answered_with_the_schema() -> None:
    """Arguments of the wrong shape fail as invalid, naming the field and showing the schema."""
    result = await _run(Toolbox([search]), _call("search", {"query": "x", "top_k": "many"}))
    assert (result.ok, result.error) == (False, "invalid_arguments")
    assert "top_k: Input should be a valid integer" in result.content
    schema = json.dumps(search.spec().parameters, separators=(",", ":"))
    assert result.content.endswith(f"Call search again with arguments matching {schema}")


async def test_success_is_shaped_and_cited() -> None:
    """A successful call is rendered as JSON and cites itself as evidence by default."""
    result = await _run(Toolbox([search]), _call("search", {"query": "cats", "top_k": 1}))
    assert (result.ok, result.error) == (True, None)
    assert result.content == '["hit 0 for cats"]'
    assert len(result.evidence) == 1
    evidence = result.evidence[0]
    assert evidence.source == 'search({"query": "cats", "top_k": 1})'
    assert (evidence.excerpt, evidence.tool) == ('["hit 0 for cats"]', "search")


async def test_default_evidence_redacts_sensitive_arguments() -> None:
    """The default citation masks arguments the tool marks sensitive."""

    @tool(sensitive=["account"])
    async def balance(account: str) -> str:
        """An account's balance."""
        return "42 EUR"

    result = await _run(Toolbox([balance]), _call("balance", {"account": "DE001234"}))
    assert result.evidence[0].source == 'balance({"account": "***"})'


async def test_custom_evidence() -> None:
    """A tool's evidence function decides the sources and excerpts it cites."""

    def cite(args: dict[str, Any], value: Any) -> list[tuple[str, str]]:
        return [(doc["id"], doc["text"]) for doc in value]

    fetch = _returning(
        [{"id": "doc-1", "text": "one"}, {"id": "doc-2", "text": "two"}], evidence=cite
    )
    result = await _run(Toolbox([fetch]), _call("fetch"))
    assert [(e.source, e.excerpt, e.tool) for e in result.evidence] == [
        ("doc-1", "one", "fetch"),
        ("doc-2", "two", "fetch"),
    ]


@pytest.mark.parametrize("empty", [None, "", [], {}, {"items": [], "next": None}])
async def test_not_empty_marks_empty_data_as_failure(empty: Any) -> None:
    """With `success=not_empty`, an answer with no data is a rejected call with no evidence."""
    result = await _run(Toolbox([_returning(empty, success=not_empty)]), _call("fetch"))
    assert (result.ok, result.error, result.evidence) == (False, "rejected", ())
    assert result.content.startswith("Error: fetch: the call succeeded but")


async def test_not_empty_accepts_data() -> None:
    """`not_empty` lets a result with data through."""
    result = await _run(Toolbox([_returning({"items": [1]}, success=not_empty)]), _call("fetch"))
    assert (result.ok, result.content) == (True, '{"items": [1]}')


async def test_custom_success_reason_reaches_the_model() -> None:
    """A success check returning a string fails the call with that reason."""

    def in_stock(value: Any) -> bool | str:
        return True if value["stock"] else "the item is out of stock"

    result = await _run(Toolbox([_returning({"stock": 0}, success=in_stock)]), _call("fetch"))
    assert (result.ok, result.error) == (False, "rejected")
    assert result.content == "Error: fetch: the item is out of stock"


async def test_success_check_false_gives_a_generic_reason() -> None:
    """A success check returning False fails the call with a generic reason."""
    result = await _run(Toolbox([_returning(1, success=lambda v: False)]), _call("fetch"))
    assert result.content == "Error: fetch: the result failed its check"


async def test_field_whitelist_on_a_dict() -> None:
    """Only whitelisted keys of a dict result are shown."""
    value = {"temp": 21, "sky": "clear", "request_id": "abc", "ts": 1700000000}
    result = await _run(Toolbox([_returning(value, fields=["temp", "sky"])]), _call("fetch"))
    assert result.content == '{"temp": 21, "sky": "clear"}'


async def test_field_whitelist_on_lists_of_dicts() -> None:
    """Whitelisting filters dicts in a result list and records in lists under a kept key."""
    rows = [{"id": 1, "blob": "x" * 50}, {"id": 2, "blob": "y"}]
    box = Toolbox(
        [
            _returning(rows, fields=["id"]),
            _returning({"hits": rows, "took_ms": 3}, fields=["hits", "id"], name="nested"),
        ]
    )
    assert (await _run(box, _call("fetch"))).content == '[{"id": 1}, {"id": 2}]'
    assert (await _run(box, _call("nested"))).content == '{"hits": [{"id": 1}, {"id": 2}]}'


async def test_long_results_are_cut_with_a_marker() -> None:
    """A result past max_chars is cut and says how much was shown."""
    result = await _run(Toolbox([_returning("a" * 120, max_chars=50)]), _call("fetch"))
    assert result.content == "a" * 50 + "… [truncated: showing 50 of 120 chars]"


async def test_failures_are_prefixed_with_the_tool_name() -> None:
    """A ToolFailure reaches the model as an error naming the tool, with no evidence."""

    @tool
    async def flights(origin: str) -> str:
        """Find flights."""
        raise ToolFailure("the airline API is down")

    result = await _run(Toolbox([flights]), _call("flights", {"origin": "CDG"}))
    assert (result.ok, result.error, result.evidence) == (False, "failed", ())
    assert result.content == "Error: flights the airline API is down"
    assert result.to_message().ok is False


def _flaky_box(threshold: int = 2, cooldown: float = 30.0) -> Toolbox:
    return Toolbox([search, weather], breaker_threshold=threshold, breaker_cooldown=cooldown)


def _outcome(ok: bool) -> ToolOutcome:
    if ok:
        return ToolOutcome(ok=True, value="fine")
    return ToolOutcome(ok=False, error="failed", message="upstream 503")


def _finish(box: Toolbox, ok: bool, now: float, call_id: str = "c1") -> ToolResult:
    prepared = box.prepare(_call("weather", {"city": "Oslo"}, call_id), now)
    assert not isinstance(prepared, ToolResult), prepared
    return box.finish(prepared, _outcome(ok), now)


def test_breaker_opens_after_consecutive_failures() -> None:
    """N failures in a row open the breaker; that result says so and the tool leaves the menu."""
    box = _flaky_box(threshold=2)
    first = _finish(box, ok=False, now=0.0)
    assert not first.breaker_opened
    second = _finish(box, ok=False, now=1.0)
    assert second.breaker_opened
    assert second.content.startswith("Error: weather upstream 503\n")
    assert "Tool 'weather' is disabled for 30s after 2 consecutive failures" in second.content
    assert "last: Error: weather upstream 503" in second.content
    assert [s.name for s in box.menu(2.0)] == ["search"]
    assert set(box.unavailable(2.0)) == {"weather"}


def test_success_resets_the_failure_count() -> None:
    """Failures separated by a success do not add up."""
    box = _flaky_box(threshold=2)
    _finish(box, ok=False, now=0.0)
    _finish(box, ok=True, now=1.0)
    assert not _finish(box, ok=False, now=2.0).breaker_opened
    assert [s.name for s in box.menu(3.0)] == ["search", "weather"]


def test_open_breaker_answers_calls_without_running_them() -> None:
    """A call to a tool behind an open breaker is answered "unavailable", with the retry time."""
    box = _flaky_box(threshold=1, cooldown=30.0)
    _finish(box, ok=False, now=100.0)
    result = box.prepare(_call("weather", {"city": "Oslo"}), 110.0)
    assert isinstance(result, ToolResult)
    assert (result.ok, result.error) == (False, "unavailable")
    assert result.content.startswith("Tool 'weather' is disabled for 20s after 1 consecutive")
    assert result.content.endswith("Use another tool or answer with what you have.")


def test_half_open_trial_success_closes_the_breaker() -> None:
    """After the cooldown one trial call runs; its success puts the tool back for good."""
    box = _flaky_box(threshold=2, cooldown=30.0)
    _finish(box, ok=False, now=0.0)
    _finish(box, ok=False, now=0.0)
    assert [s.name for s in box.menu(29.9)] == ["search"]
    assert [s.name for s in box.menu(30.0)] == ["search", "weather"]
    trial = _finish(box, ok=True, now=30.0)
    assert (trial.ok, trial.breaker_opened) == (True, False)
    assert box.unavailable(1000.0) == {}
    assert not _finish(box, ok=False, now=1001.0).breaker_opened


def test_half_open_trial_failure_reopens_the_breaker() -> None:
    """A failed trial call opens the breaker again for a full cooldown."""
    box = _flaky_box(threshold=2, cooldown=30.0)
    _finish(box, ok=False, now=0.0)
    _finish(box, ok=False, now=0.0)
    trial = _finish(box, ok=False, now=40.0)
    assert trial.breaker_opened
    assert "disabled for 30s after 3 consecutive failures" in trial.content
    assert [s.name for s in box.menu(69.0)] == ["search"]
    assert [s.name for s in box.menu(70.0)] == ["search", "weather"]


def test_cancelled_calls_do_not_trip_the_breaker() -> None:
    """A call cut short by the agent's own stop is not the tool's failure."""
    box = _flaky_box(threshold=1)
    prepared = box.prepare(_call("weather", {"city": "Oslo"}), 0.0)
    assert not isinstance(prepared, ToolResult)
    cancelled = ToolOutcome(ok=False, error="cancelled", message="was cancelled")
    result = box.finish(prepared, cancelled, 0.0)
    assert (result.ok, result.error, result.breaker_opened) == (False, "cancelled", False)
    assert [s.name for s in box.menu(1.0)] == ["search", "weather"]


@pytest.mark.parametrize(
    "outcome",
    [
        ToolOutcome(ok=False, error="bad_call", message="unknown city 'Olso'"),
        ToolOutcome(ok=True, value=[]),  # rejected by the success check: empty data
    ],
)
def test_bad_calls_and_rejected_results_do_not_trip_the_breaker(outcome: ToolOutcome) -> None:
    """Failures that blame the call or the data, not the tool's health, leave the breaker closed."""
    box = Toolbox([tool(name="weather", success=not_empty)(_weather_fn)], breaker_threshold=1)
    for n in range(3):
        prepared = box.prepare(_call("weather", {"city": "Oslo"}, f"c{n}"), float(n))
        assert not isinstance(prepared, ToolResult)
        result = box.finish(prepared, outcome, float(n))
        assert (result.ok, result.breaker_opened) == (False, False)
    assert [s.name for s in box.menu(3.0)] == ["weather"]


def _weather_fn(city: str) -> list[str]:
    """Forecast."""
    return [city]


async def test_breakers_are_per_tool() -> None:
    """One tool's open breaker leaves the other tools callable."""
    box = _flaky_box(threshold=1)
    _finish(box, ok=False, now=0.0)
    result = await _run(box, _call("search", {"query": "x", "top_k": 1}), now=1.0)
    assert result.ok
