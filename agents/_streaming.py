"""Text as it is generated: who wants it, and where a model sends it.

A consumer asks for the model's text as it comes (`Orchestrator.stream(goal, text=True)`), which
marks the run's context (`wanting_text`). Around each model call whose text is worth showing,
a loop opens `text_to(sink)`; a model that can stream (`OpenAIChatModel`) sends each piece of
text to that sink as it arrives, and reports in `ModelResponse.text_chunks` how the text was cut.
After the call, the loop sends what was not streamed live (a reply served from a journal, a
Temporal activity's, a model that does not stream) in the same pieces, so the pieces a consumer
sees are the same live, resumed and replayed. Context variables carry all this, so the effect
boundary's signatures do not change.

A model that streams also watches what it is sent (`Repeats`): a small model caught in a loop
writes the same line or phrase until its token bound, and a reply that has come to do nothing
else is cut there, as unusable, rather than read to the end and taken for an answer.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

# Its test of an answer stuck in a groove: the one place that says what repeating means.
from agents._answers import _repeated, _words
from agents._errors import MalformedResponse
from agents.models._chunks import Chunks

if TYPE_CHECKING:
    from agents.models._model import ModelResponse

__all__ = [
    "Repeats",
    "Streamed",
    "TextSink",
    "chunk_taker",
    "chunks",
    "live_sink",
    "streaming",
    "text_to",
    "wanting_text",
    "wants_text",
]

TextSink = Callable[[str, bool], Awaitable[None]]
"""Receives each piece of a reply's text as the model writes it, and whether the text starts
again with it (the model call was retried after some text had come)."""

# A loop is looked for once per `_CHECK_CHARS` of new text, over the last `_TAIL_CHARS`: a groove
# shows within a few hundred characters, and the test then costs well under a millisecond.
_CHECK_CHARS = 256
_TAIL_CHARS = 2048
# A reply repeats itself only when the repeated unit says it `_LOOP_TIMES` times or more and fills
# `_LOOP_SHARE` of the tail's words: one sentence said thrice among others is still an answer.
_LOOP_TIMES = 5
_LOOP_SHARE = 0.8
_WORDLESS_CHARS = 512  # this much text with no word in it (whitespace, braces) is a loop too

_wanted: ContextVar[bool] = ContextVar("paor_text_wanted", default=False)
_sink: ContextVar[Streamed | None] = ContextVar("paor_text_sink", default=None)


@dataclass(slots=True)
class Streamed:
    """One model call's sink, and whether the model used it."""

    sink: TextSink
    used: bool = False
    _restart: bool = False

    async def send(self, text: str) -> None:
        """Pass one piece on (a model calls this as the text arrives)."""
        self.used = True
        restart, self._restart = self._restart, False
        await self.sink(text, restart)

    def retrying(self) -> None:
        """The call is tried again: what was sent is void (the next piece says so)."""
        self._restart = self.used


@contextlib.contextmanager
def wanting_text() -> Iterator[None]:
    """Within this block (and the tasks started in it), the loops stream their models' text."""
    token = _wanted.set(True)
    try:
        yield
    finally:
        _wanted.reset(token)


def wants_text() -> bool:
    """Whether the text of model calls made here is wanted as it comes."""
    return _wanted.get()


@contextlib.contextmanager
def text_to(sink: TextSink) -> Iterator[Streamed]:
    """For the model call inside: its text goes to `sink` as it arrives."""
    streamed = Streamed(sink)
    token = _sink.set(streamed)
    try:
        yield streamed
    finally:
        _sink.reset(token)


def live_sink() -> Streamed | None:
    """Where a model sends its text as it arrives, if anyone wants it (read by the model)."""
    return _sink.get()


async def streaming(
    call: Callable[[], Awaitable[ModelResponse]], sink: TextSink, *, may_call: bool = False
) -> ModelResponse:
    """Make a model call with its text going to `sink`: as it arrives when the model streams it,
    else (served from a journal, from another process, or a model that does not stream) all at
    once after the call, in the pieces it was recorded in.

    With `may_call` (the request offers tools), a reply whose text opens as a tool call written
    as text (`{`, `[`, a code fence, `<tool`) is held until it has been read: a call is not the
    model's text to show, and what is left of the reply is sent as a replay sends it; text that
    was the reply's own is sent as it came.
    """
    held = _Holding(sink, may_call=may_call)
    with text_to(held.send) as streamed:
        response = await call()
    if not streamed.used:
        for piece in chunks(response.message.content or "", response.text_chunks):
            await sink(piece, False)
    else:
        await held.close(response)
    return response


_CALL_OPENERS = ("{", "[", "```", "<tool")


@dataclass(slots=True)
class _Holding:
    """Passes a streamed reply's pieces on, except those of a reply that opens as a call written
    as text, which wait for the reply to be read (`close`)."""

    sink: TextSink
    may_call: bool
    text: str = ""
    held: list[str] = field(default_factory=list)
    passing: bool = False
    sent: bool = False
    restart: bool = False

    def __post_init__(self) -> None:
        self.passing = not self.may_call  # nothing to hold in a reply that cannot be a call

    async def send(self, piece: str, restart: bool) -> None:
        if restart:  # the call was tried again: what came before is void
            self.text, self.held, self.passing = "", [], not self.may_call
            self.restart = self.sent
        if self.passing:
            await self._pass(piece)
            return
        self.text += piece
        head = self.text.lstrip()
        if not head or any(o.startswith(head[: len(o)]) for o in _CALL_OPENERS):
            self.held.append(piece)  # blank so far, or opening as a call: wait
            return
        self.passing = True
        for waiting in [*self.held, piece]:
            await self._pass(waiting)
        self.held, self.text = [], ""

    async def close(self, response: ModelResponse) -> None:
        """The reply is read: held text goes on as it came when it is the reply's own text (a
        replay cuts it the same way), else the reply's own text goes whole, as a replay sends it."""
        if self.held:
            content = response.message.content or ""
            if response.text_chunks and "".join(self.held) == content:
                pieces = self.held
            else:
                pieces = [content] if content else []
            for piece in pieces:
                await self._pass(piece)
        if self.restart:  # text went out before a retry whose reply showed none: void it
            await self._pass("")

    async def _pass(self, piece: str) -> None:
        restart, self.restart = self.restart, False
        self.sent = True
        await self.sink(piece, restart)


def chunks(text: str, sizes: tuple[int, ...]) -> list[str]:
    """`text` cut as it arrived (`sizes`), or whole when the sizes do not describe it."""
    if not text:
        return []
    if not sizes or sum(sizes) != len(text) or min(sizes) <= 0:
        return [text]
    pieces, start = [], 0
    for size in sizes:
        pieces.append(text[start : start + size])
        start += size
    return pieces


@dataclass(slots=True)
class Repeats:
    """Watches a reply's text as it arrives, for a reply that only repeats itself.

    The test is `agents._answers`' (a sentence said three times, a six-word phrase said four),
    run over the reply's tail; the repeats must also fill most of that tail, so a reply is only
    cut once repeating is all it does.
    """

    text: list[str] = field(default_factory=list)
    size: int = 0
    checked: int = 0

    def add(self, piece: str) -> str | None:
        """Take one more piece of the reply; what it keeps repeating, once that is all it
        does, else None."""
        self.text.append(piece)
        self.size += len(piece)
        if self.size - self.checked < _CHECK_CHARS:
            return None
        self.checked = self.size
        return looping("".join(self.text)[-_TAIL_CHARS:])

    def seen(self) -> str:
        """The reply so far."""
        return "".join(self.text)


def chunk_taker(parts: Chunks, streamed: Streamed | None) -> Callable[[object], Awaitable[None]]:
    """What takes each chunk of a streamed completion: into `parts`, its text on to `streamed`,
    and a reply that has come to only repeat itself cut there."""
    repeats = Repeats()

    async def take(chunk: object) -> None:
        piece = parts.add(chunk)
        if not piece:
            return
        loop = repeats.add(piece)
        if loop is not None:
            raise MalformedResponse(
                f"the reply only repeated {loop[:80]!r} over and over, and was cut off",
                raw=repeats.seen()[:2000],
            )
        if streamed is not None:
            await streamed.send(piece)

    return take


def looping(tail: str) -> str | None:
    """What `tail` (the end of a reply) repeats, if repeating it is nearly all the tail does."""
    words = _words(tail)
    if not words:
        return tail[:40] if len(tail) >= _WORDLESS_CHARS else None
    found = _repeated(tail)
    if found is None:
        return None
    unit = _words(found)
    times = _occurrences(words, unit)
    if times >= _LOOP_TIMES and times * len(unit) >= _LOOP_SHARE * len(words):
        return found
    return None


def _occurrences(words: list[str], unit: list[str]) -> int:
    """How many times `unit` occurs in `words`, without overlaps."""
    count, i, size = 0, 0, len(unit)
    while size and i <= len(words) - size:
        if words[i : i + size] == unit:
            count, i = count + 1, i + size
        else:
            i += 1
    return count
