"""The activities: where a Temporal worker really asks a model and runs a tool.

Workflow code only names a model or a tool; the worker resolves the name in its `Registry`. Errors
cross the boundary as `ApplicationError`s whose `type` is the paor error's name, so the workflow can
raise the same paor error the in-process loop would have seen. Temporal alone retries: a retryable
model failure is re-raised with the server's Retry-After as the next retry's delay.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any, TypeVar

import anyio
from pydantic import BaseModel, ConfigDict
from temporalio import activity
from temporalio.client import Client
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.converter import DataConverter
from temporalio.exceptions import ApplicationError
from temporalio.worker import Replayer, Worker

from agents import ChatModel, Tool, ToolContext
from agents.effects import EffectSite, LiveEffects
from agents.errors import MalformedResponse, ModelRequestError, ModelRetryableError
from agents.models import ModelRequest, ModelResponse, without_retries
from agents.tools import ToolOutcome

__all__ = [
    "DEFAULT_TASK_QUEUE",
    "RESEARCH_TOOLS",
    "Activities",
    "ModelCall",
    "Registry",
    "ToolCall",
    "register",
    "registry_for",
]

DEFAULT_TASK_QUEUE = "paor"
RESEARCH_TOOLS = ("search_docs", "read_doc")
"""The tools of a research run or a batch, by name (what `paor worker` serves)."""

_REGISTRIES: dict[str, Registry] = {}
# The calls themselves are the in-process loop's, each in its span (see `agents.telemetry`).
_LIVE = LiveEffects()
_T = TypeVar("_T")


class ModelCall(BaseModel):
    """The input of the model activity.

    Attributes:
        model: The model's name in the worker's registry.
        request: What to ask it.
    """

    model_config = ConfigDict(frozen=True)

    model: str
    request: ModelRequest


class ToolCall(BaseModel):
    """The input of the tool activity: the tool's name, its validated arguments, its context.

    The tool's idempotency key is the activity's identity (workflow id and activity id), which
    Temporal keeps across attempts and workers.
    """

    model_config = ConfigDict(frozen=True)

    tool: str
    args: dict[str, Any]
    run_id: str
    agent_id: str
    call_id: str


@dataclass(kw_only=True, slots=True)
class Registry:
    """The models and tools a worker serves, by name (every worker of a task queue needs the same).

    A model's retrying wrappers are left out (`agents.models.without_retries`): Temporal alone
    retries. A process
    holds one registry per task queue: the workflows of that queue find their tools there.

    Attributes:
        models: Models by the name a run refers to them with.
        tools: Tools by their names.
    """

    models: dict[str, ChatModel] = field(default_factory=dict)
    tools: dict[str, Tool] = field(default_factory=dict)

    @classmethod
    def of(cls, models: Mapping[str, ChatModel], tools: Iterable[Tool] = ()) -> Registry:
        """A registry of `models` (by name) and `tools`."""
        return cls(
            models={name: without_retries(model) for name, model in models.items()},
            tools={t.name: t for t in tools},
        )

    def model(self, name: str) -> ChatModel:
        """The model called `name` (a non-retryable error if this worker lacks it)."""
        return _lookup(self.models, name, "model")

    def tool(self, name: str) -> Tool:
        """The tool called `name` (a non-retryable error if this worker lacks it)."""
        return _lookup(self.tools, name, "tool")

    def worker(
        self,
        client: Client,
        *,
        task_queue: str = DEFAULT_TASK_QUEUE,
        passthrough: Iterable[str] = (),
        heartbeat_every: float = 1.0,
        sticky_timeout: float = 5.0,
        identity: str | None = None,
    ) -> Worker:
        """A worker serving this registry on `task_queue`: run it with `await worker.run()` (or
        `async with worker`).

        Args:
            client: A client made by `connect` (it carries the pydantic data converter).
            task_queue: The queue to poll (every worker of a queue needs the same registry).
            passthrough: More modules the sandbox should share (those defining your tools and
                models).
            heartbeat_every: Seconds between a running tool's heartbeats.
            sticky_timeout: Seconds a run's next workflow task waits for this worker before any
                worker may take it (how soon a dead worker's runs move on).
            identity: The worker's name in Temporal's records.
        """
        from orchestrator.temporal._worker import WORKFLOWS, sandbox  # the workflows import us

        register(task_queue, self)
        activities = Activities(self, heartbeat_every=heartbeat_every)
        return Worker(
            client,
            task_queue=task_queue,
            workflows=WORKFLOWS,
            activities=[activities.model_call, activities.tool_call],
            workflow_runner=sandbox(passthrough),
            sticky_queue_schedule_to_start_timeout=timedelta(seconds=sticky_timeout),
            identity=identity,
        )

    def replayer(
        self,
        *,
        passthrough: Iterable[str] = (),
        data_converter: DataConverter = pydantic_data_converter,
    ) -> Replayer:
        """A `Replayer` of paor workflow histories recorded by workers of this registry: `await
        replayer.replay_workflow(history)` raises if today's code would not make the recorded
        decisions (check a new version against old runs).

        Args:
            passthrough: More modules the sandbox should share (as for `worker`).
            data_converter: The client's (`client.data_converter`: it holds the blob codec).
        """
        from orchestrator.temporal._worker import REPLAY_BUILD, WORKFLOWS, sandbox

        register(f"replay-{REPLAY_BUILD}", self)  # the queue a replayed workflow sees
        return Replayer(
            workflows=WORKFLOWS,
            build_id=REPLAY_BUILD,
            data_converter=data_converter,
            workflow_runner=sandbox(passthrough),
        )


def registry_for(task_queue: str) -> Registry:
    """The registry the worker of `task_queue` in this process was built with (a replayer's runs
    on a queue of its own: `Registry.replayer` registers it)."""
    return _lookup(_REGISTRIES, task_queue, "worker registry for task queue")


def register(task_queue: str, registry: Registry) -> None:
    """Make `registry` the one of `task_queue` in this process (for workflows and activities)."""
    _REGISTRIES[task_queue] = registry


class Activities:
    """The model and tool activities of one worker.

    Args:
        registry: Where names are resolved.
        heartbeat_every: Seconds between a running tool's heartbeats.
    """

    def __init__(self, registry: Registry, *, heartbeat_every: float = 1.0) -> None:
        self.registry = registry
        self.heartbeat_every = heartbeat_every

    @activity.defn(name="paor.model_call")
    async def model_call(self, call: ModelCall) -> ModelResponse:
        """Ask the named model once; failures become `ApplicationError`s Temporal retries or not."""
        model = self.registry.model(call.model)
        try:
            return await _LIVE.model_call(_site(), model, call.request)
        except MalformedResponse as exc:
            usage = None if exc.usage is None else exc.usage.model_dump()  # billed, so charged
            raise ApplicationError(
                str(exc), exc.raw, usage, type="MalformedResponse", non_retryable=True
            ) from exc
        except ModelRequestError as exc:
            raise ApplicationError(str(exc), type="ModelRequestError", non_retryable=True) from exc
        except ModelRetryableError as exc:
            delay = None if exc.retry_after is None else timedelta(seconds=exc.retry_after)
            raise ApplicationError(
                str(exc), type="ModelRetryableError", next_retry_delay=delay
            ) from exc

    @activity.defn(name="paor.tool_call")
    async def tool_call(self, call: ToolCall) -> ToolOutcome:
        """Run the named tool once, heartbeating while it runs (a dead worker is noticed soon)."""
        tool = self.registry.tool(call.tool)
        info = activity.info()
        ctx = ToolContext(
            run_id=call.run_id,
            agent_id=call.agent_id,
            call_id=call.call_id,
            # Temporal's identity of this call: the same on every attempt, on any worker.
            idempotency_key=f"{info.workflow_id}/{info.activity_id}",
        )
        async with anyio.create_task_group() as tg:
            tg.start_soon(self._heartbeat)
            outcome = await _LIVE.tool_call(_site(), tool, call.args, ctx)
            tg.cancel_scope.cancel()
        return outcome

    async def _heartbeat(self) -> None:
        # A ticker, not polling: the heartbeat is how the server learns this worker is alive.
        while True:
            activity.heartbeat()
            await anyio.sleep(self.heartbeat_every)


def _site() -> EffectSite:
    """The running activity's effect site, from its id (`model:{agent}#{seq}`) and its workflow's
    (the run's id, or `{run}.{agent}` for a sub-agent's)."""
    info = activity.info()
    agent_id, _, seq = info.activity_id.partition(":")[2].rpartition("#")
    run_id = (info.workflow_id or "").removesuffix(f".{agent_id}")
    return EffectSite(run_id=run_id, agent_id=agent_id, seq=int(seq or 0), step=0)


def _lookup(table: Mapping[str, _T], name: str, kind: str) -> _T:
    try:
        return table[name]
    except KeyError:
        known = ", ".join(sorted(table)) or "none"
        raise ApplicationError(
            f"unknown {kind} {name!r} (known: {known})", type="UnknownName", non_retryable=True
        ) from None
