"""What the command line shows and writes: text safe for a terminal, secrets masked, whole files.

Model-written text (a subtask's goal, an answer, a tool's error) reaches the terminal through
paor's output, so every line paor prints is cleaned of terminal control sequences first: an
escape could otherwise set the window title, clear the screen, or rewrite what the user reads.
A log file that cannot be opened raises `WriteFailed` (`orchestrator._files`), which the command
line says in one line, as it does for every user's file it cannot write.

Logging never fails a run: a log sink that fails (the `--log-json` file on a full disk, a closed
stderr) keeps its first error and drops what follows. Other libraries' standard `logging` records
(the MCP SDK's, httpx's, OpenTelemetry's) join the same output, one line each. Ctrl-C and SIGTERM
are one request to stop (`interrupts`).
"""

from __future__ import annotations

import errno
import logging
import os
import re
import signal
import sys
import threading
from collections.abc import Callable, MutableMapping
from contextlib import suppress
from functools import partial
from pathlib import Path
from typing import IO, Any, TextIO, cast

import anyio
import structlog
from anyio.abc import TaskStatus

from agents.telemetry import redact_text
from orchestrator._files import WriteFailed

__all__ = [
    "EXIT_INTERRUPTED",
    "EXIT_USAGE",
    "LogFile",
    "Logs",
    "clean",
    "configure_logging",
    "fail",
    "in_main_thread",
    "interrupts",
    "reader_gone",
    "say",
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
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130
_STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
# Standard levels: structlog names a record's level by these alone.
_LEVELS = (logging.DEBUG, logging.INFO, logging.WARNING, logging.ERROR, logging.CRITICAL)


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


async def interrupts(
    stop: anyio.Event | None,
    command: anyio.CancelScope,
    *,
    task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED,
) -> None:
    """Until cancelled: the first Ctrl-C or SIGTERM sets `stop` (the run ends with what it has: a
    service manager's SIGTERM asks what Ctrl-C asks), the second of either cancels the `command`
    (it aborts; a journaled run stays resumable). With no `stop` (a command with nothing to keep),
    the first cancels it. Started (`tg.start`) once it listens. Main thread only (see
    `in_main_thread`). No KeyboardInterrupt is raised: asyncio would print it as unhandled."""
    with anyio.open_signal_receiver(*_STOP_SIGNALS) as signals:
        task_status.started()
        async for received in signals:
            if stop is None or stop.is_set():
                command.cancel()
                return
            stop.set()
            _notice(_stopping(received))


def _stopping(received: int) -> str:
    """What the first stop request says; a SIGTERM is not called a Ctrl-C."""
    if received == signal.SIGINT:
        return "paor: stopping: the report will hold what was found so far (Ctrl-C again to abort)"
    return (
        "paor: stopping on SIGTERM: the report will hold what was found so far (another SIGTERM "
        "or Ctrl-C aborts)"
    )


def _notice(text: str) -> None:
    """`say` on stderr, unless stderr is gone: a notice is not worth failing the command for."""
    with suppress(OSError, ValueError):
        say(text, file=sys.stderr)


def in_main_thread() -> bool:
    """Whether signal handlers can be installed here (tests call `main` from worker threads)."""
    return threading.current_thread() is threading.main_thread()


class _Guarded:
    """A text stream whose writes never raise: a log line must not end the run it describes.

    The first failure (a full disk, a closed stderr, a reader gone) is kept in `failure` and
    every later write dropped; a text that cannot be encoded is dropped alone. With no `stream`
    (Python's `sys.stderr` when file descriptor 2 was closed), everything is dropped. What else a
    caller asks of it (`fileno`, `encoding`) is the stream's.

    Attributes:
        stream: The stream written to.
    """

    def __init__(self, stream: IO[str] | None) -> None:
        self.stream = stream
        self._closed = False
        self.failure: OSError | None = None

    def write(self, text: str) -> int:
        """Write `text`, unless a write already failed; returns its length either way."""
        if self.stream is not None:
            self._guarded(partial(self.stream.write, text))
        return len(text)

    def flush(self) -> None:
        """Flush, unless a write already failed."""
        if self.stream is not None:
            self._guarded(self.stream.flush)

    def isatty(self) -> bool:
        """Whether the stream is a terminal (one that failed is none)."""
        return self.stream is not None and self.failure is None and self.stream.isatty()

    def close(self) -> None:
        """Drop whatever comes later (a library's thread may log after the command ended)."""
        self._closed = True

    def __getattr__(self, name: str) -> Any:
        # Through `__dict__`: an instance not yet initialised (a copy) must not recurse here.
        return getattr(self.__dict__.get("stream"), name)

    def _guarded(self, call: Callable[[], object]) -> None:
        if self.failure is not None or self._closed:
            return
        try:
            call()
        except UnicodeError:
            return  # this text only
        except ValueError:  # "I/O operation on closed file": closed under us
            self.failure = OSError(errno.EBADF, os.strerror(errno.EBADF))
        except OSError as exc:
            self.failure = exc


class LogFile(_Guarded):
    """The `--log-json` file. A write that fails (a full disk) is kept in `error`, not raised:
    a log line must not end the run it describes; the command says it once it ends.

    Raises:
        WriteFailed: The file cannot be opened for appending.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            self._file = path.open("a", encoding="utf-8")
        except OSError as exc:
            raise WriteFailed(path, exc) from exc
        super().__init__(self._file)

    @property
    def error(self) -> WriteFailed | None:
        """Why the log stopped, if it did: the file named with its errno."""
        return None if self.failure is None else WriteFailed(self.path, self.failure)

    def close(self) -> None:
        """Close the file (its last flush may fail too: that is kept)."""
        if not self._closed:
            self.flush()
            super().close()
            try:
                self._file.close()
            except OSError as exc:  # the buffered rest, after a failure already kept
                self.failure = self.failure or exc


class _ForeignRecords(logging.Handler):
    """Other libraries' standard `logging` records (the MCP SDK's, httpx's, OpenTelemetry's),
    sent through the command's structlog output: one line each, naming the logger, with an
    exception as its one-line `type: message` (a traceback would bury the progress display).
    A record that cannot be written is dropped."""

    def emit(self, record: logging.LogRecord) -> None:
        """Log `record` as a structlog event (its message is the event)."""
        try:
            fields: dict[str, Any] = {"logger": record.name}
            if record.exc_info is not None and record.exc_info[1] is not None:
                fields["error"] = _one_line(record.exc_info[1])
            level = max([n for n in _LEVELS if n <= record.levelno], default=logging.DEBUG)
            _foreign.log(level, _flat(record.getMessage()), **fields)
        except Exception:  # a message whose arguments do not fit it, say
            self.handleError(record)

    def handleError(self, record: logging.LogRecord) -> None:
        """Drop the record: the standard library would print a traceback on stderr."""


def _one_line(exc: BaseException) -> str:
    """`ValueError: bad input`: an exception's type and message, on one line."""
    message = _flat(str(exc))
    return f"{type(exc).__name__}: {message}" if message else type(exc).__name__


def _flat(text: str) -> str:
    """`text` on one line: every run of whitespace (line breaks included) one space."""
    return " ".join(text.split())


_foreign = structlog.get_logger("foreign")


class Logs:
    """The command's log output, as `configure_logging` set it up; `close` when the command ends.

    For the command's duration `sys.stderr` is a guarded stream (see `_Guarded`): a reader of
    stderr that left, or a closed stderr, drops the progress lines and log records instead of
    failing the run (the report and stdout still say how it ended).

    Attributes:
        file: The `--log-json` file, if any.
    """

    def __init__(self, stderr: _Guarded, file: LogFile | None, level: int) -> None:
        self.file = file
        self._stderr = stderr
        self._root_level = logging.getLogger().level
        self._handler = _ForeignRecords(level)
        sys.stderr = cast(TextIO, stderr)
        logging.getLogger().addHandler(self._handler)
        logging.getLogger().setLevel(level)

    @property
    def error(self) -> WriteFailed | None:
        """Why the log file stopped, if it did (a closed stderr is not worth a word)."""
        return None if self.file is None else self.file.error

    def close(self) -> None:
        """Stop routing standard `logging` records, close the log file, give stderr back."""
        root = logging.getLogger()
        root.removeHandler(self._handler)
        root.setLevel(self._root_level)
        if self.file is not None:
            self.file.close()
        self._stderr.close()
        sys.stderr = cast(TextIO, self._stderr.stream)


def configure_logging(log_json: Path | None) -> Logs:
    """JSON lines to `log_json` if given; otherwise warnings on stderr, or only errors when stderr
    is a terminal: there the live progress block is redrawn in place, and log lines printed into
    it would break it (what matters reaches the report's notes and the progress display).

    Either way, secrets in free text are masked; on stderr, control sequences are removed. Other
    libraries' standard `logging` records join the same output, one line each: at the same
    threshold on stderr; from INFO in the file (their DEBUG records carry whole request bodies).
    A sink that fails drops its records rather than fail the run.

    Raises:
        WriteFailed: The `log_json` file cannot be opened for appending.
    """
    # A command run inside another's (tests call `main` again and again) guards the real stderr.
    real = sys.stderr.stream if isinstance(sys.stderr, _Guarded) else sys.stderr
    stderr = _Guarded(real)
    if log_json is None:
        level = logging.ERROR if stderr.isatty() else logging.WARNING
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
            logger_factory=structlog.WriteLoggerFactory(cast(TextIO, stderr)),
        )
        return Logs(stderr, None, level)
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
    return Logs(stderr, sink, logging.INFO)


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
