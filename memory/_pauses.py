"""What paused runs wait for: the journal's `waits` table, one row per approval a run waits on.

A run pauses when nothing is left to do but wait for people (see `agents._waits`): it writes what
waits here, then stores its status as "paused". Another process decides later: `decide` takes one
row's decision in one `BEGIN IMMEDIATE` transaction, so of two people deciding the same approval
one wins and the other is told it was decided. The run, resumed, finds its decisions here. Rows
stay as the run's history of who was asked what, when, and what they decided.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel, ConfigDict

from memory._sqlite import SQLiteFile

__all__ = ["WAITS_SCHEMA", "Pauses", "Waiting"]

WAITS_SCHEMA = """
CREATE TABLE IF NOT EXISTS waits (
    run_id TEXT NOT NULL,
    approval_id TEXT NOT NULL,
    request_json TEXT NOT NULL,
    asked REAL NOT NULL,
    decision_json TEXT,
    decided REAL,
    PRIMARY KEY (run_id, approval_id)
);
"""
_COLUMNS = "run_id, approval_id, request_json, asked, decision_json, decided"


class Waiting(BaseModel):
    """One approval a paused run waits on (or waited on).

    Attributes:
        run_id: The run.
        approval_id: The approval's id (`agent_id#seq`).
        request: The request, as JSON data (`agents.approvals.ApprovalRequest`).
        asked: When it was first asked (seconds since the epoch).
        decision: The decision, as JSON data (`agents.approvals.Decision`), once made.
        decided: When it was decided.
    """

    model_config = ConfigDict(frozen=True)

    run_id: str
    approval_id: str
    request: dict[str, Any]
    asked: float
    decision: dict[str, Any] | None = None
    decided: float | None = None


class Pauses(SQLiteFile):
    """The journal's waits (`Journal` is one; its schema includes `WAITS_SCHEMA`)."""

    async def pause(
        self,
        run_id: str,
        waiting: Iterable[tuple[str, dict[str, Any], float]],
        *,
        status: bool = False,
    ) -> None:
        """Record what the run waits on: (approval id, request, when asked) each; an approval
        already recorded keeps its row (a run that pauses again still waits since then). With
        `status`, the run is marked paused too (its owner stopped it without ending it)."""
        rows = [(run_id, i, json.dumps(r, sort_keys=True), asked) for i, r, asked in waiting]
        sql = "INSERT OR IGNORE INTO waits (run_id, approval_id, request_json, asked) VALUES (?, ?, ?, ?)"

        def write(conn: sqlite3.Connection) -> None:
            with conn:  # one transaction: what waits, and the status with it
                conn.executemany(sql, rows)
                if status:
                    mark = "UPDATE runs SET status = 'paused', updated = ? WHERE run_id = ?"
                    conn.execute(mark, (time.time(), run_id))

        await self._run(write)

    async def keep(self, run_id: str, result: dict[str, Any]) -> None:
        """Store what a resumed run must not lose (its stored result: how long it waited)."""
        sql = "UPDATE runs SET result_json = ? WHERE run_id = ?"
        body = json.dumps(result, sort_keys=True)
        await self._run(lambda conn: conn.execute(sql, (body, run_id)))

    async def waiting(self, run_id: str | None = None) -> list[Waiting]:
        """The undecided approvals of paused runs (of `run_id`, if given), oldest first."""
        sql = (
            f"SELECT {', '.join('w.' + c.strip() for c in _COLUMNS.split(','))} FROM waits w "
            "JOIN runs r ON r.run_id = w.run_id "
            "WHERE r.status = 'paused' AND w.decision_json IS NULL"
        )
        params: tuple[str, ...] = ()
        if run_id is not None:
            sql += " AND w.run_id = ?"
            params = (run_id,)
        rows = await self._run(
            lambda conn: conn.execute(sql + " ORDER BY w.asked", params).fetchall()
        )
        return [_waiting(row) for row in rows]

    async def waits_of(self, run_id: str) -> list[Waiting]:
        """Every approval the run was ever paused on, decided or not, oldest first."""
        sql = f"SELECT {_COLUMNS} FROM waits WHERE run_id = ? ORDER BY asked"
        rows = await self._run(lambda conn: conn.execute(sql, (run_id,)).fetchall())
        return [_waiting(row) for row in rows]

    async def decide(self, run_id: str, approval_id: str, decision: dict[str, Any]) -> Waiting:
        """Take the decision on one approval of a paused run; returns its row.

        Raises:
            JournalError: The run is unknown, or not paused, or does not wait for this approval,
                or someone decided it first.
        """
        return await self._run(lambda conn: self._decide(conn, run_id, approval_id, decision))

    def _decide(
        self, conn: sqlite3.Connection, run_id: str, approval_id: str, decision: dict[str, Any]
    ) -> Waiting:
        # IMMEDIATE takes the write lock before the reads: two deciders cannot both see it open.
        conn.execute("BEGIN IMMEDIATE")
        try:
            waiting = self._open_wait(conn, run_id, approval_id)
            now = time.time()
            conn.execute(
                "UPDATE waits SET decision_json = ?, decided = ? WHERE run_id = ? AND approval_id = ?",
                (json.dumps(decision, sort_keys=True), now, run_id, approval_id),
            )
            conn.commit()
        except Exception:
            conn.rollback()
            raise
        return waiting.model_copy(update={"decision": decision, "decided": now})

    def _open_wait(self, conn: sqlite3.Connection, run_id: str, approval_id: str) -> Waiting:
        """The undecided row, or the one-line reason there is none to decide."""
        status = conn.execute("SELECT status FROM runs WHERE run_id = ?", (run_id,)).fetchone()
        if status is None:
            raise self._error(f"no run {run_id}")
        if status[0] != "paused":
            raise self._error(f"run {run_id} is not waiting for a decision (it is {status[0]})")
        sql = f"SELECT {_COLUMNS} FROM waits WHERE run_id = ? AND approval_id = ?"
        row = conn.execute(sql, (run_id, approval_id)).fetchone()
        if row is None:
            rows = conn.execute(
                "SELECT approval_id FROM waits WHERE run_id = ? AND decision_json IS NULL",
                (run_id,),
            ).fetchall()
            open_ids = ", ".join(r[0] for r in rows) or "nothing"
            raise self._error(
                f"run {run_id} does not wait for {approval_id}; it waits for: {open_ids}"
            )
        found = _waiting(row)
        if found.decision is not None:
            when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(found.decided or 0))
            action = found.decision.get("action", "?")
            raise self._error(
                f"{approval_id} of run {run_id} was already decided ({action}, at {when})"
            )
        return found


def _waiting(row: tuple[Any, ...]) -> Waiting:
    run_id, approval_id, request, asked, decision, decided = row
    return Waiting(
        run_id=run_id,
        approval_id=approval_id,
        request=json.loads(request),
        asked=asked,
        decision=None if decision is None else json.loads(decision),
        decided=decided,
    )
