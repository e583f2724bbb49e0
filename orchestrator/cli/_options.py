"""The command line's shared options and what they open: the model, MCP servers, OTLP export.

Each is imported by the commands that take it; the SDKs behind `--mcp` and `--otel` are imported
only when the option is given.
"""

from __future__ import annotations

import argparse
import contextlib
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AbstractAsyncContextManager
from pathlib import Path

from agents import ChatModel, ConfigurationError, Tool, open_model
from agents.models import seconds_of
from orchestrator.cli._spec import ResearchSpec

__all__ = [
    "blobs_option",
    "count",
    "gguf_option",
    "mcp_option",
    "mcp_tools",
    "model_of",
    "model_options",
    "otel_option",
    "positive",
    "request_timeout_option",
    "traced",
]


_BOTH = (
    "--gguf and --base-url exclude each other: --gguf serves the file on the embedded llama.cpp "
    "server, --base-url names another endpoint"
)


def model_options(sub: argparse.ArgumentParser) -> None:
    """`--model`, `--base-url`, `--protocol`, `--gguf` and `--request-timeout`: which model a
    command runs, and how long a request may take."""
    sub.add_argument("--model", help="model name (default: $PAOR_MODEL or the embedded model)")
    sub.add_argument("--base-url", help="OpenAI-compatible endpoint (default: $OPENAI_BASE_URL)")
    sub.add_argument("--protocol", choices=["auto", "tools", "json"], default="auto")
    gguf_option(sub)
    request_timeout_option(sub)


def request_timeout_option(sub: argparse.ArgumentParser) -> None:
    """`--request-timeout SECONDS` (`model_of` reads it)."""
    # Read as text and checked when the model opens: a bad value is then one line (exit 2),
    # as a bad $PAOR_REQUEST_TIMEOUT is, not argparse's usage message.
    sub.add_argument(
        "--request-timeout",
        metavar="SECONDS",
        help="seconds a model request may take (default: $PAOR_REQUEST_TIMEOUT, else 60; 120 "
        "for the embedded server); against a server on this machine, the most seconds without "
        "a byte of the reply (llama.cpp pings every 30 s by default while it reads a prompt)",
    )


def gguf_option(sub: argparse.ArgumentParser) -> None:
    sub.add_argument(
        "--gguf",
        type=Path,
        help="serve this GGUF model file with the embedded llama.cpp server instead of SmolLM2 "
        "(with --protocol; without an endpoint only)",
    )


def traced(args: argparse.Namespace) -> contextlib.AbstractContextManager[object]:
    """With `--otel`: the run's spans exported over OTLP/HTTP (`OTEL_EXPORTER_OTLP_ENDPOINT`),
    flushed before the command ends."""
    if not getattr(args, "otel", False):
        return contextlib.nullcontext()
    from agents.telemetry import export_otlp

    return export_otlp()


def otel_option(sub: argparse.ArgumentParser) -> None:
    sub.add_argument(
        "--otel",
        action="store_true",
        help="export OpenTelemetry spans over OTLP/HTTP to $OTEL_EXPORTER_OTLP_ENDPOINT "
        "(the otel extra)",
    )


def mcp_option(sub: argparse.ArgumentParser) -> None:
    sub.add_argument(
        "--mcp",
        type=Path,
        metavar="FILE",
        help='give the agents the tools of the MCP servers in FILE ({"mcpServers": {...}}, as '
        "Claude Desktop, Cursor and VS Code write it; the mcp extra)",
    )


@contextlib.asynccontextmanager
async def mcp_tools(
    path: str | Path | None, within: float | None = None
) -> AsyncIterator[Sequence[Tool]]:
    """The tools of the MCP servers in `path` (`--mcp`), started for the command and stopped
    after it (the MCP SDK is imported only then). With `within` (a command's `--deadline`),
    starting them may take no longer than it, nor than each server's `start_timeout` (30 s by
    default), so a silent server ends the command within its deadline, one line and exit
    status 2."""
    if path is None:
        yield ()
        return
    from agents.mcp import MCPServers

    async with MCPServers.from_file(path, within=within) as servers:
        yield servers.tools


def blobs_option(sub: argparse.ArgumentParser) -> None:
    sub.add_argument(
        "--blobs",
        type=Path,
        metavar="DIR",
        help="with --temporal: the folder for payloads over 128 KiB (Temporal's limit is 2 MB); "
        "the client and every worker must use the same one (shared across machines)",
    )


def positive(kind: type[int] | type[float]) -> Callable[[str], float]:
    """An argparse type for a number above zero: a bad value is a usage error, not a traceback
    (and a concurrency of 0 would wait forever)."""

    def parse(text: str) -> float:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
        if not value > 0:
            raise argparse.ArgumentTypeError(f"must be above 0, not {text}")
        return value

    return parse


def count(text: str) -> int:
    """An argparse type for a count: a whole number, 0 or more."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, not {text}")
    return value


def model_of(
    given: argparse.Namespace | ResearchSpec, *, request_timeout: str | None = None
) -> AbstractAsyncContextManager[ChatModel]:
    """The configured endpoint (checked to be reachable), or the embedded model.

    Args:
        given: The command line, or a recorded run's set-up.
        request_timeout: `--request-timeout` as given, when `given` does not carry it (a
            recorded run); it wins over `$PAOR_REQUEST_TIMEOUT`.

    Raises:
        ConfigurationError: `--gguf` with `--base-url`, or a timeout that is not seconds above 0.
    """
    gguf = getattr(given, "gguf", None)
    if gguf and given.base_url:
        if isinstance(given, argparse.Namespace):
            raise ConfigurationError(_BOTH)
        gguf = None  # a run recorded with --gguf, resumed with --base-url: the endpoint wins
    text = request_timeout or getattr(given, "request_timeout", None)
    return open_model(
        given.model,
        base_url=given.base_url,
        protocol=given.protocol,
        gguf=gguf,
        request_timeout=None if text is None else seconds_of(text, "--request-timeout"),
    )
