"""Final answers a model cannot pass off: empty ones, placeholders, parroted prompts, raw calls.

Small models copy what they are shown. An answer that is a placeholder (`<your answer>`), a
sentence lifted from the instructions or a tool's description, a tool call written as JSON, or no
words at all, is not an answer, whatever an acceptance check would say about its citations. The
executor sends such an answer back like a failed acceptance check (bounded by the same count), and
the wrap-up falls back to what was gathered instead of keeping it (the research report applies the
same test, stricter, to every answer and summary it prints).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from agents._errors import MalformedResponse
from agents._model import ToolSpec
from agents._textcalls import looks_like_call, recover_calls

__all__ = ["Parrot", "described", "unusable_answer"]

# Eight words in a row: a user's tool descriptions are plain phrases ("the weekend forecast for a
# city") that a good answer may echo; a copy of the instructions runs longer.
SHINGLE_WORDS = 8
_REPEATS = 3
_GROOVE_WORDS, _GROOVE_TIMES = 6, 4  # "returns a new function that returns" four times
_GROOVE_SCAN = 20_000  # words: a groove shows long before
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
_WORD = re.compile(r"[a-z0-9]+(?:['’][a-z]+)?")
_PLACEHOLDER = re.compile(
    r"<\s*(?:your|the|final|an?)?\s*(?:answer|text|response|reply|name|tool|summary|id)\s*>"
    r"|\b(?:your answer here|insert (?:answer|text) here|lorem ipsum)\b",
    re.I,
)


class Parrot:
    """What a model was told, kept as word shingles, to spot an answer that copies it.

    Args:
        sources: The texts an answer must not copy (instructions, tool descriptions, examples).
        words: How many consecutive words make a copy (8 by default: a phrase, not a shared term).
    """

    def __init__(self, sources: Iterable[str] = (), *, words: int = SHINGLE_WORDS) -> None:
        self.words = words
        self._shingles: set[tuple[str, ...]] = set()
        for text in sources:
            self.add(text)

    def __bool__(self) -> bool:
        """Whether anything was remembered (nothing to compare with is the usual case)."""
        return bool(self._shingles)

    def add(self, text: str) -> None:
        """Remember one more text an answer must not copy."""
        self._shingles.update(_shingles(_words(text), self.words))

    def copied(self, answer: str) -> str | None:
        """The first copied phrase in `answer`, if any."""
        tokens = _words(answer)
        for start, shingle in enumerate(_shingles(tokens, self.words)):
            if shingle in self._shingles:
                return " ".join(tokens[start : start + self.words])
        return None


def unusable_answer(
    answer: str, *, parrot: Parrot | None = None, tools: Iterable[str] = ()
) -> str | None:
    """Why `answer` is not a usable final answer, or None if it is one.

    Args:
        answer: The model's final answer.
        parrot: What the model was told, if copies of it should be refused.
        tools: The tool names the model knew (a call to one, written as text, is refused).

    Returns:
        The problem, phrased for the model to fix; None when the answer is usable.
    """
    names = set(tools)
    if _is_call(answer, names):
        return (
            "your answer is a tool call written as text; to use a tool, call it; to finish, "
            "answer in plain sentences"
        )
    placeholder = _PLACEHOLDER.search(answer)
    if placeholder:
        return f"your answer holds the placeholder {placeholder.group(0)!r}; write the real answer"
    if not _words(answer):
        return "your answer has no content; answer the task in words"
    repeated = _repeated(answer)
    if repeated:
        return f'your answer repeats "{repeated[:80]}" over and over; write each point once'
    copied = parrot.copied(answer) if parrot else None
    if copied:
        return (
            f'your answer copies the instructions ("{copied}"); answer the task itself, in your '
            "own words, from what you found"
        )
    return None


def described(specs: Iterable[ToolSpec]) -> list[str]:
    """Every description the model reads about these tools, their arguments' included."""
    texts = []
    for spec in specs:
        texts.append(spec.description)
        properties = spec.parameters.get("properties", {})
        texts += [str(p.get("description", "")) for p in properties.values()]
    return texts


def _is_call(answer: str, tools: set[str]) -> bool:
    try:
        recovered = recover_calls(answer, tools)
    except MalformedResponse:
        return True
    if recovered is not None and recovered.tool_calls:
        return True
    return bool(tools) and looks_like_call(answer, tools)


def _repeated(answer: str) -> str | None:
    """A sentence the answer says `_REPEATS` times or more, or a phrase of `_GROOVE_WORDS` words
    it says `_GROOVE_TIMES` times or more (a small model stuck in a groove, inside one sentence
    or across several)."""
    counts: dict[tuple[str, ...], int] = {}
    for sentence in _SENTENCE.split(answer):
        words = tuple(_words(sentence))
        if len(words) >= 3:
            counts[words] = counts.get(words, 0) + 1
            if counts[words] >= _REPEATS:
                return sentence.strip()
    phrases: dict[tuple[str, ...], int] = {}
    for phrase in _shingles(_words(answer)[:_GROOVE_SCAN], _GROOVE_WORDS):
        phrases[phrase] = phrases.get(phrase, 0) + 1
        if phrases[phrase] >= _GROOVE_TIMES:
            return " ".join(phrase)
    return None


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def _shingles(tokens: list[str], n: int) -> list[tuple[str, ...]]:
    return [tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1)]
