"""`paor mcp`: paor's planner as MCP tools, so that any MCP client can call it.

Two tools, over stdio or streamable HTTP (the official SDK's server):

- `research(topic)`: the research job, its Markdown report with citations as the result;
- `run(goal)`: a run over the tools paor was given (`--mcp FILE`'s servers and the corpus's
  search), its answer, status and notes as structured content.

Over HTTP, `serve_http` serves them at `/mcp` on a socket the command bound already (see
`orchestrator.cli._mcp`): the official SDK's app, under uvicorn, as the SDK would run it.

Each call is one run: its progress goes to the client as MCP progress notifications (one per
event worth telling: the plan, each sub-agent's start and end, replans, the run's end), and a
client that cancels its request cancels the run. A run that cannot finish still answers: an
incomplete report or answer says so, as everywhere in paor. The model is opened once, when the
server starts, and shared by every call.
"""

from __future__ import annotations

import contextlib
import io
import math
import socket
from collections.abc import Awaitable, Callable, Iterator, Sequence
from typing import Any, TypeVar

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.types import ToolAnnotations

from agents import ChatModel, Tool
from agents.toolkits import Corpus, research_tools
from orchestrator import RunConfig
from orchestrator._events import Event
from orchestrator._limits import Limits
from orchestrator._orchestrator import Orchestrator
from orchestrator._research import research
from orchestrator.cli._progress import Progress

__all__ = ["paor_server", "serve_http"]

_T = TypeVar("_T")
_INSTRUCTIONS = (
    "paor plans a goal into subtasks, runs them in parallel sub-agents with tools, and "
    "synthesises one answer. `research` writes a cited report over its documents; `run` works "
    "a goal with its tools. Both report progress while they run."
)


def paor_server(
    model: ChatModel, corpus: Corpus, *, tools: Sequence[Tool] = (), limits: Limits | None = None
) -> MCPServer:
    """The MCP server of `paor mcp`: `research` over `corpus`, and `run` over `tools` and the
    corpus's search, each call a run within `limits`, on `model`."""
    # The SDK configures the root logger at this level: at INFO, every HTTP request of the
    # model's client would be a line on stderr.
    server = MCPServer("paor", instructions=_INSTRUCTIONS, log_level="WARNING")
    limits = limits or Limits()
    read_only = ToolAnnotations(read_only_hint=True, open_world_hint=False)

    @server.tool(name="research", annotations=read_only)
    async def research_topic(topic: str, ctx: Context) -> str:
        """Research a topic over paor's documents: a planner splits it into sub-questions that
        sub-agents research in parallel, and the result is a Markdown report whose every section
        cites its sources (an incomplete report says so under its title).

        Args:
            topic: The question or topic to research.
        """

        async def work(on_event: Callable[[Event], None]) -> str:
            report = await research(
                topic, model=model, corpus=corpus, limits=limits, on_event=on_event, tools=tools
            )
            return report.markdown

        return await _with_progress(ctx, work)

    @server.tool(annotations=ToolAnnotations(open_world_hint=True))
    async def run(goal: str, ctx: Context) -> dict[str, Any]:
        """Work a goal with paor's tools: a plan of subtasks run by parallel sub-agents, then one
        synthesised answer, with the run's status ("complete", "incomplete" or "failed") and,
        when it is not complete, why.

        Args:
            goal: What to do.
        """
        orch = Orchestrator(
            model, [*research_tools(corpus), *tools], config=RunConfig(limits=limits)
        )

        async def work(on_event: Callable[[Event], None]) -> dict[str, Any]:
            async with orch.stream(goal) as events:
                async for event in events:
                    on_event(event)
            result = events.result
            return {"status": result.status, "answer": result.answer, "reason": result.reason}

        return await _with_progress(ctx, work)

    return server


async def serve_http(server: MCPServer, listener: socket.socket, host: str) -> bool:
    """Serve `server` over streamable HTTP at `/mcp` on `listener`, a socket already bound and
    listening, until the process is interrupted (uvicorn closes the socket when it ends).

    Args:
        server: The MCP server (`paor_server`).
        listener: The bound socket.
        host: The host it is bound to (the SDK guards a loopback host against DNS rebinding).

    Returns:
        Whether a signal (Ctrl-C, SIGTERM) stopped it, after a graceful shutdown.
    """
    import uvicorn  # comes with the mcp extra

    class Server(uvicorn.Server):
        """uvicorn's server, except that once a signal has shut it down gracefully it does not
        raise that signal again (the process would die by it, with no status of paor's)."""

        stopped_by: tuple[int, ...] = ()

        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            with super().capture_signals():
                yield
                self.stopped_by = tuple(self._captured_signals)
                self._captured_signals.clear()  # what uvicorn would raise again on the way out

    app = server.streamable_http_app(host=host)
    serving = Server(uvicorn.Config(app, log_level=server.settings.log_level.lower()))
    await serving.serve(sockets=[listener])
    return bool(serving.stopped_by)


async def _with_progress(
    ctx: Context, work: Callable[[Callable[[Event], None]], Awaitable[_T]]
) -> _T:
    """Run `work`, sending each event worth telling to the client as a progress notification."""
    told = Progress(out=io.StringIO(), live=False)
    send, receive = anyio.create_memory_object_stream[str](math.inf)
    count = 0

    def on_event(event: Event) -> None:
        line = told.describe(event)
        if line:
            send.send_nowait(line)

    async def forward() -> None:
        nonlocal count
        async with receive:
            async for line in receive:
                count += 1
                await ctx.report_progress(count, None, line)

    async with anyio.create_task_group() as tg:
        tg.start_soon(forward)
        with send:
            result = await work(on_event)
    return result
