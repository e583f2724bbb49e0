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
_TOKEN = re.compile(
    r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+"  # an address is one token
    r"|\d+(?:[.,:]\d+)*"  # a number: 25, 1,500, 0.30, 10:00
    r"|[€$£%]"
    r"|[A-Za-z]+"
)
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
_NUMBER = re.compile(r"\d+(?:[.,:]\d+)*")

_STOPWORD_LIST = """
    a about above after again against all also an and any are as at be because been before being
    below between both but by can could did do does doing during each few for from further get
    gets got had has have having he her here hers him his how i if in into is it its itself just
    me more most must my no nor not now of off on once only or other our out over own per same
    shall she should so some such than that the their them then there these they this those
    through to too under until up upon very was we were what when where which while who whom why
    will with would you your
    many much long soon often far quickly
    work works mean means happen happens explain describe tell know need way ways thing things
    find search look identify determine locate retrieve obtain provide give extract summarize
    summarise answer information info details relevant specific document documents doc docs
"""
_STOPWORDS = frozenset(_STOPWORD_LIST.split())
_NUMBER_WORD_LIST = """
    zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen
    sixteen seventeen eighteen nineteen twenty
"""
_NUMBER_WORDS = {w: str(i) for i, w in enumerate(_NUMBER_WORD_LIST.split())}
_TENS_WORDS = ["twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
_TENS = re.compile(
    rf"\b({'|'.join(_TENS_WORDS)})(?:[- ](one|two|three|four|five|six|seven|eight|nine))?\b",
    re.IGNORECASE,
)
_CURRENCY = {"€": "eur", "euro": "eur", "$": "usd", "dollar": "usd", "£": "gbp", "pound": "gbp"}
# What a number can count or be: a number given with one of these must be shown with it.
_UNIT_LIST = """
    second minute hour day week month year night calendar work business time percent % eur usd
    gbp chf sek nok dkk cent kilometre kilometer km mile kg gram litre liter metre meter
    january february march april may june july august september october november december
    am pm gb mb tb page guest person employee
"""
_UNITS = frozenset(_UNIT_LIST.split())
_QUALIFIERS = frozenset({"work", "business", "calendar"})  # of a unit: "20 working days"


@dataclass(frozen=True)
class _Quantity:
    value: str
    units: frozenset[str]


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
    asked = _stems(_COUNTING.sub(" ", task))
    # A question in the answer (often the task, copied) states nothing.
    said = [s for s in _CLAUSE.split(claim) if _tokens(s) and not s.rstrip().endswith("?")]
    tokens = [t for s in said for t in _tokens(s)]
    numbers = [t for t in tokens if _is_number(t)]
    own = {stem for s in said for stem in _stems(s)} - set(asked)
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
    if counted and not any(counted in q.units for s in said for q in _quantities(s)):
        return (
            f"the task asks how many {counted}s and your answer gives no number of {counted}s; "
            f"give the number with its unit, as the source gives it"
        )
    windows = _windows(passages)
    units = _units_shown(windows)
    for sentence in said:
        for quantity in _quantities(sentence):
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
        stems = set(_stems(sentence))
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
            windows.append(_Window(frozenset(_stems(text)), tuple(_tokens(text))))
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
    numbers = [q.value for q in _quantities(sentence)]
    stems = set(_stems(sentence))
    own = stems - set(asked)
    if numbers:
        present = {_value(t) for t in window.tokens if _is_number(t)}
        if not all(n in present for n in numbers) or not _counted_alike(window, sentence):
            return False
        return bool(stems & set(asked)) or len(own & window.stems) >= _HALF * len(own)
    if not own:
        return False
    return len(own & window.stems) > _HALF * len(own)


def _counted_alike(window: _Window, sentence: str) -> bool:
    """Whether each number of the sentence counts in the window what it counts in the sentence:
    the word right after it ("5 study days") is near that number there too. "Up to 5 study
    days per year" is not held by "up to 5 unused days can be carried over", whatever the two
    share besides."""
    tokens = _tokens(sentence)
    near = [(_value(t), _after(tokens, i)) for i, t in enumerate(tokens) if _is_number(t)]
    return all(any(said <= _around(window, i) for i in _at(window, value)) for value, said in near)


def _after(tokens: Sequence[str], at: int) -> set[str]:
    """The word right after a number, when it says what the number counts: a word, not a
    stopword, another number or a fragment ("31st", "EUR 170 pe")."""
    following = tokens[at + 1] if at + 1 < len(tokens) else ""
    if len(following) < _WORD_LETTERS or following in _STOPWORDS or _is_number(following):
        return set()
    return {_stem(following)}


def _at(window: _Window, value: str) -> list[int]:
    """Where the window gives the number `value`."""
    return [i for i, t in enumerate(window.tokens) if _is_number(t) and _value(t) == value]


def _around(window: _Window, at: int) -> set[str]:
    """The stems of the words near the number at position `at` of the window."""
    return {_stem(t) for t in window.tokens[max(0, at - _NEAR) : at + _NEAR + 1]}


def _bare(number: str, asked: Sequence[str], windows: Sequence[_Window]) -> str:
    """What a bare number is told: where the passage most about the task gives it, so that a
    small model that picked the right number can say what it counts ("25 working days")."""
    value, weights = _value(number), _weights(asked, windows)
    giving = [w for w in windows if value in w.stems]
    if not giving:
        return (
            "a bare number is not an answer; say in a sentence what it counts, with its unit, "
            "as the source words it"
        )
    best = max(giving, key=lambda w: _covered(w, weights))
    at = next(i for i, t in enumerate(best.tokens) if _is_number(t) and _value(t) == value)
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
        numbers += [t for t in _tokens(sentence) if _is_number(t)]
    return numbers


def _counted(task: str) -> str:
    """The unit a task counts in ("How many weeks ..." counts weeks), or ""."""
    asked = _HOW_MANY.search(task)
    words = [_stem(w.lower()) for w in asked.group(1).split()] if asked else []
    return next((w for w in words if w in _UNITS - _QUALIFIERS), "")


def _unnamed(task: str, windows: Sequence[_Window]) -> str:
    """The first name the task asks about (a run of capitalised words after its first word:
    "New York", "Zurich", "SOC") that no passage mentions, or "". An answer about a place, a
    person or a thing the sources never name cannot rest on them."""
    shown = frozenset().union(*(w.stems for w in windows))
    for match in _NAME.finditer(task):
        name = match[0]
        if match.start() == 0 or not any(c.isupper() for c in name):
            continue
        if any(stem not in shown for stem in _stems(name)):
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
        for quantity in _quantities_in(list(window.tokens)):
            shown.setdefault(quantity.value, []).append(quantity.units)
    return shown


def _quantities(text: str) -> list[_Quantity]:
    return _quantities_in(_tokens(text))


def _quantities_in(tokens: list[str]) -> list[_Quantity]:
    """Each number among `tokens` with the units beside it: the word before it, and the two
    after ("EUR 240", "7 calendar days", "20 working days")."""
    found = []
    for i, token in enumerate(tokens):
        if not _is_number(token):
            continue
        near = tokens[max(0, i - 1) : i] + tokens[i + 1 : i + 3]
        units = frozenset(_stem(t) for t in near if _stem(t) in _UNITS)
        found.append(_Quantity(_value(token), units))
    return found


def _tokens(text: str) -> list[str]:
    tokens = []
    for raw in _TOKEN.findall(_TENS.sub(_tens, text)):
        low = raw.lower()
        tokens.append(_NUMBER_WORDS.get(low, low))
    return tokens


def _tens(match: re.Match[str]) -> str:
    """ "twenty-five" as 25, "thirty" as 30."""
    ones = _NUMBER_WORDS[match[2].lower()] if match[2] else "0"
    return str(10 * (_TENS_WORDS.index(match[1].lower()) + 2) + int(ones))


def _stems(text: str) -> list[str]:
    return [_stem(t) for t in _tokens(text) if t not in _STOPWORDS]


def _stem(token: str) -> str:
    """A crude suffix fold, the same on both sides: days/day, working/work, remotely/remote."""
    if _is_number(token) or "@" in token:
        return _value(token) if _is_number(token) else token
    if token in _CURRENCY:
        return _CURRENCY[token]
    word = token
    for suffix, keep in (("ies", "y"), ("ing", ""), ("ed", ""), ("ly", ""), ("s", "")):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3 and not word.endswith("ss"):
            word = word[: -len(suffix)] + keep
            break
    # A final e and a doubled letter go on both sides: filed, file; stopped, stop; calls, called.
    word = word[:-1] if len(word) > 3 and word.endswith("e") else word
    word = word[:-1] if len(word) > 3 and word[-1] == word[-2] != "s" else word
    return _CURRENCY.get(word, word)


def _is_number(token: str) -> bool:
    return bool(_NUMBER.fullmatch(token))


def _value(number: str) -> str:
    """One spelling per value: "1,500" and "1500"; "0.30" and "0.3"; "10:00" and "10"."""
    if re.fullmatch(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?", number):
        number = number.replace(",", "")
    if re.fullmatch(r"\d+:00", number):
        number = number[:-3]
    if re.fullmatch(r"\d+\.\d+", number):
        number = number.rstrip("0").rstrip(".")
    return number.lstrip("0") or "0"
