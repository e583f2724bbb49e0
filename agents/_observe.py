"""The line every observation starts with: what ran, how it ended, how long it took.

The model reads each tool result after one compact line of its execution facts, in the spirit of
the PAOR article's `[OBSERVE] get_weather(Shanghai) returned: ...`:

    [OBSERVE] get_weather(city="Shanghai", unit="celsius"): ok, 12 ms; bound temp_unit→unit
    [OBSERVE] search_flights(origin="Lisbon", ...): failed (rejected), 3 ms
    [OBSERVE] get_weather: not run (invalid_arguments)

It says which arguments ran (after schema binding, sensitive values masked, long values cut), ok
or failed and why, how long the call took, whether the result shown was truncated, and what was
bound of the model's arguments. It marks the text below it as the world's answer, not the
model's own words. The line is part of the tool message only: evidence, loop detection and the
journal see the result itself.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from pydantic_core import to_jsonable_python

from agents._tracing import redact

__all__ = ["not_run", "observed"]

_VALUE_CHARS = 40
_ARGS_CHARS = 160


def observed(
    name: str,
    args: Mapping[str, Any],
    *,
    sensitive: Iterable[str] = (),
    error: str | None,
    duration_ms: float,
    truncated: bool = False,
    bound: tuple[str, ...] = (),
) -> str:
    """The line for a call that ran (or was cut short, or refused by its approver)."""
    how = "ok" if error is None else f"failed ({error})"
    facts = [f"{how}, {duration_ms:.0f} ms"]
    if truncated:
        facts.append("truncated")
    if bound:
        facts.append("bound " + ", ".join(bound))
    return f"[OBSERVE] {name}({_arguments(args, frozenset(sensitive))}): {'; '.join(facts)}"


def not_run(name: str, error: str) -> str:
    """The line for a call that never reached its tool."""
    return f"[OBSERVE] {name[:60]}: not run ({error})"


def _arguments(args: Mapping[str, Any], sensitive: frozenset[str]) -> str:
    parts = []
    for key, value in redact(dict(args), sensitive).items():
        text = json.dumps(to_jsonable_python(value, fallback=str), ensure_ascii=False)
        parts.append(f"{key}={text if len(text) <= _VALUE_CHARS else text[:_VALUE_CHARS] + '…'}")
    joined = ", ".join(parts)
    return joined if len(joined) <= _ARGS_CHARS else joined[:_ARGS_CHARS] + "…"
