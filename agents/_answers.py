"""Final answers a model cannot pass off: the one answer check of every path.

Small models copy what they are shown. None of these is an answer, whatever an acceptance check
would say about its citations:

- paor's own text: a loop warning, a refusal, a status line, the synthesis prompt's layout
  (`agents._own_text`);
- a tool call written as text, or any JSON object shaped like one;
- a copy of the task, or of the instructions or a tool's description (eight words in a row);
- a placeholder (`<your answer>`), a status word alone, or no words at all;
- the same sentence over and over.

`unusable_answer` is that check. The executor sends such an answer back once with the reason, and
then ends `partial` with what was gathered instead of keeping it; the planner does the same with
its synthesis (the run then ends `incomplete`); a batch row, an MCP `run` and a research report
read the same verdicts (the report applies the test, stricter, to every answer and summary it
prints).
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterable
from difflib import SequenceMatcher

from agents._coverage import parts
from agents._errors import MalformedResponse
from agents._own_text import own_text
from agents._words import CITED
from agents.models._model import ToolSpec
from agents.models._textcalls import looks_like_call, recover_calls

__all__ = ["Parrot", "described", "unseen_numbers", "unusable_answer"]

# Eight words in a row: a user's tool descriptions are plain phrases ("the weekend forecast for a
# city") that a good answer may echo; a copy of the instructions runs longer.
SHINGLE_WORDS = 8
_REPEATS = 3
_GROOVE_WORDS, _GROOVE_TIMES = 6, 4  # "returns a new function that returns" four times
_GROOVE_SCAN = 20_000  # words: a groove shows long before
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
_WORD = re.compile(r"[a-z0-9]+(?:['’][a-z]+)?")
_COPY_RATIO = 0.9  # of the task's words, in order: a restated question is not yet an answer
_COPY_MIN_WORDS = 4  # below this only the task word for word is a copy ("Lyon or Turin?": "Lyon")
_CALL_NAME_KEYS = frozenset({"name", "tool", "function", "tool_name"})
_CALL_BODY_KEYS = frozenset({"arguments", "parameters", "args", "input", "reason", "kind"})
# A number as written: "25", "1,500", "2.5". Not part of a word ("v2", "mp3", "25th").
_NUMBER = re.compile(r"(?<![\w.,])\d+(?:[.,]\d+)*(?![\w])")
_THOUSANDS = re.compile(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?")  # "1,500" and "1,500.5"
_DECIMAL_COMMA = re.compile(r"\d+,\d+")  # "2,5", where it cannot be thousands
_LIST_MARKER = re.compile(r"^[ \t]*\d+[.)][ \t]", re.M)
# Sums and ratios are tried only among this few numbers seen: among hundreds (a page of policy
# text), nearly any number is the sum of two, and the check would pass everything.
_ARITHMETIC_SEEN = 30
_LABEL = re.compile(r"^\s*[A-Za-z][A-Za-z ]{0,24}:\s*")  # "Expected output: ..." in a brief
_FENCE = re.compile(r"^\s*```[a-zA-Z]*\s*\n?(.*?)```\s*$", re.S)
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

    def copied(self, answer: str, *, words: list[str] | None = None) -> str | None:
        """The first copied phrase in `answer` (whose words are `words`, when read), if any."""
        tokens = _words(answer) if words is None else words
        for start, shingle in enumerate(_shingles(tokens, self.words)):
            if shingle in self._shingles:
                return " ".join(tokens[start : start + self.words])
        return None


def unusable_answer(
    answer: str, *, parrot: Parrot | None = None, tools: Iterable[str] = (), task: str = ""
) -> str | None:
    """Why `answer` is not a usable final answer, or None if it is one.

    Args:
        answer: The model's final answer.
        parrot: What the model was told, if copies of it should be refused.
        tools: The tool names the model knew (a call to one, written as text, is refused).
        task: The task or goal it was given (an answer that only restates it is refused).

    Returns:
        The problem, phrased for the model to fix; None when the answer is usable.
    """
    names = set(tools)
    if _is_call(answer, names):
        return (
            "your answer is a tool call written as text; to use a tool, call it; to finish, "
            "answer in plain sentences"
        )
    own = own_text(answer)
    if own:
        return (
            f'your answer repeats paor\'s own text ("{own[:80]}"), not an answer; answer the task '
            "in your own words from what the tools returned"
        )
    said = _words(answer)
    if task and _copies_task(said, task):
        return "your answer only restates the task; answer it with what you found"
    placeholder = _PLACEHOLDER.search(answer)
    if placeholder:
        return f"your answer holds the placeholder {placeholder.group(0)!r}; write the real answer"
    if not said:
        return "your answer has no content; answer the task in words"
    repeated = _repeated(answer, said)
    if repeated:
        return f'your answer repeats "{repeated[:80]}" over and over; write each point once'
    copied = parrot.copied(answer, words=said) if parrot else None
    if copied:
        return (
            f'your answer copies the instructions ("{copied}"); answer the task itself, in your '
            "own words, from what you found"
        )
    return None


def unseen_numbers(answer: str, seen: Iterable[str]) -> list[str]:
    """The numbers in `answer` that appear in none of `seen`, nor follow from two that do.

    A small model that read "25 working days" writes "255 working days"; one that read nothing
    writes "6 months". A number the model was never shown is invented, unless it is the sum,
    difference, product or ratio of two it was shown (a total of two prices). Citations and list
    markers are not numbers of the answer; "1,500" and "1500" are one number.

    Args:
        answer: The answer.
        seen: Everything the model was shown (tool results, the task, earlier results).

    Returns:
        The unseen numbers, as written, in the answer's order (empty when all were seen).
    """
    written = _NUMBER.findall(_LIST_MARKER.sub("", CITED.sub("", answer)))
    if not written:  # no number to check: what was shown need not be read
        return []
    wanted = {_value(n) for n in written}
    shown: set[float | None] = set()
    for text in seen:  # read until every number written was seen (the task often shows them)
        shown.update(map(_value, _NUMBER.findall(text)))
        if wanted <= shown:
            return []
    unseen = [n for n in dict.fromkeys(written) if _value(n) not in shown]
    values = sorted(v for v in shown if v is not None)
    if len(values) > _ARITHMETIC_SEEN:
        return unseen
    return [n for n in unseen if not _derived(_value(n), values)]


def _value(number: str) -> float | None:
    """A written number's value ("1,500" and "1500" alike; "2,5" read as 2.5 when it cannot be
    thousands), or None if it reads as neither."""
    if number.isdecimal():  # digits alone, the usual case
        return float(number)
    if _THOUSANDS.fullmatch(number):
        number = number.replace(",", "")
    elif _DECIMAL_COMMA.fullmatch(number):
        number = number.replace(",", ".")
    try:
        return float(number)
    except ValueError:
        return None


def _derived(value: float | None, values: list[float]) -> bool:
    """Whether `value` is a sum, difference, product or ratio of two of `values`."""
    if value is None:
        return True  # not a number we can judge
    for i, a in enumerate(values):
        for b in values[i:]:
            results = (a + b, abs(a - b), a * b, a / b if b else -1.0, b / a if a else -1.0)
            if any(abs(r - value) < 1e-6 * max(1.0, value) for r in results):
                return True
    return False


def described(specs: Iterable[ToolSpec]) -> list[str]:
    """Every description the model reads about these tools, their arguments' included."""
    texts = []
    for spec in specs:
        texts.append(spec.description)
        properties = spec.parameters.get("properties", {})
        texts += [str(p.get("description", "")) for p in properties.values()]
    return texts


def _is_call(answer: str, tools: set[str]) -> bool:
    if _json_call(answer) or _coded_call(answer, tools):
        return True
    try:
        recovered = recover_calls(answer, tools)
    except MalformedResponse:
        return True
    if recovered is not None and recovered.tool_calls:
        return True
    return bool(tools) and looks_like_call(answer, tools)


def _coded_call(answer: str, tools: set[str]) -> bool:
    """Whether the answer opens with a call of a known tool written as code, whole or cut short
    (`capital("France")`, `[capital({`), which is no answer whatever follows it."""
    if "(" not in answer or not tools:
        return False
    return _opening_call(frozenset(tools)).match(answer.strip()) is not None


@functools.lru_cache(maxsize=256)
def _opening_call(tools: frozenset[str]) -> re.Pattern[str]:
    names = "|".join(re.escape(name) for name in sorted(tools))
    return re.compile(rf"\W{{0,3}}(?:{names})\(")


def _json_call(answer: str) -> bool:
    """Whether the whole answer is a JSON object (or list of them) shaped like a call or a
    signal: a name beside arguments or a reason, whatever the name (`{"name": "is", ...}`)."""
    text = answer.strip()
    fenced = _FENCE.match(text)
    if fenced:
        text = fenced.group(1).strip()
    if not text.startswith(("{", "[")):
        return False
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return False
    items = value if isinstance(value, list) else [value]
    return bool(items) and all(
        isinstance(item, dict) and item.keys() & _CALL_NAME_KEYS and item.keys() & _CALL_BODY_KEYS
        for item in items
    )


def _copies_task(said: list[str], task: str) -> bool:
    """Whether an answer of the words `said` restates the task (or one line of it) and adds
    nothing: every word is the task's, in nearly the task's order, a phrase of four words or more
    lifted from it, or the things the task lists side by side and nothing else."""
    if len(said) < 2:
        return False
    listed, lines = _task_words(task)
    words = set(said)
    if words == listed:
        return True  # the things the task lists, listed back ("Egypt, Norway, Chile")
    for asked, vocabulary in lines:
        if said == asked:
            return True  # the task word for word, however short
        if len(said) < _COPY_MIN_WORDS or not words <= vocabulary:
            continue
        if _within(said, asked):
            return True  # a phrase lifted from the task ("hotel under 120 EUR a night")
        if SequenceMatcher(None, said, asked, autojunk=False).ratio() >= _COPY_RATIO:
            return True
    return False


@functools.lru_cache(maxsize=256)
def _task_words(task: str) -> tuple[frozenset[str], tuple[tuple[list[str], frozenset[str]], ...]]:
    """The words of the things `task` lists, and the words of the task and of each of its lines
    (labels taken off) with their sets: what every answer to it is compared with, read once.
    The lists are never changed."""
    listed = frozenset(w for name in parts(task) for w in _words(name))
    lines = (task, *(_LABEL.sub("", line) for line in task.splitlines()))
    return listed, tuple((asked, frozenset(asked)) for asked in map(_words, lines))


def _within(said: list[str], asked: list[str]) -> bool:
    """Whether `said` occurs in `asked` as a run of consecutive words."""
    n = len(said)
    return any(asked[i : i + n] == said for i in range(len(asked) - n + 1))


def _repeated(answer: str, words: list[str] | None = None) -> str | None:
    """A sentence the answer says `_REPEATS` times or more, or a phrase of `_GROOVE_WORDS` words
    it says `_GROOVE_TIMES` times or more (a small model stuck in a groove, inside one sentence
    or across several). `words` are the answer's, when already read."""
    counts: dict[tuple[str, ...], int] = {}
    sentences = _SENTENCE.split(answer)
    for sentence in sentences if len(sentences) >= _REPEATS else ():
        key = tuple(_words(sentence))
        if len(key) >= 3:
            counts[key] = counts.get(key, 0) + 1
            if counts[key] >= _REPEATS:
                return sentence.strip()
    said = _words(answer) if words is None else words
    if len(said) < _GROOVE_WORDS + _GROOVE_TIMES - 1:  # too short to say a phrase that often
        return None
    phrases: dict[tuple[str, ...], int] = {}
    for phrase in _shingles(said[:_GROOVE_SCAN], _GROOVE_WORDS):
        phrases[phrase] = phrases.get(phrase, 0) + 1
        if phrases[phrase] >= _GROOVE_TIMES:
            return " ".join(phrase)
    return None


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def _shingles(tokens: list[str], n: int) -> list[tuple[str, ...]]:
    return [tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1)]
