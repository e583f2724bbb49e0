"""One SQLite file used from async code: WAL mode, one connection, kept off the event loop.

Every call runs in a worker thread (`anyio.to_thread.run_sync`) on a single connection that a lock
hands to one thread at a time. The connection is in autocommit mode: a store that needs a
transaction opens one explicitly (`BEGIN IMMEDIATE`), so other processes on the same file are safe.

Another process's write lock is waited out, up to `timeout` seconds in all. SQLite waits inside
each attempt for at most half a second; between attempts the call sleeps on the event loop, so a
caller's deadline or cancellation ends the wait within one attempt, whatever `timeout` says. A
thread stuck in SQLite's own busy wait could not be cancelled at all.

A file the store creates is private (mode 0600); SQLite gives its -wal and -shm files the same
mode. An existing file's mode is left alone.

Opened `readonly`, the file must exist and is never written: no WAL switch, no schema, no -wal or
-shm file made where none is (on a read-only mount, a file with no -wal file is read as
immutable). A failure to open says which of two things went wrong: the file cannot be written
(a read-only file, folder or mount, a full disk) or it is damaged (not a database, corrupt).
"""

from __future__ import annotations

import errno
import os
import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path
from typing import ClassVar, Self, TypeVar

import anyio
import anyio.to_thread

from memory._logging import logger

__all__ = ["SQLiteFile", "shrink"]

_T = TypeVar("_T")
_ATTEMPT_S = 0.5  # the longest SQLite waits inside one attempt: how soon a cancel is heard
_FIRST_PAUSE_S = 0.01
_BUSY = frozenset({sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED})
# Errors of a file that cannot be written, not of a damaged one.
_UNWRITABLE = frozenset(
    {sqlite3.SQLITE_READONLY, sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_PERM, sqlite3.SQLITE_FULL}
)
_UNWRITABLE_OS = frozenset({errno.EROFS, errno.EACCES, errno.EPERM, errno.ENOSPC, errno.EDQUOT})
_log = logger("paor.sqlite")


class SQLiteFile:
    """The base of the SQLite stores: opening, closing and running calls off the event loop.

    Subclasses set `schema` (run on open) and `synchronous`, and may turn `sqlite3.Error` into
    their own error type through `_error`.

    Args:
        path: The database file; missing folders are created, a missing file is created private.
        timeout: Seconds to wait, in all, for another process's write lock on each call (the
            caller's own deadline or cancellation ends the wait sooner).
        readonly: Only read the file, which must exist (see the module's docstring).
    """

    schema: ClassVar[str] = ""
    synchronous: str = "NORMAL"  # the PRAGMA; a subclass may set it per instance

    def __init__(
        self, path: str | os.PathLike[str], *, timeout: float = 60.0, readonly: bool = False
    ) -> None:
        self.path = Path(path)
        self.timeout = timeout
        self.readonly = readonly
        self._conn: sqlite3.Connection | None = None
        self._lock = threading.Lock()

    async def open(self) -> Self:
        """Connect, switch to WAL mode and create the schema (once); read-only: only connect."""
        if self._conn is None:
            try:
                self._conn = await self._patiently(self._connect)
            except sqlite3.Error as exc:  # still locked when the wait ran out
                raise self._error(f"cannot open {self.path}: {self._why(exc)}") from exc
        return self

    async def aclose(self) -> None:
        """Close the connection (idempotent); waits for a call in flight to finish."""
        conn, self._conn = self._conn, None
        if conn is not None:
            with anyio.CancelScope(shield=True):
                await anyio.to_thread.run_sync(self._locked, conn, sqlite3.Connection.close)

    async def __aenter__(self) -> Self:
        return await self.open()

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def _run(self, fn: Callable[[sqlite3.Connection], _T]) -> _T:
        """Run `fn` with the connection in a worker thread, again while the file is locked."""
        conn = self._conn
        if conn is None:
            raise self._error(f"{self.path} is not open: use `async with` or `await open()`")
        try:
            return await self._patiently(lambda: self._locked(conn, fn))
        except sqlite3.Error as exc:
            if _cannot_write(exc):
                raise self._error(self._unwritable_why(exc)) from exc
            raise self._error(f"{self.path} cannot be used: {self._why(exc)}") from exc

    async def _patiently(self, call: Callable[[], _T]) -> _T:
        """`call` in a worker thread; while another connection holds the lock, again after a
        growing pause, until `timeout` has passed (then the last error is raised)."""
        give_up = anyio.current_time() + self.timeout
        pause = _FIRST_PAUSE_S
        while True:
            try:
                return await anyio.to_thread.run_sync(call)
            except sqlite3.OperationalError as exc:
                left = give_up - anyio.current_time()
                if not _busy(exc) or left <= 0:
                    raise
                if pause == _FIRST_PAUSE_S:
                    _log.warning("sqlite_busy", path=str(self.path), wait_s=self.timeout)
            # Polling, because a lock held by another process sends no notice of its release.
            await anyio.sleep(min(pause, left))
            pause = min(pause * 2, _ATTEMPT_S)

    def _why(self, exc: sqlite3.Error) -> str:
        """What went wrong, for a one-line message."""
        if isinstance(exc, sqlite3.OperationalError) and _busy(exc):
            return f"{exc} (another process held it for over {self.timeout:g}s)"
        return str(exc)

    def _error(self, message: str) -> Exception:
        """The exception to raise for a failure of this store (override for a domain error)."""
        return RuntimeError(message)

    def _locked(self, conn: sqlite3.Connection, fn: Callable[[sqlite3.Connection], _T]) -> _T:
        with self._lock:
            return fn(conn)

    def _connect(self) -> sqlite3.Connection:
        """A prepared connection; a locked file raises `sqlite3.OperationalError` (to retry)."""
        if self.readonly:
            return self._connect_readonly()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            _create_private(self.path)
            conn = sqlite3.connect(
                self.path,
                timeout=min(self.timeout, _ATTEMPT_S),
                isolation_level=None,
                check_same_thread=False,
            )
        except OSError as exc:
            if exc.errno in _UNWRITABLE_OS:
                raise self._error(self._unwritable_why(exc)) from exc
            raise self._error(f"cannot open {self.path}: {exc}") from exc
        except sqlite3.Error as exc:
            raise self._error(f"cannot open {self.path}: {exc}") from exc
        return self._checked(conn, self._prepare)

    def _connect_readonly(self) -> sqlite3.Connection:
        """A connection that never writes the file (see the module's docstring)."""
        if not self.path.is_file():
            raise self._error(f"cannot open {self.path}: there is no such file")
        try:
            return self._checked(self._uri_connect(immutable=False), _probe)
        except sqlite3.OperationalError as exc:
            # A WAL file's readers need its -shm index, which a read-only folder cannot get. With
            # no -wal file every committed page is in the file itself: reading it as immutable
            # (no locks, no index) then sees all of it. A -wal file must not be ignored.
            if _code(exc) != sqlite3.SQLITE_CANTOPEN:
                raise  # a lock, waited out by `open`
            if self.path.with_name(self.path.name + "-wal").exists():
                raise self._error(
                    f"{self.path} cannot be read here: its folder is read-only and its -wal file "
                    f"holds changes (open it once where it can be written) ({exc})"
                ) from exc
        return self._checked(self._uri_connect(immutable=True), _probe)

    def _uri_connect(self, *, immutable: bool) -> sqlite3.Connection:
        uri = self.path.resolve().as_uri() + ("?mode=ro&immutable=1" if immutable else "?mode=ro")
        try:
            return sqlite3.connect(
                uri,
                uri=True,
                timeout=min(self.timeout, _ATTEMPT_S),
                isolation_level=None,
                check_same_thread=False,
            )
        except sqlite3.Error as exc:
            raise self._error(f"cannot open {self.path}: {exc}") from exc

    def _checked(
        self, conn: sqlite3.Connection, prepare: Callable[[sqlite3.Connection], object]
    ) -> sqlite3.Connection:
        """`conn` once `prepare` ran on it; its failure told apart: a lock (raised as is, to
        retry), a file that cannot be written, or a damaged file."""
        try:
            prepare(conn)
        except sqlite3.Error as exc:
            conn.close()
            if isinstance(exc, sqlite3.OperationalError) and _busy(exc):
                raise
            if self.readonly and _code(exc) == sqlite3.SQLITE_CANTOPEN:
                raise  # `_connect_readonly` may read it as immutable
            if _cannot_write(exc):
                raise self._error(self._unwritable_why(exc)) from exc
            raise self._error(f"{self.path} is damaged or not a {self._kind()}: {exc}") from exc
        return conn

    def _unwritable_why(self, exc: sqlite3.Error | OSError) -> str:
        """The message for a file that cannot be written: read-only, or on a full disk."""
        full = _code(exc) == sqlite3.SQLITE_FULL or getattr(exc, "errno", None) in (
            errno.ENOSPC,
            errno.EDQUOT,
        )
        why = "its disk is full" if full else "it is read-only (a read-only file, folder or mount)"
        return f"{self.path} cannot be written: {why} ({exc})"

    def _prepare(self, conn: sqlite3.Connection) -> None:
        # Only on a new, empty file: it takes nowhere else, and setting it needs the write lock.
        if conn.execute("PRAGMA page_count").fetchone() == (0,):
            conn.execute("PRAGMA auto_vacuum = INCREMENTAL")
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute(f"PRAGMA synchronous = {self.synchronous}")
        conn.executescript(self.schema)

    def _kind(self) -> str:
        return type(self).__name__


def shrink(conn: sqlite3.Connection) -> None:
    """Give a file's free pages back to the file system, then empty the write-ahead log.

    A file that was made with incremental auto-vacuum frees them cheaply; an older one gets a
    full `VACUUM`, once: it switches the file to incremental auto-vacuum as it rewrites it.
    """
    (mode,) = conn.execute("PRAGMA auto_vacuum").fetchone()
    if mode == 2:
        # executescript, not execute: execute steps the pragma once, freeing a single page.
        conn.executescript("PRAGMA incremental_vacuum;")
    else:
        conn.execute("PRAGMA auto_vacuum = INCREMENTAL")
        conn.execute("VACUUM")
    # In WAL mode the file shrinks only when the log is checkpointed into it.
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()


def _create_private(path: Path) -> None:
    """Create `path` empty with mode 0600 if it is missing; an existing file is not touched."""
    os.close(os.open(path, os.O_RDONLY | os.O_CREAT, 0o600))


def _probe(conn: sqlite3.Connection) -> None:
    """Read the file's header and schema: a file that is no database fails here, not later."""
    conn.execute("SELECT count(*) FROM sqlite_master").fetchone()


def _code(exc: BaseException) -> int | None:
    """SQLite's primary result code of `exc`, if it has one."""
    code = getattr(exc, "sqlite_errorcode", None)
    return None if code is None else int(code) & 0xFF


def _cannot_write(exc: sqlite3.Error) -> bool:
    """Whether the error says the file cannot be written (or opened to write): not damage."""
    return _code(exc) in _UNWRITABLE


def _busy(exc: sqlite3.OperationalError) -> bool:
    """Whether the error is another connection's lock (worth waiting out)."""
    code = getattr(exc, "sqlite_errorcode", None)
    return code is not None and code & 0xFF in _BUSY
