"""paor's own words: what it tells models and writes in place of answers, never an answer itself.

A small model copies what it reads. What paor says to it (loop warnings, refusals, "stop now"),
the layout paor shows it (the `[OBSERVE]` line of each tool result, the synthesis prompt's
"## id (status)" sections and "Expected output:" lines) and what paor writes when there is no
answer ("Incomplete: stopped early ...", "Nothing usable was gathered.") come back as "answers",
tool arguments and plan fields. This module knows those texts, so that:

- an answer that holds one is refused (`own_text`, used by `agents._answers.unusable_answer`),
- a tool argument or a plan field has them taken out before use (`strip_markers`).

The phrases are kept here, in one list, rather than imported from where each is said: the loops
import this module, not the other way round. `tests/test_answers.py` drives each real message out
of the executor and the planner and checks that this list still catches it, so the two cannot
drift apart.
"""

from __future__ import annotations

import re

__all__ = ["OWN_PHRASES", "STATUS_WORDS", "own_text", "strip_markers"]

OWN_PHRASES: tuple[str, ...] = (
    # The executor's and the guards' messages to the model.
    "Loop warning:",
    "Change approach, or give your final answer now",
    "with these same arguments",
    "returned nothing you had not already seen",
    "Your answer was not accepted",
    "Your last reply could not be used",
    "Using only what you gathered above, give your best final answer",
    "What a first search for the task found:",
    "the arguments repeat a message you were sent",
    "Skipped: the tool-call budget is spent",
    # The advice of the executor's refusals (`agents._answers`, `agents._verdict`), which a small
    # model appends to its next answer ("... To use a tool, call it. To finish, answer in plain
    # sentences.", Qwen2.5-Coder-0.5B, 2026-12-07).
    "a tool call written as text",
    "to use a tool, call it",
    "answer in plain sentences",
    "answer the task in your own words",
    "give only what the tools returned",
    "give only the numbers the tools returned",
    "then answer from what it returns",
    "then answer every part of the task",
    # What a call with bad arguments returns (`agents._toolbox`): an error, not a finding.
    "Error: invalid arguments",
    "again with arguments matching",
    # What paor writes when a model gave no answer worth keeping.
    "Incomplete: stopped early",
    "Nothing usable was gathered",
    "no usable answer",
    "Results gathered by the agents",
    "No results were gathered",
    # The planner's and the synthesis's prompts: their layout, and their own words.
    "Results from the agents:",
    "Expected output:",
    "A good answer:",
    "What is already known:",
    "[brackets]",
    "the run is incomplete",
    "Your reply has problems",
    "Reply again with the whole corrected JSON",
    "[OBSERVE]",
)
STATUS_WORDS = frozenset(
    {"done", "partial", "failed", "blocked", "complete", "incomplete", "cancelled", "dropped"}
)
"""The statuses paor labels results with ("## lookup (done)"). A lone "Done." is left alone: it
is how a model rightly closes an action task."""

_PHRASE = re.compile("|".join(re.escape(p).replace(r"\ ", r"\s+") for p in OWN_PHRASES), re.I)
_LOWER_PHRASES = tuple(" ".join(p.split()).lower() for p in OWN_PHRASES)
# The letters that a case-blind pattern takes for an ASCII one though their lower case is not it
# (long s, dotless i): text holding one is searched with `_PHRASE` itself.
_LONG_S, _DOTLESS_I = "\u017f", "\u0131"
# The synthesis prompt shows each result as "## subtask-id (done)" then "Task: ...": a model that
# copies that layout writes it back at the start of a line.
_LAYOUT = re.compile(
    r"^[ \t]*(?:#{1,6}[ \t]*|\*\*)?[\w.\-]{1,60}\**[ \t]*\((?:"
    + "|".join(sorted(STATUS_WORDS))
    + r")\)\**[ \t]*$|^[ \t]*\**Task\**:[ \t]",
    re.I | re.M,
)
# The `[OBSERVE]` line of a tool result (`agents._observe`), to the end of its line, also as a
# small model mangles it when it copies it ("OBSERVE} capital(...) ok", or the word alone).
_OBSERVE_LINE = re.compile(r"(?:\[(?i:observe)\]|(?<![\w\[])OBSERVE\b[\]})]?)[^\n]*")
# A status line paor writes in place of an answer, and its parenthesised labels.
_STATUS_LINE = re.compile(
    r"Incomplete:\s*stopped early[^\n]*|Nothing usable was gathered\.?|"
    r"\((?:" + "|".join(sorted(STATUS_WORDS)) + r")\)",
    re.I,
)


def own_text(text: str) -> str | None:
    """The first of paor's own phrases, layout lines or status labels in `text`, if any.

    Args:
        text: An answer a model wrote.

    Returns:
        The text found, as it appears (for a message that quotes it); None when `text` holds none.
    """
    flat = " ".join(text.split())
    low = flat.lower()
    exact = len(low) != len(flat) or _LONG_S in low or _DOTLESS_I in low
    phrase = _phrase_of(text) if exact else _first_phrase(flat, low)
    if phrase is not None:
        return phrase
    found = _LAYOUT.search(text) or ("observe" in low and _OBSERVE_LINE.search(text))
    return " ".join(found.group(0).split()) if found else None


def _first_phrase(flat: str, low: str) -> str | None:
    """What `_PHRASE` finds first in text whose whitespace runs are single spaces (`flat`) and
    whose lower case (`low`) is as long: the leftmost phrase, the earlier listed at one place.
    Substring tests, many times faster than the case-blind alternation on a long answer."""
    held = [phrase for phrase in _LOWER_PHRASES if phrase in low]
    if not held:
        return None
    at, _, phrase = min((low.find(phrase), order, phrase) for order, phrase in enumerate(held))
    return flat[at : at + len(phrase)]


def _phrase_of(text: str) -> str | None:
    found = _PHRASE.search(text)
    return " ".join(found.group(0).split()) if found else None


def strip_markers(text: str) -> str:
    """`text` without paor's markers: `[OBSERVE]` lines, status lines and "(done)" labels.

    A small model pastes what it read into what it writes next: the header of a tool result into
    a search query, a sub-agent's status into a plan's expected output. What is left is trimmed;
    text with no marker comes back unchanged.
    """
    if "[" not in text and "(" not in text and "Nothing" not in text and "OBSERVE" not in text:
        return text  # the usual case, without running the patterns
    stripped = _STATUS_LINE.sub(" ", _OBSERVE_LINE.sub(" ", text))
    return text if stripped == text else " ".join(stripped.split())
