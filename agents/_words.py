"""How the support rule reads text (`agents._support`): words, their stems, numbers and units.

`text_tokens` splits text into words and numbers ("twenty-five" and "five" are numbers too),
`text_stems` folds the words that say something (no stopwords) to crude stems, the same on the
answer's side and the passages', and `quantities` finds each number with the units beside it
("EUR 240", "20 working days").
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

__all__ = [
    "CITED",
    "QUALIFIERS",
    "STOPWORDS",
    "UNITS",
    "Quantity",
    "is_number",
    "number_value",
    "quantities",
    "quantities_in",
    "stem",
    "text_stems",
    "text_tokens",
]

CITED = re.compile(r"\[[^\[\]\n]{1,120}\]")
"""A citation in an answer ("[leave-policy]", "[a, b]"): neither a number nor a name of it."""

_TOKEN = re.compile(
    r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+"  # an address is one token
    r"|\d+(?:[.,:]\d+)*"  # a number: 25, 1,500, 0.30, 10:00
    r"|[€$£%]"
    r"|[A-Za-z]+"
)
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
    s
"""
STOPWORDS = frozenset(_STOPWORD_LIST.split())
"""Words that say nothing an answer must be held to, a task's instructions (find, search) too,
and the "s" a possessive or a contraction leaves ("Lille's" is Lille, as far as names go)."""
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
_UNIT_LIST = """
    second minute hour day week month year night calendar work business time percent % eur usd
    gbp chf sek nok dkk cent kilometre kilometer km mile kg gram litre liter metre meter
    january february march april may june july august september october november december
    am pm gb mb tb page guest person employee
"""
UNITS = frozenset(_UNIT_LIST.split())
"""What a number can count or be; a number given with one must be shown with it."""
QUALIFIERS = frozenset({"work", "business", "calendar"})  # of a unit: "20 working days"


@dataclass(frozen=True)
class Quantity:
    """A number as written once (`value`, one spelling per value) and the units beside it."""

    value: str
    units: frozenset[str]


def quantities(text: str) -> list[Quantity]:
    """Each number of `text` with the units beside it (see `quantities_in`)."""
    return quantities_in(text_tokens(text))


def quantities_in(tokens: list[str]) -> list[Quantity]:
    """Each number among `tokens` with the units beside it: the word before it, and the two
    after ("EUR 240", "7 calendar days", "20 working days")."""
    found = []
    for i, token in enumerate(tokens):
        if not is_number(token):
            continue
        near = tokens[max(0, i - 1) : i] + tokens[i + 1 : i + 3]
        units = frozenset(stem(t) for t in near if stem(t) in UNITS)
        found.append(Quantity(number_value(token), units))
    return found


def text_tokens(text: str) -> list[str]:
    """The words and numbers of `text`, lowercased; a number word is its digits ("five": "5")."""
    tokens = []
    for raw in _TOKEN.findall(_TENS.sub(_tens, text)):
        low = raw.lower()
        tokens.append(_NUMBER_WORDS.get(low, low))
    return tokens


def _tens(match: re.Match[str]) -> str:
    """ "twenty-five" as 25, "thirty" as 30."""
    ones = _NUMBER_WORDS[match[2].lower()] if match[2] else "0"
    return str(10 * (_TENS_WORDS.index(match[1].lower()) + 2) + int(ones))


def text_stems(text: str) -> list[str]:
    """The stems of the words of `text` that say something (no stopwords)."""
    return [stem(t) for t in text_tokens(text) if t not in STOPWORDS]


@functools.lru_cache(maxsize=16384)  # words repeat: every check stems the task and results again
def stem(token: str) -> str:
    """A crude suffix fold, the same on both sides: days/day, working/work, remotely/remote."""
    if is_number(token) or "@" in token:
        return number_value(token) if is_number(token) else token
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


def is_number(token: str) -> bool:
    """Whether `token` is a number as `text_tokens` gives one: 25, 1,500, 0.30, 10:00."""
    return bool(_NUMBER.fullmatch(token))


def number_value(number: str) -> str:
    """One spelling per value: "1,500" and "1500"; "0.30" and "0.3"; "10:00" and "10"."""
    if re.fullmatch(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?", number):
        number = number.replace(",", "")
    if re.fullmatch(r"\d+:00", number):
        number = number[:-3]
    if re.fullmatch(r"\d+\.\d+", number):
        number = number.rstrip("0").rstrip(".")
    return number.lstrip("0") or "0"
