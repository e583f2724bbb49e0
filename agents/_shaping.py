"""Observation shaping: what of a tool's result the model gets to read.

Raw results derail small models: timestamps, request ids and long blobs crowd out the facts. A tool
may whitelist fields and cap the length; a cut is always marked, so the model knows it saw a part.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

__all__ = ["not_empty", "shape", "shaped"]


def shape(value: Any, *, fields: Sequence[str] | None, max_chars: int) -> str:
    """Render a JSON-able tool result as the text the model reads.

    Args:
        value: The result, already JSON-able.
        fields: If set, keep only these keys of dicts (the result, or dicts inside result lists).
        max_chars: Cut the text past this length and say so.

    Returns:
        The observation text.
    """
    return shaped(value, fields=fields, max_chars=max_chars)[0]


def shaped(
    value: Any, *, fields: Sequence[str] | None, max_chars: int, total: int | None = None
) -> tuple[str, bool]:
    """`shape`'s text, and whether it was cut; `total` is the length of the whole text when
    `value` is only its start (a cut result's, see `agents._capped`)."""
    if fields is not None:
        value = _keep(value, frozenset(fields))
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    length = len(text) if total is None else total
    if length <= max_chars:
        return text, False
    shown = min(max_chars, len(text))  # a cut result's start may be shorter than the cut
    return f"{text[:shown]}… [truncated: showing {shown} of {length} chars]", True


def _keep(value: Any, fields: frozenset[str]) -> Any:
    if isinstance(value, dict):
        return {k: _keep_inner(v, fields) for k, v in value.items() if k in fields}
    if isinstance(value, list):
        return [_keep(item, fields) for item in value]
    return value


def _keep_inner(value: Any, fields: frozenset[str]) -> Any:
    # Lists of records under a kept key are filtered too ({"hits": [{...}, ...]}).
    if isinstance(value, list):
        return [_keep(item, fields) if isinstance(item, dict) else item for item in value]
    return value


def not_empty(value: Any) -> bool | str:
    """A success check that fails on empty data: None, "", [], {} or a dict of only empty values.

    Use it as `@tool(success=not_empty)` for APIs that answer 200 with nothing in it.
    """
    if value is None or value in ("", [], {}):
        return "the call succeeded but returned no data"
    if isinstance(value, dict) and all(v in (None, "", [], {}) for v in value.values()):
        return "the call succeeded but every field of the result is empty"
    return True
