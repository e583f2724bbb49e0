"""The effect boundary: every model call, tool call and clock read of a loop goes through here.

The loops are deterministic given the results of their effects. `LiveEffects` performs them; a
journal can record each result under its `EffectSite` and feed it back, which gives crash-resume and
offline replay; a workflow engine can run them as activities. The loops never call a model, a tool
or the clock any other way. What else a loop cannot know in advance (which sub-agent reports first,
whether a stop or a deadline cut an agent short) is a `choice`, recorded and replayed the same way.
Where a sub-agent runs is an effect too (`sub_agent`): in this process, or elsewhere (a workflow
engine runs each one as a child workflow).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Awaitable, Callable, Collection
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Literal, Protocol

from agents._capped import kept
from agents._tools import Tool, ToolContext, ToolOutcome
from agents._waits import current_waits
from agents.models._model import ChatModel, ModelRequest, ModelResponse
from agents.models._output import OutputSpec
from agents.telemetry import _telemetry as telemetry
from memory import ToolCall
from memory.journal import EffectRecord

if TYPE_CHECKING:
    from agents._events import EventSink
    from agents._executor import Executor
    from agents._guards import Budget
    from agents._report import AgentReport
    from agents._stop import Stop

__all__ = [
    "Addresses",
    "AgentCall",
    "EffectSite",
    "Effects",
    "LiveEffects",
    "ReservedAgent",
    "traced_sub_agent",
]

EvidenceRule = bool | Literal["facts"] | None
"""When an agent's answer must rest on a tool result (see `Executor`'s `require_evidence`)."""


class ReservedAgent(StrEnum):
    """The agent ids a run uses itself (each is the plain string): no sub-agent may take one, or
    their records would mix."""

    RUN = "run"
    """A run's own effects: its clock reads and recorded choices."""
    PLANNER = "planner"
    """The planner's model calls: plan, replans, synthesis."""


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


@dataclass(kw_only=True, slots=True)
class Addresses:
    """The one issuer of an agent's effect addresses: 1, 2, 3... in the order the loop asks for
    them, and `EffectRecord.STOP_SEQ` for its stop record. Every loop (run, planner, executor)
    takes its addresses here, so the numbering rule lives in one place.

    Attributes:
        run_id: The run.
        agent_id: The agent.
        issued: The last seq handed out (0: none yet).
    """

    run_id: str
    agent_id: str
    issued: int = 0

    def next(self, step: int) -> EffectSite:
        """The address of the agent's next effect."""
        self.issued += 1
        return EffectSite(run_id=self.run_id, agent_id=self.agent_id, seq=self.issued, step=step)

    def stop(self, step: int) -> EffectSite:
        """The address of the agent's stop record."""
        return EffectSite(
            run_id=self.run_id, agent_id=self.agent_id, seq=EffectRecord.STOP_SEQ, step=step
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentCall:
    """One sub-agent run a loop asks for: `Executor.run`'s arguments.

    Attributes:
        task: What to do.
        context: What the caller already knows for this task.
        shared: What every agent of the caller's run is told alike (see `Executor.run`).
        run_id: The run.
        agent_id: The sub-agent's id (unique within the run).
        budget: The ledger it charges and is bounded by.
        events: Receives its events.
        stop: Setting it ends the sub-agent early with a partial report.
        allowed_tools: Restrict its menu further.
        call: The task is this one tool call, made without a model (see `Executor.run`).
        first_call: The agent's first turn is this tool call, made without a model (see
            `Executor.run`).
        require_evidence: Whether its answer must rest on a tool result (see `Executor.run`).
        output_schema: A JSON Schema its answer is also given as (`AgentReport.output`),
            instead of the executor's output type; JSON data, so that it crosses processes.
        pass_results: It may end with its tool results as its answer, up to this many
            characters (see `Executor.run`; 0: it writes its answer).
        may_pass: Whether the caller still reads its results themselves (see `Executor.run`;
            in this process only).
        signals: Whether `report_issue` is on its menu (see `Executor.run`).
    """

    task: str
    context: str = ""
    shared: str = ""
    run_id: str
    agent_id: str
    budget: Budget | None = None
    events: EventSink | None = None
    text: bool = False
    stop: Stop | None = None
    allowed_tools: Collection[str] | None = None
    call: ToolCall | None = None
    first_call: ToolCall | None = None
    require_evidence: EvidenceRule = None
    output_schema: dict[str, Any] | None = None
    pass_results: int = 0
    may_pass: Callable[[], bool | None] | None = None
    signals: bool = True

    async def run_here(self, executor: Executor) -> AgentReport:
        """Run the sub-agent in this process, in the caller's task."""
        return await executor.run(
            self.task,
            context=self.context,
            shared=self.shared,
            run_id=self.run_id,
            agent_id=self.agent_id,
            budget=self.budget,
            events=self.events,
            text=self.text,
            stop=self.stop,
            allowed_tools=self.allowed_tools,
            call=self.call,
            first_call=self.first_call,
            require_evidence=self.require_evidence,
            output_type=(
                None
                if self.output_schema is None
                else OutputSpec.from_json_schema(self.output_schema, name=self.agent_id)
            ),
            pass_results=self.pass_results,
            may_pass=self.may_pass,
            signals=self.signals,
        )


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
        """Run a tool (validated arguments; `Tool.execute` never raises but on cancellation),
        and hand back its outcome as the loop takes it: a result too long to carry whole cut
        (`agents._capped.kept`, as `LiveEffects` does), so that a journal stores no more."""
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

    def obeys_stops(self, agent_id: str) -> bool:
        """Whether a live stop request or deadline may cut the agent short now. Not while its
        recorded results are still being served: the recording says where it was cut."""
        ...

    def time_limit(self, agent_id: str, left: float | None) -> float | None:
        """How long the agent's next effect may take: `left` (its budget's time) when it runs
        live; no limit while its recorded results are served (a recorded cut says where the
        deadline fell)."""
        ...

    async def sub_agent(self, executor: Executor, call: AgentCall) -> AgentReport:
        """Run a sub-agent of a run to its report (its own effects go through `executor`'s)."""
        ...


class LiveEffects:
    """Performs every effect for real, recording nothing (each model call, tool call and
    sub-agent in its OpenTelemetry span, when tracing is on: see `agents.telemetry`). Inside a
    run, each call counts as the run's work in flight, and the clock is the run's (see
    `agents._waits`: what the run waits for people does not count against its deadline)."""

    __slots__ = ()

    async def model_call(
        self, site: EffectSite, model: ChatModel, request: ModelRequest
    ) -> ModelResponse:
        """Ask the model directly."""
        waits = current_waits()
        with (
            telemetry.chat_span(site, model, request) as span,
            contextlib.nullcontext() if waits is None else waits.working(),
        ):
            response = await model.complete(request)
            telemetry.chat_done(span, response)
            return response

    async def tool_call(
        self, site: EffectSite, tool: Tool, args: dict[str, Any], ctx: ToolContext
    ) -> ToolOutcome:
        """Run the tool directly; a result too long to carry whole is cut (`agents._capped`)."""
        waits = current_waits()
        with (
            telemetry.tool_span(site, tool, args, ctx) as span,
            contextlib.nullcontext() if waits is None else waits.working(),
        ):
            outcome = kept(tool, args, await tool.execute(args, ctx))
            telemetry.tool_done(span, outcome)
            return outcome

    async def now(self, site: EffectSite) -> float:
        """The run's clock (see `agents._waits`); the wall clock outside a run."""
        waits = current_waits()
        return time.time() if waits is None else waits.now()

    async def choice(
        self, site: EffectSite, pick: Callable[[], Awaitable[str]], *, options: Collection[str] = ()
    ) -> str:
        """Make the decision now."""
        return await pick()

    def obeys_stops(self, agent_id: str) -> bool:
        """Always: everything is live."""
        return True

    def time_limit(self, agent_id: str, left: float | None) -> float | None:
        """`left`: everything is live."""
        return left

    async def sub_agent(self, executor: Executor, call: AgentCall) -> AgentReport:
        """Run the sub-agent here, in the caller's task."""
        return await traced_sub_agent(executor, call)


def traced_sub_agent(executor: Executor, call: AgentCall) -> Awaitable[AgentReport]:
    """Run the sub-agent here, in its `invoke_agent` span (its effects' spans nest in it). With
    no span to open, its run itself: no frame more per sub-agent (10,000 of them...)."""
    if telemetry.tracer() is None:
        return call.run_here(executor)
    return _in_span(executor, call)


async def _in_span(executor: Executor, call: AgentCall) -> AgentReport:
    with telemetry.agent_span(call) as span:
        report = await call.run_here(executor)
        telemetry.agent_done(span, report)
        return report
