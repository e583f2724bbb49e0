"""What a journal keeps of a tool's result: the whole of it, or all that was ever read of it.

A tool may return megabytes (an MCP server's file, a web page) of which the model reads the first
`Tool.max_chars` characters of the observation (2,000 by default: see `agents._shaping`). Kept
whole, three 10 MB results grew a journal by 28.7 MiB. So a result whose JSON is longer than
`MAX_RESULT_CHARS` is stored as the first `max(MAX_RESULT_CHARS, tool.max_chars)` characters of
its observation text (the text the tool's `fields` leave, before the cut), beside its full
length, its size in bytes and the sha256 of its JSON (`capped` in the record's payload).

Replay stays exact. All that the loop takes from a result (the observation and its "showing N of M
chars" mark; the evidence excerpt, the support rule and the reports read that observation) is a
function of that text and its length, and a capped record is served back as the kept text padded
to its full length. A tool whose own code reads the whole value (a `success` check, an `evidence`
hook, `facts`) keeps its results whole: a replay must hand that code what it had.
"""

from __future__ import annotations

import hashlib
import json
import sys
from typing import Any

from agents._shaping import shaped
from agents._tools import Tool, ToolOutcome
from agents._tracing import logger

__all__ = ["MAX_RESULT_CHARS", "served_outcome", "stored_outcome"]

MAX_RESULT_CHARS = 65_536
"""The longest tool result, in characters of its JSON, that a journal stores whole; of a longer
one it keeps this many characters of the observation text (or the tool's `max_chars`, if more).
32 times the default observation cut, so `paor show` has more than the model read; the same bound
as a call's arguments (`MAX_ARG_CHARS`)."""
_log = logger("paor.journal")


def stored_outcome(tool: Tool, outcome: ToolOutcome) -> dict[str, Any]:
    """The payload a journal stores for `outcome`: whole, or capped (see the module's docstring)."""
    whole = {"tool": tool.name, "outcome": outcome.model_dump(mode="json")}
    if not outcome.ok or not _reads_only_the_observation(tool):
        return whole
    raw = json.dumps(outcome.value, ensure_ascii=False, separators=(",", ":"), default=str)
    if len(raw) <= MAX_RESULT_CHARS:
        return whole
    text, _ = shaped(outcome.value, fields=tool.fields, max_chars=sys.maxsize)
    kept = text[: max(MAX_RESULT_CHARS, tool.max_chars)]
    data = raw.encode("utf-8", "surrogatepass")  # a lone surrogate still counts, and hashes
    capped = {"chars": len(text), "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}
    _log.debug("tool_result_capped", tool=tool.name, bytes=len(data), kept=len(kept))
    shown = outcome.model_copy(update={"value": kept})
    return {"tool": tool.name, "outcome": shown.model_dump(mode="json"), "capped": capped}


def served_outcome(payload: dict[str, Any]) -> ToolOutcome:
    """The outcome a stored payload stands for: a capped result as its kept text, padded to its
    full length (so its observation, cut mark included, reads as the live one did)."""
    outcome = ToolOutcome.model_validate(payload["outcome"])
    capped = payload.get("capped")
    if not isinstance(capped, dict):
        return outcome
    padded = str(outcome.value).ljust(int(capped["chars"]))
    return outcome.model_copy(update={"value": padded})


def _reads_only_the_observation(tool: Tool) -> bool:
    """Whether nothing but the observation text is taken from the tool's results: no success
    check, evidence hook or facts of its own read the value."""
    return tool.success is None and tool.evidence is None and not tool.facts
