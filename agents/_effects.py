"""The effect boundary: every model call, tool call and clock read of a loop goes through here.

The loops are deterministic given the results of their effects. `LiveEffects` performs them; a
journal can record each result under its `EffectSite` and feed it back, which gives crash-resume and
offline replay; a workflow engine can run them as activities. The loops never call a model, a tool
or the clock any other way. What else a loop cannot know in advance (which sub-agent reports first,
whether a stop or a deadline cut an agent short) is a `choice`, recorded and replayed the same way.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Collection
from dataclasses import dataclass
from typing import Any, Protocol

from agents._model import ChatModel, ModelRequest, ModelResponse
from agents._tools import Tool, ToolContext, ToolOutcome

__all__ = ["EffectSite", "Effects", "LiveEffects"]


@dataclass(frozen=True, slots=True, kw_only=True)
class EffectSite:
    """Where an effect happens: a stable address for recording and replaying its result.

    Attributes:
        run_id: The run.
        agent_id: The agent within the run.
        seq: The effect's position in the agent's sequence of effects (assigned before it starts,
            so concurrent tool calls get stable addresses).
        step: The agent's step, for traces.
    """

    run_id: str
    agent_id: str
    seq: int
    step: int

    @property
    def key(self) -> str:
        """A string key unique within a run."""
        return f"{self.agent_id}#{self.seq}"


class Effects(Protocol):
    """How loops reach the outside world."""

    async def model_call(
        self, site: EffectSite, model: ChatModel, request: ModelRequest
    ) -> ModelResponse:
        """Ask a model."""
        ...

    async def tool_call(
        self, site: EffectSite, tool: Tool, args: dict[str, Any], ctx: ToolContext
    ) -> ToolOutcome:
        """Run a tool (validated arguments; `Tool.execute` never raises but on cancellation)."""
        ...

    async def now(self, site: EffectSite) -> float:
        """Read the wall clock, in seconds."""
        ...

    async def choice(
        self, site: EffectSite, pick: Callable[[], Awaitable[str]], *, options: Collection[str] = ()
    ) -> str:
        """A nondeterministic decision: `pick` makes it live; a replay returns the recorded one.

        Args:
            site: Where the decision is made.
            pick: Makes the decision live.
            options: The values it can take, when known in advance (part of what is asked: a
                replay whose options differ has drifted).
        """
        ...

    def replaying(self, agent_id: str) -> bool:
        """Whether the agent is still being fed recorded results (then live stops and deadlines
        must not cut it short: the recording says where it was cut)."""
        ...


class LiveEffects:
    """Performs every effect for real, recording nothing."""

    __slots__ = ()

    async def model_call(
        self, site: EffectSite, model: ChatModel, request: ModelRequest
    ) -> ModelResponse:
        """Ask the model directly."""
        return await model.complete(request)

    async def tool_call(
        self, site: EffectSite, tool: Tool, args: dict[str, Any], ctx: ToolContext
    ) -> ToolOutcome:
        """Run the tool directly."""
        return await tool.execute(args, ctx)

    async def now(self, site: EffectSite) -> float:
        """The system wall clock."""
        return time.time()

    async def choice(
        self, site: EffectSite, pick: Callable[[], Awaitable[str]], *, options: Collection[str] = ()
    ) -> str:
        """Make the decision now."""
        return await pick()

    def replaying(self, agent_id: str) -> bool:
        """Never: everything is live."""
        return False
