"""A small MCP server for the tests, on the official SDK: `python tests/_mcp_server.py stdio` or
`python tests/_mcp_server.py http PORT`.

Its tools: `echo` (read-only), `add` (structured output), `fail` (an error result), `slow`,
`write_note` (destructive, not idempotent), and `die`, which ends the process mid-call, so the
client's handling of a server that dies can be tested against the real thing.
"""

from __future__ import annotations

import os
import sys

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations

server = MCPServer("paor-test")
_READ_ONLY = ToolAnnotations(read_only_hint=True, idempotent_hint=True)


@server.tool(annotations=_READ_ONLY)
def echo(text: str) -> str:
    """Say `text` back."""
    return f"echo: {text}"


@server.tool(annotations=_READ_ONLY)
def add(a: int, b: int) -> dict[str, int]:
    """Add two integers."""
    return {"sum": a + b}


@server.tool(annotations=_READ_ONLY)
def fail(reason: str) -> str:
    """Always fails, with `reason`."""
    raise ToolError(reason)


@server.tool(annotations=_READ_ONLY)
async def slow(seconds: float) -> str:
    """Wait `seconds`, then answer."""
    await anyio.sleep(seconds)
    return "done waiting"


@server.tool(annotations=ToolAnnotations(destructive_hint=True, idempotent_hint=False))
def write_note(text: str) -> str:
    """Append a note to the file named by PAOR_TEST_NOTES (a side effect)."""
    with open(os.environ["PAOR_TEST_NOTES"], "a", encoding="utf-8") as notes:
        notes.write(text + "\n")
    return "written"


@server.tool()
def pid() -> int:
    """This server process's id."""
    return os.getpid()


@server.tool()
async def die() -> str:
    """End the server process at once."""
    sys.stderr.write("dying on request\n")
    sys.stderr.flush()
    await anyio.sleep(0.05)
    os._exit(3)


if __name__ == "__main__":
    if sys.argv[1:2] == ["http"]:
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run("stdio")
