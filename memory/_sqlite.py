"""One SQLite file used from async code: WAL mode, one connection, kept off the event loop.

Every call runs in a worker thread (`anyio.to_thread.run_sync`) on a single connection that a lock
hands to one thread at a time. The connection is in autocommit mode: a store that needs a
transaction opens one explicitly (`BEGIN IMMEDIATE`), so other processes on the same file are safe.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path
from typing import ClassVar, Self, TypeVar

import anyio
import anyio.to_thread

__all__ = ["SQLiteFile"]

_T = TypeVar("_T")


class SQLiteFile:
    """The base of the SQLite stores: opening, closing and running calls off the event loop.

    Subclasses set `schema` (run on open) and `synchronous`, and may turn `sqlite3.Error` into
    their own error type through `_error`.

    Args:
        path: The database file; missing folders are created.
        timeout: Seconds to wait for another writer's lock.
    """

    schema: ClassVar[str] = ""
    synchronous: ClassVar[str] = "NORMAL"

    def __init__(self, path: str | os.PathLike[str], *, timeout: float = 10.0) -> None:
        self.path = Path(path)
        self.timeout = timeout
        self._conn: sqlite3.Connection | None = None
        self._lock = threading.Lock()

    async def open(self) -> Self:
        """Connect, switch to WAL mode and create the schema (once)."""
        if self._conn is None:
            self._conn = await anyio.to_thread.run_sync(self._connect)
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
        """Run `fn` with the connection in a worker thread."""
        if self._conn is None:
            raise self._error(f"{self.path} is not open: use `async with` or `await open()`")
        try:
            return await anyio.to_thread.run_sync(self._locked, self._conn, fn)
        except sqlite3.Error as exc:
            raise self._error(f"{self.path} cannot be used: {exc}") from exc

    def _error(self, message: str) -> Exception:
        """The exception to raise for a failure of this store (override for a domain error)."""
        return RuntimeError(message)

    def _locked(self, conn: sqlite3.Connection, fn: Callable[[sqlite3.Connection], _T]) -> _T:
        with self._lock:
            return fn(conn)

    def _connect(self) -> sqlite3.Connection:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(
                self.path, timeout=self.timeout, isolation_level=None, check_same_thread=False
            )
        except (OSError, sqlite3.Error) as exc:
            raise self._error(f"cannot open {self.path}: {exc}") from exc
        try:
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute(f"PRAGMA synchronous = {self.synchronous}")
            conn.executescript(self.schema)
        except sqlite3.Error as exc:
            conn.close()
            raise self._error(f"{self.path} is damaged or not a {self._kind()}: {exc}") from exc
        return conn

    def _kind(self) -> str:
        return type(self).__name__
