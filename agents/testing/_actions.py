"""The script vocabulary of `FakeOpenAIServer`: actions, and the OpenAI-shaped JSON they become.

A script is a list of actions played in order, or a function from a request body to an action.
`ServerAction`'s constructors (`text`, `tool_calls`, `json_content`, `status`, `hang`,
`malformed_body`) are the usual way to write one; the dataclasses are public so that a script
function can build them too.
"""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any

__all__ = [
    "Completion",
    "Hang",
    "MalformedBody",
    "ServerAction",
    "ServerScript",
    "Status",
    "TokenUsage",
    "completion_body",
    "error_body",
    "reason_phrase",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class TokenUsage:
    """The token counts a completion reports; a count left as None is estimated from text lengths.

    Attributes:
        prompt_tokens: Input tokens (about a quarter of the request's message characters if None).
        completion_tokens: Output tokens (about a quarter of the reply's characters if None).
        cached_tokens: Input tokens reported as served from the prompt cache.
    """

    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cached_tokens: int = 0


@dataclass(frozen=True, slots=True)
class ServerAction:
    """One scripted answer to a chat completion request (the base of the four kinds below), and
    the usual way to write one:

    ```python
    script = [ServerAction.tool_calls([("search", {"query": "x"})]),
              ServerAction.status(429, headers={"Retry-After": "0.1"}),
              ServerAction.text("done")]
    ```
    """

    @staticmethod
    def text(content: str, *, usage: TokenUsage | None = None) -> Completion:
        """A completion with a plain text answer."""
        return Completion(content=content, usage=usage or TokenUsage())

    @staticmethod
    def tool_calls(
        calls: Iterable[tuple[str, Mapping[str, Any] | str]],
        *,
        content: str | None = None,
        usage: TokenUsage | None = None,
    ) -> Completion:
        """A completion calling tools natively: (name, arguments) pairs; a str is sent verbatim."""
        wire = tuple((name, a if isinstance(a, str) else json.dumps(dict(a))) for name, a in calls)
        return Completion(content=content, calls=wire, usage=usage or TokenUsage())

    @staticmethod
    def json_content(obj: Any, *, usage: TokenUsage | None = None) -> Completion:
        """A completion whose text is `obj` as JSON (a JSON decision or a structured answer)."""
        return Completion(content=json.dumps(obj), usage=usage or TokenUsage())

    @staticmethod
    def status(code: int, body: Any = None, headers: Mapping[str, str] | None = None) -> Status:
        """An HTTP status answer, e.g. `status(429, headers={"Retry-After": "0.2"})`."""
        return Status(code=code, body=body, headers=tuple((headers or {}).items()))

    @staticmethod
    def hang(seconds: float = 3600.0) -> Hang:
        """No answer within any reasonable client deadline."""
        return Hang(seconds=seconds)

    @staticmethod
    def malformed_body(
        body: bytes | None = None, *, code: int = 200, content_type: str = "application/json"
    ) -> MalformedBody:
        """An answer whose body is not JSON: truncated JSON by default.

        ```python
        portal = b"<html><title>Sign in</title></html>"
        action = ServerAction.malformed_body(portal, content_type="text/html")
        ```
        """
        if body is None:
            return MalformedBody(code=code, content_type=content_type)
        return MalformedBody(body=body, code=code, content_type=content_type)


@dataclass(frozen=True, slots=True, kw_only=True)
class Completion(ServerAction):
    """Answer with a chat completion: text, tool calls, or both.

    Attributes:
        content: The assistant's text.
        calls: The tool calls, as (name, raw argument text) pairs.
        usage: The token counts to report.
        finish_reason: Defaults to "tool_calls" when there are calls, else "stop".
        headers: Extra response headers, such as the `x-ratelimit-*` ones.
        stream_s: For a request that asks for a stream: seconds from its first event to its
            last, the events spread evenly and each sent on time (a paced stream, as a server
            decodes token by token); 0 sends them all at once.
    """

    content: str | None = None
    calls: tuple[tuple[str, str], ...] = ()
    usage: TokenUsage = TokenUsage()
    finish_reason: str | None = None
    headers: tuple[tuple[str, str], ...] = ()
    stream_s: float = 0.0


@dataclass(frozen=True, slots=True, kw_only=True)
class Status(ServerAction):
    """Answer with an HTTP status, usually an error.

    Attributes:
        code: The HTTP status code.
        body: A JSON-able body, raw text, or None for an OpenAI-style error object.
        headers: Extra response headers, such as Retry-After.
    """

    code: int
    body: Any = None
    headers: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class Hang(ServerAction):
    """Answer nothing for `seconds`, then drop the connection (cancelled when the server stops)."""

    seconds: float


@dataclass(frozen=True, slots=True, kw_only=True)
class MalformedBody(ServerAction):
    """Answer with a body that is not valid JSON: truncated JSON by default, or any bytes, such
    as the HTML page of a captive portal or a proxy.

    Attributes:
        body: The bytes sent, as they are (for a stream request too).
        code: The HTTP status.
        content_type: The Content-Type header.
    """

    body: bytes = b'{"id": "chatcmpl-broken", "object": "chat.completion", "choices": ['
    code: int = 200
    content_type: str = "application/json"


ServerScript = (
    Sequence[ServerAction] | Callable[[dict[str, Any]], ServerAction | Awaitable[ServerAction]]
)
"""Actions played in order, or a (sync or async) function from the request body to an action."""


def completion_body(
    action: Completion, request: dict[str, Any], *, ids: Iterator[int], model: str
) -> dict[str, Any]:
    """The chat.completion object answering `request` with `action`."""
    calls = [
        {"id": f"call_{next(ids)}", "type": "function", "function": {"name": n, "arguments": a}}
        for n, a in action.calls
    ]
    message: dict[str, Any] = {"role": "assistant", "content": action.content, "refusal": None}
    if calls:
        message["tool_calls"] = calls
    choice = {
        "index": 0,
        "message": message,
        "finish_reason": action.finish_reason or ("tool_calls" if calls else "stop"),
        "logprobs": None,
    }
    return {
        "id": f"chatcmpl-fake-{next(ids)}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": str(request.get("model") or model),
        "choices": [choice],
        "usage": _usage(action, request),
    }


def error_body(code: int, message: str | None = None) -> dict[str, Any]:
    """An OpenAI-style error object."""
    kind = "invalid_request_error" if code < 500 else "server_error"
    text = message or f"fake OpenAI server: HTTP {code} {reason_phrase(code)}"
    return {"error": {"message": text, "type": kind, "param": None, "code": None}}


def reason_phrase(code: int) -> str:
    """The HTTP reason phrase of a status code ("Unknown" for a made-up one)."""
    try:
        return HTTPStatus(code).phrase
    except ValueError:
        return "Unknown"


def _usage(action: Completion, request: dict[str, Any]) -> dict[str, Any]:
    counts = action.usage
    said = len(action.content or "") + sum(len(n) + len(a) for n, a in action.calls)
    prompt = counts.prompt_tokens
    if prompt is None:
        prompt = max(1, len(json.dumps(request.get("messages", []))) // 4)
    completion = counts.completion_tokens
    if completion is None:
        completion = max(1, said // 4)
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "prompt_tokens_details": {"cached_tokens": counts.cached_tokens},
    }
