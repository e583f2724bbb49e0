"""What each framework's model read: the looked-up facts that reached the final answer, and how
much of each tool result reached a prompt at all.

A framework can win a benchmark by reading less: by cutting tool results, or the results it hands
from one agent to the next. Two figures make that visible, computed by the simulator from the
prompts it is sent, whatever the framework:

- **read share**: for every lookup the scenario needs, the share of its result's characters that
  appeared in some prompt (a result starts with its key, `tool_text`, so it is found wherever it
  is quoted; a lookup never made was not read);
- **facts reached** (scenarios that check facts, S13): each lookup's result ends with the fact it
  was looked up for (`fact:KEY=VALUE`), so a framework that cuts the result loses the fact. A
  scripted reply that says `{facts}` is filled with the facts in the prompt it answers, as a
  model restates what it read; the facts in the run's last prompt (the final answer's) are the
  ones that reached the end.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Iterable
from dataclasses import dataclass, field

__all__ = ["PLACEHOLDER", "Reading", "fact_of", "facts_in", "restate", "with_fact"]

PLACEHOLDER = "{facts}"
_FACT = re.compile(r"fact:([\w.]+)=v\d+")
_RESULT = re.compile(r"\b([a-z]\w*\.\d+): (?:w\d+ ?)+")


def fact_of(key: str) -> str:
    """The fact lookup `key` finds, as its result ends with it."""
    return f"fact:{key}=v{zlib.crc32(key.encode()) % 100_000}"


def with_fact(text: str, key: str) -> str:
    """Lookup `key`'s result `text`, ending with its fact."""
    return f"{text} {fact_of(key)}"


def facts_in(texts: Iterable[str]) -> frozenset[str]:
    """The keys whose facts appear, exactly, in `texts`."""
    return frozenset(
        m.group(1)
        for text in texts
        for m in _FACT.finditer(text)
        if m.group(0) == fact_of(m.group(1))
    )


def restate(content: str, facts: Iterable[str]) -> str:
    """`content` with `{facts}` replaced by the facts of `facts`, as a model restates what it
    read ("no facts" when there are none)."""
    said = "; ".join(fact_of(k) for k in sorted(facts)) or "no facts"
    return content.replace(PLACEHOLDER, said)


@dataclass(slots=True)
class Reading:
    """How much of each tool result the run's prompts carried (see the module docstring)."""

    read: dict[str, int] = field(default_factory=dict)
    _seen: dict[str, tuple[tuple[str, int], ...]] = field(default_factory=dict)

    def observe(self, texts: Iterable[str]) -> None:
        """A prompt of `texts` was sent: note the longest run of each result it quotes."""
        for text in texts:
            found = self._seen.get(text)
            if found is None:  # each message is re-sent with later requests: scan it once
                found = self._seen[text] = tuple(
                    (m.group(1), len(m.group(0).rstrip())) for m in _RESULT.finditer(text)
                )
            for key, chars in found:
                if chars > self.read.get(key, 0):
                    self.read[key] = chars

    def share(self, results: dict[str, str]) -> float | None:
        """The mean share of each of `results` (lookup key to result text) that reached a
        prompt; None when there are none."""
        shares = []
        for key, text in results.items():
            found = _RESULT.match(text)
            size = len(found.group(0).rstrip()) if found else len(text)
            shares.append(min(1.0, self.read.get(key, 0) / max(1, size)))
        return sum(shares) / len(shares) if shares else None
