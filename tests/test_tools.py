"""`@tool`: schemas from hints and docstrings, context injection, and one guarded execution."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any, Literal

import anyio
import pytest

from agents import ConfigurationError, Tool, ToolContext, ToolFailure, tool

pytestmark = pytest.mark.anyio

CTX = ToolContext(run_id="run-1", agent_id="agent-1", call_id="call-1", idempotency_key="run-1:a:1")


@tool
async def search_docs(query: str, top_k: int = 5, lang: Literal["en", "fr"] = "en") -> list[str]:
    """Search the documentation.

    Use it for anything about the product.

    Args:
        query: The words to look for.
        top_k: How many hits to return,
            at most twenty.
        lang: The language of the documents.

    Returns:
        The matching titles.
    """
    return [f"{query}:{i}:{lang}" for i in range(top_k)]


@tool(name="add", timeout=2.0)
def add_numbers(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@tool
def make_note(title: str, body: str = "") -> dict[str, str]:
    """Store a note.

    Args:
        title: The note's title.
        body: The note's text.
    """
    return {"title": title, "body": body}


@tool
async def whoami(ctx: ToolContext, greeting: str) -> str:
    """Say who is calling."""
    return f"{greeting} {ctx.agent_id} {ctx.call_id} {ctx.idempotency_key}"


def test_sync_and_async_functions_become_tools() -> None:
    """`@tool` and `@tool(...)` both wrap sync and async functions, naming and describing them."""
    assert isinstance(search_docs, Tool)
    assert isinstance(add_numbers, Tool)
    assert add_numbers.name == "add"
    assert add_numbers.timeout == 2.0
    assert add_numbers.description == "Add two numbers."
    assert (
        search_docs.description
        == "Search the documentation. Use it for anything about the product."
    )


def test_schema_has_descriptions_defaults_and_required() -> None:
    """Hints give types and defaults, the docstring's Args give descriptions, required is exact."""
    spec = search_docs.spec()
    props = spec.parameters["properties"]
    assert spec.name == "search_docs"
    assert spec.parameters["required"] == ["query"]
    assert props["query"] == {"type": "string", "description": "The words to look for."}
    assert props["top_k"] == {
        "type": "integer",
        "default": 5,
        "description": "How many hits to return, at most twenty.",
    }
    assert props["lang"]["enum"] == ["en", "fr"]
    assert props["lang"]["default"] == "en"
    assert spec.parameters["additionalProperties"] is False


def test_schema_drops_pydantic_titles() -> None:
    """Pydantic's generated titles are removed from the schema, at every level."""
    params = search_docs.spec().parameters
    assert "title" not in params
    assert all("title" not in field for field in params["properties"].values())


def test_field_named_title_survives() -> None:
    """A parameter literally named "title" stays in properties and in required."""
    params = make_note.spec().parameters
    assert set(params["properties"]) == {"title", "body"}
    assert params["properties"]["title"] == {"type": "string", "description": "The note's title."}
    assert params["required"] == ["title"]


def test_tool_context_is_hidden_from_the_schema() -> None:
    """A `ToolContext` parameter is not shown to the model nor accepted as an argument."""
    params = whoami.spec().parameters
    assert set(params["properties"]) == {"greeting"}
    with pytest.raises(ValueError, match="ctx"):
        whoami.parse('{"greeting": "hi", "ctx": {}}')


async def test_tool_context_is_injected() -> None:
    """The call's context reaches the parameter annotated `ToolContext`."""
    outcome = await whoami.execute(whoami.parse('{"greeting": "hi"}'), CTX)
    assert outcome.ok
    assert outcome.value == "hi agent-1 call-1 run-1:a:1"


async def test_async_tool_executes() -> None:
    """An async tool's value comes back JSON-able, with its defaults applied by `parse`."""
    outcome = await search_docs.execute(search_docs.parse('{"query": "q", "top_k": 2}'), CTX)
    assert outcome.ok
    assert outcome.error is None
    assert outcome.value == ["q:0:en", "q:1:en"]


async def test_sync_tool_executes() -> None:
    """A sync tool runs (in a worker thread) and its value comes back."""
    outcome = await add_numbers.execute(add_numbers.parse('{"a": 2, "b": "3"}'), CTX)
    assert outcome.ok
    assert outcome.value == 5


def test_parse_reports_bad_json_and_schema_violations() -> None:
    """`parse` raises a model-readable ValueError for bad JSON, non-objects and wrong fields."""
    with pytest.raises(ValueError, match="not valid JSON"):
        add_numbers.parse('{"a": 1,')
    with pytest.raises(ValueError, match="must be a JSON object"):
        add_numbers.parse("[1, 2]")
    with pytest.raises(ValueError, match=r"invalid arguments: b: Field required"):
        add_numbers.parse('{"a": 1}')
    with pytest.raises(ValueError, match=r"c: Extra inputs are not permitted"):
        add_numbers.parse('{"a": 1, "b": 2, "c": 3}')


def _untyped(x):  # type: ignore[no-untyped-def]
    return x


def _star_args(*items: str) -> str:
    return ",".join(items)


def _star_kwargs(**options: str) -> str:
    return ",".join(options)


def _unresolvable(x: NoSuchType) -> str:  # type: ignore[name-defined]  # noqa: F821
    return str(x)


class _Opaque:
    pass


def _opaque(thing: _Opaque) -> str:
    return repr(thing)


def _callable_arg(fn: Callable[[], str]) -> str:
    return fn()


@pytest.mark.parametrize(
    ("build", "problem"),
    [
        pytest.param(lambda: tool(_untyped), "has no type", id="missing-hint"),
        pytest.param(lambda: tool(_star_args), r"\*args", id="var-positional"),
        pytest.param(lambda: tool(_star_kwargs), r"\*\*kwargs", id="var-keyword"),
        pytest.param(lambda: tool(_unresolvable), "cannot resolve type hints", id="bad-hint"),
        pytest.param(lambda: tool(_opaque), "_opaque", id="non-pydantic-type"),
        pytest.param(lambda: tool(_callable_arg), "_callable_arg", id="no-json-schema"),
        pytest.param(lambda: tool(timeout=0)(_star_args), "timeout must be positive", id="timeout"),
        pytest.param(lambda: tool(max_chars=10)(_star_args), "max_chars", id="max-chars"),
    ],
)
def test_bad_definitions_raise_configuration_error(build: Callable[[], Any], problem: str) -> None:
    """A function that cannot be described, or bad options, fail at definition time."""
    with pytest.raises(ConfigurationError, match=problem):
        build()


@pytest.fixture
def release() -> Iterator[threading.Event]:
    """An event that frees blocked worker threads when the test ends."""
    event = threading.Event()
    yield event
    event.set()


async def test_async_timeout() -> None:
    """An async tool that overruns its timeout gives a "timeout" outcome, not an exception."""

    @tool(timeout=0.01)
    async def hang() -> str:
        """Never answer."""
        await anyio.sleep_forever()
        return "unreachable"

    outcome = await hang.execute({}, CTX)
    assert not outcome.ok
    assert outcome.error == "timeout"
    assert outcome.message == "timed out after 0.01s"


async def test_sync_timeout(release: threading.Event) -> None:
    """A blocked sync tool is abandoned at its timeout and reported as a timeout."""

    @tool(timeout=0.01)
    def block() -> str:
        """Block until released."""
        release.wait(30)
        return "late"

    outcome = await block.execute({}, CTX)
    assert (outcome.ok, outcome.error) == (False, "timeout")


async def test_own_timeout_error_is_a_crash_not_a_timeout() -> None:
    """A TimeoutError raised by the tool itself is a crash, also when the tool has no timeout."""

    @tool(timeout=None)
    async def upstream() -> str:
        """Call an upstream that times out."""
        raise TimeoutError("upstream read timed out")

    outcome = await upstream.execute({}, CTX)
    assert (outcome.ok, outcome.error) == (False, "crashed")
    assert outcome.message == "TimeoutError: upstream read timed out"


async def test_tool_failure_message_reaches_the_outcome() -> None:
    """A `ToolFailure` becomes a "failed" outcome carrying its message verbatim."""

    @tool
    async def lookup(city: str) -> str:
        """Look a city up."""
        raise ToolFailure(f"no such city: {city}; try the country name")

    outcome = await lookup.execute({"city": "Atlantis"}, CTX)
    assert (outcome.ok, outcome.error) == (False, "failed")
    assert outcome.message == "no such city: Atlantis; try the country name"


async def test_crash_is_sanitised() -> None:
    """A crash becomes a "crashed" outcome with sensitive values masked and the text cut short."""

    @tool(sensitive=["password"])
    def login(user: str, password: str) -> str:
        """Log in."""
        raise RuntimeError(f"login failed for {user} with {password} " + "x" * 1000)

    outcome = await login.execute({"user": "ann", "password": "hunter2-secret"}, CTX)
    assert (outcome.ok, outcome.error) == (False, "crashed")
    assert outcome.message.startswith("RuntimeError: login failed for ann with *** xxx")
    assert "hunter2-secret" not in outcome.message
    assert len(outcome.message) == 301
    assert outcome.message.endswith("…")


async def test_unserialisable_value_falls_back_to_repr() -> None:
    """A return value that is not JSON-able is turned into its repr, not a crash."""

    @tool
    def opaque() -> object:
        """Return something odd."""
        return _Opaque()

    outcome = await opaque.execute({}, CTX)
    assert outcome.ok
    assert isinstance(outcome.value, str)
    assert "_Opaque object" in outcome.value


def test_arguments_over_the_tools_limit_are_refused_unread() -> None:
    """Raw arguments longer than `max_arg_chars` are refused before they are parsed."""

    @tool(max_arg_chars=20)
    async def echo(text: str) -> str:
        """Echo.

        Args:
            text: Words.
        """
        return text

    assert echo.parse('{"text": "short"}') == {"text": "short"}
    with pytest.raises(ValueError, match="arguments of 33 characters were not read: echo takes"):
        echo.parse('{"text": "much longer than that"}')
    with pytest.raises(ConfigurationError, match="max_arg_chars must be at least 2"):
        tool(max_arg_chars=1)(echo.fn)


def test_deeply_nested_arguments_are_a_readable_error_not_a_crash() -> None:
    """Tool arguments nested 100,000 deep are refused with a message, as malformed JSON is."""

    @tool(max_arg_chars=1_000_000)
    async def search_docs(query: str) -> str:
        """Search.

        Args:
            query: Words.
        """
        return query

    with pytest.raises(ValueError, match="nested too deep"):
        search_docs.parse('{"query": ' + "[" * 100_000 + "]" * 100_000 + "}")
