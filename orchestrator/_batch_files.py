"""Batch files: reading and checking them (`run_batch` is at the front door).

A task file is JSON Lines, one `{"id": ..., "goal": ...}` a line. `check_tasks` reads it through
once, keeping only the ids, so a file is known good before anything runs; `read_tasks` then hands
its goals out one line at a time, so a batch holds only the goals it is running however long the
file is. `load_tasks` is both at once, as a list, for a file small enough to hold.

An output file holds whole lines only. `repair_tail` makes it so before a batch appends to it
again: a last line without its newline (a crash or a full disk mid-write) is ended if it is a
whole record, and otherwise moved aside to `OUT.torn` and cut off, with a one-line warning, so its
goal runs again.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections import Counter
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agents import ConfigurationError
from agents.errors import RunError
from agents.telemetry import logger
from orchestrator._files import WriteFailed

__all__ = [
    "OutputLocked",
    "check_output",
    "check_tasks",
    "load_tasks",
    "read_tasks",
    "repair_tail",
]

TORN_SUFFIX = ".torn"
"""Added to an output file's name to name where its torn last lines are kept."""
_BLOCK = 65_536  # bytes read at a time, backwards, looking for the last line's start
_log = logger("paor.batch")


class OutputLocked(RunError):
    """Another batch is writing the output file: wait for it, or write somewhere else."""


class BatchTask(BaseModel):
    """One line of a batch file: `{"id": "...", "goal": "..."}` (id optional)."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    id: str = ""
    goal: str = Field(min_length=1, pattern=r"\S")  # not blank

    def key(self) -> str:
        """The id, or a stable one derived from the goal."""
        return self.id or "goal-" + hashlib.sha1(self.goal.encode()).hexdigest()[:12]


@contextmanager
def read_tasks(path: Path) -> Iterator[Iterator[BatchTask]]:
    """The tasks of a batch file, each read and checked when it is asked for, while the block
    lasts (the file is open until it ends). Duplicate ids are not looked for: `check_tasks` first.

    Raises:
        ConfigurationError: The file is missing or unreadable (at once); a line is not a task,
            or the file is not UTF-8 (when the iteration reaches it).
    """
    if not path.is_file():
        raise ConfigurationError(f"batch file not found: {path}")
    try:
        # Lines end at "\n" (or "\r"): not at U+2028 and the like, which JSON allows in a string.
        lines = path.open(encoding="utf-8")
    except OSError as exc:
        raise _unreadable(path, exc) from None
    with lines:
        yield _parsed(path, lines)


def check_tasks(path: Path) -> None:
    """Read a whole batch file and check every line, and that no two tasks share an id, keeping
    only the ids; raise `ConfigurationError` naming the first bad line."""
    with read_tasks(path) as tasks:
        _distinct(path, (task.key() for task in tasks))


def load_tasks(path: Path) -> list[BatchTask]:
    """Read and validate a batch file; raise `ConfigurationError` naming the first bad line."""
    with read_tasks(path) as reading:
        tasks = list(reading)
    _distinct(path, (task.key() for task in tasks))
    return tasks


def check_output(tasks_path: Path, out: Path) -> None:
    """Refuse an output file that is the task file, by whatever path, symlink or hard link:
    appending results to it would destroy the tasks.

    Raises:
        ConfigurationError: `out` and `tasks_path` are one file.
    """
    try:
        same = os.path.samefile(tasks_path, out)
    except OSError:
        same = False  # one of them does not exist (yet): they are not one file
    if same:
        raise ConfigurationError(
            f"the output {out} is the task file {tasks_path}: writing to it would destroy the "
            "tasks; choose another output file"
        )


def _parsed(path: Path, lines: Iterable[str]) -> Iterator[BatchTask]:
    """The tasks on `lines`, blank lines skipped."""
    try:
        for number, line in enumerate(lines, 1):
            if line.strip():
                yield _task(path, number, line)
    except (OSError, UnicodeDecodeError) as exc:  # decoding happens as the file is read
        raise _unreadable(path, exc) from None


def _task(path: Path, number: int, line: str) -> BatchTask:
    try:
        return BatchTask.model_validate_json(line)
    except ValidationError as exc:
        problem = exc.errors()[0]["msg"]
        raise ConfigurationError(f"{path}:{number}: not a valid task line ({problem})") from None


def _unreadable(path: Path, exc: Exception) -> ConfigurationError:
    return ConfigurationError(f"cannot read batch file {path}: {exc}")


def _distinct(path: Path, keys: Iterable[str]) -> None:
    """Raise `ConfigurationError` naming the first few ids that occur more than once."""
    duplicates = sorted(k for k, n in Counter(keys).items() if n > 1)
    if duplicates:
        shown = ", ".join(_shown(key) for key in duplicates[:5])
        raise ConfigurationError(f"{path}: duplicate task ids: {shown}")


def _shown(key: str) -> str:
    """A task id for a one-line message: as it is, or JSON-quoted if it has control characters."""
    return key if key.isprintable() else json.dumps(key)


def repair_tail(out: Path) -> Path | None:
    """Leave `out` ending with a whole line (or empty). A last line without its newline is ended
    if it is whole JSON, and otherwise is torn: it is appended to `OUT.torn` (on a line of its
    own, its bytes as they were), cut off, and named in a `batch_output_torn` warning.

    Returns:
        Where a torn line went, if one did.

    Raises:
        WriteFailed: The torn line could not be kept or cut (`out` is then as it was, or its
            torn line is kept twice, never lost).
    """
    try:
        with out.open("r+b") as file:
            start = _last_line_start(file)
            if start is None:
                return None
            file.seek(start)
            tail = file.read()
            if _whole(tail):
                _append(file, b"\n")
                return None
            aside = out.with_name(out.name + TORN_SUFFIX)
            with aside.open("ab") as kept:
                _append(kept, tail + b"\n")
            file.truncate(start)
            os.fsync(file.fileno())
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise WriteFailed(exc.filename or out, exc) from exc
    _log.warning("batch_output_torn", out=str(out), torn_bytes=len(tail), kept_in=str(aside))
    return aside


def _last_line_start(file: BinaryIO) -> int | None:
    """Where the file's last line begins, if that line has no newline (None: the file is empty
    or ends with one)."""
    end = file.seek(0, os.SEEK_END)
    if end == 0:
        return None
    file.seek(end - 1)
    if file.read(1) == b"\n":
        return None
    where = end
    while where > 0:
        size = min(_BLOCK, where)
        where -= size
        file.seek(where)
        found = file.read(size).rfind(b"\n")
        if found >= 0:
            return where + found + 1
    return 0


def _whole(line: bytes) -> bool:
    """Whether a line is whole JSON (a record whose newline alone was lost)."""
    try:
        json.loads(line.decode("utf-8"))
    except ValueError:  # UnicodeDecodeError and JSONDecodeError are ValueErrors
        return False
    return True


def _append(file: BinaryIO, data: bytes) -> None:
    """Write `data` at the end of `file` and make it durable."""
    file.seek(0, os.SEEK_END)
    file.write(data)
    file.flush()
    os.fsync(file.fileno())
