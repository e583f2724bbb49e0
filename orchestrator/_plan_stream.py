"""Plan streaming: the subtasks of a plan as the planner writes them, before its reply is done.

`SubtaskScanner` reads the reply's text piece by piece and hands out each object of the top-level
"subtasks" array the moment its closing brace arrives. It tracks only what JSON needs to find
those objects (string and escape state, nesting depth), so each character is looked at once, and
it never trusts what it finds: each object is validated as a subtask on its own (`early_subtasks`:
one with dependencies together with those, written before it), and the run still validates the
whole plan when the reply is complete (see `orchestrator._run_plans`).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from agents.events import TextSink
from orchestrator._drafts import parse_draft
from orchestrator._plan import Subtask, SubtaskDraft

__all__ = ["SubtaskScanner", "early_subtasks"]

_KEY = "subtasks"
_MAX_OBJECT_CHARS = 64 * 1024  # a subtask longer than this is not handed out early


class SubtaskScanner:
    """Finds the complete objects of a streamed plan's "subtasks" array."""

    def __init__(self) -> None:
        self._depth = 0
        self._in_string = False
        self._escaped = False
        self._string: list[str] = []  # the current string at depth 1 (a candidate key)
        self._last_key = ""
        self._in_array = False  # inside the top-level "subtasks" array
        self._object: list[str] | None = None  # the subtask being written, from its "{"

    def feed(self, text: str) -> list[dict[str, Any]]:
        """Read the next piece of the reply; the subtask objects it completed, in order."""
        found: list[dict[str, Any]] = []
        for ch in text:
            if self._object is not None:
                self._object.append(ch)
                if len(self._object) > _MAX_OBJECT_CHARS:
                    self._object = None
            if self._in_string:
                self._read_string(ch)
                continue
            if ch == '"':
                self._in_string = True
                self._string = []
            elif ch in "{[":
                self._open(ch)
            elif ch in "}]":
                done = self._close(ch)
                if done is not None:
                    found.append(done)
        return found

    def _read_string(self, ch: str) -> None:
        if self._escaped:
            self._escaped = False
        elif ch == "\\":
            self._escaped = True
        elif ch == '"':
            self._in_string = False
            if self._depth == 1:
                self._last_key = "".join(self._string)
            return
        if self._depth == 1:
            self._string.append(ch)

    def _open(self, ch: str) -> None:
        self._depth += 1
        if ch == "[" and self._depth == 2 and self._last_key == _KEY:
            self._in_array = True
        elif ch == "{" and self._depth == 3 and self._in_array:
            self._object = ["{"]

    def _close(self, ch: str) -> dict[str, Any] | None:
        self._depth -= 1
        if ch == "]" and self._depth == 1:
            self._in_array = False
        if ch != "}" or self._depth != 2 or not self._in_array or self._object is None:
            return None
        text, self._object = "".join(self._object), None
        try:
            found = json.loads(text)
        except (json.JSONDecodeError, RecursionError):
            return None
        return found if isinstance(found, dict) else None


def early_subtasks(
    on_subtask: Callable[[Subtask], None],
    valid: Callable[[list[SubtaskDraft]], Subtask | None],
    *,
    most: int,
) -> TextSink:
    """A text sink for a streamed plan that hands each subtask to `on_subtask` as soon as it is
    written, if it is valid (`valid`: the last of the drafts as a subtask, if it is valid in the
    plan they make) in the plan of itself and the handed-out subtasks it depends on, directly or
    not; one written before something it depends on is not handed out (the run has it from the
    whole plan), nor anything past `most`."""
    scanner, handed = SubtaskScanner(), dict[str, SubtaskDraft]()

    async def sink(text: str, restart: bool) -> None:
        nonlocal scanner
        if restart:
            scanner = SubtaskScanner()
        for raw in scanner.feed(text):
            draft = parse_draft(json.dumps(raw), SubtaskDraft)
            if isinstance(draft, list) or len(handed) >= most or draft.id in handed:
                continue
            if not all(d in handed for d in draft.depends_on):
                continue
            needed, wanted = set[str](), list(draft.depends_on)
            while wanted:
                if (dep := wanted.pop()) not in needed:
                    needed.add(dep)
                    wanted += handed[dep].depends_on
            ahead = [d for d in handed.values() if d.id in needed]  # in the order they came
            sub = valid([*ahead, draft])
            if sub is not None:
                handed[draft.id] = draft
                on_subtask(sub)

    return sink
