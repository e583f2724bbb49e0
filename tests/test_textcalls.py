"""Tool calls written as text: every recognised shape, the near misses, and the bounds."""

from __future__ import annotations

import json

import pytest

from agents.errors import MalformedResponse
from agents.models._textcalls import recover_calls

TOOLS = {"search_docs", "read_doc"}


def calls_of(text: str) -> list[tuple[str, dict[str, object]]]:
    """The (name, arguments) pairs recovered from `text` (an empty list for none)."""
    found = recover_calls(text, TOOLS)
    return [] if found is None else [(c.name, json.loads(c.arguments)) for c in found.tool_calls]


@pytest.mark.parametrize(
    "text",
    [
        '```json\n{"name": "search_docs", "arguments": {"query": "yield"}}\n```',
        '{"name": "search_docs", "arguments": {"query": "yield"}}',
        '<tool_call>\n{"name": "search_docs", "arguments": {"query": "yield"}}\n</tool_call>',
        '{"function": {"name": "search_docs", "arguments": "{\\"query\\": \\"yield\\"}"}}',
        '{"type": "function", "function": {"name": "search_docs", "parameters": {"query": "yield"}}}',
        '{"tool": "search_docs", "arguments": {"query": "yield"}}',
        '{"kind": "tool_calls", "calls": [{"tool": "search_docs", "arguments": {"query": "yield"}}]}',
        'Let me look that up. {"name": "search_docs", "arguments": {"query": "yield"}}',
        # Qwen2.5-Coder-0.5B's habit: the one argument object wrapped in a list.
        '{"name": "search_docs", "arguments": [{"query": "yield"}]}',
    ],
)
def test_each_shape_becomes_the_same_call(text: str) -> None:
    """Fenced, bare, tagged, OpenAI-shaped, decision-shaped and embedded calls are all read."""
    assert calls_of(text) == [("search_docs", {"query": "yield"})]


def test_a_list_of_calls_keeps_its_order_and_the_prose_is_kept_as_content() -> None:
    """Several calls in one reply become several calls; the words around them stay the content."""
    text = (
        "I will search and read.\n<tool_call>"
        '[{"name": "search_docs", "arguments": {"query": "a"}}, '
        '{"name": "read_doc", "arguments": {"doc": "python/yield"}}]</tool_call>'
    )
    found = recover_calls(text, TOOLS)
    assert found is not None
    assert [c.name for c in found.tool_calls] == ["search_docs", "read_doc"]
    assert found.content == "I will search and read."
    assert len({c.id for c in found.tool_calls}) == 2


def test_bare_calls_one_after_another_are_all_read() -> None:
    """Several bare JSON calls on their own lines are several calls, in order."""
    text = (
        '{"name": "search_docs", "arguments": {"query": "a"}}\n\n'
        '{"name": "read_doc", "arguments": {"doc": "python/yield"}}'
    )
    assert calls_of(text) == [
        ("search_docs", {"query": "a"}),
        ("read_doc", {"doc": "python/yield"}),
    ]


def test_an_unknown_name_in_an_unmistakable_call_shape_is_still_a_call() -> None:
    """A call to a tool not on the menu is returned, for the toolbox to answer with the menu."""
    assert calls_of('{"name": "web_search", "arguments": {"q": "x"}}') == [
        ("web_search", {"q": "x"})
    ]


@pytest.mark.parametrize(
    "text",
    [
        "Generators pause at each yield [python/yield].",
        '{"name": "Alice", "age": 3}',
        'A dict display: ```python\n{"a": 1, "b": [2, 3]}\n```',
        "[python/yield] and [python/types] explain it.",
    ],
)
def test_prose_and_json_that_is_no_call_are_left_alone(text: str) -> None:
    """Answers, citations and JSON data without a call's shape are not calls."""
    assert recover_calls(text, TOOLS) is None


def test_a_json_final_answer_comes_back_as_its_text() -> None:
    """A reply that is only a decision-style final answer is that answer's text."""
    found = recover_calls('{"kind": "final", "answer": "It pauses [python/yield]."}', TOOLS)
    assert found is not None
    assert (found.content, found.tool_calls) == ("It pauses [python/yield].", ())


@pytest.mark.parametrize(
    "text",
    [
        '<tool_call>{"name": "search_docs", "arguments": {"query": ',
        '{"name": "read_doc", "arguments": {"doc": "python/yield"',
        "[TOOL_CALLS] search_docs",
        # Two argument objects in a list: which one the model meant cannot be told.
        '{"name": "search_docs", "arguments": [{"query": "a"}, {"query": "b"}]}',
    ],
)
def test_a_broken_call_is_malformed_never_an_answer(text: str) -> None:
    """Text that looks like a call but cannot be read raises MalformedResponse with the raw text."""
    with pytest.raises(MalformedResponse, match="looks like a tool call") as caught:
        recover_calls(text, TOOLS)
    assert caught.value.raw == text


def test_a_real_reply_with_a_wrapped_call_and_a_cut_one_keeps_the_call_it_can_read() -> None:
    """Qwen2.5-Coder-0.5B behind llama.cpp, verbatim but shortened: a search with its arguments in
    a list, then a read_doc it never finished (it ran out of tokens)."""
    text = (
        '{"name": "search_docs", "arguments": [{"query": "Python generators", "top_k": 5}]}\n\n'
        '{"name": "read_doc", "arguments": [{"doc": "python/return", "chunk": 0, "text": "When'
    )
    assert calls_of(text) == [("search_docs", {"query": "Python generators", "top_k": 5})]


@pytest.mark.parametrize("text", ["[" * 100_000, '{"a": ' * 50_000, "{" * 10 + "x" * 200_000])
def test_hostile_nesting_and_size_neither_crash_nor_hang(text: str) -> None:
    """Deep nesting and huge texts are bounded: no RecursionError, no call, no answer copied."""
    assert recover_calls(text, TOOLS) is None
