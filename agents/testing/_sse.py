"""A chat completion as a stream of server-sent events, as OpenAI sends one when asked to
`"stream": true`: the text in word-sized pieces, each tool call's arguments in two, a last chunk
with the finish reason, the usage (with `stream_options.include_usage`), then `[DONE]`."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

__all__ = ["sse_body"]

_WORD = re.compile(r"\S+\s*|\s+")


def sse_body(completion: dict[str, Any], request: dict[str, Any]) -> bytes:
    """The event stream of `completion` (a plain body) for `request`."""
    return b"".join(sse_events(completion, request))


def sse_events(completion: dict[str, Any], request: dict[str, Any]) -> list[bytes]:
    """The events of `completion`'s stream for `request`, each as sent, `[DONE]` last."""
    events = [f"data: {json.dumps(event)}\n\n".encode() for event in _chunks(completion, request)]
    return [*events, b"data: [DONE]\n\n"]


def _chunks(completion: dict[str, Any], request: dict[str, Any]) -> Iterator[dict[str, Any]]:
    head = {k: completion[k] for k in ("id", "created", "model")}
    head["object"] = "chat.completion.chunk"
    choice = completion["choices"][0]
    message = choice["message"]

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {**head, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    yield chunk({"role": "assistant", "content": ""})
    for piece in _WORD.findall(message.get("content") or ""):
        yield chunk({"content": piece})
    for index, call in enumerate(message.get("tool_calls") or ()):
        arguments = call["function"]["arguments"]
        half = len(arguments) // 2
        first = {"index": index, "id": call["id"], "type": "function"}
        yield chunk({"tool_calls": [{**first, "function": {"name": call["function"]["name"],
                                                            "arguments": arguments[:half]}}]})  # fmt: skip
        yield chunk({"tool_calls": [{"index": index, "function": {"arguments": arguments[half:]}}]})
    yield chunk({}, choice["finish_reason"])
    if (request.get("stream_options") or {}).get("include_usage"):
        yield {**head, "choices": [], "usage": completion["usage"]}
