"""The names a task asks about and an answer gives: the coverage rule, and names no one showed.

"What are the capitals of France and Japan?", answered "Paris" after one call for France, passes
every other rule: the answer is usable, a tool result backs it and it invents no number. Yet half
of the question was never looked at.

A task that names two or more things side by side ("France and Japan", "Egypt, Norway or
Chile"; a name is a run of capitalised words that does not open a sentence: "New York", "SOC")
asks about each of them. A name is covered when the answer or anything the agent looked at
mentions it: a tool call's arguments, a tool result, the results its task came with. A name
nothing mentions was not looked at, so an answer cannot rest on anything about it. The rule reads
no meaning, so it errs one way only: an agent that looked a thing up and still left it out of its
answer passes. Names that are not listed together ("an employee of Acme in London") are one
question's setting, not its parts, and a task that names one thing is the other rules' business
(the support rule of cited runs asks a passage to name it).

A name an answer gives that nothing the model was shown mentions came from its memory:
Qwen2.5-Coder-0.5B, told "Canberra" by the tool, answered "Sydney" (`unseen_names`, the names'
counterpart of `agents._answers.unseen_numbers`).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from itertools import pairwise

from agents._words import CITED, is_number, text_stems

__all__ = ["dropped", "named", "parts", "uncovered", "unseen_names"]

_NAME = re.compile(r"\b[A-Z][\w'-]*(?:[ \t]+[A-Z][\w'-]*)*")
_OPENERS = ".!?:;\n"
_WORDS = re.compile(r"[^\W\d_][\w'-]*")
_ALONE_WORDS = 4  # an answer of names alone is short: "Sydney", "Paris, Tokyo", "New Delhi"
# Words an answer of names alone may be that name nothing.
_REPLIES = frozenset(
    {"yes", "no", "true", "false", "none", "unknown", "ok", "okay", "done", "completed", "finished"}
)
# What joins two names of one list: ", ", " and ", ", or ", " & ", with "in", "of" or "the"
# after it ("in London and in Paris").
_JOIN = re.compile(r"\s*(?:,\s*(?:(?:and|or)\s+)?|\s(?:and|or|&)\s+)(?:(?:in|of|the|for)\s+)?")


def named(task: str) -> list[tuple[str, int, int]]:
    """The names in `task`, in order, with where each starts and ends: runs of capitalised
    words, less a word that opens a sentence or a line ("Compare Python and Rust" names Python
    and Rust)."""
    names = []
    for match in _NAME.finditer(task):
        start, name = match.start(), match[0]
        before = task[:start].rstrip(" \t\"'(")
        if not before or before[-1] in _OPENERS:
            first, _, name = name.partition(" ")
            start += len(first) + 1
        if name and name != "I" and text_stems(name):
            names.append((name.strip(), start, match.end()))
    return names


def parts(task: str) -> list[str]:
    """The things `task` lists side by side, each once, in order: names joined by commas, "and"
    or "or" ("France and Japan"; "London, Paris or Zurich")."""
    return list(_parts(task))


@functools.lru_cache(maxsize=256)  # one task is read by several checks, on every answer
def _parts(task: str) -> tuple[str, ...]:
    found: dict[tuple[str, ...], str] = {}
    names = named(task)
    for (one, _, end), (other, start, _) in pairwise(names):
        if _JOIN.fullmatch(task[end:start]):
            for name in (one, other):
                found.setdefault(tuple(text_stems(name)), name)
    return tuple(found.values())


def uncovered(task: str, answer: str, looked: Iterable[str]) -> str | None:
    """The first thing a task lists side by side that neither `answer` nor anything in `looked`
    (what the agent was shown or asked its tools) mentions; None when each is covered, or the
    task lists nothing."""
    listed = parts(task)
    if not listed:
        return None
    seen = set(text_stems(answer)).union(*(text_stems(text) for text in looked))
    return next((n for n in listed if not seen.issuperset(text_stems(n))), None)


def dropped(task: str, answer: str, results: Iterable[tuple[str, str]]) -> str | None:
    """The first thing `task` lists side by side that `answer` leaves out though a result is
    about it: the answer shares no word (other than the task's own) with the answer of any
    result whose question names it. Naming the thing is not saying what was found: "Paris,
    Japan", from Qwen2.5-Coder-0.5B when the results were "Paris" and "Tokyo", leaves Japan
    out; an answer that names it is held only to results that add a word to the task's.
    `results` are (question, answer) pairs; a thing no result is about is `uncovered`'s
    business."""
    listed = parts(task)
    if not listed:
        return None
    said = set(text_stems(answer))
    asked = set(text_stems(task))
    stemmed = [(set(text_stems(question)), set(text_stems(found))) for question, found in results]
    for name in listed:
        stems = set(text_stems(name))
        about = [found - asked for question, found in stemmed if stems <= question]
        if stems <= said:
            about = [found for found in about if found]
        if about and not any(found & said for found in about):
            return name
    return None


def unseen_names(answer: str, seen: Iterable[str]) -> list[str]:
    """The names in `answer` that none of `seen` mentions, in order: "Sydney", from a small
    model's memory, when the tool said "Canberra". A name is what `named` finds (not a word that
    opens a sentence, as often "Based" or "Yes" as a name), or, in a short answer of names
    alone ("Sydney", "Paris, Tokyo"), each of them; citations and acronyms ("API", "EUR": as
    often terms as names) are not the answer's names."""
    text = CITED.sub(" ", answer).strip()
    words = _WORDS.findall(text)
    alone = 0 < len(words) <= _ALONE_WORDS and "\n" not in text and not any(map(str.isdigit, text))
    if alone and all(w[0].isupper() for w in words):
        names = [m[0] for m in _NAME.finditer(text)]
    else:
        names = [name for name, _, _ in named(text)]
    candidates = [
        n
        for n in names
        if n.lower() not in _REPLIES
        and not n.isupper()  # an acronym ("API", "EUR") is as often a term as a name
        and not all(map(is_number, text_stems(n)))  # "Forty-two": `unseen_numbers`' business
    ]
    if not candidates:  # most answers: what was shown (every result, whole) need not be read
        return []
    shown = set().union(*(text_stems(s) for s in seen))
    return list(dict.fromkeys(n for n in candidates if not shown.issuperset(text_stems(n))))
