"""Fake models for tests: a scripted queue of replies, and a function that decides each turn.

Token counts a turn does not state are filled in when it is played (see `TokenCounting`): with
`tokens="estimated"` they are estimated from the request and the reply, so token budgets
(`Limits(max_tokens=...)`, `AgentLimits`) are hit in a test where they would be live.
"""

from __future__ import annotations

import inspect
import itertools
import json
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from agents.models._model import ModelRequest, ModelResponse
from agents.testing._usage import TokenCounting, played, usage
from memory import AssistantMessage, ToolCall

__all__ = ["FunctionModel", "ScriptedModel", "Turn", "call", "calls", "reply"]

_ids = itertools.count(1)

Turn = ModelResponse | AssistantMessage | str | BaseException
"""One scripted turn: a response, a message, plain text (a final answer), or an error to raise."""


def reply(
    text: str, *, prompt_tokens: int | None = None, completion_tokens: int | None = None
) -> ModelResponse:
    """A final-answer response; a token count left as None is filled in when it is played."""
    return ModelResponse(
        message=AssistantMessage(content=text), usage=usage(prompt_tokens, completion_tokens)
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
    return ModelResponse(message=AssistantMessage(tool_calls=tool_calls), usage=usage(None, None))


def _as_response(turn: ModelResponse | AssistantMessage | str) -> ModelResponse:
    if isinstance(turn, ModelResponse):
        return turn
    if isinstance(turn, AssistantMessage):
        return ModelResponse(message=turn, usage=usage(None, None))
    return reply(turn)


class ScriptedModel:
    """Answers from a queue of scripted turns and records every request it was asked.

    Args:
        turns: The replies, in order. An exception instance is raised instead of answering.
        name: A label for traces.
        tokens: How the token counts a turn does not state are filled in (`TokenCounting`).

    Raises:
        AssertionError: From `complete`, when the script is exhausted.
    """

    def __init__(
        self, turns: Iterable[Turn], *, name: str = "scripted", tokens: TokenCounting = "fixed"
    ) -> None:
        self._turns = list(turns)
        self._name = name
        self._tokens: TokenCounting = tokens
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
        return played(_as_response(turn), request, self._tokens)

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
        tokens: How the token counts a turn does not state are filled in (`TokenCounting`).
    """

    def __init__(
        self, fn: Decider, *, name: str = "function", tokens: TokenCounting = "fixed"
    ) -> None:
        self._fn = fn
        self._name = name
        self._tokens: TokenCounting = tokens
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
        return played(_as_response(turn), request, self._tokens)
