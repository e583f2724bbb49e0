"""The simulator's two endpoints: over HTTP on 127.0.0.1 (`SimServer`, which wraps
`agents.testing.FakeOpenAIServer`) and in process (`SimChatModel`, a paor `ChatModel` with the same
accounting and latencies); each turns the simulator's faults into what its transport shows."""

from __future__ import annotations

import time
from types import TracebackType
from typing import Any, Self

from agents import Usage
from agents.errors import MalformedResponse, ModelRequestError, ModelRetryableError
from agents.models import ModelRequest, ModelResponse
from agents.testing import Completion, FakeOpenAIServer, ServerAction, TokenUsage
from benchmarks._sim import Fault, Reply, SimRequest, Simulator
from memory import AssistantMessage, ToolCall

__all__ = ["SimChatModel", "SimServer"]


class SimServer:
    """The simulator over HTTP on 127.0.0.1, as an async context manager (`base_url` inside)."""

    def __init__(self, sim: Simulator) -> None:
        self.sim = sim
        self._server = FakeOpenAIServer(self._serve, model="sim")

    @property
    def base_url(self) -> str:
        """The URL to hand to an OpenAI client."""
        return self._server.base_url

    async def __aenter__(self) -> Self:
        await self._server.__aenter__()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self._server.__aexit__(exc_type, exc, tb)

    @property
    def failures(self) -> list[str]:
        """Problems the server met (unreadable bodies, script errors)."""
        return self._server.failures

    async def _serve(self, body: dict[str, Any]) -> ServerAction:
        outcome = await self.sim.complete(SimRequest.from_body(body))
        if isinstance(outcome, Fault):
            return _server_fault(outcome)
        reply, exchange = outcome
        usage = TokenUsage(
            prompt_tokens=exchange.prompt_tokens,
            completion_tokens=exchange.completion_tokens,
            cached_tokens=exchange.cached_tokens,
        )
        return Completion(
            content=reply.content,
            calls=reply.tool_calls,
            usage=usage,
            headers=exchange.headers,
            stream_s=exchange.stream_s,
        )


def _server_fault(fault: Fault) -> ServerAction:
    if fault.kind == "hang":
        return ServerAction.hang(fault.seconds)
    if fault.kind == "malformed":
        return ServerAction.malformed_body()
    headers = dict(fault.headers)
    if fault.retry_after is not None and not headers:
        headers["Retry-After"] = f"{fault.retry_after:g}"
    return ServerAction.status(fault.code, body=fault.body, headers=headers)


class SimChatModel:
    """The simulator in process, as a paor `ChatModel` (no HTTP, same accounting and latencies)."""

    def __init__(self, sim: Simulator) -> None:
        self.sim = sim
        self._ids = 0

    @property
    def name(self) -> str:
        """The model label."""
        return "sim"

    async def complete(self, request: ModelRequest) -> ModelResponse:
        """Answer through the simulator; faults become the errors paor's OpenAI adapter raises."""
        received = time.perf_counter()  # before the wire conversion: that is the simulator's work
        outcome = await self.sim.complete(SimRequest.from_model_request(request), received)
        if isinstance(outcome, Fault):
            raise _model_fault(outcome)
        reply, exchange = outcome
        usage = Usage(
            requests=1,
            prompt_tokens=exchange.prompt_tokens,
            completion_tokens=exchange.completion_tokens,
            cached_tokens=exchange.cached_tokens,
        )
        return ModelResponse(message=self._message(reply), usage=usage, model="sim")

    def _message(self, reply: Reply) -> AssistantMessage:
        calls = []
        for name, arguments in reply.tool_calls:
            self._ids += 1
            calls.append(ToolCall(id=f"call_{self._ids}", name=name, arguments=arguments))
        return AssistantMessage(content=reply.content, tool_calls=tuple(calls))


def _model_fault(fault: Fault) -> Exception:
    if fault.kind == "malformed":
        return MalformedResponse("the simulator sent a malformed body", raw="{")
    if fault.kind == "hang":
        return ModelRetryableError("the simulator hung")
    if fault.code in (408, 409, 429) or fault.code >= 500:
        return ModelRetryableError(
            f"HTTP {fault.code}", retry_after=fault.retry_after, status=fault.code
        )
    said = (fault.body or {}).get("error", {}).get("message")
    return ModelRequestError(
        f"HTTP {fault.code}: {said}" if said else f"HTTP {fault.code}", status=fault.code
    )
