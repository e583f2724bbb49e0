"""The line every observation starts with: what ran, and how it ended.

The model reads each tool result after one compact line of its execution facts, in the spirit of
the PAOR article's `[OBSERVE] get_weather(Shanghai) returned: ...`:

    [OBSERVE] get_weather("Shanghai", "celsius") ok; bound temp_unit→unit, unit 'c'→'celsius'
    [OBSERVE] search_flights("Lisbon", "Porto", "2025-06-14", 120) failed (rejected)
    [OBSERVE] get_weather not run (invalid_arguments)

It says which arguments ran (their values in the tool's order, after schema binding; sensitive
values masked, long ones cut), ok or failed and why, whether the result shown was truncated, and
what was bound of the model's arguments. It is short on purpose: every later request of the
agent carries it again (on the benchmark's S2 it adds about 1.5% to paor's prompt tokens; see the
README). It says nothing that changes from one run of the same work to the next: how long a call
took is in its `ToolCalled` event and its span, not in the prompt, so the same run writes the
same prompts (a provider's prompt cache, and a replay, see them alike). It marks the text below it
as the world's answer, not the model's own words. The line is part of the tool message only:
evidence, loop detection and the journal see the result itself.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from pydantic_core import to_jsonable_python

from agents._tracing import redact

__all__ = ["not_run", "observed"]

_VALUE_CHARS = 32
_ARGS_CHARS = 100


def observed(
    name: str,
    args: Mapping[str, Any],
    *,
    sensitive: Iterable[str] = (),
    error: str | None,
    truncated: bool = False,
    bound: tuple[str, ...] = (),
) -> str:
    """The line for a call that ran (or was cut short, or refused by its approver)."""
    how = "ok" if error is None else f"failed ({error})"
    facts = [how]
    if truncated:
        facts.append("truncated")
    if bound:
        facts.append("bound " + ", ".join(bound))
    return f"[OBSERVE] {name}({_arguments(args, frozenset(sensitive))}) {'; '.join(facts)}"


def not_run(name: str, error: str) -> str:
    """The line for a call that never reached its tool."""
    return f"[OBSERVE] {name[:60]} not run ({error})"


def _arguments(args: Mapping[str, Any], sensitive: frozenset[str]) -> str:
    parts = []
    for value in redact(dict(args), sensitive).values():
        text = json.dumps(to_jsonable_python(value, fallback=str), ensure_ascii=False)
        parts.append(text if len(text) <= _VALUE_CHARS else text[:_VALUE_CHARS] + "…")
    joined = ", ".join(parts)
    return joined if len(joined) <= _ARGS_CHARS else joined[:_ARGS_CHARS] + "…"
