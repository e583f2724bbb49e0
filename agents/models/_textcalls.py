"""Tool calls written as text: recovered from a reply's content when the server returned none.

Open models behind llama.cpp, vLLM or Ollama often write a tool call in their message text instead
of the chat template's tags, so the server parses nothing and returns no `tool_calls`. A framework
that serves open models must read those calls itself. Recognised forms:

    ```json {"name": "search", "arguments": {"query": "x"}} ```     fenced or bare JSON
    <tool_call>{"name": "search", "arguments": {...}}</tool_call>   Hermes / Qwen tags
    [{"name": "search", ...}, {"name": "read", ...}]                a list of calls
    {"function": {"name": "search", "arguments": "{...}"}}          OpenAI's wire shape
    {"tool": "search", "arguments": {...}}                          paor's JSON decisions

A recovered call becomes a proper `ToolCall`, so the transcript (and the next request) holds a
well-formed assistant tool call for any server. Text that looks like a call but cannot be read (a
broken tag, truncated JSON naming a tool) raises `MalformedResponse`: it is fed back to the model
and never taken as a final answer. Everything is bounded: the text scanned, the JSON candidates
tried, and the nesting depth of what is parsed.
"""

from __future__ import annotations

import functools
import json
import re
import uuid
from collections.abc import Collection, Iterator
from typing import Any

from agents._errors import MalformedResponse
from memory import AssistantMessage, ToolCall

__all__ = ["json_values", "looks_like_call", "recover_calls"]

MAX_SCAN_CHARS = 50_000
_MAX_CANDIDATES = 20
_MAX_DEPTH = 64
_MAX_CALLS = 16
_NAME = re.compile(r"[\w.\-]{1,64}")
_TAGGED = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.S)
_FENCED = re.compile(r"```[a-zA-Z]*\s*\n?(.*?)```", re.S)
_OPENING = re.compile(r"[\[{]")
_DECODER = json.JSONDecoder()  # holds no state between calls
_MARKERS = ("<tool_call>", "</tool_call>", "<|python_tag|>", "[TOOL_CALLS]", "<function=")
_NAME_KEYS = ("name", "tool", "function", "tool_name")
_ARG_KEYS = ("arguments", "parameters", "args", "input", "tool_input")
_FORMAT = (
    'write a call as {"name": "<tool>", "arguments": {...}} with one of the tools on the menu, '
    "or answer in plain text"
)


def recover_calls(text: str, tools: Collection[str]) -> AssistantMessage | None:
    """The tool calls written in `text`, as an assistant message; None if it holds none.

    A reply that is only a JSON final answer (`{"answer": "..."}`, as the JSON decision protocol
    writes one) comes back as that answer's text.

    Args:
        text: The reply's content.
        tools: The names on the menu. A call to another name is still returned when its shape is
            unmistakable (name and arguments): the toolbox answers it with the menu.

    Raises:
        MalformedResponse: The text looks like a tool call but cannot be read as one.
    """
    scanned = text[:MAX_SCAN_CHARS]
    calls: list[ToolCall] = []
    taken: list[tuple[int, int]] = []
    answer = None
    for value, span in _candidates(scanned):
        if any(span[0] < end and start < span[1] for start, end in taken):
            continue  # inside a call already read (a fence's JSON, a nested object)
        found = _calls_in(value, tools)
        if found:
            calls += found
            taken.append(span)
        elif answer is None and _whole(scanned, span):
            answer = _final_answer(value)
    if calls:
        prose = _unmarked(_without(scanned, taken))
        return AssistantMessage(content=prose or None, tool_calls=tuple(calls[:_MAX_CALLS]))
    if answer is not None:
        return AssistantMessage(content=answer)
    if looks_like_call(scanned, tools):
        raise MalformedResponse(
            f"the reply looks like a tool call but cannot be read; {_FORMAT}", raw=text
        )
    return None


def looks_like_call(text: str, tools: Collection[str]) -> bool:
    """Whether `text` seems meant as a tool call: a call tag, or JSON naming a tool on the menu."""
    if any(marker in text for marker in _MARKERS):
        return True
    if '"' not in text:  # most replies: no JSON, so no tool named in it
        return False
    naming = _naming(frozenset(tools))
    return naming is not None and naming.search(text) is not None


@functools.lru_cache(maxsize=256)
def _naming(tools: frozenset[str]) -> re.Pattern[str] | None:
    """A JSON key that names a tool (`"name": "search"`) naming one of `tools`."""
    if not tools:
        return None
    keys = "|".join(_NAME_KEYS)
    names = "|".join(re.escape(json.dumps(name)) for name in sorted(tools))
    return re.compile(rf'"(?:{keys})"\s*:\s*(?:{names})')


def json_values(text: str) -> Iterator[Any]:
    """The JSON values written in `text` (prose, code fences, tags), outermost and first first;
    at most 20 are tried."""
    return (value for value, _span in _candidates(text))


def _candidates(text: str) -> Iterator[tuple[Any, tuple[int, int]]]:
    """JSON values in `text` that may hold calls, each with the span it takes; tags first."""
    tagged = _TAGGED.finditer(text) if "<tool_call>" in text else ()
    wrapped = [*tagged, *(_FENCED.finditer(text) if "```" in text else ())]
    for match in wrapped[:_MAX_CANDIDATES]:
        value = _parse(match.group(1))
        if value is not None:
            yield value, match.span()
    starts = [m.start() for m in _OPENING.finditer(text)]
    for start in starts[: max(0, _MAX_CANDIDATES - len(wrapped))]:
        try:
            value, end = _DECODER.raw_decode(text, start)
        except (ValueError, RecursionError):
            continue
        if _depth_ok(value):
            yield value, (start, end)


def _whole(text: str, span: tuple[int, int]) -> bool:
    """Whether `span` is all of `text` but whitespace and call markers."""
    return not _unmarked(text[: span[0]] + text[span[1] :])


def _without(text: str, spans: list[tuple[int, int]]) -> str:
    kept, at = [], 0
    for start, end in sorted(spans):
        kept.append(text[at:start])
        at = end
    return "".join([*kept, text[at:]])


def _parse(text: str) -> Any:
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return value if _depth_ok(value) else None


def _depth_ok(value: Any, depth: int = 0) -> bool:
    """Whether `value` nests at most _MAX_DEPTH deep (json parses deeper; the loops need not)."""
    if depth > _MAX_DEPTH:
        return False
    if isinstance(value, dict):
        return all(_depth_ok(v, depth + 1) for v in value.values())
    if isinstance(value, list):
        return all(_depth_ok(v, depth + 1) for v in value)
    return True


def _calls_in(value: Any, tools: Collection[str]) -> tuple[ToolCall, ...]:
    """The calls a parsed JSON value holds, in any of the recognised shapes (else none)."""
    nested = value.get("tool_calls", value.get("calls")) if isinstance(value, dict) else None
    items = nested if isinstance(nested, list) else value if isinstance(value, list) else [value]
    calls = [_call(item, tools) for item in items[:_MAX_CALLS]]
    if not calls or None in calls:
        return ()
    return tuple(c for c in calls if c is not None)


def _call(item: Any, tools: Collection[str]) -> ToolCall | None:
    if not isinstance(item, dict):
        return None
    if isinstance(item.get("function"), dict):
        item = {**item, **item["function"]}
    name = next((item[k] for k in _NAME_KEYS if isinstance(item.get(k), str)), None)
    has_arguments = any(k in item for k in _ARG_KEYS)
    if not name or not _NAME.fullmatch(name) or not (has_arguments or name in tools):
        return None
    arguments: Any = next((item[k] for k in _ARG_KEYS if k in item), {})
    if isinstance(arguments, str):
        arguments = _parse(arguments) if arguments.strip() else {}
    if isinstance(arguments, list) and len(arguments) == 1:
        arguments = arguments[0]  # the one argument object in a list (Qwen2.5-Coder's habit)
    if not isinstance(arguments, dict):
        return None
    return ToolCall(id=f"call_{uuid.uuid4().hex[:12]}", name=name, arguments=json.dumps(arguments))


def _final_answer(value: Any) -> str | None:
    if not isinstance(value, dict) or not isinstance(value.get("answer"), str):
        return None
    if set(value) - {"kind", "answer"} or value.get("kind", "final") != "final":
        return None
    return str(value["answer"])


def _unmarked(prose: str) -> str:
    """What the model wrote around its call, minus stray call markers."""
    for marker in _MARKERS:
        prose = prose.replace(marker, "")
    return prose.strip()
