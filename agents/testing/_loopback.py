"""`LoopbackServer`: a TCP server on 127.0.0.1 for the length of an `async with` block.

The base of the test servers that speak HTTP to a real `openai` client (`FakeOpenAIServer`, and
the raw servers of the hostile-reply tests): it listens on a port the OS picks, hands each
connection to `_serve` in its own task group, and on exit stops every connection and closes the
listener, shielded, so a cancelled test leaves no socket behind.
"""

from __future__ import annotations

from types import TracebackType
from typing import Self

import anyio
import anyio.abc

__all__ = ["LoopbackServer"]


class LoopbackServer:
    """Serve connections on 127.0.0.1 while the block runs; subclasses implement `_serve`."""

    def __init__(self) -> None:
        self._port: int | None = None
        self._listener: anyio.abc.Listener[anyio.abc.SocketStream] | None = None
        self._tg: anyio.abc.TaskGroup | None = None

    @property
    def port(self) -> int:
        """The TCP port the server listens on.

        Raises:
            RuntimeError: The server is not running.
        """
        if self._port is None:
            raise RuntimeError(f"the server is not running: use `async with {type(self).__name__}`")
        return self._port

    @property
    def base_url(self) -> str:
        """The URL to hand to an OpenAI client, e.g. "http://127.0.0.1:54321/v1"."""
        return f"http://127.0.0.1:{self.port}/v1"

    async def __aenter__(self) -> Self:
        listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0)
        self._listener = listener
        self._port = listener.extra(anyio.abc.SocketAttribute.local_port)
        self._tg = anyio.create_task_group()
        await self._tg.__aenter__()
        self._tg.start_soon(listener.serve, self._serve)
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        assert self._tg is not None
        assert self._listener is not None
        self._tg.cancel_scope.cancel()
        try:
            # The body's own exception is not handed to the task group: it propagates unwrapped,
            # while a crash in a connection task still surfaces as the group's error.
            await self._tg.__aexit__(None, None, None)
        finally:
            self._port = None
            with anyio.CancelScope(shield=True):
                await self._listener.aclose()

    async def _serve(self, stream: anyio.abc.SocketStream) -> None:
        """Handle one connection (it is closed when this returns)."""
        raise NotImplementedError
