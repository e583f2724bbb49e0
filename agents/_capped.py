"""What an outcome carries of a tool's result: the whole of it, or all that was ever read of it.

A tool may return megabytes (an MCP server's file, a web page) of which the model reads the first
`Tool.max_chars` characters of the observation (2,000 by default: see `agents._shaping`). Carried
whole, three 10 MB results grew a journal by 28.7 MiB, and a Temporal activity's result must fit
the server's payload limit (2 MB). So at the effect boundary (`LiveEffects.tool_call`, which the
journal's live calls and the Temporal activity go through) a result whose JSON is longer than
`MAX_RESULT_CHARS` becomes the first `max(MAX_RESULT_CHARS, tool.max_chars)` characters of its
observation text (the text the tool's `fields` leave, before the cut), with a `ResultCut`: the
text's full length, the JSON's size in bytes and sha256, and what the tool's own code (a `success`
check, an `evidence` hook, `facts`) made of the whole value, run once, there.

The loop reads nothing else of a result (`Toolbox.finish`: the observation and its "showing N of M
chars" mark, the evidence, the findings), so a live run, its replay and a Temporal workflow see
the same thing, and what the journal stores (the cut outcome) is exactly what the loop was given.
"""

from __future__ import annotations

import hashlib
import json
import sys
from typing import Any

from agents._shaping import shaped
from agents._toolbox import judged
from agents._tools import ResultCut, Tool, ToolOutcome
from agents._tracing import logger

__all__ = ["MAX_RESULT_CHARS", "kept", "served_outcome", "stored_outcome"]

MAX_RESULT_CHARS = 65_536
"""The longest tool result, in characters of its JSON, that an outcome carries whole; of a longer
one it keeps this many characters of the observation text (or the tool's `max_chars`, if more).
32 times the default observation cut, so `paor show` has more than the model read; the same bound
as a call's arguments (`MAX_ARG_CHARS`)."""
# A string this short is under the cap as JSON whatever it holds (an escape is at most 6 characters).
_SURELY_SHORT = (MAX_RESULT_CHARS - 2) // 6
_log = logger("paor.tools")


def kept(tool: Tool, args: dict[str, Any], outcome: ToolOutcome) -> ToolOutcome:
    """`outcome` as the loop and the journal take it: whole, or cut (see the module's docstring)."""
    if not outcome.ok or outcome.cut is not None:
        return outcome
    value = outcome.value
    if isinstance(value, str) and len(value) <= _SURELY_SHORT:  # most results: no JSON to write
        return outcome
    raw = json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    if len(raw) <= MAX_RESULT_CHARS:
        return outcome
    text, _ = shaped(value, fields=tool.fields, max_chars=sys.maxsize)
    data = raw.encode("utf-8", "surrogatepass")  # a lone surrogate still counts, and hashes
    verdict, evidence, findings = judged(tool, args, value)
    cut = ResultCut(
        chars=len(text),
        bytes=len(data),
        sha256=hashlib.sha256(data).hexdigest(),
        verdict=verdict,
        evidence=evidence,
        findings=findings,
    )
    start = text[: max(MAX_RESULT_CHARS, tool.max_chars)]
    _log.debug("tool_result_cut", tool=tool.name, bytes=len(data), kept=len(start))
    return outcome.model_copy(update={"value": start, "cut": cut})


def stored_outcome(tool: Tool, outcome: ToolOutcome) -> dict[str, Any]:
    """The payload a journal stores for `outcome` (a whole one without the empty `cut`)."""
    dumped = outcome.model_dump(mode="json")
    if outcome.cut is None:
        del dumped["cut"]
    return {"tool": tool.name, "outcome": dumped}


def served_outcome(payload: dict[str, Any]) -> ToolOutcome:
    """The outcome a stored payload stands for. A record of an earlier version keeps its cut's
    size under `capped` (it was made only for tools without hooks of their own)."""
    outcome = ToolOutcome.model_validate(payload["outcome"])
    capped = payload.get("capped")
    if outcome.cut is not None or not isinstance(capped, dict):
        return outcome
    return outcome.model_copy(update={"cut": ResultCut.model_validate(capped)})
