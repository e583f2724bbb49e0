"""The journal: every effect result of a run, in SQLite, written before the loop goes on.

Two tables. `runs` has a row per run: its goal, status, owner lease, result and metadata. `effects`
has one record per effect, addressed by (run, agent, seq, kind): a model reply, a tool outcome, a
clock read, a recorded choice, or the intent written just before a tool runs. What a record holds
is bounded: a reply read over HTTP is at most 8 MiB (`max_response_bytes`), a call's arguments 64
KiB (`MAX_ARG_CHARS`), and a tool result longer than 64 Ki characters of JSON is stored as the
start of the text the model's observation is cut from (64 Ki characters, or the tool's
`max_chars` if more), with the whole result's size and sha256 and what the tool's own hooks
made of it (evidence and facts as the hooks wrote them; see `agents._capped`).

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
commands that list or show runs can read one on a read-only mount. Its records, run rows and errors
are in `memory._journal_records`.
"""

from __future__ import annotations

import json
import os
import socket
import sqlite3
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from pydantic import ValidationError

from memory._journal_records import (
    FINISHED_RUNS,
    EffectRecord,
    JournalError,
    RunInfo,
    RunLocked,
    RunStatus,
    compact_json,
    whole_records,
)
from memory._logging import logger
from memory._pauses import WAITS_SCHEMA, Pauses
from memory._sqlite import shrink

__all__ = ["Journal"]

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
        path: The database file (default: `Journal.default_path()`); folders are created.
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

    @staticmethod
    def default_path() -> Path:
        """Where a journal opened without a path lives: `$PAOR_HOME/journal.db`, where
        `PAOR_HOME` defaults to `~/.paor`."""
        home = os.environ.get("PAOR_HOME") or Path.home() / ".paor"
        return Path(home) / "journal.db"

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        lease_s: float = 30.0,
        timeout: float = 60.0,
        fsync: Literal["intents", "always"] = "intents",
        readonly: bool = False,
    ) -> None:
        where = path if path is not None else Journal.default_path()
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
        return whole_records(run_id, rows)

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


def _synced(conn: sqlite3.Connection, sql: str, values: tuple[Any, ...]) -> None:
    """Run one autocommitted statement whose commit is synced to the disk (WAL, FULL)."""
    conn.execute("PRAGMA synchronous = FULL")
    try:
        conn.execute(sql, values)
    finally:
        conn.execute("PRAGMA synchronous = NORMAL")


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
    return compact_json(value, sort_keys=True)
