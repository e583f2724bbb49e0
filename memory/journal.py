"""The durable journal's records, run listings and errors."""

from memory._journal_records import (
    EffectKind,
    EffectRecord,
    JournalError,
    RunInfo,
    RunLocked,
    RunStatus,
)
from memory._pauses import Waiting

__all__ = [
    "EffectKind",
    "EffectRecord",
    "JournalError",
    "RunInfo",
    "RunLocked",
    "RunStatus",
    "Waiting",
]
