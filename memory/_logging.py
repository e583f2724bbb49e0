"""paor's loggers: quiet unless the application configures logging.

paor logs key-value events with constant snake_case names (`log.info("tool_called", tool=...)`);
run, agent and subtask ids are bound through structlog's contextvars by the loops. The library
configures nothing and prints nothing unless the application configures logging:

- an application that configured structlog (`structlog.is_configured()`) gets paor's events
  through its own structlog processors, as any structlog user expects;
- otherwise each event is a standard `logging` record of the `paor` logger (`paor.run`,
  `paor.agent`...), which holds a `NullHandler`: silent by default, not even warnings through
  the last-resort handler; `logging.basicConfig(level=logging.INFO)` shows them. The message is
  `event key=value ...` (bound contextvars first); the record's `event` and `fields` attributes
  hold the same data for structured handlers.

Which one is decided on every call (one flag read), so the application may configure either after
importing paor. It lives in the lowest package, so that every package logs the same way.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from typing import Any

import structlog

__all__ = ["Logger", "logger"]

_BARE = re.compile(r"[^\s=\"']++")  # a text value shown without quotes in a record's message

# The standard library's convention for a library: a handler that drops records, so that with no
# logging configured Python's last-resort handler does not print paor's warnings on stderr.
logging.getLogger("paor").addHandler(logging.NullHandler())


class Logger:
    """A paor logger: the application's structlog if it configured structlog, else stdlib logging.

    Methods take a constant event name and key-value fields, as structlog's do.
    """

    __slots__ = ("_stdlib", "_structlog")

    def __init__(self, name: str) -> None:
        self._stdlib = logging.getLogger(name)
        self._structlog: Any = structlog.get_logger(name)

    def debug(self, event: str, **fields: Any) -> None:
        """Log `event` at DEBUG level."""
        self._log(logging.DEBUG, "debug", event, fields)

    def info(self, event: str, **fields: Any) -> None:
        """Log `event` at INFO level."""
        self._log(logging.INFO, "info", event, fields)

    def warning(self, event: str, **fields: Any) -> None:
        """Log `event` at WARNING level."""
        self._log(logging.WARNING, "warning", event, fields)

    def error(self, event: str, **fields: Any) -> None:
        """Log `event` at ERROR level."""
        self._log(logging.ERROR, "error", event, fields)

    def exception(self, event: str, **fields: Any) -> None:
        """Log `event` at ERROR level with the exception being handled."""
        fields.setdefault("exc_info", True)
        self._log(logging.ERROR, "error", event, fields)

    def _log(self, level: int, method: str, event: str, fields: dict[str, Any]) -> None:
        # Per executor step: a disabled level costs a flag read and a level check, no formatting.
        if structlog.is_configured():
            getattr(self._structlog, method)(event, **fields)
        elif self._stdlib.isEnabledFor(level):
            self._emit(level, event, fields)

    def _emit(self, level: int, event: str, fields: dict[str, Any]) -> None:
        """One stdlib record: `event key=value ...`, the fields also kept whole in `extra`."""
        exc_info = fields.pop("exc_info", None)
        fields = {**structlog.contextvars.get_contextvars(), **fields}
        extra = {"event": event, "fields": fields}
        # stacklevel 4: the record names the caller of `info()`, not this module.
        self._stdlib.log(level, _line(event, fields), exc_info=exc_info, extra=extra, stacklevel=4)


def logger(name: str = "paor") -> Logger:
    """The paor logger called `name` (a child of `paor`); see the module's docstring."""
    return Logger(name)


def _line(event: str, fields: Mapping[str, Any]) -> str:
    """`event key=value ...`: a text value quoted only when it has spaces, quotes or `=`."""
    pairs = (f"{k}={_shown(v)}" for k, v in fields.items())
    return " ".join((event, *pairs))


def _shown(value: Any) -> str:
    if isinstance(value, str) and _BARE.fullmatch(value):
        return value
    return repr(value)
