"""`MCPServers`: the servers of an `{"mcpServers": {...}}` file, opened together, as one tool list.

The file is the one Claude Desktop, Cursor and VS Code read: each entry has a `command` with `args`,
`env` and `cwd` (stdio), or a `url` with `headers` (streamable HTTP; `"type": "http"`). paor adds a
few keys of its own, which other clients ignore: `allow` and `deny` (tool names), `prefix`,
`timeout` (seconds per call), `start_timeout` (seconds to start, 30 by default), `approve`
("destructive" or "all": those calls wait for a person's decision) and `disabled`. When two
servers offer a tool of the same name, both are renamed `<server>_<tool>`, so nothing is
shadowed.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections import Counter
from collections.abc import Iterable, Mapping
from contextlib import AsyncExitStack
from pathlib import Path
from types import TracebackType
from typing import Any, Self

import anyio

from agents._errors import ConfigurationError
from agents.mcp._mcp import MCPServer
from agents.mcp._mcp_tool import MCPTool, tool_name

__all__ = ["MCPServers"]

_MAX_FILE_BYTES = 1_000_000
_KEYS = frozenset(
    {"command", "args", "env", "cwd", "url", "headers", "type", "allow", "deny", "prefix"}
    | {"timeout", "start_timeout", "disabled", "description", "approve"}
)


class MCPServers:
    """Several MCP servers: `async with MCPServers.from_file("mcp.json") as mcp:
    Orchestrator(model, [*my_tools, *mcp.tools])`.

    Args:
        servers: The servers (each started when the block opens, stopped when it closes).
        within: Seconds for starting them all when the block opens (what is left of a run's
            deadline), if fewer than their own `start_timeout`s allow.

    Raises:
        ConfigurationError: Two servers share a name.
    """

    def __init__(self, servers: Iterable[MCPServer], *, within: float | None = None) -> None:
        self.servers = list(servers)
        self.within = within
        names = Counter(s.name for s in self.servers)
        twice = sorted(n for n, count in names.items() if count > 1)
        if twice:
            raise ConfigurationError(f"two MCP servers are named {twice[0]!r}")
        self.tools: list[MCPTool] = []
        self._stack = AsyncExitStack()

    @classmethod
    def from_file(cls, path: str | Path, *, within: float | None = None) -> MCPServers:
        """The servers of an `mcpServers` JSON file (relative `cwd`s are from its folder),
        started within `within` seconds when the block opens.

        Raises:
            ConfigurationError: The file cannot be read, or says something paor cannot use.
        """
        path = Path(path)
        try:
            if path.stat().st_size > _MAX_FILE_BYTES:
                raise ConfigurationError(f"{path}: an MCP file of over 1 MB is not read")
            config = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigurationError(f"cannot read {path}: {exc}") from None
        except (json.JSONDecodeError, RecursionError) as exc:
            raise ConfigurationError(f"{path} is not valid JSON: {exc}") from None
        return cls.from_config(config, base=path.parent, source=str(path), within=within)

    @classmethod
    def from_config(
        cls,
        config: Any,
        *,
        base: Path | None = None,
        source: str = "MCP config",
        within: float | None = None,
    ) -> MCPServers:
        """The servers of an already-parsed `{"mcpServers": {...}}` (or VS Code's `"servers"`)."""
        if not isinstance(config, dict):
            raise ConfigurationError(f"{source}: expected a JSON object with mcpServers")
        entries = config.get("mcpServers", config.get("servers"))
        if not isinstance(entries, dict):
            raise ConfigurationError(f"{source}: expected an object under mcpServers")
        servers = [
            _server(str(name), entry, base or Path.cwd(), f"{source}: server {name!r}")
            for name, entry in entries.items()
            if not (isinstance(entry, dict) and entry.get("disabled") is True)
        ]
        return cls(servers, within=within)

    async def __aenter__(self) -> Self:
        await self.start(within=self.within)
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.stop()

    async def start(self, *, within: float | None = None) -> None:
        """Start the servers, one after another (what entering `async with` does).

        Args:
            within: Seconds for starting them all (what is left of a run's deadline); each
                server has its own `start_timeout` too.

        Raises:
            ConfigurationError: A server did not start (the others are stopped again).
        """
        ends = math.inf if within is None else anyio.current_time() + within
        try:
            for server in self.servers:
                await server.start(within=ends - anyio.current_time())
                self._stack.push_async_callback(server.stop)
        except BaseException:
            await self._stack.aclose()
            raise
        self.tools = _unclash(self.servers)

    async def stop(self) -> None:
        """Stop the servers (what leaving `async with` does)."""
        await self._stack.aclose()


def _unclash(servers: list[MCPServer]) -> list[MCPTool]:
    """Every server's tools; a name two servers share becomes `<server>_<name>` in both."""
    counts = Counter(t.name for s in servers for t in s.tools)
    return [
        t if counts[t.name] == 1 else dataclasses.replace(t, name=tool_name(f"{s.name}_{t.name}"))
        for s in servers
        for t in s.tools
    ]


def _server(name: str, entry: Any, base: Path, where: str) -> MCPServer:
    if not isinstance(entry, dict):
        raise ConfigurationError(f"{where}: expected an object")
    unknown = sorted(set(entry) - _KEYS)
    if unknown:
        raise ConfigurationError(f"{where}: unknown key {unknown[0]!r}")
    options = _options(entry, where)
    kind = entry.get("type")
    if kind in ("sse",):
        raise ConfigurationError(f"{where}: SSE is not supported; use streamable HTTP (a url)")
    if "url" in entry and "command" not in entry and kind in (None, "http", "streamable-http"):
        headers = _strings(entry.get("headers", {}), where, "headers")
        return MCPServer.http(name, _text(entry["url"], where, "url"), headers=headers, **options)
    if "command" not in entry or kind not in (None, "stdio"):
        raise ConfigurationError(f"{where}: needs a command (stdio) or a url (streamable HTTP)")
    args = entry.get("args", [])
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise ConfigurationError(f"{where}: args must be a list of strings")
    cwd = entry.get("cwd")
    return MCPServer.stdio(
        name,
        _text(entry["command"], where, "command"),
        args,
        env=_strings(entry.get("env", {}), where, "env"),
        cwd=None if cwd is None else str(base / _text(cwd, where, "cwd")),
        **options,
    )


def _options(entry: Mapping[str, Any], where: str) -> dict[str, Any]:
    options: dict[str, Any] = {}
    for key in ("allow", "deny"):
        if key in entry:
            names = entry[key]
            if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
                raise ConfigurationError(f"{where}: {key} must be a list of tool names")
            options[key] = names
    if "approve" in entry:
        if entry["approve"] not in ("destructive", "all"):
            raise ConfigurationError(f'{where}: approve must be "destructive" or "all"')
        options["needs_approval"] = entry["approve"]
    if "prefix" in entry:
        options["prefix"] = _text(entry["prefix"], where, "prefix")
    for key in ("timeout", "start_timeout"):
        if key in entry:
            options[key] = _seconds(entry[key], where, key)
    return options


def _seconds(value: Any, where: str, key: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ConfigurationError(f"{where}: {key} must be a number of seconds")
    if not math.isfinite(value) or value <= 0:
        raise ConfigurationError(f"{where}: {key} must be positive")
    return float(value)


def _text(value: Any, where: str, key: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ConfigurationError(f"{where}: {key} must be a non-empty string")
    return value


def _strings(value: Any, where: str, key: str) -> dict[str, str]:
    if not isinstance(value, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    ):
        raise ConfigurationError(f"{where}: {key} must map names to strings")
    return dict(value)
