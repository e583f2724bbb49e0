"""The journal: every effect result of a run, in SQLite, written before the loop goes on.

Two tables. `runs` has a row per run: its goal, status, owner lease, result and metadata. `effects`
has one record per effect, addressed by (run, agent, seq, kind): a model reply, a tool outcome, a
clock read, a recorded choice, or the intent written just before a tool runs. What a record holds
is bounded: a reply read over HTTP is at most 8 MiB (`max_response_bytes`), a call's arguments 64
KiB (`MAX_ARG_CHARS`), and a tool result longer than 64 Ki characters of JSON is stored as the
start of the text the model's observation is cut from (64 Ki characters, or the tool's
`max_chars` if more), with the whole result's size and sha256 (see `agents._capped`).

Every record carries a CRC32 of its contents. `load` checks it and keeps each agent's records only
up to its first damaged one, so a damaged record behaves like a run that stopped just before it. A
write torn by a killed process never commits: SQLite's WAL drops the torn frame, and the run
resumes from the last whole record.

One process at a time may continue a run. `claim` takes the run's lease in a `BEGIN IMMEDIATE`
transaction. It succeeds if nobody holds the lease, or if the holder's heartbeat is older than
`lease_s`, or if the holder's pid is dead on this host. Otherwise it raises `RunLocked`. While a
run is live its holder refreshes the heartbeat; the lease is released when the run ends.

A record that cannot be written (the file locked by another process for longer than the journal
waits, a full disk) raises `JournalError` where it was asked for, and the journal remembers it
(`take_write_error`): however the loop went on, the run's record has a hole, so the run must not be
stored as finished. It is left resumable instead, as after a crash.

Every call runs in a worker thread on one connection, which a lock hands to one thread at a time.
The database uses WAL mode. Every record is in the file before `append` returns, so it survives a
crash of the process (kill -9 included). A crash of the machine (power loss) can lose the newest
records, never one in the middle: the run then resumes from the last record that reached the disk,
as if it had stopped there. A tool's `intent` record is the exception: it is synced to the disk
before the tool runs, so a call that may have had its effect is never forgotten, whatever crashes.
`fsync="always"` syncs every record instead (about a millisecond each on a disk: measured by
`python -m benchmarks.journal_cost`). The file is private to its owner (mode 0600) when paor
creates it, and `prune` keeps it from growing forever. A journal opened `readonly` is only read:
commands that list or show runs can read one on a read-only mount.
"""

from __future__ import annotations

import json
import math
import os
import socket
import sqlite3
import time
import uuid
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from memory._logging import logger
from memory._pauses import WAITS_SCHEMA, Pauses
from memory._sqlite import shrink
from memory.errors import PaorError

__all__ = [
    "STOP_SEQ",
    "EffectKind",
    "EffectRecord",
    "Journal",
    "JournalError",
    "RunInfo",
    "RunLocked",
    "RunStatus",
    "default_journal_path",
    "is_stop_record",
]

EffectKind = Literal["model", "tool", "clock", "choice", "intent"]
"""What a journal record holds: a model reply, a tool outcome, a clock read, a choice, or a
tool's intent."""
STOP_SEQ = 0
"""The seq of an agent's stop record, the choice of why it was cut short (a stop or a deadline).
Made at most once per agent, and last; numbered effects start at 1, so wherever the cut landed a
replay finds it at this one address."""
RunStatus = Literal["running", "complete", "incomplete", "failed", "crashed", "paused"]
"""A journaled run's status; `crashed` is a run whose owner died before it ended, `paused` one
that waits for people's decisions (both resumable)."""
FINISHED_RUNS: frozenset[str] = frozenset({"complete", "incomplete", "failed"})
_T = TypeVar("_T")
_NUMBERS_BYTES = 16  # a record's seq and crc, as SQLite's 8-byte integers at most
_log = logger("paor.journal")
_HOST = socket.gethostname()
_CONFIG_KEY = "paor.config"  # the run's configuration, kept beside its starter's meta
_RUN_COLUMNS = (
    "run_id", "goal", "status", "created", "updated", "owner", "heartbeat", "result_json",
    "meta_json",
)  # fmt: skip
_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    run_id TEXT PRIMARY KEY,
    goal TEXT NOT NULL,
    status TEXT NOT NULL,
    created REAL NOT NULL,
    updated REAL NOT NULL,
    owner TEXT,
    heartbeat REAL,
    result_json TEXT,
    meta_json TEXT NOT NULL DEFAULT '{}'
);
CREATE TABLE IF NOT EXISTS effects (
    run_id TEXT NOT NULL,
    agent_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    kind TEXT NOT NULL,
    digest TEXT NOT NULL,
    outcome TEXT NOT NULL,
    payload_json TEXT NOT NULL,
    crc INTEGER NOT NULL,
    PRIMARY KEY (run_id, agent_id, seq, kind)
);
"""


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

    agent_id: str
    seq: int
    kind: EffectKind
    digest: str = ""
    outcome: Literal["ok", "error", "cancelled"] = "ok"
    payload: Any = None

    def payload_json(self) -> str:
        """The payload as compact JSON. Keys keep their order: a replayed tool result must read
        exactly as the live one did, down to the order of its fields."""
        return _json(self.payload, sort_keys=False)

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


def default_journal_path() -> Path:
    """`$PAOR_HOME/journal.db`, where `PAOR_HOME` defaults to `~/.paor`."""
    home = os.environ.get("PAOR_HOME") or Path.home() / ".paor"
    return Path(home) / "journal.db"


class Journal(Pauses):
    """The durable record of runs and their effects, in one SQLite file.

    Use it as an async context manager, or call `open` and `aclose`.

    ```python
    async with Journal("runs.db") as journal:
        orch = Orchestrator(model, tools, journal=journal)
        result = await orch.run("goal")          # recorded
        result = await orch.resume(run_id)       # continues a crashed run
    ```

    Args:
        path: The database file (default: `default_journal_path()`); folders are created.
        lease_s: How long a silent owner keeps its lease.
        timeout: Seconds to wait, in all, for another process's write lock on each call (a
            caller's deadline or cancellation ends the wait sooner).
        fsync: "intents" (default) syncs a tool's intent record to the disk before the tool
            runs, and leaves the rest to the operating system; "always" syncs every record.
        readonly: Only read it (listing, showing): the file must exist, and is never written
            (no WAL switch, no schema), so a journal on a read-only mount can be read. A
            failure to open says whether the file cannot be written or is damaged.
    """

    schema = _SCHEMA + WAITS_SCHEMA

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        lease_s: float = 30.0,
        timeout: float = 60.0,
        fsync: Literal["intents", "always"] = "intents",
        readonly: bool = False,
    ) -> None:
        where = path if path is not None else default_journal_path()
        super().__init__(where, timeout=timeout, readonly=readonly)
        # The connection's level; an intent is written at FULL whatever it is.
        self.synchronous = "FULL" if fsync == "always" else "NORMAL"
        self.lease_s = lease_s
        self.owner = f"{_HOST}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self._lost: dict[str, JournalError] = {}

    async def begin(
        self,
        run_id: str,
        goal: str,
        *,
        meta: dict[str, Any] | None = None,
        config: dict[str, Any] | None = None,
    ) -> None:
        """Register a new run, owned by this journal, with its starter's `meta` and the
        `config` it runs under (both JSON data).

        Raises:
            JournalError: The run id is taken.
        """
        now = time.time()
        kept = {**(meta or {}), _CONFIG_KEY: config} if config is not None else meta or {}
        row = (run_id, goal, "running", now, now, self.owner, now, None, _dumps(kept))
        sql = f"INSERT INTO runs VALUES ({', '.join('?' * len(_RUN_COLUMNS))})"
        try:
            await self._run(lambda conn: conn.execute(sql, row))
        except JournalError as exc:
            if isinstance(exc.__cause__, sqlite3.IntegrityError):
                raise JournalError(f"run {run_id} already exists in {self.path}") from None
            raise

    async def claim(self, run_id: str, owner: str | None = None) -> RunInfo:
        """Take the run's lease for `owner` (this journal by default); returns the run.

        Raises:
            RunLocked: A live process holds the lease.
            JournalError: The run is unknown.
        """
        return await self._run(lambda conn: self._claim(conn, run_id, owner or self.owner))

    async def heartbeat(self, run_id: str) -> bool:
        """Refresh this journal's lease; False if it no longer holds it."""
        sql = "UPDATE runs SET heartbeat = ? WHERE run_id = ? AND owner = ?"
        params = (time.time(), run_id, self.owner)
        return await self._run(lambda conn: conn.execute(sql, params).rowcount > 0)

    async def finish(
        self, run_id: str, status: RunStatus | None = None, result: dict[str, Any] | None = None
    ) -> None:
        """Release the lease; with a `status`, also record how the run ended (and its result).

        Without a status the run stays "running" with no owner, so it reads as crashed: resumable.
        """
        now = time.time()
        if status is None:
            sql = "UPDATE runs SET owner = NULL, updated = ? WHERE run_id = ? AND owner = ?"
            params: tuple[Any, ...] = (now, run_id, self.owner)
        else:
            sql = (
                "UPDATE runs SET owner = NULL, updated = ?, status = ?, result_json = ? "
                "WHERE run_id = ? AND owner = ?"
            )
            body = None if result is None else _dumps(result)
            params = (now, status, body, run_id, self.owner)
        await self._run(lambda conn: conn.execute(sql, params))

    async def run(self, run_id: str) -> RunInfo | None:
        """The run, if the journal has it."""
        sql = f"SELECT {', '.join(_RUN_COLUMNS)} FROM runs WHERE run_id = ?"
        row = await self._run(lambda conn: conn.execute(sql, (run_id,)).fetchone())
        return None if row is None else self._info(row)

    async def runs(self) -> list[RunInfo]:
        """Every run, the most recently updated first."""
        sql = f"SELECT {', '.join(_RUN_COLUMNS)} FROM runs ORDER BY updated DESC, run_id"
        rows = await self._run(lambda conn: conn.execute(sql).fetchall())
        return [self._info(row) for row in rows]

    async def append(self, run_id: str, record: EffectRecord) -> None:
        """Write one record (replacing one at the same address), durably, before returning."""
        body = record.payload_json()
        row = (run_id, record.agent_id, record.seq, record.kind, record.digest, record.outcome)
        sql = "INSERT OR REPLACE INTO effects VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
        values = (*row, body, record.crc())
        if record.kind == "intent" and self.synchronous != "FULL":
            await self._write(run_id, lambda conn: _synced(conn, sql, values))
        else:
            await self._write(run_id, lambda conn: conn.execute(sql, values))

    async def forget(self, run_id: str, agent_id: str, from_seq: int) -> None:
        """Drop an agent's records from `from_seq` on, and its stop record (a choice at seq 0):
        the agent went another way, and what it recorded past that point no longer applies."""
        sql = (
            "DELETE FROM effects WHERE run_id = ? AND agent_id = ? "
            "AND (seq >= ? OR (seq = 0 AND kind = 'choice'))"
        )
        await self._write(run_id, lambda conn: conn.execute(sql, (run_id, agent_id, from_seq)))

    def take_write_error(self, run_id: str) -> JournalError | None:
        """The first error that writing the run's records raised since this was last asked, if
        any (and forget it): the run's record has a hole, so it must not be stored as finished."""
        return self._lost.pop(run_id, None)

    async def load(self, run_id: str) -> list[EffectRecord]:
        """The run's whole records in the order they were written.

        Each agent's records are kept up to its first damaged one (a CRC mismatch, unreadable
        JSON, an unknown kind); that record and the agent's later ones are dropped and logged.
        """
        sql = (
            "SELECT agent_id, seq, kind, digest, outcome, payload_json, crc FROM effects "
            "WHERE run_id = ? ORDER BY rowid"
        )
        rows = await self._run(lambda conn: conn.execute(sql, (run_id,)).fetchall())
        return _whole(run_id, rows)

    async def prune(
        self,
        *,
        older_than_s: float | None = None,
        keep: int | None = None,
        include_crashed: bool = False,
    ) -> int:
        """Delete finished runs with their records, then shrink the file; returns how many runs
        were deleted.

        A run may go if it finished (complete, incomplete or failed), or, with
        `include_crashed`, if it crashed. Of those, a run goes if it was last updated over
        `older_than_s` seconds ago, or if it is not among the newest `keep`: each limit given
        holds afterwards. A live run is never touched.

        Raises:
            ValueError: Neither `older_than_s` nor `keep` is given, or one is negative.
        """
        _check_prune(older_than_s, keep)
        cutoff = None if older_than_s is None else time.time() - older_than_s
        removed = await self._run(
            lambda conn: self._prune(conn, cutoff=cutoff, keep=keep, crashed=include_crashed)
        )
        if removed:
            await self._shrink()
        return removed

    async def _write(self, run_id: str, fn: Callable[[sqlite3.Connection], object]) -> None:
        """Write some of the run's records; a failure is remembered (see `take_write_error`)."""
        try:
            await self._run(fn)
        except JournalError as exc:
            self._lost.setdefault(run_id, exc)
            raise

    async def _shrink(self) -> None:
        """Give freed space back; a file too busy for that keeps it until the next prune."""
        try:
            await self._run(shrink)
        except JournalError as exc:
            _log.warning("journal_not_shrunk", path=str(self.path), error=str(exc))

    def _prune(
        self, conn: sqlite3.Connection, *, cutoff: float | None, keep: int | None, crashed: bool
    ) -> int:
        # IMMEDIATE: no run can be claimed (and so come alive) between the choice and the delete.
        conn.execute("BEGIN IMMEDIATE")
        try:
            sql = "SELECT run_id, status, updated, owner, heartbeat FROM runs ORDER BY updated DESC"
            prunable = [
                (run_id, updated)
                for run_id, status, updated, owner, heartbeat in conn.execute(sql).fetchall()
                if status in FINISHED_RUNS
                or (crashed and status == "running" and not self._alive(owner, heartbeat))
            ]
            doomed = [(run_id,) for run_id in _beyond(prunable, cutoff=cutoff, keep=keep)]
            conn.executemany("DELETE FROM effects WHERE run_id = ?", doomed)
            conn.executemany("DELETE FROM waits WHERE run_id = ?", doomed)
            conn.executemany("DELETE FROM runs WHERE run_id = ?", doomed)
            conn.commit()
        except Exception:
            conn.rollback()
            raise
        return len(doomed)

    def _claim(self, conn: sqlite3.Connection, run_id: str, owner: str) -> RunInfo:
        # IMMEDIATE takes the write lock before the read: two claimers cannot both see it free.
        conn.execute("BEGIN IMMEDIATE")
        try:
            sql = f"SELECT {', '.join(_RUN_COLUMNS)} FROM runs WHERE run_id = ?"
            row = conn.execute(sql, (run_id,)).fetchone()
            if row is None:
                raise JournalError(f"no run {run_id} in {self.path}")
            holder, beat = row[5], row[6]
            if holder and holder != owner and self._alive(holder, beat):
                age = time.time() - beat
                raise RunLocked(
                    f"run {run_id} is held by another live process ({_describe(holder)}, "
                    f"heartbeat {age:.0f}s ago); wait for it to end or stop it first"
                )
            now = time.time()
            # A paused run claimed is running again (until it pauses again, or ends).
            conn.execute(
                "UPDATE runs SET owner = ?, heartbeat = ?, updated = ?, status = CASE status "
                "WHEN 'paused' THEN 'running' ELSE status END WHERE run_id = ?",
                (owner, now, now, run_id),
            )
            conn.commit()  # inside: a commit that fails must not leave the transaction open
        except Exception:
            conn.rollback()
            raise
        return self._info((*row[:4], now, owner, now, *row[7:]))

    def _alive(self, owner: str | None, heartbeat: float | None) -> bool:
        """Whether a lease holder still counts: a recent heartbeat, and on this host a live pid."""
        if not owner or heartbeat is None or time.time() - heartbeat > self.lease_s:
            return False
        host, _, rest = owner.partition(":")
        pid = rest.partition(":")[0]
        return host != _HOST or not pid.isdigit() or _pid_alive(int(pid))

    def _info(self, row: tuple[Any, ...]) -> RunInfo:
        fields = dict(zip(_RUN_COLUMNS, row, strict=True))
        if fields["status"] == "running" and not self._alive(fields["owner"], fields["heartbeat"]):
            fields["status"] = "crashed"
        result = fields.pop("result_json")
        meta = fields.pop("meta_json")
        try:
            kept = json.loads(meta or "{}")
            config = kept.pop(_CONFIG_KEY, None) if isinstance(kept, dict) else None
            return RunInfo(
                **fields,
                meta=kept,
                result=None if result is None else json.loads(result),
                config=config,
            )
        except (ValueError, ValidationError) as exc:
            raise JournalError(f"run {fields['run_id']} has a damaged row in {self.path}") from exc

    def _error(self, message: str) -> Exception:
        return JournalError(f"journal: {message}")

    def _kind(self) -> str:
        return "paor journal"


def _whole(run_id: str, rows: list[tuple[Any, ...]]) -> list[EffectRecord]:
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
    return math.inf if is_stop_record(seq, kind) else float(seq)


def _synced(conn: sqlite3.Connection, sql: str, values: tuple[Any, ...]) -> None:
    """Run one autocommitted statement whose commit is synced to the disk (WAL, FULL)."""
    conn.execute("PRAGMA synchronous = FULL")
    try:
        conn.execute(sql, values)
    finally:
        conn.execute("PRAGMA synchronous = NORMAL")


def is_stop_record(seq: int, kind: object) -> bool:
    """Whether (seq, kind) addresses an agent's stop record (see `STOP_SEQ`)."""
    return seq == STOP_SEQ and kind == "choice"


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


def _beyond(runs: list[tuple[str, float]], *, cutoff: float | None, keep: int | None) -> list[str]:
    """The ids of `runs` (id and last update, newest first) past `keep` or older than `cutoff`."""
    return [
        run_id
        for rank, (run_id, updated) in enumerate(runs)
        if (keep is not None and rank >= keep) or (cutoff is not None and updated < cutoff)
    ]


def _check_prune(older_than_s: float | None, keep: int | None) -> None:
    if older_than_s is None and keep is None:
        raise ValueError("prune needs older_than_s or keep (keep=0 prunes every finished run)")
    if (older_than_s is not None and older_than_s < 0) or (keep is not None and keep < 0):
        raise ValueError(f"prune needs older_than_s and keep >= 0, not {older_than_s}, {keep}")


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process: alive
    return True


def _describe(owner: str) -> str:
    host, _, rest = owner.partition(":")
    return f"pid {rest.partition(':')[0]} on {host}"


def _dumps(value: Any) -> str:
    return _json(value, sort_keys=True)


def _json(value: Any, *, sort_keys: bool) -> str:
    """Compact JSON, readable where it can be; escaped when it holds a lone surrogate (a model
    can send one, JSON-escaped), which SQLite cannot store as UTF-8 text. Either way the same
    value always gives the same text, so digests and CRCs stay stable."""
    text = json.dumps(value, sort_keys=sort_keys, separators=(",", ":"), ensure_ascii=False)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(value, sort_keys=sort_keys, separators=(",", ":"))
    return text
