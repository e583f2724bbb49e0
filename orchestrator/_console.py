"""What the command line shows and writes: text safe for a terminal, secrets masked, whole files.

Model-written text (a subtask's goal, an answer, a tool's error) reaches the terminal through
paor's output, so every line paor prints is cleaned of terminal control sequences first: an
escape could otherwise set the window title, clear the screen, or rewrite what the user reads.
Reports are written atomically, through a symlink to its target, keeping the existing file's mode.
A user's file that cannot be written (a report, a page, the log, a batch output: a full disk, a
read-only folder) raises `WriteFailed`, which the command line says in one line.
"""

from __future__ import annotations

import errno
import logging
import os
import re
import signal
import stat
import sys
import tempfile
import threading
from collections.abc import Callable, MutableMapping
from pathlib import Path
from typing import IO, Any, TextIO, cast

import anyio
import structlog

from agents.telemetry import redact_text

__all__ = [
    "LogFile",
    "WriteFailed",
    "clean",
    "configure_logging",
    "fail",
    "in_main_thread",
    "interrupts",
    "reader_gone",
    "say",
    "write_atomically",
]

# ESC sequences (CSI, OSC up to BEL or ST, DCS/SOS/PM/APC strings, two-character escapes), C0
# controls other than tab and newline, DEL, C1 controls (a lone 0x9b starts a CSI on some
# terminals), and the bidirectional overrides that make text read other than it is. Every
# alternative is linear: no nested repetition.
_CONTROL = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]?"
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"
    r"|\x1b[PX^_][^\x1b]*(?:\x1b\\)?"
    r"|\x1b.?"
    r"|[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]",
    re.DOTALL,
)
_DEFAULT_MODE = 0o666
EXIT_USAGE = 2


class WriteFailed(OSError):
    """A user's file could not be written; its message is one line naming the file and errno.

    An `OSError` (its `errno`, `strerror` and `filename` are the failure's), so a caller of the
    library that catches `OSError` still catches it.
    """

    def __init__(self, path: str | os.PathLike[str], cause: OSError, hint: str = "") -> None:
        super().__init__(cause.errno or errno.EIO, cause.strerror or str(cause), os.fspath(path))
        self.hint = hint

    def __str__(self) -> str:
        text = f"cannot write {self.filename}: [Errno {self.errno}] {self.strerror}"
        return f"{text} ({self.hint})" if self.hint else text


def clean(text: str) -> str:
    """`text` without terminal control sequences (tabs and newlines kept)."""
    return _CONTROL.sub("", text)


def say(text: str, *, file: IO[str] | None = None) -> None:
    """Print one message of paor's, cleaned and with secrets masked."""
    print(clean(redact_text(text)), file=file if file is not None else sys.stdout)


def fail(message: str) -> int:
    """Say what went wrong on one line of stderr; returns the usage exit status (2)."""
    lines = [line.strip() for line in message.splitlines() if line.strip()]
    say(f"paor: error: {'; '.join(lines) or 'unknown error'}", file=sys.stderr)
    return EXIT_USAGE


def reader_gone() -> int:
    """The reader of stdout left (`paor show ... | head`): a normal end, not a traceback. Stdout
    is pointed at /dev/null so the interpreter's final flush does not fail again; returns 0 (the
    reader had what it wanted, and paor exits with none but its documented statuses)."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    return 0


async def interrupts(stop: anyio.Event, command: anyio.CancelScope) -> None:
    """Until cancelled: the first Ctrl-C sets `stop` (the run ends with what it has), the second
    cancels the `command` (it aborts; a journaled run stays resumable). Main thread only (see
    `in_main_thread`). No KeyboardInterrupt is raised: asyncio would print it as unhandled."""
    with anyio.open_signal_receiver(signal.SIGINT) as signals:
        async for _signal in signals:
            if stop.is_set():
                command.cancel()
                return
            stop.set()
            say(
                "paor: stopping: the report will hold what was found so far (Ctrl-C again "
                "to abort)",
                file=sys.stderr,
            )


def in_main_thread() -> bool:
    """Whether signal handlers can be installed here (tests call `main` from worker threads)."""
    return threading.current_thread() is threading.main_thread()


def write_atomically(path: Path, text: str) -> None:
    """Write `text` to `path` so that a crash leaves either the old file or the new one.

    A symlink is written through (its target is replaced, the link stays), and an existing file
    keeps its mode; a new one gets the usual mode for the umask, not the temporary file's 0600.

    Raises:
        WriteFailed: The file could not be written (the old one, if any, is left as it was).
    """
    target = Path(os.path.realpath(path))
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    except OSError as exc:
        raise WriteFailed(path, exc) from exc
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            os.fchmod(handle.fileno(), _mode_for(target))
        Path(tmp).replace(target)
    except BaseException as exc:
        Path(tmp).unlink(missing_ok=True)
        if isinstance(exc, OSError) and not isinstance(exc, WriteFailed):
            raise WriteFailed(path, exc) from exc
        raise


def _mode_for(target: Path) -> int:
    try:
        return stat.S_IMODE(target.stat().st_mode)
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        return _DEFAULT_MODE & ~umask


class LogFile:
    """The `--log-json` file. A write that fails (a full disk) is kept in `error`, not raised:
    a log line must not end the run it describes; the command says it once it ends.

    Raises:
        WriteFailed: The file cannot be opened for appending.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.error: WriteFailed | None = None
        try:
            self._file = path.open("a", encoding="utf-8")
        except OSError as exc:
            raise WriteFailed(path, exc) from exc

    def write(self, text: str) -> None:
        """Append `text`, unless a write already failed."""
        self._guarded(lambda: self._file.write(text))

    def flush(self) -> None:
        """Flush, unless a write already failed."""
        self._guarded(self._file.flush)

    def close(self) -> None:
        """Close the file (its last flush may fail too: that is kept)."""
        try:
            self._file.close()
        except OSError as exc:
            self.error = self.error or WriteFailed(self.path, exc)

    def _guarded(self, call: Callable[[], object]) -> None:
        if self.error is not None:
            return
        try:
            call()
        except OSError as exc:
            self.error = WriteFailed(self.path, exc)


def configure_logging(log_json: Path | None) -> LogFile | None:
    """JSON lines to `log_json` if given; otherwise warnings on stderr, or only errors when stderr
    is a terminal: there the live progress block is redrawn in place, and log lines printed into
    it would break it (what matters reaches the report's notes and the progress display).

    Either way, secrets in free text are masked; on stderr, control sequences are removed.
    """
    if log_json is None:
        level = logging.ERROR if sys.stderr.isatty() else logging.WARNING
        structlog.configure(
            processors=[
                structlog.contextvars.merge_contextvars,
                structlog.processors.add_log_level,
                structlog.processors.StackInfoRenderer(),
                structlog.dev.set_exc_info,
                structlog.processors.TimeStamper(fmt="%Y-%m-%d %H:%M:%S", utc=False),
                _mask_secrets,
                _clean_values,
                structlog.dev.ConsoleRenderer(colors=False),
            ],
            wrapper_class=structlog.make_filtering_bound_logger(level),
            logger_factory=structlog.PrintLoggerFactory(sys.stderr),
        )
        return None
    sink = LogFile(log_json)
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info,
            _mask_secrets,
            structlog.processors.JSONRenderer(),
        ],
        logger_factory=structlog.WriteLoggerFactory(cast(TextIO, sink)),
    )
    return sink


def _texts(change: Callable[[str], str]) -> structlog.types.Processor:
    """A structlog processor applying `change` to every text value of an event."""

    def process(
        _logger: Any, _method: str, event: MutableMapping[str, Any]
    ) -> MutableMapping[str, Any]:
        for key, value in event.items():
            if isinstance(value, str):
                event[key] = change(value)
        return event

    return process


_mask_secrets = _texts(redact_text)  # `password=...`-style secrets and URL credentials masked
_clean_values = _texts(clean)  # control sequences removed from text bound for a terminal
