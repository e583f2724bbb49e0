"""A chat completion POSTed through the `openai` SDK's own HTTP client, past its request machinery.

The SDK's generic `post` costs about a millisecond of CPU per request before a byte is sent: it
deep-copies the request options, parses the URL again, rebuilds every header, and wraps the
response in its own types. A run of many agents pays that on its critical path. When the model
uses the client paor built (`_http.new_client`: the SDK's default httpx2 client, replies
bounded), `DirectPost` sends the body already built, with the headers the SDK would send (taken
from it once), through that same httpx2 client, and reads the reply as plain JSON. The client's
transport does the rest as it does for the SDK: kept-alive connections (one the server closed
while idle is not reused), TLS with its trust store, proxies from the environment; its response
hooks bound each body and show the admission each reply's headers before the body is read.
Statuses, timeouts and connection failures are what the SDK would report them as, and a body
that is not JSON is named for what it is: `agents.models._bodies` reads the replies of either.

`post_streamed` asks for the reply as server-sent events, for a server on this machine, and
hands each event over as it arrives. Its bounded body counts every byte, and it reports each
piece of the reply as it comes, a keep-alive comment included, so that a caller's idle deadline
sees a server at work as alive.

What is sent is built here too: `tools_kwargs` and `json_kwargs` give a request's fields in each
decision protocol, `output_kwargs` those of a request for a typed answer in each `OutputMode`,
`to_wire` a transcript message in the chat wire form.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import Any, Literal

import httpx2

from agents._errors import ModelError, ModelRetryableError
from agents.models._bodies import is_event_stream, read_reply, status_error
from agents.models._decisions import cap_strings, decision_schema, render_messages
from agents.models._model import ModelRequest
from memory import AssistantMessage, Message, ToolMessage

__all__ = [
    "FINAL_TOOL",
    "DirectPost",
    "EventSink",
    "OutputMode",
    "json_kwargs",
    "output_kwargs",
    "response_format",
    "to_wire",
    "tools_kwargs",
]

OutputMode = Literal["auto", "schema", "tool", "text"]
"""How a request for a typed answer (`ModelRequest.output`) asks for it: a JSON-schema
`response_format` ("schema": llama.cpp turns it into a grammar), a final tool whose arguments are
the answer, its call forced ("tool": an endpoint may constrain the arguments to the schema; the
llama.cpp build paor embeds does not, and a call written as text is read), or the schema written
in the prompt, the JSON read from the reply's text ("text"). "auto" takes the first of these the
endpoint accepts, in that order, settled once per endpoint."""
FINAL_TOOL = "final_result"
"""The tool a typed answer is asked for through (`OutputMode` "tool")."""

EventSink = Callable[[object], Awaitable[None]]
"""Takes each server-sent event of a streamed reply, as its decoded JSON."""

# What the transport raises when the connection, or what came over it, failed: retryable faults.
# (`ResponseTooLarge`, from the client's body bound, is not one: no retry shrinks a reply.)
_FAILURES = (httpx2.TransportError, httpx2.DecodingError)


class DirectPost:
    """POST JSON bodies to one endpoint's /chat/completions through the SDK's httpx2 client.

    Args:
        http: The HTTP client (paor's bounded one: its response hooks stay in force).
        base_url: The endpoint's base URL, as the SDK normalised it.
        headers: The headers the SDK sends with every request (its `default_headers`).
        shown_url: The base URL as errors may show it (credentials masked).
    """

    def __init__(
        self, http: httpx2.AsyncClient, base_url: str, headers: Mapping[str, object], shown_url: str
    ) -> None:
        self._http = http
        self._url = httpx2.URL(base_url.rstrip("/") + "/chat/completions")
        # The SDK leaves some out with a marker object (an organisation never set): only text.
        self._headers = {k: v for k, v in headers.items() if isinstance(v, str)}
        self._shown = shown_url

    async def post(self, body: dict[str, Any]) -> Any:
        """The reply's JSON.

        Raises:
            ModelRetryableError: The connection failed, or a retryable status came back.
            ModelRequestError: Any other status of 400 or more.
            ModelError: The body is not JSON (`agents.models._bodies.not_the_api`).
            ResponseTooLarge: The reply passed the client's byte limit.
            RecursionError: The body nests too deep to read.
        """
        content = _encoded(body)
        try:
            response = await self._http.post(self._url, content=content, headers=self._headers)
        except _FAILURES as exc:
            raise self._failed(exc) from exc
        return read_reply(self._shown, response.status_code, response.headers, response.content)

    async def post_streamed(
        self, body: dict[str, Any], on_event: EventSink, alive: Callable[[], None]
    ) -> Any:
        """POST `body` asking for a stream, and hand each event of the reply to `on_event`.

        Args:
            body: The request (its `stream` is set here).
            on_event: Takes each event's JSON as it arrives; what it raises ends the reply.
            alive: Called as each piece of the reply arrives (a keep-alive comment included).

        Returns:
            None once the stream ended; the reply's JSON when it came whole instead (an error
            status, or a server that does not stream).

        Raises:
            As `post` does; an error event raises the `ModelError` of its status.
        """
        content = _encoded({**body, "stream": True, "stream_options": {"include_usage": True}})
        # Left unread (an error event, a loop cut short), the connection is closed, not pooled:
        # a local server then stops generating for it.
        streamed = self._http.stream("POST", self._url, content=content, headers=self._headers)
        try:
            async with streamed as response:
                alive()
                if response.status_code < 400 and is_event_stream(response.headers):
                    await _read_events(response.aiter_raw(), on_event, alive)
                    return None
                data = await _whole(response.aiter_raw(), alive)
        except _FAILURES as exc:
            raise self._failed(exc) from exc
        return read_reply(self._shown, response.status_code, response.headers, data)

    def _failed(self, exc: Exception) -> ModelRetryableError:
        return ModelRetryableError(f"connection failed to {self._shown}: {type(exc).__name__}")


def tools_kwargs(request: ModelRequest) -> dict[str, Any]:
    """The request's fields for native tool calls: its messages, tools and output schema."""
    kwargs: dict[str, Any] = {"messages": [to_wire(m) for m in request.messages]}
    if request.tools:
        kwargs["tools"] = [{"type": "function", "function": t.model_dump()} for t in request.tools]
    if request.output is not None:
        kwargs["response_format"] = response_format(request.output.name, request.output.schema_)
    return kwargs


def json_kwargs(request: ModelRequest, max_string_chars: int | None) -> dict[str, Any]:
    """The request's fields for JSON decisions: its messages rendered as text, and the schema
    of a decision (or of its output), every string bounded to `max_string_chars` if set."""
    if request.output is not None:
        name, schema = request.output.name, request.output.schema_
    else:
        # An answer is a paragraph: it gets more room than the other strings.
        chars = None if max_string_chars is None else max_string_chars * 4
        schema = decision_schema(request.tools, request.citable, answer_chars=chars)
        name = "decision"
    if max_string_chars is not None:
        schema = cap_strings(schema, max_string_chars)
    return {"messages": render_messages(request), "response_format": response_format(name, schema)}


def output_kwargs(
    request: ModelRequest, mode: Literal["tool", "text"], max_string_chars: int | None
) -> dict[str, Any]:
    """The fields of a request for a typed answer (`request.output`) asked for as a final tool's
    arguments ("tool"), or as JSON written in the reply's text ("text"); the "schema" mode's are
    each decision protocol's own (`tools_kwargs`, `json_kwargs`)."""
    output = request.output
    if output is None:
        raise ValueError("output_kwargs takes a request for a typed answer")
    messages = [to_wire(m) for m in request.messages]
    if mode == "text":
        written = json.dumps(output.schema_, ensure_ascii=False, separators=(",", ":"))
        said = (
            f"Reply with the JSON object `{output.name}` only, no other text. "
            f"Its JSON Schema: {written}"
        )
        if messages and messages[0]["role"] == "system":
            messages[0] = {**messages[0], "content": f"{messages[0]['content']}\n\n{said}"}
        else:
            messages.insert(0, {"role": "system", "content": said})
        return {"messages": messages}
    schema = output.schema_
    if max_string_chars is not None:
        schema = cap_strings(schema, max_string_chars)
    final = {
        "name": FINAL_TOOL,
        "description": f"Give your answer, the object `{output.name}`, as this tool's arguments.",
        "parameters": schema,
    }
    # "required" with the one tool offered forces that tool, in the form endpoints take most.
    return {
        "messages": messages,
        "tools": [{"type": "function", "function": final}],
        "tool_choice": "required",
    }


def to_wire(message: Message) -> dict[str, Any]:
    """One transcript message in the OpenAI chat wire form."""
    if isinstance(message, AssistantMessage):
        out: dict[str, Any] = {"role": "assistant", "content": message.content}
        if message.tool_calls:
            out["tool_calls"] = [
                {
                    "id": c.id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": c.arguments},
                }
                for c in message.tool_calls
            ]
        return out
    if isinstance(message, ToolMessage):
        return {"role": "tool", "tool_call_id": message.tool_call_id, "content": message.content}
    return {"role": message.role, "content": message.content}


def response_format(name: str, schema: dict[str, Any]) -> dict[str, Any]:
    """The `response_format` that asks for JSON following `schema`."""
    return {"type": "json_schema", "json_schema": {"name": name, "schema": schema, "strict": False}}


def _encoded(body: dict[str, Any]) -> bytes:
    return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()


async def _whole(raw: AsyncIterator[bytes], alive: Callable[[], None]) -> bytes:
    parts = []
    async for piece in raw:
        alive()
        parts.append(piece)
    return b"".join(parts)


async def _read_events(
    raw: AsyncIterator[bytes], on_event: EventSink, alive: Callable[[], None]
) -> None:
    """Hand each event's data to `on_event`, until `[DONE]` or the end of the body.

    Comments (a server's keep-alive pings) and fields other than `data` only count as signs of
    life. An event cut off by the end of the body is dropped, as the SSE standard says: what came
    before it is judged as it is (a completion with no choices is malformed).
    """
    pending = bytearray()
    data: list[bytes] = []
    async for piece in raw:
        alive()
        for line in _lines(pending, piece):
            if line.startswith(b"data:"):
                data.append(line[5:].removeprefix(b" "))
            elif line.startswith(b"error:"):  # llama.cpp's error event
                raise _error_event(line[6:])
            elif not line and data:
                payload = b"\n".join(data)
                data.clear()
                if payload == b"[DONE]":
                    return
                await on_event(_event(payload))


def _lines(pending: bytearray, piece: bytes) -> list[bytes]:
    """The lines `piece` completes (less their line ends); a line still open stays in `pending`.

    Only the new piece is searched for a line end: a body with none, up to its byte bound, is
    not searched again and again as it grows.
    """
    end = piece.rfind(b"\n")
    if end < 0:
        pending += piece
        return []
    done = bytes(pending) + piece[:end]
    pending[:] = piece[end + 1 :]
    return [line.removesuffix(b"\r") for line in done.split(b"\n")]


def _event(payload: bytes) -> object:
    """An event's JSON; an error object raises the error it describes."""
    event = json.loads(payload)
    if isinstance(event, dict) and isinstance(event.get("error"), dict):
        raise _error_event(payload)
    return event


def _error_event(payload: bytes) -> ModelError:
    """The error an error event stands for: its code's (a server error if it gives none)."""
    try:
        event = json.loads(payload)
    except (ValueError, RecursionError):
        event = None
    error = event.get("error", event) if isinstance(event, dict) else None
    code = error.get("code") if isinstance(error, dict) else None
    status = code if isinstance(code, int) and 400 <= code < 600 else 500
    message = error.get("message") if isinstance(error, dict) else None
    text = message if isinstance(message, str) else payload.decode("utf-8", errors="replace")
    return status_error(status, f"error event: {text}", {})
