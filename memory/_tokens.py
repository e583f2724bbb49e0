"""Token counting: exact for OpenAI models when `toktok` is installed, approximate otherwise.

`toktok` (the `toktok-rs` wheel, extra `tokens`) ships the `o200k_base` and `cl100k_base`
vocabularies and counts exactly as `tiktoken` does, offline. Without it, or for models whose
tokenizer is unknown, a text counts as a quarter of its characters (rounded up), which is close for
English prose and code and errs high for short words.

A message costs its texts plus a small fixed overhead (role and separators), as OpenAI's own
accounting recipe has it; a reply is primed with a few more tokens. The overhead is an estimate for
every provider, so budgets should keep a margin.
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Sequence
from typing import Any

from memory._transcript import AssistantMessage, Message, ToolMessage

__all__ = [
    "REPLY_PRIMING",
    "count_text",
    "count_tokens",
    "encoding_for",
    "message_tokens",
    "truncate_text",
]

_PER_MESSAGE = 3
_PER_CALL = 3
REPLY_PRIMING = 3
"""Tokens a reply is primed with, on top of the messages."""
# Classic GPT-4 names (gpt-4, gpt-4-0613, gpt-4-32k, gpt-4-turbo...) use cl100k; every later
# gpt-4 family name (gpt-4o, gpt-4.1, gpt-4.5) uses o200k.
_CL100K_PREFIXES = ("gpt-3.5", "gpt-35", "gpt-4-", "text-embedding-3", "text-embedding-ada")
_O200K_PREFIXES = ("gpt-4", "gpt-5", "o1", "o3", "o4", "chatgpt-4o")


def _load_toktok() -> Any | None:
    try:
        return importlib.import_module("toktok")
    except ImportError:
        return None


# Loaded once; `None` means the approximate count is used for every model.
_TOKTOK: Any | None = _load_toktok()


def encoding_for(model: str) -> str | None:
    """The exact tokenizer encoding of an OpenAI model name, or None if it is not known.

    Provider prefixes ("openai/gpt-4o") and fine-tune wrappers ("ft:gpt-4o-mini:org::id") are
    looked through.

    Args:
        model: A model name as the endpoint knows it.
    """
    name = model.strip().lower()
    name = name.removeprefix("ft:").rsplit("/", 1)[-1]
    if name == "gpt-4" or name.startswith(_CL100K_PREFIXES):
        return "cl100k_base"
    if name.startswith("gpt-oss"):
        return "o200k_harmony"
    if name.startswith(_O200K_PREFIXES):
        return "o200k_base"
    return None


def count_text(texts: Sequence[str], model: str) -> list[int]:
    """Tokens in each of `texts` for `model`: exact when possible, approximate otherwise."""
    encoding = encoding_for(model)
    if encoding is None or _TOKTOK is None:
        return [_approximate(text) for text in texts]
    # One worker thread: transcripts are many short texts, where thread start-up costs more
    # than the counting it would share out.
    counts: list[int] = _TOKTOK.batch_count(list(texts), encoding, 1)
    return counts


def message_tokens(messages: Sequence[Message], model: str) -> list[int]:
    """The token cost of each message for `model`, overhead included."""
    pieces = [_texts(message) for message in messages]
    counts = iter(count_text([text for texts in pieces for text in texts], model))
    costs = []
    for message, texts in zip(messages, pieces, strict=True):
        calls = len(message.tool_calls) if isinstance(message, AssistantMessage) else 0
        costs.append(_PER_MESSAGE + _PER_CALL * calls + sum(next(counts) for _ in texts))
    return costs


def count_tokens(messages: Sequence[Message], model: str) -> int:
    """The prompt tokens `messages` cost `model`, reply priming included.

    Exact for OpenAI model names when `toktok` is installed (the overhead per message follows
    OpenAI's published recipe); a quarter of the characters otherwise.

    Args:
        messages: The prompt.
        model: The model name, which picks the tokenizer.
    """
    return sum(message_tokens(messages, model)) + REPLY_PRIMING


def truncate_text(text: str, max_tokens: int, model: str) -> str:
    """`text` cut to at most `max_tokens` tokens for `model` (on a character boundary)."""
    encoding = encoding_for(model)
    if encoding is None or _TOKTOK is None:
        return text[: max(0, max_tokens) * 4]
    cut: str = _TOKTOK.truncate(text, max(0, max_tokens), encoding)[0]
    return cut


def _texts(message: Message) -> list[str]:
    texts: list[str] = [message.role]
    if isinstance(message, AssistantMessage):
        texts.append(message.content or "")
        texts += [text for call in message.tool_calls for text in (call.name, call.arguments)]
    elif isinstance(message, ToolMessage):
        texts += [message.name, message.content]
    else:
        texts.append(message.content)
    return texts


def _approximate(text: str) -> int:
    return math.ceil(len(text) / 4)
