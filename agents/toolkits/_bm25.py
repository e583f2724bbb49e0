"""Okapi BM25 over word tokens, in plain Python: the ranking behind `Corpus.search`, and the
snippets of its hits.

The index is an inverted index built once (term -> postings of (passage number, term frequency)),
so a query only touches the passages that share a term with it. Scores use the Lucene form of the
inverse document frequency, ln(1 + (N - df + 0.5) / (df + 0.5)), which is never negative: a term in
most passages still counts a little instead of pushing a good passage below a bad one.

A snippet is made of whole sentences: the one holding the query's rarest terms, then its
neighbours while they fit. A fact ("Claims must be filed within 60 days") is only useful whole, and
a window of characters around the densest cluster of query words can leave it just outside.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence

__all__ = ["BM25Index", "sentences", "snippet", "tokenize"]

K1 = 1.5
B = 0.75

_WORD = re.compile(r"[^\W_]+")
# Kept small on purpose: only words that mean nothing in technical text. Words like "if", "for",
# "in", "is", "with", "not" or "from" are keywords somewhere (a query for the "with" statement
# must find it); the inverse document frequency already makes them cheap where they are common.
_STOPWORD_LIST = """
    a an are at be been but by can do does has have how i into it its may of on s so such t than
    that the their then there these they this those to was were what when where which who why
    will would you your
"""
_STOPWORDS = frozenset(_STOPWORD_LIST.split())

# Sentences. A line starting one of these starts a block of its own; a heading line ends one.
_BLOCK_START = re.compile(r"[ \t]*(?:#{1,6}[ \t]|[-*+•][ \t]|\d{1,3}[.)][ \t]|\|)")
_HEADING_LINE = re.compile(r"[ \t]*#{1,6}[ \t]")
_STOP = re.compile(r"[.!?…]+[\"'”’)\]]*\s+")
_ABBREVIATION_LIST = """
    e.g i.e etc vs cf al approx incl excl mr mrs ms dr prof st no nr art sec ch fig vol p pp
    dept inc ltd co corp jr sr
"""
_ABBREVIATIONS = frozenset(_ABBREVIATION_LIST.split())
_MONTH = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\b"
)
_MONTH_FIRST = re.compile(_MONTH, re.I)

# Quantities: what "how long", "how much" and "when" ask for, and what a cut must not split.
_UNIT = (
    r"(?:seconds?|minutes?|hours?|days?|nights?|weeks?|months?|years?|percent|per cent"
    r"|eur|euros?|usd|dollars?|gbp|pounds?|chf|francs?|km|kg|miles?)\b|%"
)
_NUMBER = r"\d[\d,.]*"
_NUMBER_WORD = (
    r"(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|thirty"
    r"|forty|fifty|sixty|ninety|hundred)"
)
_QUANTITY = re.compile(
    rf"(?:[$€£¥]|\b(?:eur|usd|gbp|chf)\b)\s?{_NUMBER}"  # EUR 240, $1,200.50
    rf"|\b(?:{_NUMBER}|{_NUMBER_WORD})\s?(?:[a-z]+[ -])?(?:{_UNIT})"  # 60 days, 25 working days
    rf"|\b\d{{1,2}}\.?\s{_MONTH}(?:\s\d{{4}})?"  # 1 March 2027
    rf"|\b{_MONTH}\s\d{{1,2}}\b(?:,?\s\d{{4}})?"  # March 1, 2027
    r"|\b(?:19|20)\d\d\b",  # a year
    re.I,
)
# Any digit counts ("14 characters long"), and a quantity in words ("sixty days").
_HOLDS_QUANTITY = re.compile(rf"\d|{_QUANTITY.pattern}", re.I)
_ASKS_QUANTITY = re.compile(
    r"\b(?:how (?:long|many|much|soon|quickly|often|late|early|far)|when|until|deadline|within"
    r"|date|cost|costs|fee|fees|price|amount|limit|maximum|minimum|rate|percent|percentage)\b",
    re.I,
)
# A word matches a query term that shares its first _STEM letters and differs from it by endings
# of at most _ENDING letters: "filed" and "file", "refunded" and "refund", not "cancellation".
_STEM = 4
_ENDING = 3


def tokenize(text: str) -> list[str]:
    """Lowercase word tokens without stopwords, plural endings folded (Porter's step 1a).

    Underscores split words, so `__enter__` and "enter" meet; the same function serves passages
    and queries, so whatever it folds, it folds on both sides.
    """
    return [_fold(w) for w in _WORD.findall(text.lower()) if w not in _STOPWORDS]


def _fold(word: str) -> str:
    if len(word) <= 3 or not word.endswith("s"):
        return word
    if word.endswith("sses"):
        return word[:-2]
    if word.endswith("ies"):
        return word[:-3] + "y"
    if word.endswith(("ss", "us", "is")):
        return word
    return word[:-1]


class BM25Index:
    """An Okapi BM25 index over pre-tokenized passages.

    Args:
        passages: Each passage as its token list; a passage's number is its position here.
        k1: Term-frequency saturation.
        b: Length normalisation (0: none, 1: full).
    """

    def __init__(self, passages: Sequence[Sequence[str]], *, k1: float = K1, b: float = B) -> None:
        self._postings: dict[str, list[tuple[int, int]]] = {}
        for number, tokens in enumerate(passages):
            for term, tf in Counter(tokens).items():
                self._postings.setdefault(term, []).append((number, tf))
        count = len(passages)
        average = sum(map(len, passages)) / count if count else 0.0
        # The length part of the denominator depends only on the passage: computed once here.
        self._norm = [k1 * (1 - b + b * len(p) / average) if average else k1 for p in passages]
        self._idf = {
            term: math.log(1 + (count - len(posts) + 0.5) / (len(posts) + 0.5))
            for term, posts in self._postings.items()
        }
        self._k1 = k1

    def __len__(self) -> int:
        """The number of passages indexed."""
        return len(self._norm)

    def scores(self, query: str) -> list[tuple[int, float]]:
        """Every passage sharing a term with `query`, as (passage number, score), best first.

        Ties go to the lower passage number, so equal queries always rank alike.
        """
        totals: dict[int, float] = {}
        for term in dict.fromkeys(tokenize(query)):
            idf = self._idf.get(term)
            if idf is None:
                continue
            for number, tf in self._postings[term]:
                gain = idf * tf * (self._k1 + 1) / (tf + self._norm[number])
                totals[number] = totals.get(number, 0.0) + gain
        return sorted(totals.items(), key=lambda item: (-item[1], item[0]))

    def weights(self, query: str) -> dict[str, float]:
        """Each distinct term of `query` that the index holds, with its inverse document frequency."""
        return {t: self._idf[t] for t in dict.fromkeys(tokenize(query)) if t in self._idf}


def snippet(
    text: str, query: str, *, size: int = 300, weights: Mapping[str, float] | None = None
) -> str:
    """At most `size` characters of `text` on one line: whole sentences around the one that best
    matches `query`.

    The best sentence holds the most (and the rarest) query terms; a question asking for an
    amount, a duration or a date prefers the sentence that holds one. Whole sentences are added
    on either side, the better matching first, while they fit. Only a sentence longer than `size`
    is cut, at spaces, never inside a number and its unit. A cut is marked with "…" at the side
    where text was left out.

    Args:
        text: The passage.
        query: The words to look for.
        size: The most characters returned, marks included.
        weights: How much each query term counts (`BM25Index.weights`); a term without one counts
            as the average, and with no weights every term counts 1.
    """
    flat = " ".join(text.split())
    if len(flat) <= size:
        return flat
    parts = sentences(text)
    terms = _term_weights(query, weights)
    asks = bool(_ASKS_QUANTITY.search(query))
    scores = [_sentence_score(part, terms, asks) for part in parts]
    # Ties go to the earlier sentence: the start of a passage usually says what it is about.
    best = max(range(len(parts)), key=lambda i: (scores[i], -i))
    budget = size - 2  # room for a "…" on each side
    if len(parts[best]) > budget:
        return _cut(parts, best, query, budget)
    first, last = _widen(parts, scores, best, budget)
    body = " ".join(parts[first : last + 1])
    return f"{'…' if first > 0 else ''}{body}{'…' if last < len(parts) - 1 else ''}"


def sentences(text: str) -> list[str]:
    """The sentences of `text`, each on one line, in order, with every word kept.

    Blank lines, headings, list items and table rows end a sentence too (a heading has no full
    stop). A full stop after an abbreviation ("e.g.", "No."), an initial ("J.") or a day before
    its month ("1. March") does not end one, nor does one before a lowercase word.
    """
    return [part for block in _blocks(text) for part in _split(block)]


def _blocks(text: str) -> Iterator[str]:
    """The paragraphs, headings, list items and table rows of `text`, each flattened to a line."""
    lines: list[str] = []
    for line in text.splitlines():
        starts = not line.strip() or _BLOCK_START.match(line)
        if lines and (starts or _HEADING_LINE.match(lines[-1])):
            yield " ".join(" ".join(lines).split())
            lines = []
        if line.strip():
            lines.append(line)
    if lines:
        yield " ".join(" ".join(lines).split())


def _split(block: str) -> Iterator[str]:
    start = 0
    for match in _STOP.finditer(block):
        if match.end() < len(block) and _ends_sentence(block, match):
            yield block[start : match.end()].rstrip()
            start = match.end()
    if start < len(block):
        yield block[start:]


def _ends_sentence(block: str, stop: re.Match[str]) -> bool:
    """Whether the punctuation `stop` matched ends a sentence (the block goes on after it)."""
    following = block[stop.end() :]
    if following[0].islower():
        return False
    if not stop.group().startswith("."):
        return True
    word = block[: stop.start()].rpartition(" ")[2]
    if word.lower().lstrip("(\"'") in _ABBREVIATIONS:
        return False
    if len(word) == 1 and word.isupper():
        return False  # an initial: "J. Smith"
    return not (word.isdigit() and len(word) <= 2 and _MONTH_FIRST.match(following))


def _term_weights(query: str, weights: Mapping[str, float] | None) -> dict[str, float]:
    """The query's terms with their weights: `weights`, the average for a term it lacks, else 1."""
    terms = dict.fromkeys(tokenize(query), 1.0)
    if not weights:
        return terms
    average = sum(weights.values()) / len(weights)
    return {term: weights.get(term, average) for term in terms}


def _sentence_score(sentence: str, terms: Mapping[str, float], asks_quantity: bool) -> float:
    """The weight of the query terms `sentence` holds, each once; a word matches a term that
    differs only in a short ending ("filed" matches "file"), as a question and a rule phrase it."""
    words = set(tokenize(sentence))
    held = [weight for term, weight in terms.items() if any(_alike(w, term) for w in words)]
    if held and asks_quantity and _HOLDS_QUANTITY.search(sentence):
        # The answer to "how long" or "how much" is a sentence that names one.
        held.append(max(terms.values()))
    return sum(held)


def _alike(word: str, term: str) -> bool:
    if word == term:
        return True
    common = 0
    while common < min(len(word), len(term)) and word[common] == term[common]:
        common += 1
    return common >= _STEM and len(word) - common <= _ENDING and len(term) - common <= _ENDING


def _widen(parts: list[str], scores: list[float], best: int, budget: int) -> tuple[int, int]:
    """The first and last sentence of the window: `best`, then its neighbours one at a time, the
    better matching (on a tie, the earlier) first, while the window fits in `budget`."""
    first = last = best
    used = len(parts[best])
    while True:
        fitting = [
            i
            for i in (first - 1, last + 1)
            if 0 <= i < len(parts) and used + 1 + len(parts[i]) <= budget
        ]
        if not fitting:
            return first, last
        pick = max(fitting, key=lambda i: (scores[i], -i))
        used += 1 + len(parts[pick])
        first, last = min(first, pick), max(last, pick)


def _cut(parts: list[str], best: int, query: str, budget: int) -> str:
    """A piece of the one sentence `parts[best]`, too long to show whole: `budget` characters
    around its densest cluster of query words, cut at spaces outside any quantity."""
    sentence = parts[best]
    terms = set(tokenize(query))
    starts = [m.start() for m in _WORD.finditer(sentence.lower()) if _fold(m.group()) in terms]
    start = _outside(sentence, _best_window(sentence, starts, budget))
    end = min(len(sentence), start + budget)
    if end < len(sentence):
        space = sentence.rfind(" ", start + 1, end + 1)
        end = _outside(sentence, space if space > start else end)
    before = "…" if start > 0 or best > 0 else ""
    after = "…" if end < len(sentence) or best < len(parts) - 1 else ""
    return f"{before}{sentence[start:end].strip()}{after}"


def _outside(text: str, at: int) -> int:
    """`at`, or where the quantity it falls inside begins: a cut there keeps "60 days" whole."""
    for match in _QUANTITY.finditer(text):
        if match.start() < at < match.end():
            return match.start()
    return at


def _best_window(flat: str, starts: list[int], size: int) -> int:
    """Where to begin: the window holding most query-word hits, backed up to a word boundary."""
    if not starts:
        return 0
    best, best_hits = starts[0], 0
    for i, start in enumerate(starts):
        hits = sum(1 for s in starts[i:] if s < start + size - 40)
        if hits > best_hits:
            best, best_hits = start, hits
    # Some lead-in before the first hit reads better than a passage that starts mid-thought.
    begin = max(0, best - 60)
    if begin > 0:
        space = flat.find(" ", begin, best)
        begin = space + 1 if space != -1 else best
    return begin
