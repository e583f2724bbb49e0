"""`JournaledEffects`: the effect boundary with a journal, to record, resume and replay runs.

Every effect is addressed by its `EffectSite` (agent and seq). When the journal has a record at
that address it is served, as long as it was asked for the same thing (same request digest):

- ok: the recorded result; error: the same `ModelError` raised again; cancelled: a
  `ReplayedCancellation`, so the loop stops where it stopped when the run was recorded.
- No record: `record` and `resume` perform the effect live through `inner` and append the
  record before returning; `replay` reports drift (a replay never goes live).
- Another digest is drift: `replay` raises `ReplayDrift`; `resume` logs `journal_drift`, drops the
  agent's later records and continues that agent live.

A tool result longer than `MAX_RESULT_CHARS` (64 Ki characters of JSON) is stored as the loop
was given it: the first 64 Ki characters (or the tool's `max_chars`, if more) of the text the
model's observation is cut from, with its full size, sha256 and what the tool's own checks made of
the whole value; it replays to the same observation, evidence and facts (see `agents._capped`).

Tool calls write an `intent` record before they run. On resume, an intent with no result marks a
call that was in flight when the run crashed. It runs again if the tool is not side-effecting, or
if it is and takes a `ToolContext`, which carries the same idempotency key as the first attempt.
Otherwise it gets a failed outcome: "unverified", not repeated.

A `cancelled` record replays as a cut only if the run went on after it: the agent has a later
record, or a stop record (seq 0, written once the cut was handled). A cancellation that was the
last thing the agent did came from the whole run stopping (a crash), so resume performs it live.
An agent whose recording ends in a stop is cut when it asks for anything past its last record:
the stop landed between two effects there.
"""

from __future__ import annotations

import builtins
import contextlib
import hashlib
import json
from collections.abc import Awaitable, Callable, Collection, Iterable
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeVar

import anyio
import anyio.lowlevel
from pydantic import BaseModel, ConfigDict
from pydantic_core import to_jsonable_python

from agents._capped import served_outcome, stored_outcome
from agents._effects import AgentCall, Effects, EffectSite, traced_sub_agent
from agents._errors import (
    MalformedResponse,
    ModelError,
    ModelRequestError,
    ModelRetryableError,
    ReplayDrift,
    ReplayedCancellation,
)
from agents._tools import Tool, ToolContext, ToolOutcome
from agents._tracing import logger, redact
from agents._waits import current_waits
from agents.models._model import ChatModel, ModelRequest, ModelResponse, Usage
from agents.telemetry import _telemetry as telemetry

if TYPE_CHECKING:
    from agents._executor import Executor
    from agents._report import AgentReport
from memory.journal import EffectKind, EffectRecord

__all__ = ["Drift", "JournalMode", "JournaledEffects", "RecordSink"]

JournalMode = Literal["record", "resume", "replay"]
"""What a journaled run does: record a new run, resume a crashed one, or replay one offline."""
T = TypeVar("T")
_Outcome = Literal["ok", "error", "cancelled"]

UNVERIFIED = "unverified: in flight when the run crashed; not repeated"
_MODEL_ERRORS: dict[str, type[ModelError]] = {
    cls.__name__: cls
    for cls in (ModelRetryableError, ModelRequestError, MalformedResponse, ModelError)
}
_log = logger("paor.journal")
_STOP = EffectRecord.STOP_SEQ


class Drift(BaseModel):
    """Where a replay or a resume parted from the recording.

    Attributes:
        agent_id: The agent that asked.
        seq: The effect's place in its sequence.
        kind: What it asked for: model, tool, clock or choice.
        expected: What the journal holds there ("nothing" when the recording ends).
        got: What the code asked for.
    """

    model_config = ConfigDict(frozen=True)

    agent_id: str
    seq: int
    kind: str
    expected: str
    got: str

    def describe(self) -> str:
        """One line for people."""
        return (
            f"{self.agent_id}#{self.seq}: asked for {self.kind} {self.got}, "
            f"the journal has {self.expected}"
        )


class RecordSink(Protocol):
    """Where `JournaledEffects` writes: a `Journal`, or any store of a run's effect records."""

    async def append(self, run_id: str, record: EffectRecord) -> None:
        """Keep `record` (replacing one at the same address) before returning."""
        ...

    async def forget(self, run_id: str, agent_id: str, from_seq: int) -> None:
        """Drop an agent's records from `from_seq` on, and its stop record (a choice at seq 0)."""
        ...


class JournaledEffects:
    """Effects that go through a journal: recorded live, served back on resume and replay.

    Args:
        inner: Performs live effects (never used in replay mode).
        journal: Where records go (an open `Journal`, or any `RecordSink`).
        run_id: The run.
        mode: "record" a new run; "resume" a crashed one (recorded results first, then live);
            "replay" a recorded one offline (nothing live: anything unrecorded is drift).
        records: The run's records, from `Journal.load` (resume and replay).
    """

    def __init__(
        self,
        inner: Effects,
        journal: RecordSink,
        run_id: str,
        *,
        mode: JournalMode = "record",
        records: Iterable[EffectRecord] = (),
    ) -> None:
        self.inner = inner
        self.journal = journal
        self.run_id = run_id
        self.mode = mode
        self.drift: list[Drift] = []
        self._records = {(r.agent_id, r.seq, r.kind): r for r in records}
        seqs: dict[str, set[int]] = {}
        for agent_id, seq, _kind in self._records:
            seqs.setdefault(agent_id, set()).add(seq)
        self._seqs = {agent_id: frozenset(found) for agent_id, found in seqs.items()}
        # What will be served, of what can block (model and tool results, cuts, the stop record):
        # clock reads, choices and calls that will go live again never keep an agent replaying.
        self._ahead: dict[str, set[int]] = {}
        for r in self._records.values():
            if self._served(r):
                self._ahead.setdefault(r.agent_id, set()).add(r.seq)
        self._live: set[str] = set()
        # Appends and drops in the order the loops asked for them (anyio's lock is fair).
        self._writing = anyio.Lock()

    def obeys_stops(self, agent_id: str) -> bool:
        """Whether a live stop or deadline may cut the agent: once nothing recorded is ahead."""
        return not self.replaying(agent_id)

    def time_limit(self, agent_id: str, left: float | None) -> float | None:
        """`left` once the agent runs live; no limit while its recording is served."""
        return None if self.replaying(agent_id) else left

    def replaying(self, agent_id: str) -> bool:
        """Whether recorded model or tool results (or a recorded stop) are still ahead of the
        agent; always, in replay mode."""
        if self.mode == "replay":
            return True
        return agent_id not in self._live and bool(self._ahead.get(agent_id))

    async def sub_agent(self, executor: Executor, call: AgentCall) -> AgentReport:
        """Run the sub-agent here: its own effects come through this journal (the executor's)."""
        return await traced_sub_agent(executor, call)

    async def model_call(
        self, site: EffectSite, model: ChatModel, request: ModelRequest
    ) -> ModelResponse:
        """Serve the recorded reply (or error), else ask the model and record its answer."""
        with _working():
            return await self._model_call(site, model, request)

    async def _model_call(
        self, site: EffectSite, model: ChatModel, request: ModelRequest
    ) -> ModelResponse:
        await anyio.lowlevel.checkpoint()  # a cut scope cuts here, recorded or not: same path
        digest = request_digest(request)
        record = await self._lookup(site, "model", digest)
        if record is not None:
            with telemetry.chat_span(site, model, request, replayed=True) as span:
                response = _model_result(site, record)
                telemetry.chat_done(span, response)
                return response
        return await self._perform(
            site, "model", digest, lambda: self.inner.model_call(site, model, request), _dump
        )

    async def tool_call(
        self, site: EffectSite, tool: Tool, args: dict[str, Any], ctx: ToolContext
    ) -> ToolOutcome:
        """Serve the recorded outcome, else run the tool (an intent first) and record it."""
        # In flight from its lookup on: a run that pauses never cuts a call between its intent
        # record and its start (a resume would take it for a call that may have run).
        with _working():
            return await self._tool_call(site, tool, args, ctx)

    async def _tool_call(
        self, site: EffectSite, tool: Tool, args: dict[str, Any], ctx: ToolContext
    ) -> ToolOutcome:
        await anyio.lowlevel.checkpoint()
        digest = _digest({"tool": tool.name, "args": args})
        record = await self._lookup(site, "tool", digest)
        if record is not None:
            with telemetry.tool_span(site, tool, args, ctx, replayed=True) as span:
                if record.outcome == "cancelled":
                    raise ReplayedCancellation(f"{site.key} ({tool.name}) was cut short")
                outcome = served_outcome(record.payload)
                telemetry.tool_done(span, outcome)
                return outcome
        if self._interrupted(site, digest):
            if tool.side_effects and not tool.takes_context:
                _log.warning("tool_unverified", tool=tool.name, seq=site.seq)
                outcome = ToolOutcome(ok=False, error="unverified", message=UNVERIFIED)
                await self._append(site, "tool", digest, "ok", stored_outcome(tool, outcome))
                return outcome
            _log.info("tool_rerun", tool=tool.name, seq=site.seq, key=ctx.idempotency_key)
        # As JSON data: arguments may be enums, dates... (the tool gets them as they are).
        shown = to_jsonable_python(redact(args, tool.sensitive), fallback=str)
        intent = {"tool": tool.name, "args": shown, "key": ctx.idempotency_key}
        await self._append(site, "intent", digest, "ok", intent)
        return await self._perform(
            site,
            "tool",
            digest,
            lambda: self.inner.tool_call(site, tool, args, ctx),
            lambda outcome: stored_outcome(tool, outcome),
        )

    async def now(self, site: EffectSite) -> float:
        """Serve the recorded clock value, else read the clock and record it."""
        await anyio.lowlevel.checkpoint()
        # Clock values carry no request: any read at this address takes the recorded value.
        record = await self._lookup(site, "clock", "clock")
        if record is not None:
            return float(record.payload["value"])
        return await self._perform(
            site, "clock", "clock", lambda: self.inner.now(site), lambda v: {"value": v}
        )

    async def choice(
        self, site: EffectSite, pick: Callable[[], Awaitable[str]], *, options: Collection[str] = ()
    ) -> str:
        """Serve the recorded decision, else make it live and record it."""
        await anyio.lowlevel.checkpoint()
        digest = _digest({"options": sorted(options)})
        record = await self._lookup(site, "choice", digest)
        if record is not None:
            value = str(record.payload["value"])
            if not options or value in options:
                return value
            await self._drifted(site, "choice", f"choice {value!r}", f"one of {sorted(options)}")
        return await self._perform(site, "choice", digest, pick, lambda v: {"value": v})

    async def _lookup(self, site: EffectSite, kind: EffectKind, digest: str) -> EffectRecord | None:
        """The record to serve at `site`, or None to go live (raises on replay drift and cuts)."""
        agent = site.agent_id
        if agent in self._live or self.mode == "record":
            return None
        self._ahead.get(agent, set()).discard(site.seq)
        record = self._records.get((agent, site.seq, kind))
        if record is not None and record.digest != digest:
            await self._drifted(site, kind, record.digest, digest)
            return None
        if record is not None and (record.outcome != "cancelled" or self._cut(agent, site.seq)):
            return record
        if (agent, _STOP, "choice") in self._records and site.seq != _STOP:
            # The agent was stopped, and the recording ends before this effect: stop it here.
            raise ReplayedCancellation(f"{site.key} comes after the recorded stop")
        if self.mode == "replay":
            await self._drifted(site, kind, "nothing", digest)
        return None

    def _served(self, record: EffectRecord) -> bool:
        if EffectRecord.is_stop(record.seq, record.kind):
            return True
        if record.kind not in ("model", "tool"):
            return False
        return record.outcome != "cancelled" or self._cut(record.agent_id, record.seq)

    def _cut(self, agent_id: str, seq: int) -> bool:
        """Whether a cancelled record was a cut the run went on from (not the run stopping)."""
        if self.mode == "replay" or (agent_id, _STOP, "choice") in self._records:
            return True
        return any(s > seq for s in self._seqs.get(agent_id, ()))

    def _interrupted(self, site: EffectSite, digest: str) -> bool:
        """Whether this very call was started before (an intent, without a usable result)."""
        intent = self._records.get((site.agent_id, site.seq, "intent"))
        return intent is not None and intent.digest == digest and site.agent_id not in self._live

    async def _drifted(self, site: EffectSite, kind: str, expected: str, got: str) -> None:
        drift = Drift(agent_id=site.agent_id, seq=site.seq, kind=kind, expected=expected, got=got)
        self.drift.append(drift)
        if self.mode == "replay":
            raise ReplayDrift(
                drift.describe(), agent_id=site.agent_id, seq=site.seq, expected=expected, got=got
            )
        _log.warning("journal_drift", agent_id=site.agent_id, seq=site.seq, kind=kind)
        # The agent took another road: it goes on live, and what it recorded further on is void.
        self._live.add(site.agent_id)
        self._ahead.pop(site.agent_id, None)
        for key in [k for k in self._records if k[0] == site.agent_id]:
            if key[1] >= site.seq or EffectRecord.is_stop(key[1], key[2]):
                del self._records[key]
        async with self._writing:
            await self.journal.forget(self.run_id, site.agent_id, site.seq)

    async def _perform(
        self,
        site: EffectSite,
        kind: EffectKind,
        digest: str,
        perform: Callable[[], Awaitable[T]],
        encode: Callable[[T], Any],
    ) -> T:
        """Do the effect live and record what came of it before the loop sees it."""
        try:
            value = await perform()
        except anyio.get_cancelled_exc_class():
            if kind in ("model", "tool"):
                with anyio.CancelScope(shield=True):
                    await self._append(site, kind, digest, "cancelled", None)
            raise
        except Exception as exc:
            if kind == "model":
                with anyio.CancelScope(shield=True):
                    await self._append(site, kind, digest, "error", _error_payload(exc))
            raise
        # Shielded: once the effect happened, its record must not be lost to a stop.
        with anyio.CancelScope(shield=True):
            await self._append(site, kind, digest, "ok", encode(value))
        return value

    async def _append(
        self, site: EffectSite, kind: EffectKind, digest: str, outcome: _Outcome, payload: Any
    ) -> None:
        record = EffectRecord(
            agent_id=site.agent_id,
            seq=site.seq,
            kind=kind,
            digest=digest,
            outcome=outcome,
            payload=payload,
        )
        async with self._writing:
            await self.journal.append(self.run_id, record)


def _working() -> contextlib.AbstractContextManager[None]:
    """Count the effect as the run's work in flight (see `agents._waits`)."""
    waits = current_waits()
    return contextlib.nullcontext() if waits is None else waits.working()


def request_digest(request: ModelRequest) -> str:
    """What a model call's record is matched by: what is asked, not what for (records made
    before requests had a purpose still match)."""
    return _digest(request.model_dump(mode="json", exclude={"purpose"}))


def _digest(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def _dump(response: ModelResponse) -> Any:
    return response.model_dump(mode="json")


def _model_result(site: EffectSite, record: EffectRecord) -> ModelResponse:
    if record.outcome == "cancelled":
        raise ReplayedCancellation(f"{site.key} (model call) was cut short")
    if record.outcome == "error":
        raise _rebuilt(record.payload)
    return ModelResponse.model_validate(record.payload)


def _error_payload(exc: Exception) -> dict[str, Any]:
    """A model error as data; its class is the nearest one replay can raise again."""
    name = next(
        (c.__name__ for c in type(exc).__mro__ if c.__name__ in _MODEL_ERRORS),
        type(exc).__name__,
    )
    return {
        "type": name,
        "message": str(exc),
        "status": getattr(exc, "status", None),
        "retry_after": getattr(exc, "retry_after", None),
        "raw": getattr(exc, "raw", None),
        "usage": None if (usage := getattr(exc, "usage", None)) is None else usage.model_dump(),
    }


def _rebuilt(payload: dict[str, Any]) -> Exception:
    """The recorded error, raised again as the same class where it can be."""
    kind, message = payload.get("type", ""), str(payload.get("message", ""))
    if kind == "ModelRetryableError":
        return ModelRetryableError(
            message, retry_after=payload.get("retry_after"), status=payload.get("status")
        )
    if kind == "ModelRequestError":
        return ModelRequestError(message, status=payload.get("status"))
    if kind == "MalformedResponse":
        usage = payload.get("usage")
        return MalformedResponse(
            message,
            raw=payload.get("raw") or "",
            usage=None if usage is None else Usage.model_validate(usage),
        )
    if kind == "ModelError":
        return ModelError(message)
    found = getattr(builtins, kind, None)
    if isinstance(found, type) and issubclass(found, Exception):
        return found(message)
    return RuntimeError(f"{kind}: {message}")
