"""A streamed chat completion put back together: `Chunks` takes each server-sent chunk and gives
the body a plain completion would have had, so one parser reads both.

Only what paor reads is kept: the id, the model, the text (and the sizes of its pieces), the tool
calls (their ids, names and arguments arrive in pieces, by index), the finish reason and the
usage of the last chunk. A chunk that is not a JSON object, or fields of the wrong type, are
skipped: what is left is judged by the same checks as a plain body (no choices: malformed).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["Chunks"]


@dataclass(slots=True)
class Chunks:
    """The chunks of one streamed completion so far."""

    head: dict[str, Any] = field(default_factory=dict)
    text: list[str] = field(default_factory=list)
    calls: dict[int, dict[str, str]] = field(default_factory=dict)
    finish_reason: str | None = None
    usage: Any = None
    seen_choice: bool = False

    def add(self, chunk: object) -> str:
        """Take one chunk in; the text it adds ("" if none)."""
        if not isinstance(chunk, dict):
            return ""
        for key in ("id", "model"):
            if isinstance(chunk.get(key), str):
                self.head.setdefault(key, chunk[key])
        if isinstance(chunk.get("usage"), dict):
            self.usage = chunk["usage"]
        choices = chunk.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            return ""
        return self._choice(choices[0])

    def _choice(self, choice: dict[str, Any]) -> str:
        self.seen_choice = True
        if isinstance(choice.get("finish_reason"), str):
            self.finish_reason = choice["finish_reason"]
        delta = choice.get("delta")
        if not isinstance(delta, dict):
            return ""
        for call in delta.get("tool_calls") or ():
            if isinstance(call, dict):
                self._call(call)
        piece = delta.get("content")
        if isinstance(piece, str) and piece:
            self.text.append(piece)
            return piece
        return ""

    def _call(self, call: dict[str, Any]) -> None:
        index = call.get("index")
        slot = self.calls.setdefault(index if isinstance(index, int) else len(self.calls), {})
        if isinstance(call.get("id"), str):
            slot["id"] = call["id"]
        function = call.get("function")
        if isinstance(function, dict):
            for part in ("name", "arguments"):
                if isinstance(function.get(part), str):
                    slot[part] = slot.get(part, "") + function[part]

    @property
    def sizes(self) -> tuple[int, ...]:
        """The sizes of the text's pieces, in order."""
        return tuple(len(piece) for piece in self.text)

    def body(self) -> dict[str, Any]:
        """The completion as a plain (unstreamed) response body."""
        if not self.seen_choice:
            return {**self.head, "choices": []}
        calls = [
            {
                "id": slot.get("id", f"call_{index}"),
                "type": "function",
                "function": {"name": slot.get("name", ""), "arguments": slot.get("arguments", "")},
            }
            for index, slot in sorted(self.calls.items())
        ]
        message: dict[str, Any] = {"role": "assistant", "content": "".join(self.text) or None}
        if calls:
            message["tool_calls"] = calls
        choice = {"index": 0, "message": message, "finish_reason": self.finish_reason}
        return {**self.head, "choices": [choice], "usage": self.usage}
