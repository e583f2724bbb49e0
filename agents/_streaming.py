"""Text as it is generated: who wants it, and where a model sends it.

A consumer asks for the model's text as it comes (`Orchestrator.stream(goal, text=True)`), which
marks the run's context (`wanting_text`). Around each model call whose text is worth showing,
a loop opens `text_to(sink)`; a model that can stream (`OpenAIChatModel`) sends each piece of
text to that sink as it arrives, and reports in `ModelResponse.text_chunks` how the text was cut.
After the call, the loop sends what was not streamed live (a reply served from a journal, a
Temporal activity's, a model that does not stream) in the same pieces, so the pieces a consumer
sees are the same live, resumed and replayed. Context variables carry all this, so the effect
boundary's signatures do not change.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agents._model import ModelResponse

__all__ = [
    "Streamed",
    "TextSink",
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


async def streaming(call: Callable[[], Awaitable[ModelResponse]], sink: TextSink) -> ModelResponse:
    """Make a model call with its text going to `sink`: as it arrives when the model streams it,
    else (served from a journal, from another process, or a model that does not stream) all at
    once after the call, in the pieces it was recorded in."""
    with text_to(sink) as streamed:
        response = await call()
    if not streamed.used:
        for piece in chunks(response.message.content or "", response.text_chunks):
            await sink(piece, False)
    return response


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
