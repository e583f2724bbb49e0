"""The journal store: records and their CRCs, damaged, torn and locked files, the run lease,
file modes and pruning."""

from __future__ import annotations

import os
import shutil
import socket
import sqlite3
import stat
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import anyio
import anyio.abc
import pytest

from memory import Journal
from memory.journal import EffectRecord, JournalError, RunLocked, RunStatus

pytestmark = pytest.mark.anyio

GUARD_S = 20  # a deadlock guard, not a timing claim
# Another process: takes the database's write lock, says so, holds it until its stdin closes.
HOLDER = """
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("BEGIN EXCLUSIVE")
print("locked", flush=True)
sys.stdin.read()
conn.rollback()
"""


@dataclass(kw_only=True, slots=True)
class LockHolder:
    """Another process holding a SQLite file's write lock until released."""

    path: Path
    processes: list[anyio.abc.Process] = field(default_factory=list)

    async def hold(self) -> None:
        """Take the lock; returns once it is held."""
        process = await anyio.open_process([sys.executable, "-c", HOLDER, str(self.path)])
        self.processes.append(process)
        assert process.stdout is not None
        assert (await process.stdout.receive()).startswith(b"locked")

    async def release(self) -> None:
        """Give the lock back (if held); returns once the holder has exited."""
        while self.processes:
            process = self.processes.pop()
            assert process.stdin is not None
            await process.stdin.aclose()
            await process.wait()
            await process.aclose()

    async def __aenter__(self) -> LockHolder:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        with anyio.CancelScope(shield=True):
            await self.release()


@pytest.fixture
async def holder(tmp_path: Path) -> AsyncIterator[LockHolder]:
    """Another process that can lock `journal.db`; it lets go at the end of the test."""
    async with LockHolder(path=tmp_path / "journal.db") as locker:
        yield locker


def _model(agent_id: str, seq: int, text: str = "x") -> EffectRecord:
    return EffectRecord(
        agent_id=agent_id, seq=seq, kind="model", digest=f"d{seq}", payload={"content": text}
    )


def _clock(agent_id: str, seq: int, value: float = 1.0) -> EffectRecord:
    return EffectRecord(
        agent_id=agent_id, seq=seq, kind="clock", digest="clock", payload={"value": value}
    )


def _raw(path: Path, sql: str, *params: object) -> None:
    with closing(sqlite3.connect(path)) as conn, conn:
        conn.execute(sql, params)


@pytest.fixture
async def journal(tmp_path: Path) -> AsyncIterator[Journal]:
    """An open journal with one running run "r1"."""
    async with Journal(tmp_path / "journal.db") as opened:
        await opened.begin("r1", "the goal", meta={"command": "test"})
        yield opened


async def test_records_come_back_in_the_order_they_were_written(journal: Journal) -> None:
    """Records round-trip with their payloads, in write order, per run."""
    written = [_clock("a", 1, 5.0), _model("b", 1), _model("a", 2, "two"), _clock("run", 0)]
    for record in written:
        await journal.append("r1", record)
    await journal.begin("r2", "another")
    await journal.append("r2", _model("a", 1, "other run"))

    assert await journal.load("r1") == written
    assert await journal.load("r2") == [_model("a", 1, "other run")]


async def test_a_record_with_a_bad_crc_drops_it_and_the_agents_later_ones(
    journal: Journal,
) -> None:
    """Damage to one record: its agent keeps only what came before it; other agents keep all."""
    for record in [_model("a", 1), _model("a", 2), _model("a", 3), _model("b", 1), _model("b", 2)]:
        await journal.append("r1", record)
    stop = EffectRecord(agent_id="a", seq=0, kind="choice", digest="s", payload={"value": "x"})
    await journal.append("r1", stop)
    _raw(
        journal.path,
        "UPDATE effects SET payload_json = ? WHERE agent_id = 'a' AND seq = 2",
        '{"content":"tampered"}',
    )

    kept = await journal.load("r1")

    # a#2 is damaged: a#1 stays; a#3 and a's stop record (written last) go.
    assert [(r.agent_id, r.seq) for r in kept] == [("a", 1), ("b", 1), ("b", 2)]


async def test_garbage_rows_count_as_damage(journal: Journal) -> None:
    """Rows that are not records (unknown kind, unreadable JSON, a CRC of another row) are
    damage like any other: dropped with their agent's later records, never a crash."""
    for record in [_model("a", 1), _model("a", 2), _model("b", 1), _model("c", 1), _model("c", 2)]:
        await journal.append("r1", record)
    _raw(journal.path, "UPDATE effects SET kind = 'bogus' WHERE agent_id = 'a' AND seq = 2")
    _raw(journal.path, "UPDATE effects SET payload_json = '{not json' WHERE agent_id = 'b'")
    _raw(journal.path, "UPDATE effects SET crc = crc + 1 WHERE agent_id = 'c' AND seq = 1")

    kept = await journal.load("r1")

    assert [(r.agent_id, r.seq) for r in kept] == [("a", 1)]


async def test_a_torn_write_ahead_log_keeps_every_whole_record(tmp_path: Path) -> None:
    """A process killed mid-write leaves a torn WAL tail: opening the journal again loses only
    the record that was being written, and the run resumes from the last whole one."""
    live, copy = tmp_path / "live", tmp_path / "copy"
    live.mkdir()
    copy.mkdir()
    async with Journal(live / "journal.db") as journal:
        await journal.begin("r1", "goal")
        for seq in range(1, 6):
            await journal.append("r1", _model("a", seq, "y" * 300))
        # Copied while open: the records are in the WAL, as when the process is killed.
        for name in ("journal.db", "journal.db-wal"):
            shutil.copy(live / name, copy / name)
    wal = copy / "journal.db-wal"
    os.truncate(wal, wal.stat().st_size - 100)  # the last frame, torn

    async with Journal(copy / "journal.db") as reopened:
        kept = await reopened.load("r1")

    assert [r.seq for r in kept] == [1, 2, 3, 4]
    assert kept[-1] == _model("a", 4, "y" * 300)


async def test_a_file_that_is_not_a_journal_is_a_clear_error(tmp_path: Path) -> None:
    """A damaged or foreign file is refused with a one-line JournalError naming it."""
    path = tmp_path / "journal.db"
    path.write_bytes(b"this is not a database at all" * 100)

    with pytest.raises(JournalError, match=r"journal\.db is damaged or not a paor journal"):
        await Journal(path).open()


async def test_a_truncated_journal_is_a_clear_error(tmp_path: Path) -> None:
    """A journal file cut short (its pages gone) gives a JournalError, not a crash."""
    path = tmp_path / "journal.db"
    async with Journal(path) as journal:
        await journal.begin("r1", "goal")
        for seq in range(1, 200):
            await journal.append("r1", _model("a", seq, "z" * 500))
    os.truncate(path, path.stat().st_size // 3)

    with pytest.raises(JournalError, match=r"journal\.db"):
        async with Journal(path) as reopened:
            await reopened.load("r1")


async def test_two_claimers_one_wins_the_other_gets_run_locked(tmp_path: Path) -> None:
    """Two processes resuming the same crashed run at once: exactly one gets the lease; the
    other's RunLocked says who holds it."""
    path = tmp_path / "journal.db"
    async with Journal(path) as first:
        await first.begin("r1", "goal")
        await first.finish("r1")  # crashed: running, with no owner
    outcomes: list[str] = []

    async def claim(journal: Journal) -> None:
        try:
            await journal.claim("r1")
            outcomes.append("won")
        except RunLocked as exc:
            outcomes.append(str(exc))

    async with Journal(path) as one, Journal(path) as two, anyio.create_task_group() as tg:
        tg.start_soon(claim, one)
        tg.start_soon(claim, two)

    assert sorted(outcomes)[-1] == "won"
    (locked,) = [o for o in outcomes if o != "won"]
    assert locked.startswith("run r1 is held by another live process (pid ")
    assert f"pid {os.getpid()} on {socket.gethostname()}" in locked


async def test_a_stale_lease_is_taken_over(tmp_path: Path) -> None:
    """An owner whose heartbeat is older than the lease has lost it, even if its pid lives."""
    path = tmp_path / "journal.db"
    async with Journal(path) as holder, Journal(path) as taker:
        await holder.begin("r1", "goal")
        with pytest.raises(RunLocked):
            await taker.claim("r1")
        _raw(path, "UPDATE runs SET heartbeat = ?", time.time() - 31)

        info = await taker.claim("r1")

        assert info.owner == taker.owner
        assert not await holder.heartbeat("r1")  # the old holder learns it lost the lease


async def test_a_dead_owner_on_this_host_is_taken_over_and_listed_as_crashed(
    tmp_path: Path,
) -> None:
    """A run whose owner process died (its pid is gone) reads as crashed and can be claimed at
    once, heartbeat or not."""
    path = tmp_path / "journal.db"
    gone = await anyio.run_process([sys.executable, "-c", "import os; print(os.getpid())"])
    dead_pid = gone.stdout.decode().strip()
    async with Journal(path) as journal:
        await journal.begin("r1", "goal")
        _raw(path, "UPDATE runs SET owner = ?", f"{socket.gethostname()}:{dead_pid}:x")

        (listed,) = await journal.runs()
        info = await journal.claim("r1")

    assert listed.status == "crashed"
    assert (info.status, info.owner) == ("running", journal.owner)


async def test_finish_stores_the_status_and_result_and_releases(journal: Journal) -> None:
    """A finished run keeps its status, result and metadata; its lease is free."""
    await journal.finish("r1", "complete", {"answer": "42"})

    info = await journal.run("r1")

    assert info is not None
    assert (info.status, info.owner, info.result) == ("complete", None, {"answer": "42"})
    assert info.meta == {"command": "test"}
    assert info.finished
    assert await journal.run("nope") is None


async def test_a_lone_surrogate_from_a_model_is_stored_and_read_back(journal: Journal) -> None:
    """Text SQLite cannot store as UTF-8 (a lone surrogate a model sent JSON-escaped) is kept,
    escaped, in records and results: the same value reads back, and its CRC checks."""
    odd = "caf\udce9"
    await journal.append("r1", _model("a", 1, odd))
    await journal.finish("r1", "complete", {"answer": odd})
    (record,) = await journal.load("r1")
    assert record.payload == {"content": odd}
    info = await journal.run("r1")
    assert info is not None
    assert info.result == {"answer": odd}


async def test_a_run_id_cannot_be_registered_twice(journal: Journal) -> None:
    """`begin` refuses an id the journal already has."""
    with pytest.raises(JournalError, match="run r1 already exists"):
        await journal.begin("r1", "again")


async def test_claiming_an_unknown_run_is_an_error(journal: Journal) -> None:
    """`claim` names the run it could not find."""
    with pytest.raises(JournalError, match="no run r9 in"):
        await journal.claim("r9")


def test_the_default_path_is_under_paor_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`$PAOR_HOME/journal.db`, else `~/.paor/journal.db`."""
    monkeypatch.setenv("PAOR_HOME", str(tmp_path))
    assert Journal.default_path() == tmp_path / "journal.db"
    monkeypatch.delenv("PAOR_HOME")
    assert Journal.default_path() == Path.home() / ".paor" / "journal.db"


async def test_a_write_waits_out_another_processs_lock(
    journal: Journal, holder: LockHolder
) -> None:
    """A write that finds the file locked by another process goes through once the lock is
    given back."""
    await holder.hold()
    with anyio.fail_after(GUARD_S):
        async with anyio.create_task_group() as tg:
            tg.start_soon(journal.begin, "r2", "waited")
            await anyio.wait_all_tasks_blocked()  # the write is waiting for the lock
            await holder.release()

    info = await journal.run("r2")
    assert info is not None
    assert info.goal == "waited"


async def test_a_cancelled_caller_stops_waiting_for_a_locked_journal(
    tmp_path: Path, holder: LockHolder
) -> None:
    """However long the journal would wait for another process's lock, cancelling the caller
    (its deadline, a stop) ends the wait: nothing is written."""
    async with Journal(tmp_path / "journal.db", timeout=600) as journal:
        await holder.hold()
        with anyio.fail_after(GUARD_S):
            async with anyio.create_task_group() as tg:
                tg.start_soon(journal.begin, "r2", "never")
                await anyio.wait_all_tasks_blocked()
                tg.cancel_scope.cancel()
        await holder.release()

        assert await journal.run("r2") is None


async def test_a_lock_held_past_the_journals_patience_is_a_one_line_error(
    tmp_path: Path, holder: LockHolder
) -> None:
    """When the other process keeps its lock longer than `timeout`, the write fails with a
    one-line JournalError naming the file and the lock."""
    path = tmp_path / "journal.db"
    async with Journal(path, timeout=0.1) as journal:
        await holder.hold()
        with anyio.fail_after(GUARD_S), pytest.raises(JournalError) as caught:
            await journal.begin("r2", "goal")

    message = str(caught.value)
    assert str(path) in message
    assert "database is locked" in message
    assert "\n" not in message


@pytest.fixture
def umask_022() -> Iterator[None]:
    """The common umask, under which new files are readable by everyone."""
    previous = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(previous)


@pytest.mark.usefixtures("umask_022")
async def test_a_new_journal_and_its_wal_and_shm_files_are_private(tmp_path: Path) -> None:
    """A journal created by paor is readable by its owner only, and so are its -wal and -shm
    files."""
    path = tmp_path / "home" / "journal.db"
    async with Journal(path) as journal:
        await journal.begin("r1", "a private goal")
        modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in path.parent.iterdir()}

    assert modes == {"journal.db": 0o600, "journal.db-wal": 0o600, "journal.db-shm": 0o600}


@pytest.mark.usefixtures("umask_022")
async def test_an_existing_journals_mode_is_left_alone(tmp_path: Path) -> None:
    """A journal whose owner chose its mode (say, shared with a group) keeps it."""
    path = tmp_path / "journal.db"
    async with Journal(path) as journal:
        await journal.begin("r1", "goal")
    path.chmod(0o640)

    async with Journal(path) as reopened:
        await reopened.begin("r2", "goal")

    assert stat.S_IMODE(path.stat().st_mode) == 0o640


async def _runs(journal: Journal, *runs: tuple[str, RunStatus, float]) -> None:
    """Register `runs` (id, status, age in seconds), each with one effect record; "running"
    stays held by `journal`, "crashed" is running with no owner."""
    for run_id, status, age in runs:
        await journal.begin(run_id, f"goal {run_id}")
        await journal.append(run_id, _model("a", 1, run_id))
        if status == "crashed":
            await journal.finish(run_id)
        elif status != "running":
            await journal.finish(run_id, status, {"answer": run_id})
        _raw(
            journal.path, "UPDATE runs SET updated = ? WHERE run_id = ?", time.time() - age, run_id
        )


async def test_prune_removes_finished_runs_older_than_an_age_with_their_records(
    journal: Journal,
) -> None:
    """Complete, incomplete and failed runs older than the age go, their records with them;
    newer ones, live ones and crashed (resumable) ones stay."""
    day = 86400.0
    await _runs(
        journal,
        ("old-complete", "complete", 3 * day), ("old-incomplete", "incomplete", 3 * day),
        ("old-failed", "failed", 3 * day), ("old-crashed", "crashed", 3 * day),
        ("old-running", "running", 3 * day), ("new-complete", "complete", 60.0),
    )  # fmt: skip

    removed = await journal.prune(older_than_s=day)

    assert removed == 3
    kept = sorted(info.run_id for info in await journal.runs())
    assert kept == ["new-complete", "old-crashed", "old-running", "r1"]
    assert await journal.load("old-complete") == []
    assert await journal.load("new-complete") == [_model("a", 1, "new-complete")]


async def test_prune_keeps_the_newest_finished_runs_and_crashed_ones_only_if_asked(
    journal: Journal,
) -> None:
    """With `keep`, only the newest finished runs stay; crashed runs count, and go, only with
    `include_crashed`; a live run is never touched."""
    await _runs(
        journal,
        ("f1", "complete", 10.0), ("f2", "failed", 20.0), ("f3", "complete", 30.0),
        ("c1", "crashed", 5.0), ("c2", "crashed", 40.0),
    )  # fmt: skip

    assert await journal.prune(keep=2) == 1
    assert sorted(i.run_id for i in await journal.runs()) == ["c1", "c2", "f1", "f2", "r1"]

    assert await journal.prune(keep=2, include_crashed=True) == 2
    assert sorted(i.run_id for i in await journal.runs()) == ["c1", "f1", "r1"]
    assert await journal.prune(older_than_s=0, keep=0, include_crashed=True) == 2
    assert [i.run_id for i in await journal.runs()] == ["r1"]


def _size(path: Path) -> int:
    """The bytes of a database with its write-ahead log."""
    wal = path.with_name(path.name + "-wal")
    return path.stat().st_size + (wal.stat().st_size if wal.exists() else 0)


@pytest.mark.parametrize("made_by", ["this-version", "an-older-version"])
async def test_prune_shrinks_the_file(tmp_path: Path, made_by: str) -> None:
    """The space of pruned runs is given back to the file system, in a journal made by this
    version (incremental vacuum) or by an older one (a full vacuum, once)."""
    path = tmp_path / "journal.db"
    if made_by == "an-older-version":
        with closing(sqlite3.connect(path)) as conn:
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("CREATE TABLE old_marker (x)")
    async with Journal(path) as journal:
        await journal.begin("big", "goal")
        for seq in range(1, 400):
            await journal.append("big", _model("a", seq, "z" * 4000))
        await journal.finish("big", "complete", {})
        _raw(path, "PRAGMA wal_checkpoint(TRUNCATE)")
        before = _size(path)

        assert await journal.prune(keep=0) == 1

        assert _size(path) < before // 10


async def test_prune_needs_an_age_or_a_count(journal: Journal) -> None:
    """Pruning with neither an age nor a count would empty the journal: a ValueError."""
    with pytest.raises(ValueError, match="older_than_s or keep"):
        await journal.prune()
    with pytest.raises(ValueError, match="keep"):
        await journal.prune(keep=-1)


async def _sync_level(journal: Journal) -> int:
    """The connection's PRAGMA synchronous (1 NORMAL, 2 FULL)."""
    row = await journal._run(lambda conn: conn.execute("PRAGMA synchronous").fetchone())
    return int(row[0])


@pytest.mark.parametrize(("fsync", "level"), [("intents", 1), ("always", 2)])
async def test_records_are_synced_as_configured_and_intents_always(
    tmp_path: Path, fsync: Literal["intents", "always"], level: int
) -> None:
    """By default a record is left to the OS (it survives a process crash) and an intent is
    synced to the disk; `fsync="always"` syncs every record. Writing an intent leaves the
    connection at its own level, and every record reads back."""
    async with Journal(tmp_path / "journal.db", fsync=fsync) as journal:
        await journal.begin("r", "goal")
        assert await _sync_level(journal) == level
        intent = EffectRecord(
            agent_id="a", seq=2, kind="intent", digest="t", payload={"tool": "send"}
        )
        said: list[str] = []
        await journal._run(lambda conn: conn.set_trace_callback(said.append))
        await journal.append("r", _model("a", 1))
        await journal.append("r", intent)
        await journal._run(lambda conn: conn.set_trace_callback(None))
        assert await _sync_level(journal) == level
        assert [r.kind for r in await journal.load("r")] == ["model", "intent"]
    # What ran, in order: under "intents" only the intent's insert sits inside a FULL sync.
    shape = ["FULL" if "= FULL" in s else "NORMAL" if "= NORMAL" in s else "insert" for s in said]
    synced = ["insert", "FULL", "insert", "NORMAL"] if fsync == "intents" else ["insert", "insert"]
    assert shape == synced
