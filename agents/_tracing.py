"""Tracing helpers: the library's logger, result digests and redaction.

paor logs through structlog with constant snake_case event names; run, agent and subtask ids are bound
through contextvars by the loops. The library never configures structlog: the application does.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Collection, Mapping
from typing import Any

import structlog

__all__ = ["digest", "logger", "redact", "redact_text"]

REDACTED = "***"
_SECRET_KEYS = re.compile(r"(api[_-]?key|secret|password|passwd|token|authorization)", re.I)
_SECRET_VALUES = re.compile(r"\b(sk-[A-Za-z0-9_\-]{8,}|Bearer\s+[A-Za-z0-9._\-]{8,})")


def logger(name: str = "paor") -> Any:
    """The paor logger (a structlog bound logger; configuration is the application's)."""
    return structlog.get_logger(name)


def digest(text: str) -> str:
    """A short stable digest of a result, for traces and loop detection."""
    return hashlib.blake2b(text.encode("utf-8", "replace"), digest_size=6).hexdigest()


def redact(args: Mapping[str, Any], sensitive: Collection[str] = ()) -> dict[str, Any]:
    """A copy of tool arguments with sensitive and secret-looking values masked."""
    return {
        k: REDACTED if k in sensitive or _SECRET_KEYS.search(k) else _redact_value(v)
        for k, v in args.items()
    }


def redact_text(text: str) -> str:
    """Mask API keys and bearer tokens inside free text."""
    return _SECRET_VALUES.sub(REDACTED, text)


def _redact_value(value: Any) -> Any:
    if isinstance(value, str):
        return redact_text(value)
    if isinstance(value, Mapping):
        return redact(value)
    return value
