"""`paor mcp`: serve `research` and `run` as MCP tools (see `orchestrator.cli._mcp_serve`); and
`left_of`, the deadline the run gets once they (and the model) are up.

With `--http HOST:PORT` the address is bound first, before the model is opened: an address that
cannot be listened on (a port in use) is one line and exit status 2, and "serving on" is said
only of a socket that listens.
"""

from __future__ import annotations

import argparse
import os
import socket
import sys
import time
from pathlib import Path
from typing import Any

import agents
from agents import ConfigurationError
from agents.toolkits import Corpus
from orchestrator._limits import Limits
from orchestrator.cli._console import EXIT_INTERRUPTED, say
from orchestrator.cli._options import (
    mcp_option,
    mcp_tools,
    model_of,
    model_options,
    otel_option,
    positive,
)

__all__ = ["left_of", "mcp_command", "serve"]

_PASSED = 1e-9  # the least deadline a run takes (a positive number of seconds)


def mcp_command(commands: Any) -> None:
    """`mcp`: serve `research` and `run` as MCP tools (the mcp extra)."""
    mc = commands.add_parser("mcp", help="serve paor's research and runs as MCP tools")
    mc.add_argument(
        "--http", metavar="HOST:PORT", help="serve over streamable HTTP here (default: stdio)"
    )
    mc.add_argument("--docs", type=Path, help="corpus folder (default: the Python reference)")
    model_options(mc)
    mcp_option(mc)
    otel_option(mc)
    mc.add_argument("--max-subtasks", type=positive(int), default=3)
    mc.add_argument("--deadline", type=positive(float), help="wall-clock seconds per call")
    mc.add_argument("--max-tokens", type=positive(int), help="token budget per call")
    mc.add_argument("--max-steps", type=positive(int), default=6, help="steps per sub-agent")
    mc.add_argument("--log-json", type=Path, help="write the trace as JSON lines here")
    mc.set_defaults(handler=serve)


async def serve(args: argparse.Namespace) -> int:
    """Serve until the client goes (stdio) or the process is interrupted (HTTP: a signal shuts
    the server down gracefully, then the status is 130, as for any interrupted command). Nothing
    but the protocol is written on stdout."""
    try:
        from orchestrator.cli._mcp_serve import paor_server, serve_http
    except ImportError:
        raise ConfigurationError("paor mcp needs the mcp extra: pip install 'paor[mcp]'") from None
    address = host_port(args.http) if args.http else None
    limits = Limits(
        max_subtasks=args.max_subtasks,
        deadline_s=args.deadline,
        max_tokens=args.max_tokens,
        agent=agents.AgentLimits(max_steps=args.max_steps),
    )
    corpus = Corpus.from_folder(args.docs) if args.docs else Corpus.python_docs()
    if address is None:
        async with mcp_tools(args.mcp) as tools, model_of(args) as model:
            await paor_server(model, corpus, tools=tools, limits=limits).run_stdio_async()
        return 0
    host, port = address
    with listening_socket(host, port) as listener:
        async with mcp_tools(args.mcp) as tools, model_of(args) as model:
            server = paor_server(model, corpus, tools=tools, limits=limits)
            say(f"paor mcp: serving on http://{_shown(host, port)}/mcp", file=sys.stderr)
            stopped = await serve_http(server, listener, host)
    return EXIT_INTERRUPTED if stopped else 0


def left_of(limits: Limits, since: float) -> Limits:
    """`limits` with the seconds since `since` (`time.monotonic()` when the command started)
    taken off the deadline: starting the servers a command needs (MCP servers, the embedded
    model) spends its `--deadline`, like the run does. A deadline already passed leaves the
    run a nanosecond: it starts nothing and ends at once with what there is."""
    if limits.deadline_s is None:
        return limits
    left = max(limits.deadline_s - (time.monotonic() - since), _PASSED)
    return limits.model_copy(update={"deadline_s": left})


def host_port(text: str) -> tuple[str, int]:
    """The host and port of `--http HOST:PORT` (an IPv6 host with or without its brackets).

    Raises:
        ConfigurationError: It is not HOST:PORT with a port from 1 to 65535.
    """
    host, _, port = text.rpartition(":")
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ConfigurationError(f"--http wants HOST:PORT, not {text!r}")
    return host.strip("[]"), int(port)


def listening_socket(host: str, port: int) -> socket.socket:
    """A TCP socket bound to `host:port` and listening, for the HTTP server to take over.

    Raises:
        ConfigurationError: The address cannot be listened on (a port in use, a host that is
            not this machine's, a port that needs privileges), on one line.
    """
    try:
        found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
        return socket.create_server((host, port), family=found[0][0])
    except OSError as exc:  # socket.gaierror too: a host name that does not resolve
        raise ConfigurationError(f"cannot listen on {_shown(host, port)}: {_reason(exc)}") from None


def _reason(exc: OSError) -> str:
    """Why an address cannot be listened on, in a few words ("address already in use")."""
    # `create_server` adds the address to the system's words; a resolver's errors are negative.
    code = exc.errno
    return (os.strerror(code) if code and code > 0 else exc.strerror or str(exc)).lower()


def _shown(host: str, port: int) -> str:
    """`host:port` as a URL writes it (an IPv6 address in brackets)."""
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
