"""Whether a grounded answer says what its sources say: the support rule of `cite=True` runs.

A small model that is shown the right passage still picks the wrong number from it ("12" for "20
working days in a rolling 12-month period"), answers a question the corpus cannot answer with a
sentence about something near it ("EUR 240 in London, Paris and Zurich" for New York), or
answers with a bare number, the citations alone or the question back. Each of those passes the
citation check (it cites a source it read) and the number check (it was shown the number).

The rule, the same on every path that asks for citations (a research or `--docs` batch sub-agent,
the research synthesis):

1. The answer must state something: without its citations (and any question in it, often the
   task copied) it is neither empty, nor only the task's own words, nor a bare number (a number
   needs what it counts: "25 working days"); a task asking how many, how much or how long needs
   a number in it (the digits of a telephone number count nothing), given in a sentence whose
   passage is about the task (not "72 hours" to notify a regulator, for how soon to report an
   incident), and one asking how many of a unit ("How many weeks ...") a number with it.
2. Every number the answer states with a unit ("12 weeks", "EUR 240", "31 March") is written with
   that unit in what the tools showed, wherever the tools showed that number at all ("12-month"
   is not "12 weeks"). Numbers the tools never showed are `unseen_numbers`'s business.
3. A name the task asks about ("New York", "Zurich") must be mentioned by some passage.
4. Passages the tools showed (two sentences under their document's title and section, or the
   document's id) must hold sentences of the answer (each one: all its numbers, each counting
   what the passage counts with it, "5 study days" not held by "5 unused days", with half of its
   own words when it names nothing the task asks about, or, without numbers, more than half of its
   own words), together most of what the task asks about (at least half of the task's terms, its content
   words and not "find", "search" or "documents", each weighted by how rare it is among the
   passages: a task in several parts may be answered from several passages, each sentence from the
   one of them that covers most), each most of what its sentence says it is about (two thirds of the
   weight of the task's terms it repeats: "the monthly internet allowance is EUR 400" is not held by
   a sentence about a EUR 400 desk allowance).
5. An agent that could look (it has tools) but cited nothing and was given no earlier results
   has no passage behind its answer: it is not taken, even where the evidence rule is off (an
   orchestrator's subtask that names no tools; `agents._verdict`).
6. An answer given from the earlier results a task came with (a subtask's dependencies) is held
   to them the same way: an accepted result is a passage, a result that was not accepted never
   is (`orchestrator` hands on what its tools showed instead).

An answer that fails is sent back once with the reason, then the result is `partial` (the
synthesis: the run is `incomplete`). The rule reads words, not meaning: it errs towards `partial`
for an answer worded far from its source, never towards `done` for one with no passage behind it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from agents._words import (
    QUALIFIERS,
    STOPWORDS,
    UNITS,
    is_number,
    number_value,
    quantities,
    quantities_in,
    stem,
    text_stems,
    text_tokens,
)

__all__ = ["sourced", "unsupported"]

# Two sentences: an answer often joins a fact to the condition in the next sentence.
_WINDOW_SENTENCES = 2
_HEADING_CHARS = 120  # a longer line is text
_COVERAGE = 0.5  # of the task's term weight, in one passage
_BEFORE, _AFTER = 1, 4  # words around a number a bare answer is shown ("EUR 240 per night in")
_HALF = 0.5  # of a number-free answer sentence's own words: more than this, in that passage
_WORD_LETTERS, _NEAR = 3, 6  # a word after a number that says what it counts, and how near
_ABOUT = 2 / 3  # of the weight of the task's terms an answer sentence repeats, in that passage

_CITATION = re.compile(r"\[[^\[\]\n]{1,200}\]|\{[^{}\n]{1,200}\}")
_MARKUP = re.compile(r"[*_`>#|]+")
_SENTENCE = re.compile(r"(?<=[.!?])[\"'”’)\]]*\s+|\n+")
_CLAUSE = re.compile(rf"{_SENTENCE.pattern}|;\s*")  # an answer's: "A [a]; B [b]." is two
_HEADING = re.compile(r"^\s*#{1,6}\s+(.*)$")
_UNDERLINE = re.compile(r"([-=*~^])\1{2,}")
_ITEM = re.compile(r"\s*(?:[-*+]|\d{1,3}[.)]|\|)\s")
_HIT = re.compile(r"(?=\{\"doc\": )")
_TITLE = re.compile(r'"doc": "((?:[^"\\]|\\.){1,200})", "title": "((?:[^"\\]|\\.){0,200})"')
_CALL_SOURCE = re.compile(r"[\s(){}]")
_COUNTING = re.compile(
    r"\bhow (?:many|much|long|often|old|far|soon|quickly|fast|large|big|high)\b|\bwhat (?:percentage|share|amount)\b",
    re.IGNORECASE,
)
# "how many (working) days", "how many unused annual leave days": the unit is among a few words
_HOW_MANY = re.compile(r"\bhow many((?: [\w-]+){1,5})", re.IGNORECASE)
_NAME = re.compile(r"\b[A-Z][\w-]*(?:\s+[A-Z][\w-]*)*")
# A telephone number ("+44 20 7946 0321", "(555) 123-4567"): three or more groups of digits, with
# a leading "+" and seven digits or more, else nine or more (a date has eight). It counts nothing.
_PHONE = re.compile(r"(?<![\w+])(\+)?\(?\d{1,5}\)?(?:[ .-]\(?\d{1,5}\)?){2,}(?![\w])")
_PHONE_DIGITS = 9
_PHONE_DIGITS_PLUS = 7


def unsupported(answer: str, task: str, passages: Iterable[str]) -> str | None:
    """Why `answer` is not supported by `passages` as an answer to `task`, or None if it is
    (the rule is in this module's docstring).

    Args:
        answer: The final answer, citations included.
        task: What was asked (a sub-agent's task, or the run's goal).
        passages: What the tools showed: tool results, a first look, the agents' results.

    Returns:
        None, or the reason in words the model can act on.
    """
    claim = _MARKUP.sub(" ", _CITATION.sub(" ", answer)).strip()
    # "What amount", like "how much", asks for a number (checked below), not about an amount.
    asked = text_stems(_COUNTING.sub(" ", task))
    # A question in the answer (often the task, copied) states nothing.
    said = [s for s in _CLAUSE.split(claim) if text_tokens(s) and not s.rstrip().endswith("?")]
    tokens = [t for s in said for t in text_tokens(s)]
    numbers = [t for t in tokens if is_number(t)]
    own = {word for s in said for word in text_stems(s)} - set(asked)
    if not tokens or not (own or numbers):
        return "your answer states nothing the question does not; say what the sources say"
    if len(numbers) == len(tokens):
        return _bare(numbers[0], asked, _windows(passages))
    if _COUNTING.search(task) and not _counts(said):
        return (
            "the task asks for a number and your answer gives none; give the number the source "
            "gives"
        )
    counted = _counted(task)
    if counted and not any(counted in q.units for s in said for q in quantities(s)):
        return (
            f"the task asks how many {counted}s and your answer gives no number of {counted}s; "
            f"give the number with its unit, as the source gives it"
        )
    windows = _windows(passages)
    units = _units_shown(windows)
    for sentence in said:
        for quantity in quantities(sentence):
            shown = units.get(quantity.value)
            if shown is not None and quantity.units and not any(quantity.units <= u for u in shown):
                return (
                    f"no source gives {quantity.value} with the unit "
                    f"{'/'.join(sorted(quantity.units))}; give the number with the unit the "
                    "source gives it"
                )
    missing = _unnamed(task, windows)
    if missing:
        return (
            f"no passage the tools returned mentions {missing}; say that the sources do not "
            "answer this, or search for it"
        )
    weights = _weights(asked, windows)
    total = sum(weights.values())
    # Each sentence may rest on its own passage (a task in several parts is answered from
    # several); together, the passages behind the answer must cover most of the task. A
    # sentence rests on one passage, the one holding it that covers most of the task: "1", held
    # by every passage with a 1 in it, must not gather the task's terms from all of them.
    backing: set[str] = set()
    counting, answered = bool(_COUNTING.search(task)), False
    for sentence in said:
        # What this sentence says it is about (the task's terms it repeats) must be there too.
        stems = set(text_stems(sentence))
        about = {term: w for term, w in weights.items() if term in stems}
        holding = [
            window
            for window in windows
            if _holds(window, sentence, asked)
            and _covered(window, about) >= _ABOUT * sum(about.values())
        ]
        if holding:
            best = max(holding, key=lambda window: _covered(window, weights))
            backing |= best.stems
            # The number a task asks for comes from a passage about the task, not from one
            # beside it ("72 hours" to notify a regulator, for how soon to report an incident).
            answered = answered or (
                counting
                and bool(_counts([sentence]))
                and _covered(best, weights) >= _COVERAGE * total
            )
    if counting and backing and not answered:
        return (
            "the task asks for a number and no passage about it gives the one in your answer; "
            "give the number the source gives for what the task asks"
        )
    if backing and sum(w for term, w in weights.items() if term in backing) >= _COVERAGE * total:
        return None
    terms = ", ".join(sorted(weights, key=lambda t: -weights[t])[:3])
    return (
        "no passage the tools returned says this about what the task asks "
        f"({terms}); answer only with what a passage states, or say it was not found"
    )


def sourced(source: str, text: str) -> str:
    """`text` as a passage headed by its source, when the source is a document's id (its id
    often names what it is about: "python/yield"); a tool call's arguments are the model's own
    words, not the source's, and head nothing."""
    return text if _CALL_SOURCE.search(source) else f"# {source}\n{text}"


@dataclass(frozen=True)
class _Window:
    stems: frozenset[str]
    tokens: tuple[str, ...]


def _windows(passages: Iterable[str]) -> list[_Window]:
    """Each run of two sentences of each passage, with its title and section heading."""
    windows: list[_Window] = []
    for passage in passages:
        sentences: list[tuple[str, str, str]] = []
        for title, section, paragraph in _paragraphs(passage):
            sentences += [(title, section, s) for s in _SENTENCE.split(paragraph) if s.strip()]
        for i, (head, sub, _) in enumerate(sentences):
            # A window stays under one heading: the next document's first sentence is not this one's.
            following = sentences[i : i + _WINDOW_SENTENCES]
            run = [s for h, u, s in following if (h, u) == (head, sub)]
            text = " ".join([head, sub, *run])
            windows.append(_Window(frozenset(text_stems(text)), tuple(text_tokens(text))))
    return windows


def _paragraphs(passage: str) -> Iterator[tuple[str, str, str]]:
    """Each paragraph of `passage` as one line (hard-wrapped text joined; a list item or table
    row starts a paragraph of its own), with the title and section heading above it."""
    title = section = ""
    paragraph: list[str] = []
    lines = passage.splitlines()
    for line, following in zip(lines, [*lines[1:], ""], strict=True):
        text = line.strip()
        heading = _heading(text, following.strip())
        rule = bool(_UNDERLINE.fullmatch(text))
        if paragraph and (not text or heading or rule or _ITEM.match(line)):
            yield title, section, " ".join(paragraph)
            paragraph = []
        if heading:
            title, section = (title or heading, heading)
            continue
        for part in _HIT.split(text) if text and not rule else ():
            named = _TITLE.search(part)  # a search's hits, one JSON object each
            if named and paragraph:
                yield title, section, " ".join(paragraph)
                paragraph = []
            if named:
                title = section = f"{named[1]} {named[2]}"
            paragraph.append(part)
    if paragraph:
        yield title, section, " ".join(paragraph)


def _heading(line: str, following: str) -> str:
    """The heading `line` is (a Markdown one, or one underlined by `following`), or "". A long
    line is text, whatever it starts with (a chunk flattened to one line keeps its "# Title")."""
    if len(line) > _HEADING_CHARS:
        return ""
    marked = _HEADING.match(line)
    if marked:
        return marked[1]
    if line and _UNDERLINE.fullmatch(following) and not _ITEM.match(line):
        return line
    return ""


def _holds(window: _Window, sentence: str, asked: Sequence[str]) -> bool:
    """Whether the window states the answer sentence: every number in it, each counting what the
    window counts with it (`_counted_alike`), and, for a sentence that names nothing the task asks
    about, half its own words too ("1 (number of documents returned)" is not held by a "1-off
    allowance"); or, without numbers, more than half of the sentence's own words (those the task
    did not say)."""
    numbers = [q.value for q in quantities(sentence)]
    stems = set(text_stems(sentence))
    own = stems - set(asked)
    if numbers:
        if not _counted_alike(window, sentence):
            return False
        return bool(stems & set(asked)) or len(own & window.stems) >= _HALF * len(own)
    if not own:
        return False
    return len(own & window.stems) > _HALF * len(own)


def _counted_alike(window: _Window, sentence: str) -> bool:
    """Whether each number of the sentence is in the window, counting what it counts in the
    sentence: the word right after it ("5 study days") is near that number there too. "Up to 5 study
    days per year" is not held by "up to 5 unused days can be carried over", whatever the two
    share besides."""
    tokens = text_tokens(sentence)
    near = [(number_value(t), _after(tokens, i)) for i, t in enumerate(tokens) if is_number(t)]
    return all(any(said <= _around(window, i) for i in _at(window, value)) for value, said in near)


def _after(tokens: Sequence[str], at: int) -> set[str]:
    """The word right after a number, when it says what the number counts: a word, not a
    stopword, another number or a fragment ("31st", "EUR 170 pe")."""
    following = tokens[at + 1] if at + 1 < len(tokens) else ""
    if len(following) < _WORD_LETTERS or following in STOPWORDS or is_number(following):
        return set()
    return {stem(following)}


def _at(window: _Window, value: str) -> list[int]:
    """Where the window gives the number `value`."""
    return [i for i, t in enumerate(window.tokens) if is_number(t) and number_value(t) == value]


def _around(window: _Window, at: int) -> set[str]:
    """The stems of the words near the number at position `at` of the window."""
    return {stem(t) for t in window.tokens[max(0, at - _NEAR) : at + _NEAR + 1]}


def _bare(number: str, asked: Sequence[str], windows: Sequence[_Window]) -> str:
    """What a bare number is told: where the passage most about the task gives it, so that a
    small model that picked the right number can say what it counts ("25 working days")."""
    value, weights = number_value(number), _weights(asked, windows)
    giving = [w for w in windows if value in w.stems]
    if not giving:
        return (
            "a bare number is not an answer; say in a sentence what it counts, with its unit, "
            "as the source words it"
        )
    best = max(giving, key=lambda w: _covered(w, weights))
    at = _at(best, value)[0]
    words = " ".join(best.tokens[max(0, at - _BEFORE) : at + _AFTER + 1])
    return (
        f'a bare number is not an answer; a source has "{words}": say in a sentence what '
        f"{number} counts, with its unit, as the source words it"
    )


def _counts(said: Sequence[str]) -> list[str]:
    """The numbers the answer's sentences give that can count or measure something: not the
    digits of a telephone number (an answer to "how soon" that says where to call gives no
    time)."""
    numbers = []
    for sentence in said:
        for phone in _PHONE.finditer(sentence):
            digits = sum(c.isdigit() for c in phone[0])
            if digits >= (_PHONE_DIGITS_PLUS if phone[1] else _PHONE_DIGITS):
                sentence = sentence.replace(phone[0], " ")
        numbers += [t for t in text_tokens(sentence) if is_number(t)]
    return numbers


def _counted(task: str) -> str:
    """The unit a task counts in ("How many weeks ..." counts weeks), or ""."""
    asked = _HOW_MANY.search(task)
    words = [stem(w.lower()) for w in asked.group(1).split()] if asked else []
    return next((w for w in words if w in UNITS - QUALIFIERS), "")


def _unnamed(task: str, windows: Sequence[_Window]) -> str:
    """The first name the task asks about (a run of capitalised words after its first word:
    "New York", "Zurich", "SOC") that no passage mentions, or "". An answer about a place, a
    person or a thing the sources never name cannot rest on them."""
    shown = frozenset().union(*(w.stems for w in windows))
    for match in _NAME.finditer(task):
        name = match[0]
        if match.start() == 0 or not any(c.isupper() for c in name):
            continue
        if any(word not in shown for word in text_stems(name)):
            return name
    return ""


def _weights(asked: Sequence[str], windows: Sequence[_Window]) -> dict[str, float]:
    """Each task term's weight: rarer among the passages weighs more; one no passage holds,
    most of all."""
    n = len(windows)
    return {
        term: math.log((n + 1) / (0.5 + sum(term in w.stems for w in windows)))
        for term in dict.fromkeys(asked)
    }


def _covered(window: _Window, weights: dict[str, float]) -> float:
    return sum(w for term, w in weights.items() if term in window.stems)


def _units_shown(windows: Sequence[_Window]) -> dict[str, list[frozenset[str]]]:
    """For each number the passages show, the units written beside it each time."""
    shown: dict[str, list[frozenset[str]]] = {}
    for window in windows:
        for quantity in quantities_in(list(window.tokens)):
            shown.setdefault(quantity.value, []).append(quantity.units)
    return shown
