"""MCP servers as tools: `MCPServer` connects one (stdio or streamable HTTP) with the official SDK.

A server is started once, when its `async with` block opens, and shared by every agent that calls
its tools: calls run concurrently over its one session. Its tools are `MCPTool`s, so they go through
the effect boundary, the toolbox's breakers, the journal and replay like any tool:

- the schema is the server's, and arguments are validated against it before anything is sent;
- a result is the server's structured content when it has one, else its text (images and other
  media are named, not inlined); an error result is a tool failure the model reads;
- a server that dies makes its calls fail (which trips their breakers) and is restarted on the next
  call, a bounded number of times in a row; leaving the block (Ctrl-C included) stops it.

Annotations mean something: a read-only or idempotent tool's call in flight at a crash runs again on
resume; any other is a side effect, which is never repeated unverified (see `JournaledEffects`).
"""

from __future__ import annotations

import math
import sys
import tempfile
from collections.abc import Mapping, Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Literal, Self, TextIO, cast

import anyio
import anyio.abc
from pydantic import BaseModel, ConfigDict

from agents._errors import ConfigurationError, ToolFailure
from agents._model import ToolSpec
from agents._tools import Tool
from agents._tracing import logger, redact_url

try:
    import jsonschema
    from mcp import Client
    from mcp import types as mcp_types
    from mcp.client.stdio import StdioServerParameters, stdio_client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared.exceptions import MCPError
except ImportError as _missing:  # pragma: no cover - the extra is not installed
    _MISSING: ImportError | None = _missing
else:
    _MISSING = None

__all__ = ["MCPServer", "MCPTool"]

_log = logger()
_CONNECTION_CLOSED = -32000
_STDERR_TAIL = 400


class _AnyArgs(BaseModel):
    """Arguments pass through unchanged: the server's JSON schema validates them (`MCPTool.parse`)."""

    model_config = ConfigDict(extra="allow")


@dataclass(frozen=True, slots=True, kw_only=True)
class MCPTool(Tool):
    """A tool of an MCP server (built by `MCPServer`).

    Attributes:
        server: The server's name.
        remote_name: The tool's name on the server (`name` may carry a prefix).
        schema: The server's JSON schema of its arguments.
        read_only: The server says it changes nothing (`readOnlyHint`).
        destructive: The server says it may destroy data (`destructiveHint`; MCP's default is
            true for a tool that is not read-only).
    """

    server: str = ""
    remote_name: str = ""
    schema: Mapping[str, Any] = field(default_factory=dict)
    read_only: bool = False
    destructive: bool = True
    _validator: Any = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        parameters = _strip_titles(dict(self.schema))
        parameters.setdefault("type", "object")
        parameters.setdefault("properties", {})
        spec = ToolSpec(name=self.name, description=self.description, parameters=parameters)
        object.__setattr__(self, "_spec", spec)
        object.__setattr__(self, "_validator", jsonschema.Draft202012Validator(parameters))

    def parse(self, arguments: str) -> dict[str, Any]:
        """Decode the raw JSON arguments and check them against the server's schema."""
        return self.parse_bound(arguments)[0]

    def parse_bound(self, arguments: str) -> tuple[dict[str, Any], tuple[str, ...]]:
        """`parse`, with what schema binding bound (see `agents._binding`), then the server's
        own schema check on the arguments that will be sent."""
        args, bound = Tool.parse_bound(self, arguments)
        problems = sorted(self._validator.iter_errors(args), key=lambda e: list(e.path))
        if problems:
            raise ValueError(f"invalid arguments: {'; '.join(_problem(p) for p in problems[:5])}")
        return args, bound


class MCPServer:
    """One MCP server, as tools: `async with MCPServer.stdio("time", "uvx", ["mcp-server-time"])
    as time: Orchestrator(model, time.tools)`.

    Args:
        name: What the server is called (in errors, logs, and prefixed tool names).
        params: How to start it (stdio), or its URL (streamable HTTP).
        headers: HTTP headers for a URL server (e.g. an authorization header).
        allow: Only these of its tools (by the server's names).
        deny: Never these.
        prefix: Put this before every tool name (`prefix` + `_` + name); see `MCPServers` for
            prefixes that are added only where names clash.
        timeout: Seconds a call may take.
        max_restarts: Restarts in a row (without a call succeeding between them) before the
            server is given up on, and every call fails at once.
        needs_approval: "destructive": calls of the tools the server calls destructive wait for
            a person's decision (see `agents.approvals`); "all": every call does.
    """

    def __init__(
        self,
        name: str,
        params: StdioServerParameters | str,
        *,
        headers: Mapping[str, str] | None = None,
        allow: Sequence[str] | None = None,
        deny: Sequence[str] = (),
        prefix: str | None = None,
        timeout: float = 60.0,
        max_restarts: int = 3,
        needs_approval: Literal["destructive", "all"] | None = None,
    ) -> None:
        if _MISSING is not None:
            raise ConfigurationError("MCP needs the mcp extra: pip install 'paor[mcp]'") from None
        if not name or not math.isfinite(timeout) or timeout <= 0:
            raise ConfigurationError(f"MCP server {name!r}: a name and a positive timeout")
        self.name = name
        self.params = params
        self.headers = dict(headers or {})
        self.allow = None if allow is None else frozenset(allow)
        self.deny = frozenset(deny)
        self.prefix = prefix
        self.timeout = timeout
        self.max_restarts = max_restarts
        self.needs_approval = needs_approval
        self.tools: list[MCPTool] = []
        self.restarts = 0
        self._client: Client | None = None
        self._lost = anyio.Event()
        self._ready = anyio.Event()
        self._gone: str | None = None
        self._failures = 0
        self._stack = AsyncExitStack()
        self._stderr: TextIO | None = None

    @classmethod
    def stdio(
        cls,
        name: str,
        command: str,
        args: Sequence[str] = (),
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        **options: Any,
    ) -> MCPServer:
        """A server started as `command args...`, spoken to over its stdin and stdout."""
        params = StdioServerParameters(
            command=command, args=list(args), env=dict(env) if env else None, cwd=cwd
        )
        return cls(name, params, **options)

    @classmethod
    def http(cls, name: str, url: str, **options: Any) -> MCPServer:
        """A server at `url`, over streamable HTTP."""
        return cls(name, url, **options)

    def __repr__(self) -> str:
        where = self.params if isinstance(self.params, str) else self.params.command
        return f"MCPServer({self.name!r}, {redact_url(str(where))!r})"

    async def __aenter__(self) -> Self:
        try:
            if not isinstance(self.params, str):
                # What the server writes on stderr, kept for the error that reports its death.
                self._stderr = self._stack.enter_context(
                    cast(TextIO, tempfile.TemporaryFile("w+", encoding="utf-8"))  # noqa: SIM115
                )
            tg = await self._stack.enter_async_context(anyio.create_task_group())
            self._stack.callback(tg.cancel_scope.cancel)
            await tg.start(self._supervise)
        except BaseException:
            await self._stack.aclose()
            raise
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._gone = "stopped"
        await self._stack.aclose()

    async def call(self, remote_name: str, args: dict[str, Any]) -> Any:
        """Call one of the server's tools; a failure raises `ToolFailure` for the model to read."""
        client = await self._connection()
        try:
            result = await client.call_tool(remote_name, args, read_timeout_seconds=self.timeout)
        except MCPError as exc:
            if exc.code == _CONNECTION_CLOSED:
                self._lose(client)
                raise ToolFailure(f"MCP server {self.name} exited{self._last_words()}") from None
            raise ToolFailure(f"MCP server {self.name}: {exc.error.message}") from None
        self._failures = 0
        return _value(result)

    async def _connection(self) -> Client:
        with anyio.move_on_after(self.timeout):
            await self._ready.wait()
        if self._gone is not None or self._client is None:
            raise ToolFailure(
                f"MCP server {self.name} is not available ({self._gone or 'starting'})"
            )
        return self._client

    def _lose(self, client: Client) -> None:
        if self._client is client:
            self._client = None
            self._ready = anyio.Event()  # calls from now on wait for the restart
            self._lost.set()

    async def _supervise(self, *, task_status: anyio.abc.TaskStatus[None]) -> None:
        """Keep the server connected: connect, list its tools, wait for a loss, restart."""
        started = False
        while True:
            try:
                async with self._client_for() as client:
                    with anyio.fail_after(self.timeout):
                        listing = await _list_tools(client)
                    if not started:
                        self.tools = self._tools(listing)
                    self._client = client
                    self._ready.set()
                    if not started:
                        task_status.started()
                        started = True
                    await self._lost.wait()
            except Exception as exc:
                if not started:
                    raise ConfigurationError(
                        f"MCP server {self.name} did not start: {_short(exc)}"
                    ) from exc
                _log.warning("mcp_server_lost", server=self.name, error=_short(exc))
            if not await self._may_restart():
                return

    async def _may_restart(self) -> bool:
        """After a loss: wait a little and say whether to start the server again."""
        self._client = None
        if self._ready.is_set():
            self._ready = anyio.Event()
        self._lost = anyio.Event()
        self._failures += 1
        if self._failures > self.max_restarts:
            self._gone = f"gave up after {self.max_restarts} restarts"
            self._ready.set()
            _log.warning("mcp_server_given_up", server=self.name, restarts=self.restarts)
            return False
        await anyio.sleep(min(0.25 * 2 ** (self._failures - 1), 5.0))
        self.restarts += 1
        _log.info("mcp_server_restart", server=self.name, attempt=self._failures)
        return True

    def _client_for(self) -> Client:
        if isinstance(self.params, str):
            return Client(
                _http_transport(self.params, self.headers), read_timeout_seconds=self.timeout
            )
        errlog = self._stderr or sys.stderr
        return Client(stdio_client(self.params, errlog=errlog), read_timeout_seconds=self.timeout)

    def _tools(self, listing: Sequence[mcp_types.Tool]) -> list[MCPTool]:
        chosen = [
            t
            for t in listing
            if (self.allow is None or t.name in self.allow) and t.name not in self.deny
        ]
        unknown = (self.allow or frozenset()) - {t.name for t in listing}
        if unknown:
            raise ConfigurationError(
                f"MCP server {self.name} has no tool {', '.join(sorted(unknown))}"
            )
        return [self._tool(t) for t in chosen]

    def _tool(self, remote: mcp_types.Tool) -> MCPTool:
        notes = remote.annotations or mcp_types.ToolAnnotations()
        read_only = bool(notes.read_only_hint)
        repeatable = read_only or bool(notes.idempotent_hint)
        name = tool_name(remote.name if self.prefix is None else f"{self.prefix}_{remote.name}")

        async def call(**args: Any) -> Any:
            return await self.call(remote.name, args)

        destructive = not read_only and notes.destructive_hint is not False
        return MCPTool(
            name=name,
            description=" ".join((remote.description or remote.name).split())[:1024],
            fn=call,
            args_model=_AnyArgs,
            timeout=self.timeout + 5.0,
            side_effects=not repeatable,
            server=self.name,
            remote_name=remote.name,
            schema=remote.input_schema,
            read_only=read_only,
            destructive=destructive,
            needs_approval=self.needs_approval == "all"
            or (self.needs_approval == "destructive" and destructive),
        )

    def _last_words(self) -> str:
        """The end of what the server wrote on stderr, for the error the model (and user) read."""
        if self._stderr is None:
            return ""
        self._stderr.seek(0, 2)
        end = self._stderr.tell()
        self._stderr.seek(max(0, end - _STDERR_TAIL))
        tail = " ".join(self._stderr.read().split()[-30:])
        return f" ({tail})" if tail else ""


def tool_name(name: str) -> str:
    """`name` as a model may call it: letters, digits, `_` and `-`, at most 64 characters."""
    cleaned = "".join(c if c.isascii() and (c.isalnum() or c in "_-") else "_" for c in name)
    return cleaned[:64] or "tool"


def _http_transport(url: str, headers: Mapping[str, str]) -> Any:
    if not headers:
        return streamable_http_client(url)
    import httpx2

    return streamable_http_client(url, http_client=httpx2.AsyncClient(headers=dict(headers)))


async def _list_tools(client: Client) -> list[mcp_types.Tool]:
    """Every page of the server's tool listing."""
    tools: list[mcp_types.Tool] = []
    cursor: str | None = None
    while True:
        page = await client.list_tools(cursor=cursor)
        tools.extend(page.tools)
        cursor = page.next_cursor
        if not cursor:
            return tools


def _value(result: mcp_types.CallToolResult) -> Any:
    """What the model reads of a result: structured content, else the text of its blocks."""
    if result.is_error:
        raise ToolFailure(_text(result.content) or "the tool reported an error")
    if result.structured_content is not None:
        return result.structured_content
    return _text(result.content)


def _text(blocks: Sequence[Any]) -> str:
    parts: list[str] = []
    for block in blocks:
        match block:
            case mcp_types.TextContent(text=text):
                parts.append(text)
            case mcp_types.EmbeddedResource(resource=mcp_types.TextResourceContents() as res):
                parts.append(res.text)
            case mcp_types.EmbeddedResource(resource=res):
                parts.append(f"[resource {res.uri}, {res.mime_type or 'binary'}]")
            case mcp_types.ResourceLink(uri=uri, name=name):
                parts.append(f"[link {name}: {uri}]")
            case mcp_types.ImageContent(mime_type=mime) | mcp_types.AudioContent(mime_type=mime):
                parts.append(f"[{block.type} {mime}, {len(block.data) * 3 // 4:,} bytes]")
    return "\n".join(parts)


def _problem(error: Any) -> str:
    where = ".".join(str(p) for p in error.path) or "arguments"
    return f"{where}: {error.message[:200]}"


def _strip_titles(node: Any, *, is_map: bool = False) -> Any:
    """The schema without `title` keywords, which only cost tokens (names under `properties` stay)."""
    if isinstance(node, dict):
        return {
            k: _strip_titles(v, is_map=not is_map and k in ("properties", "$defs", "definitions"))
            for k, v in node.items()
            if is_map or k != "title"
        }
    if isinstance(node, list):
        return [_strip_titles(v) for v in node]
    return node


def _short(exc: BaseException) -> str:
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text[:300]
