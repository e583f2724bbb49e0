"""Whole reply bodies, read: their JSON, the error an error status stands for, and what an
endpoint that lies answered.

An OpenAI-compatible base URL can answer with something else: a captive portal's login page, a
proxy's error page, a web server at the wrong path, a body cut short. The `openai` SDK meets
these with an `AttributeError` deep inside (a page of HTML is no list of models) or hands them
over as text. Every whole reply paor reads, on every path (a completion, a stream that came
whole, an error status, `OpenAIChatModel.ping`), goes through `read_reply`, and a body that is
not JSON becomes a one-line `ModelError` that names the endpoint and what it answered
(`not_the_api`):

    http://127.0.0.1:8080/v1 answered HTML, not the OpenAI API (status 200, text/html): 'Sign in'

Who must act follows the status: a retryable one (408, 409, 429, 5xx: a proxy whose upstream is
down) is retried as any such status is; JSON cut short or garbled under a JSON Content-Type is a
transport fault, retried too; anything else (a portal's 200, a 404 page) is a
`ModelRequestError`, since a retry would meet the same page.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from agents._errors import ModelError, ModelRequestError, ModelRetryableError
from agents._tracing import redact_text
from agents.models._admission import retry_after

__all__ = [
    "check_json",
    "decode_reason",
    "is_event_stream",
    "not_the_api",
    "read_reply",
    "reply_error",
    "status_error",
]

# Retried besides 5xx: a timeout, a conflict, and a rate limit.
_RETRYABLE_STATUS = frozenset({408, 409, 429})
_TITLE = re.compile(rb"<title[^>]{0,200}>([^<]{0,400})<", re.IGNORECASE)
_TITLE_SCAN = 64 * 1024  # a page's title is in its head: no need to search a long body
_EXCERPT_CHARS = 80


def read_reply(shown_url: str, status: int, headers: Mapping[str, str], data: bytes) -> Any:
    """The JSON of a whole reply, or the error its status or its body stands for.

    Args:
        shown_url: The endpoint as errors may show it (credentials masked).
        status: The reply's HTTP status.
        headers: Its headers.
        data: Its body, decoded from any Content-Encoding.

    Raises:
        ModelError: An error status (`reply_error`), or a body that is not JSON (`not_the_api`).
        RecursionError: The body is JSON nested too deep to read.
    """
    if status >= 400:
        raise reply_error(shown_url, status, headers, data)
    return _json(shown_url, status, headers, data)


def reply_error(shown_url: str, status: int, headers: Mapping[str, str], data: bytes) -> ModelError:
    """The error a reply with an error status stands for: its status's with the server's message
    as the SDK words it ("Error code: 404 - ..."), or, for a body that is not JSON, what it
    answered (`not_the_api`)."""
    body: Any = None
    if data.strip():
        try:
            body = _json(shown_url, status, headers, data)
        except ModelError as exc:
            return exc
        except RecursionError:
            body = None
    return status_error(status, _error_text(status, body), headers)


def check_json(shown_url: str, status: int, headers: Mapping[str, str], data: bytes) -> None:
    """Pass a reply whose body is JSON, whatever its status, and a bare error status (no body).

    Raises:
        ModelError: The body is something else (`not_the_api`).
    """
    if status >= 400 and not data.strip():
        return
    try:
        _json(shown_url, status, headers, data)
    except RecursionError:  # JSON all the same
        return


def not_the_api(shown_url: str, status: int, headers: Mapping[str, str], data: bytes) -> ModelError:
    """The one-line error for a reply whose body is not JSON: the endpoint, what it answered
    (HTML and its title, plain text and its first words, broken JSON...), the status and the
    Content-Type; retryable or not as the module docstring says."""
    content_type = headers.get("content-type", "").split(";")[0].strip().lower()
    what, broken_json = _what(content_type, data)
    shown_type = content_type or "no Content-Type"
    message = f"{shown_url.rstrip('/')} answered {what}"
    if not broken_json:
        message += ", not the OpenAI API"
    message += f" (status {status}, {shown_type})"
    excerpt = _excerpt(what, data)
    if excerpt:
        message += f": {excerpt!r}"
    if status in _RETRYABLE_STATUS or status >= 500 or (broken_json and status < 400):
        return ModelRetryableError(message, retry_after=retry_after(headers), status=status)
    return ModelRequestError(message, status=status)


def status_error(status: int, message: str, headers: Mapping[str, str]) -> ModelError:
    """The error an HTTP `status` with the server's `message` raises: retryable (408, 409, 429,
    5xx, with the server's Retry-After) or not, on one line."""
    # One line: the server's own text may hold line breaks, and it becomes a one-line error.
    shown = redact_text(" ".join(f"HTTP {status}: {message}".split()))[:500]
    if status in _RETRYABLE_STATUS or status >= 500:
        return ModelRetryableError(shown, retry_after=retry_after(headers), status=status)
    return ModelRequestError(shown, status=status)


def is_event_stream(headers: Mapping[str, str]) -> bool:
    """Whether a reply is a stream of server-sent events."""
    return "text/event-stream" in headers.get("content-type", "").lower()


def _json(shown_url: str, status: int, headers: Mapping[str, str], data: bytes) -> Any:
    """The body's JSON, whatever its Content-Type says (a server may send JSON as text/plain)."""
    try:
        return json.loads(data)
    except ValueError:  # not JSON, or in no Unicode encoding at all
        raise not_the_api(shown_url, status, headers, data) from None


def _what(content_type: str, data: bytes) -> tuple[str, bool]:
    """What a body that is not JSON is, in a few words, and whether it claims to be JSON."""
    start = data[:64].lstrip()
    if "html" in content_type or start[:1] == b"<":
        return "HTML", False
    if "json" in content_type:
        return "broken JSON", True
    if not start:
        return "an empty body", False
    if content_type.startswith("text/"):
        return "plain text", False
    return "a body that is not JSON", False


def _excerpt(what: str, data: bytes) -> str:
    """A few words that say which page or text it is: an HTML page's title, the start of plain
    text; on one line, secrets masked."""
    if what == "HTML":
        found = _TITLE.search(data[:_TITLE_SCAN])
        raw = found.group(1) if found else b""
    elif what == "plain text":
        raw = data[: _EXCERPT_CHARS * 4]
    else:
        return ""
    text = " ".join(raw.decode("utf-8", errors="replace").split())
    return redact_text(text)[:_EXCERPT_CHARS]


def _error_text(status: int, body: Any) -> str:
    """The error as the SDK words it: "Error code: 429", then " - " and the body's error message
    if it has one (the rest of a body stays out: it may hold what the request sent)."""
    text = f"Error code: {status}"
    error = body.get("error", body) if isinstance(body, dict) else None
    message = error.get("message") if isinstance(error, dict) else None
    return f"{text} - {message}" if isinstance(message, str) and message else text


def decode_reason(exc: json.JSONDecodeError | UnicodeDecodeError) -> str:
    """What a JSON or Unicode decoding error says went wrong, in a few words."""
    return exc.msg if isinstance(exc, json.JSONDecodeError) else exc.reason
