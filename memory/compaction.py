"""History compaction's result, its summariser and marker; token counts."""

from memory._compaction import Compaction, Summariser
from memory._tokens import count_tokens
from memory._transcript import TranscriptError

__all__ = [
    "Compaction",
    "Summariser",
    "TranscriptError",
    "count_tokens",
]
