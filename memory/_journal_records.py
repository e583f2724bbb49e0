"""What the journal holds: its effect records, its run rows, and its errors.

An `EffectRecord` is one effect of a run at its address (run, agent, seq, kind), with a CRC32 over
every stored field; `whole_records` reads stored rows back as records, keeping each agent's only up
to its first damaged one. A `RunInfo` is a run's row as the journal reports it. `JournalError` is
anything the journal cannot do, and `RunLocked` says another live process holds a run's lease.
`Journal` (in `memory._journal`) writes and reads them.
"""

from __future__ import annotations

import json
import math
import zlib
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from memory._errors import PaorError
from memory._logging import logger

__all__ = [
    "FINISHED_RUNS",
    "EffectKind",
    "EffectRecord",
    "JournalError",
    "RunInfo",
    "RunLocked",
    "RunStatus",
    "compact_json",
    "whole_records",
]

EffectKind = Literal["model", "tool", "clock", "choice", "intent"]
"""What a journal record holds: a model reply, a tool outcome, a clock read, a choice, or a
tool's intent."""
RunStatus = Literal["running", "complete", "incomplete", "failed", "crashed", "paused"]
"""A journaled run's status; `crashed` is a run whose owner died before it ended, `paused` one
that waits for people's decisions (both resumable)."""
FINISHED_RUNS: frozenset[str] = frozenset({"complete", "incomplete", "failed"})
_NUMBERS_BYTES = 16  # a record's seq and crc, as SQLite's 8-byte integers at most
_log = logger("paor.journal")


class JournalError(PaorError):
    """The journal cannot do what was asked: a damaged file, an unknown run, a finished run (its
    place in paor's error tree is drawn in `agents.errors`)."""


class RunLocked(JournalError):
    """Another live process holds the run's lease."""


class EffectRecord(BaseModel):
    """One journaled effect.

    Attributes:
        agent_id: The agent within the run ("planner", "run", or a subtask id).
        seq: The effect's place in the agent's sequence.
        kind: model, tool, clock, choice, or intent (a tool call about to start).
        digest: What was asked (a hash of the request), to detect drift on replay.
        outcome: ok; error (a model error, re-raised on replay); cancelled (cut short).
        payload: The result as JSON data.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    STOP_SEQ: ClassVar[int] = 0
    """The seq of an agent's stop record, the choice of why it was cut short (a stop or a
    deadline). Made at most once per agent, and last; numbered effects start at 1, so wherever
    the cut landed a replay finds it at this one address."""

    agent_id: str
    seq: int
    kind: EffectKind
    digest: str = ""
    outcome: Literal["ok", "error", "cancelled"] = "ok"
    payload: Any = None

    @staticmethod
    def is_stop(seq: int, kind: object) -> bool:
        """Whether (seq, kind) addresses an agent's stop record (see `STOP_SEQ`)."""
        return seq == EffectRecord.STOP_SEQ and kind == "choice"

    def payload_json(self) -> str:
        """The payload as compact JSON. Keys keep their order: a replayed tool result must read
        exactly as the live one did, down to the order of its fields."""
        return compact_json(self.payload, sort_keys=False)

    def crc(self) -> int:
        """The CRC32 over every stored field, so damage anywhere in the row is caught."""
        fields = (self.agent_id, str(self.seq), self.kind, self.digest, self.outcome)
        return zlib.crc32("\x1f".join((*fields, self.payload_json())).encode())

    def size(self) -> int:
        """The bytes the record's fields take in the journal (SQLite's own overhead aside)."""
        texts = (self.agent_id, self.kind, self.digest, self.outcome, self.payload_json())
        return sum(len(t.encode("utf-8", "surrogatepass")) for t in texts) + _NUMBERS_BYTES


class RunInfo(BaseModel):
    """A run as the journal knows it.

    Attributes:
        run_id: The run.
        goal: Its goal.
        status: running, complete, incomplete, failed, crashed, or paused (it waits for people:
            `Journal.waiting` says what for). A run whose owner is dead is reported as crashed:
            this is worked out when the row is read, never stored.
        created: When it started (seconds since the epoch).
        updated: When its row last changed.
        owner: The lease holder ("host:pid:token"), if any.
        heartbeat: When the holder last said it was alive.
        meta: What its starter stored to rebuild it (e.g. the command line's arguments).
        result: The finished run's result, as JSON data.
        config: The configuration it started with (`orchestrator.RunConfig`, as JSON data), if
            its starter gave one.
    """

    model_config = ConfigDict(frozen=True)

    run_id: str
    goal: str
    status: RunStatus
    created: float
    updated: float
    owner: str | None = None
    heartbeat: float | None = None
    meta: dict[str, Any] = {}
    result: dict[str, Any] | None = None
    config: dict[str, Any] | None = None

    @property
    def finished(self) -> bool:
        """Whether the run ended (complete, incomplete or failed): nothing is left to resume."""
        return self.status in FINISHED_RUNS


def whole_records(run_id: str, rows: list[tuple[Any, ...]]) -> list[EffectRecord]:
    """The records up to each agent's first damaged one.

    Whole records at the damaged seq stay: a tool's intent without its damaged result then reads
    as a call in flight, which is the safe reading. A stop record (a choice at seq 0) is written
    last, so it goes with any damage, and damage to it alone costs nothing else.
    """
    records: list[EffectRecord] = []
    first_bad: dict[str, float] = {}
    for agent_id, seq, kind, digest, outcome, body, crc in rows:
        record = _record(agent_id, seq, kind, digest, outcome, body, crc)
        if record is not None:
            records.append(record)
            continue
        # A row too damaged to say where it was costs its agent everything.
        bad = _order(seq, kind) if isinstance(seq, int) and seq >= 0 else -1.0
        first_bad[agent_id] = min(first_bad.get(agent_id, bad), bad)
    for agent_id, bad in first_bad.items():
        _log.warning("journal_damaged", run_id=run_id, agent_id=agent_id, seq=bad)
    return [
        r
        for r in records
        if r.agent_id not in first_bad or _order(r.seq, r.kind) <= first_bad[r.agent_id]
    ]


def _order(seq: int, kind: object) -> float:
    """Where a record falls in its agent's sequence (an agent's stop record comes last)."""
    return math.inf if EffectRecord.is_stop(seq, kind) else float(seq)


def _record(
    agent_id: Any, seq: Any, kind: Any, digest: Any, outcome: Any, body: Any, crc: Any
) -> EffectRecord | None:
    """A row as a record, or None if it is damaged."""
    try:
        record = EffectRecord(
            agent_id=agent_id, seq=seq, kind=kind, digest=digest, outcome=outcome,
            payload=json.loads(body),
        )  # fmt: skip
    except (TypeError, ValueError, ValidationError):
        return None
    return record if record.crc() == crc and record.payload_json() == body else None


def compact_json(value: Any, *, sort_keys: bool) -> str:
    """Compact JSON, readable where it can be; escaped when it holds a lone surrogate (a model
    can send one, JSON-escaped), which SQLite cannot store as UTF-8 text. Either way the same
    value always gives the same text, so digests and CRCs stay stable."""
    text = json.dumps(value, sort_keys=sort_keys, separators=(",", ":"), ensure_ascii=False)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(value, sort_keys=sort_keys, separators=(",", ":"))
    return text
