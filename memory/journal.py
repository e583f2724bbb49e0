"""The durable journal's records, run listings and errors."""

from memory._journal import default_journal_path
from memory._journal_records import (
    STOP_SEQ,
    EffectKind,
    EffectRecord,
    JournalError,
    RunInfo,
    RunLocked,
    RunStatus,
    is_stop_record,
)
from memory._pauses import Waiting

__all__ = [
    "STOP_SEQ",
    "EffectKind",
    "EffectRecord",
    "JournalError",
    "RunInfo",
    "RunLocked",
    "RunStatus",
    "Waiting",
    "default_journal_path",
    "is_stop_record",
]
