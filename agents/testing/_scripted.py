"""Fake models for tests: a scripted queue of replies, and a function that decides each turn."""

from __future__ import annotations

import inspect
import itertools
import json
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from agents._model import ModelRequest, ModelResponse, Usage
from memory import AssistantMessage, ToolCall

__all__ = ["FunctionModel", "ScriptedModel", "Turn", "call", "calls", "reply"]

_ids = itertools.count(1)

Turn = ModelResponse | AssistantMessage | str | BaseException
"""One scripted turn: a response, a message, plain text (a final answer), or an error to raise."""


def reply(text: str, *, prompt_tokens: int = 10, completion_tokens: int = 5) -> ModelResponse:
    """A final-answer response."""
    return ModelResponse(
        message=AssistantMessage(content=text),
        usage=Usage(requests=1, prompt_tokens=prompt_tokens, completion_tokens=completion_tokens),
    )


def call(name: str, /, _raw: str | None = None, **arguments: Any) -> ModelResponse:
    """A response calling one tool; `_raw` sends literal (possibly malformed) argument text."""
    return calls((name, _raw if _raw is not None else arguments))


def calls(*items: tuple[str, dict[str, Any] | str]) -> ModelResponse:
    """A response calling several tools in one turn: (name, arguments) pairs."""
    tool_calls = tuple(
        ToolCall(
            id=f"call_{next(_ids)}",
            name=name,
            arguments=args if isinstance(args, str) else json.dumps(args),
        )
        for name, args in items
    )
    return ModelResponse(
        message=AssistantMessage(tool_calls=tool_calls),
        usage=Usage(requests=1, prompt_tokens=10, completion_tokens=5),
    )


def _as_response(turn: ModelResponse | AssistantMessage | str) -> ModelResponse:
    if isinstance(turn, ModelResponse):
        return turn
    if isinstance(turn, AssistantMessage):
        return ModelResponse(
            message=turn, usage=Usage(requests=1, prompt_tokens=10, completion_tokens=5)
        )
    return reply(turn)


class ScriptedModel:
    """Answers from a queue of scripted turns and records every request it was asked.

    Args:
        turns: The replies, in order. An exception instance is raised instead of answering.
        name: A label for traces.

    Raises:
        AssertionError: From `complete`, when the script is exhausted.
    """

    def __init__(self, turns: Iterable[Turn], *, name: str = "scripted") -> None:
        self._turns = list(turns)
        self._name = name
        self.requests: list[ModelRequest] = []

    @property
    def name(self) -> str:
        """The label."""
        return self._name

    async def complete(self, request: ModelRequest) -> ModelResponse:
        """Record the request and play the next turn."""
        self.requests.append(request)
        if not self._turns:
            raise AssertionError(
                f"{self._name}: asked for turn {len(self.requests)}, script is over"
            )
        turn = self._turns.pop(0)
        if isinstance(turn, BaseException):
            raise turn
        return _as_response(turn)

    @property
    def remaining(self) -> int:
        """Turns not played yet."""
        return len(self._turns)

    def assert_complete(self) -> None:
        """Fail unless every scripted turn was played."""
        if self._turns:
            raise AssertionError(
                f"{self._name}: {len(self._turns)} scripted turns were never played"
            )


Decider = Callable[[ModelRequest], Turn | Awaitable[Turn]]
"""A `FunctionModel`'s function: the turn to answer a request with."""


class FunctionModel:
    """Lets a function decide each turn from the request (sync or async; may raise).

    Args:
        fn: Called with each request; returns a turn as `ScriptedModel` accepts.
        name: A label for traces.
    """

    def __init__(self, fn: Decider, *, name: str = "function") -> None:
        self._fn = fn
        self._name = name
        self.requests: list[ModelRequest] = []

    @property
    def name(self) -> str:
        """The label."""
        return self._name

    async def complete(self, request: ModelRequest) -> ModelResponse:
        """Record the request and ask the function."""
        self.requests.append(request)
        turn = self._fn(request)
        if inspect.isawaitable(turn):
            turn = await turn
        if isinstance(turn, BaseException):
            raise turn
        return _as_response(turn)
