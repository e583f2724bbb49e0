"""A chat completion POSTed with paor's own HTTP client, past the `openai` SDK's request machinery.

The SDK's generic `post` costs about a millisecond of CPU per request before a byte is sent: it
deep-copies the request options, parses the URL again, rebuilds every header, and wraps the
response in its own types. A run of many agents pays that on its critical path. When the model
uses the client paor built (`agents._http.bounded_http_client`: the SDK's defaults, replies
bounded), `DirectPost` sends the body already built with the headers the SDK would send (taken
from it once) and reads the reply as plain JSON. It goes over paor's own HTTP/1.1 connections
(`agents._h1`, about a tenth of httpx2's CPU per request) unless a proxy from the environment may
cover the endpoint, when httpx2 carries it. Statuses, timeouts and connection failures are what
the SDK would report them as: `status_error` makes the same `ModelError` of either.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import httpx2

from agents._admission import retry_after
from agents._errors import ModelError, ModelRequestError, ModelRetryableError
from agents._h1 import H1_FAILURES, H1Pool, HeadersSeen
from agents._tracing import redact_text

__all__ = ["DirectPost", "status_error"]

# Retried besides 5xx: a timeout, a conflict, and a rate limit.
_RETRYABLE_STATUS = frozenset({408, 409, 429})


class DirectPost:
    """POST JSON bodies to one endpoint's /chat/completions.

    Args:
        http: The HTTP client (paor's bounded one: its response hooks stay in force).
        base_url: The endpoint's base URL, as the SDK normalised it.
        headers: The headers the SDK sends with every request (its `default_headers`).
        shown_url: The base URL as errors may show it (credentials masked).
        max_bytes: The most bytes a reply body may hold (the HTTP client's bound).
        on_headers: Shown each reply's headers and status as they arrive (paor's own
            connections; httpx2's response hooks see its replies).
    """

    def __init__(
        self,
        http: httpx2.AsyncClient,
        base_url: str,
        headers: Mapping[str, object],
        shown_url: str,
        *,
        max_bytes: int,
        on_headers: HeadersSeen | None = None,
    ) -> None:
        self._http = http
        self._url = httpx2.URL(base_url.rstrip("/") + "/chat/completions")
        # The SDK leaves some out with a marker object (an organisation never set): only text.
        self._headers = {k: v for k, v in headers.items() if isinstance(v, str)}
        self._shown = shown_url
        # What httpx2 adds to the SDK's headers: paor's client asks for uncompressed replies.
        sent = {**self._headers, "Accept-Encoding": "identity"}
        self._h1 = H1Pool.for_endpoint(self._url, sent, max_bytes=max_bytes, on_headers=on_headers)

    async def aclose(self) -> None:
        """Close paor's own connections (the httpx2 client is closed with the SDK's)."""
        if self._h1 is not None:
            await self._h1.aclose()

    async def post(self, body: dict[str, Any]) -> Any:
        """The reply's JSON.

        Raises:
            ModelRetryableError: The connection failed, or a retryable status came back.
            ModelRequestError: Any other status of 400 or more.
            ResponseTooLarge: The reply passed the client's byte limit.
            json.JSONDecodeError, UnicodeDecodeError, RecursionError: The body is unreadable.
        """
        content = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()
        status, headers, data = await self._exchange(content)
        if status >= 400:
            raise status_error(status, _error_text(status, data), headers)
        if "json" not in headers.get("content-type", "json"):
            # As the SDK hands it over (no completion: the caller says so).
            return data.decode("utf-8", errors="replace")
        return json.loads(data)

    async def _exchange(self, content: bytes) -> tuple[int, Mapping[str, str], bytes]:
        """The reply's status, headers and body."""
        try:
            if self._h1 is not None:
                reply = await self._h1.post(content)
                return reply.status, reply.headers, reply.body
            response = await self._http.post(self._url, content=content, headers=self._headers)
            return response.status_code, response.headers, response.content
        except (httpx2.TransportError, *H1_FAILURES) as exc:
            failed = f"connection failed to {self._shown}: {type(exc).__name__}"
            raise ModelRetryableError(failed) from exc


def status_error(status: int, message: str, headers: Mapping[str, str]) -> ModelError:
    """The error an HTTP `status` with the server's `message` raises: retryable (408, 409, 429,
    5xx, with the server's Retry-After) or not, on one line."""
    # One line: the server's own text may hold line breaks, and it becomes a one-line error.
    shown = redact_text(" ".join(f"HTTP {status}: {message}".split()))[:500]
    if status in _RETRYABLE_STATUS or status >= 500:
        return ModelRetryableError(shown, retry_after=retry_after(headers), status=status)
    return ModelRequestError(shown, status=status)


def _error_text(status: int, data: bytes) -> str:
    """The error as the SDK words it: "Error code: 429", then " - " and the body's error message
    if it has one (the rest of a body stays out: it may hold what the request sent)."""
    text = f"Error code: {status}"
    try:
        body = json.loads(data)
    except (ValueError, RecursionError):
        return text
    error = body.get("error", body) if isinstance(body, dict) else None
    message = error.get("message") if isinstance(error, dict) else None
    return f"{text} - {message}" if isinstance(message, str) and message else text
