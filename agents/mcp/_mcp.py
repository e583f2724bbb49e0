"""MCP servers as tools: `MCPServer` connects one (stdio or streamable HTTP) with the official SDK.

A server is started once, when its `async with` block opens, and shared by every agent that calls
its tools: calls run concurrently over its one session. Its tools are `MCPTool`s, so they go through
the effect boundary, the toolbox's breakers, the journal and replay like any tool:

- the schema is the server's, and arguments are validated against it before anything is sent;
- a result is the server's structured content when it has one, else its text (images and other
  media are named, not inlined); an error result is a tool failure the model reads;
- a server that dies makes its calls fail (which trips their breakers) and is restarted on the next
  call, a bounded number of times in a row; leaving the block (Ctrl-C included) stops it;
- starting it (the process or connection, the MCP handshake and the tool listing) has a bound of
  its own, `start_timeout` (30 s), or less when a run's deadline leaves less (`start(within=...)`):
  the SDK's handshake would otherwise wait 60 s for a silent server. A server that does not start
  is one `ConfigurationError` line with the last words it wrote on stderr.

Annotations mean something: a read-only or idempotent tool's call in flight at a crash runs again on
resume; any other is a side effect, which is never repeated unverified (see `JournaledEffects`).
"""

from __future__ import annotations

import math
import sys
import tempfile
from collections.abc import Mapping, Sequence
from contextlib import AsyncExitStack
from types import TracebackType
from typing import Any, Literal, Self, TextIO, cast

import anyio
import anyio.abc

from agents._errors import ConfigurationError, ToolFailure
from agents._tracing import logger, redact_url
from agents.mcp._mcp_tool import AnyArgs, MCPTool, result_value, tool_name

try:
    from mcp import Client
    from mcp import types as mcp_types
    from mcp.client.stdio import StdioServerParameters, stdio_client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared.exceptions import MCPError
except ImportError as _missing:  # pragma: no cover - the extra is not installed
    _MISSING: ImportError | None = _missing
else:
    _MISSING = None

__all__ = ["START_TIMEOUT", "MCPServer", "MCPTool"]

_log = logger()
_CONNECTION_CLOSED = -32000
_STDERR_TAIL = 400
START_TIMEOUT = 30.0
"""Seconds an MCP server may take to start, by default (the SDK's handshake alone waits 60 s)."""


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
        start_timeout: Seconds a start (or restart) may take: the process or connection, the
            MCP handshake and the tool listing.
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
        start_timeout: float = START_TIMEOUT,
        max_restarts: int = 3,
        needs_approval: Literal["destructive", "all"] | None = None,
    ) -> None:
        if _MISSING is not None:
            raise ConfigurationError("MCP needs the mcp extra: pip install 'paor[mcp]'") from None
        if not name or not all(math.isfinite(t) and t > 0 for t in (timeout, start_timeout)):
            raise ConfigurationError(f"MCP server {name!r}: a name and positive timeouts")
        self.name = name
        self.params = params
        self.headers = dict(headers or {})
        self.allow = None if allow is None else frozenset(allow)
        self.deny = frozenset(deny)
        self.prefix = prefix
        self.timeout = timeout
        self.start_timeout = start_timeout
        self.max_restarts = max_restarts
        self.needs_approval = needs_approval
        self.tools: list[MCPTool] = []
        self.restarts = 0
        self._client: Client | None = None
        self._lost = anyio.Event()
        self._ready = anyio.Event()
        self._gone: str | None = None
        self._failures = 0
        self._up = False  # started once: a later failure is a loss, not a failed start
        self._bound = start_timeout
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
        await self.start()
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.stop()

    async def start(self, *, within: float | None = None) -> None:
        """Start the server and list its tools (what entering `async with` does).

        Args:
            within: Seconds left for it, when fewer than `start_timeout` (what is left of a
                run's deadline); this bound holds for its restarts too.

        Raises:
            ConfigurationError: It did not start, or not in time: one line naming it, with the
                last words it wrote on stderr.
        """
        self._bound = self.start_timeout if within is None else min(self.start_timeout, within)
        try:
            if not isinstance(self.params, str):
                # What the server writes on stderr, kept for the errors that report its failures.
                self._stderr = self._stack.enter_context(
                    cast(TextIO, tempfile.TemporaryFile("w+", encoding="utf-8"))  # noqa: SIM115
                )
            tg = await self._stack.enter_async_context(anyio.create_task_group())
            self._stack.callback(tg.cancel_scope.cancel)
            await tg.start(self._supervise)
        except BaseException:
            await self._stack.aclose()
            raise

    async def stop(self) -> None:
        """Stop the server (what leaving `async with` does)."""
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
        return result_value(result)

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
        while True:
            try:
                await self._session(task_status)
            except Exception as exc:
                if not self._up:
                    raise ConfigurationError(self._start_failure(exc)) from None
                _log.warning("mcp_server_lost", server=self.name, error=_short(exc))
            if not await self._may_restart():
                return

    async def _session(self, task_status: anyio.abc.TaskStatus[None]) -> None:
        """One connection, up (handshake and listing) within the start-up bound, then kept until
        it is lost. The bound is a deadline on the scope around the whole connection, lifted
        once it is up: a scope entered around the handshake alone could not be left while the
        client's own task groups, opened inside it, stay open."""
        with anyio.CancelScope(deadline=anyio.current_time() + self._bound) as starting:
            async with self._client_for() as client:
                listing = await _list_tools(client)
                starting.deadline = math.inf
                if not self._up:
                    self.tools = self._tools(listing)
                self._client = client
                self._ready.set()
                if not self._up:
                    self._up = True
                    task_status.started()
                await self._lost.wait()
        if starting.cancelled_caught:
            raise TimeoutError(f"not up within {_seconds(self._bound)} s")

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
            args_model=AnyArgs,
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

    def _start_failure(self, exc: Exception) -> str:
        """Why the server did not start, on one line, ending with its last words on stderr."""
        error = _leaf(exc)
        if isinstance(error, ConfigurationError):  # it started, but lacks a tool asked for
            return str(error)
        words = self._stderr_tail()
        closed = isinstance(error, MCPError) and error.code == _CONNECTION_CLOSED
        if closed and self._stderr is not None:  # a stdio server's process ended
            return f"MCP server {self.name} exited at start: {words or '(nothing on stderr)'}"
        if isinstance(error, TimeoutError):
            said = f"MCP server {self.name} did not start within {_seconds(self._bound)} s"
        else:
            said = f"MCP server {self.name} did not start: {_short(error)}"
        return f"{said}; its stderr: {words}" if words else said

    def _last_words(self) -> str:
        """The end of what the server wrote on stderr, for the error the model (and user) read."""
        tail = self._stderr_tail()
        return f" ({tail})" if tail else ""

    def _stderr_tail(self) -> str:
        """The last words the server wrote on stderr, on one line ("" for none, or HTTP)."""
        if self._stderr is None:
            return ""
        self._stderr.seek(0, 2)
        end = self._stderr.tell()
        self._stderr.seek(max(0, end - _STDERR_TAIL))
        return " ".join(self._stderr.read().split()[-30:])


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


def _leaf(exc: BaseException) -> BaseException:
    """The exception inside groups of one (the SDK's task groups wrap what they raise)."""
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    return exc


def _short(exc: BaseException) -> str:
    exc = _leaf(exc)
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text[:300]


def _seconds(value: float) -> str:
    """Seconds as a person reads them: "10", "2.5", "0"."""
    return f"{max(value, 0.0):.1f}".removesuffix(".0")
