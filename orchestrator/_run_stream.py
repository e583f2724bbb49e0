"""`RunStream`: one run as it goes, from `Orchestrator.stream`, `stream_resume` or `stream_replay`.

It runs the loop in its own task group (its journal lease held, its approvals and clock shared by
all its sub-agents, its `invoke_agent run` span around everything), hands the events to whoever
iterates it, and takes the caller's requests meanwhile: stop the run and keep its work, stop one
subtask, decide an approval. A journaled run whose approver leaves decisions to later pauses once
nothing but approvals is left, and a resume picks its decisions and its clock back up.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Mapping
from functools import partial
from typing import TYPE_CHECKING, Any, Generic, cast

import anyio
import structlog
from pydantic import ValidationError

from agents import telemetry
from agents.approvals import ApprovalRequest, Approver, Decision, RunWaits
from agents.effects import Drift, Effects, JournaledEffects, JournalMode, LiveEffects, ReservedAgent
from agents.models import OutputSpec
from agents.telemetry import logger
from memory import Journal
from memory.journal import RunInfo
from orchestrator._config import RunConfig, RunOptions
from orchestrator._durable import hold_lease, open_run, run_ended
from orchestrator._events import RunPaused
from orchestrator._setup import set_up, with_model_defaults
from orchestrator._state import Answered, Halt, OutputT, RunDeps, RunResult, RunState
from orchestrator._stream import EventStream

if TYPE_CHECKING:
    from orchestrator._orchestrator import Orchestrator

__all__ = ["PAUSE_SETTLE_S", "RunStream", "drain"]

PAUSE_SETTLE_S = 0.5
"""How long a run with a pausing approver stays quiet (only approvals waiting, nothing in flight)
before it pauses: a sub-agent between two effects is about to start the next."""

_log = logger("paor.run")


class RunStream(EventStream, Generic[OutputT]):
    """A running run: iterate it for events; `result` once it ends (a `RunResult[T]` for a run
    asked for an output type T); `cancel`, `cancel_subtask` or `decide` meanwhile."""

    def __init__(
        self,
        orchestrator: Orchestrator,
        goal: str,
        run_id: str,
        *,
        mode: JournalMode = "record",
        meta: dict[str, Any] | None = None,
        text: bool = False,
        decisions: Mapping[str, Decision] | None = None,
        options: RunOptions | None = None,
        output_type: type[OutputT] | OutputSpec[OutputT] | None = None,
    ) -> None:
        super().__init__()
        given = options or RunOptions()
        self.run_id = run_id
        self.text = text
        self.mode: JournalMode = mode
        self.meta = meta
        self._config_given = given.get("config") is not None
        # Recorded as it runs: a replay given another model asks what this run asked.
        self.config = with_model_defaults(
            given.get("config") or orchestrator.config, orchestrator.model
        )
        self.approver = Approver.of(given.get("approver"))
        self.config.check(self.approver)
        self._keep_events = given.get("keep_events", True)
        self._live = given.get("effects") or LiveEffects()
        self._output: OutputSpec[OutputT] | None = (
            output_type
            if output_type is None or isinstance(output_type, OutputSpec)
            else OutputSpec(output_type)
        )
        self._orchestrator = orchestrator
        self._goal = goal
        self._effects: JournaledEffects | None = None
        self._state: RunState | None = None
        self._deps: RunDeps | None = None
        self._cancelled: str | None = None
        self._decisions = dict(decisions or {})
        self._waits = RunWaits()
        self._held: list[tuple[ApprovalRequest, float]] | None = None  # what waited at the pause

    @property
    def result(self) -> RunResult[OutputT]:
        """The run's result (after the stream ended).

        Raises:
            RuntimeError: The run has not finished.
        """
        return cast("RunResult[OutputT]", super().result)

    @property
    def drift(self) -> list[Drift]:
        """Where this run parted from its recording (resume and replay), so far."""
        return [] if self._effects is None else list(self._effects.drift)

    def cancel(self, reason: str = "cancelled by the caller") -> bool:
        """Stop the whole run and keep its work; returns whether this request was the first.

        Nothing new starts and nothing is replanned; running sub-agents stop at their next step
        with partial reports; the synthesis is written from what exists, and the run ends
        `incomplete` with `reason`. A synthesis already under way finishes (leave the stream, or
        cancel its scope, to abandon the run instead). On a journaled run the point where the
        request landed is recorded, so a replay stops there too.
        """
        if self._cancelled is not None or self._result is not None:
            return False
        self._cancelled = reason
        if self._deps is not None:
            with contextlib.suppress(anyio.ClosedResourceError):  # the loop just ended
                self._deps.done_send.send_nowait(Halt(reason))
        return True

    def decide(self, approval_id: str, decision: Decision) -> bool:
        """Decide an approval the run waits for (`ApprovalRequested.approval_id`); returns
        whether it waited (False: unknown, or decided already, by the approver or a timeout)."""
        return self._waits.answer(approval_id, decision)

    def cancel_subtask(self, subtask_id: str) -> bool:
        """Stop one running or pending subtask; the run goes on. Returns whether it was live."""
        return self._state is not None and self._state.cancel_subtask(subtask_id)

    @property
    def ended_with(self) -> RunResult | None:
        """The run's result, or None while it runs (or if it ended with an error)."""
        return self._result

    async def _produce(self) -> None:
        journal = self._orchestrator.journal
        async with self._send:  # closing it ends the consumer's iteration
            if journal is None:
                self._result = await self._run(self._goal, self._live)
                return
            before = await self._take_decisions(journal) if self.mode == "resume" else None
            goal, self._effects, recorded = await open_run(
                journal, self._live, self.run_id, mode=self.mode, goal=self._goal,
                meta=self.meta, config=self.config.model_dump(mode="json"),
            )  # fmt: skip
            if self.mode != "record" and not self._config_given:
                self._recorded_config(recorded)
            if self.mode == "resume":
                await self._resume_waits(journal, before)
            if self.mode == "replay":
                self._result = await self._run(goal, self._effects)
                return
            body = partial(self._run, goal, self._effects)
            self._result = await hold_lease(journal, self.run_id, body, run_ended)

    def _recorded_config(self, recorded: dict[str, Any] | None) -> None:
        """Resume or replay a run under the configuration it was recorded with, when the caller
        gave none: the prompts and checks it ran with are what its records answer. A recording
        this version cannot read (made before runs kept theirs, or by another version) leaves
        the Orchestrator's."""
        if recorded is None:
            return
        try:
            config = RunConfig.model_validate(recorded)
        except ValidationError as exc:
            _log.warning("recorded_config_unreadable", error=str(exc).splitlines()[0])
            return
        config.check(self.approver)
        self.config = config

    async def _run(self, goal: str, effects: Effects) -> RunResult:
        """The run, in its `invoke_agent run` span (every other span of the run nests in it), its
        id bound for every log event of the run."""
        with (
            structlog.contextvars.bound_contextvars(run_id=self.run_id),
            RunWaits.shared(self._waits),  # its approvals and clock, for all its sub-agents
            telemetry.span(
                "invoke_agent run", _run_attributes(self), content={"paor.goal": goal}
            ) as span,
        ):
            run = await set_up(
                self._orchestrator, self.config, goal=goal, run_id=self.run_id,
                events=self._send, effects=effects, approver=self.approver, waits=self._waits,
                keep_events=self._keep_events, text=self.text, output=self._output,
            )  # fmt: skip
            self._state, self._deps = run.state, run.deps
            if self._cancelled is not None:  # asked before the run had a state
                self._deps.done_send.send_nowait(Halt(self._cancelled))
            result: RunResult | None = None
            with anyio.CancelScope() as pausing:
                async with anyio.create_task_group() as tg:
                    if self._pauses():
                        tg.start_soon(self._pause_when_quiet, pausing)
                    result = await run.loop.execute(self._state)
                    tg.cancel_scope.cancel()
            if result is None:  # paused: nothing was in flight, so nothing was cut
                result = await self._paused(self._state, self._deps)
            else:
                answered = tuple(
                    Answered(agent_id=a, question=q, answer=t) for a, q, t in self._waits.answers
                )
                update = {"waited_s": self._waits.waited(), "answered": answered}
                result = result.model_copy(update=update)
            span.finish(_run_ended(result))
            if result.status == "failed":
                span.fail("failed", result.reason or "")
            return result

    def _pauses(self) -> bool:
        """Whether the run pauses once only approvals wait: a journaled run, recorded or
        resumed, whose approver leaves decisions to later."""
        return (
            self._orchestrator.journal is not None
            and self.mode != "replay"
            and self.approver is not None
            and self.approver.pauses
        )

    async def _pause_when_quiet(self, pausing: anyio.CancelScope) -> None:
        await self._waits.until_quiet(PAUSE_SETTLE_S)
        # Taken before the cut: each wait forgets its request as it is cancelled.
        self._held = self._waits.undecided()
        pausing.cancel()

    async def _paused(self, s: RunState, deps: RunDeps) -> RunResult:
        """Journal what the run waits for, announce it, and end the stream with the paused result."""
        held = self._held or []
        journal = self._orchestrator.journal
        assert journal is not None
        rows = [(r.approval_id, r.model_dump(mode="json"), asked) for r, asked in held]
        with anyio.CancelScope(shield=True):  # what waits must be known before the run stops
            await journal.pause(self.run_id, rows, status=True)
        waiting = tuple(r for r, _ in held)
        event = RunPaused(run_id=s.run_id, step=s.step, waiting=waiting)
        if deps.keep_events:
            s.trace.append(event)
        await deps.publish(event)
        what = "; ".join(r.summary() for r in waiting)
        return RunResult(
            run_id=s.run_id, goal=s.goal, answer="", status="paused",
            reason=f"waits for a decision: {what}", plans=tuple(s.plans), diffs=tuple(s.diffs),
            reports=tuple(r.report for r in s.records.values() if r.report is not None),
            usage=s.budget.used, events=tuple(s.trace), notes=tuple(s.notes),
            waiting=waiting, waited_s=self._waits.waited(),
        )  # fmt: skip

    async def _take_decisions(self, journal: Journal) -> RunInfo | None:
        """This call's decisions on a paused run, taken in the journal first (so two deciders
        cannot both win); the run as it was before it is claimed."""
        for approval_id, decision in self._decisions.items():
            await journal.decide(self.run_id, approval_id, decision.model_dump(mode="json"))
        return await journal.run(self.run_id)

    async def _resume_waits(self, journal: Journal, before: RunInfo | None) -> None:
        """Once the run is claimed: every decision taken while it was paused (a resumed run
        that crashed keeps them too), and its clock, which stood still while it waited (kept
        in the journal, so a crash after this resume does not lose it)."""
        waits = await journal.waits_of(self.run_id)
        decided = {
            w.approval_id: Decision.model_validate(w.decision)
            for w in waits
            if w.decision is not None
        }
        self._waits.give(decided, {w.approval_id: w.asked for w in waits if w.decision is None})
        if before is None or before.result is None:
            return
        waited = float(before.result.get("waited_s", 0.0))
        if before.status == "paused":
            waited += max(0.0, time.time() - before.updated)
            await journal.keep(self.run_id, {**before.result, "waited_s": waited})
        self._waits.offset = waited


def _run_attributes(stream: RunStream) -> dict[str, str]:
    return {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": ReservedAgent.RUN,
        "gen_ai.conversation.id": stream.run_id,
        "paor.run.id": stream.run_id,
        "paor.run.mode": stream.mode,
    }


def _run_ended(result: RunResult) -> dict[str, Any]:
    """The run span's attributes known at its end."""
    usage = result.usage
    return {
        "paor.run.status": result.status,
        "paor.plan.version": result.plans[-1].version if result.plans else None,
        "gen_ai.usage.input_tokens": usage.prompt_tokens,
        "gen_ai.usage.output_tokens": usage.completion_tokens,
    }


async def drain(stream: RunStream[OutputT]) -> RunResult[OutputT]:
    """Run `stream` to its end, its events unread; its result."""
    async with stream.unread() as events:
        async for _event in events:
            pass
    return stream.result
