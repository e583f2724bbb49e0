"""Okapi BM25 over word tokens, in plain Python: the ranking behind `Corpus.search`.

The index is an inverted index built once (term -> postings of (passage number, term frequency)),
so a query only touches the passages that share a term with it. Scores use the Lucene form of the
inverse document frequency, ln(1 + (N - df + 0.5) / (df + 0.5)), which is never negative: a term in
most passages still counts a little instead of pushing a good passage below a bad one.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence

__all__ = ["BM25Index", "snippet", "tokenize"]

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


def snippet(text: str, query: str, *, size: int = 300) -> str:
    """About `size` characters of `text` around the densest cluster of query words, on one line.

    A cut is marked with "…" at the side where text was left out.
    """
    flat = " ".join(text.split())
    if len(flat) <= size:
        return flat
    terms = set(tokenize(query))
    starts = [m.start() for m in _WORD.finditer(flat.lower()) if _fold(m.group()) in terms]
    start = _best_window(flat, starts, size)
    end = min(len(flat), start + size)
    if end < len(flat):
        space = flat.rfind(" ", start + 1, end)
        end = space if space != -1 else end
    body = flat[start:end].strip()
    return f"{'…' if start > 0 else ''}{body}{'…' if end < len(flat) else ''}"


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
