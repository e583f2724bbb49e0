"""History compaction's result, its summariser and marker; token counts."""

from memory._compaction import SUMMARY_PREFIX, Compaction, Summariser
from memory._tokens import count_tokens, encoding_for
from memory._transcript import TranscriptError

__all__ = [
    "SUMMARY_PREFIX",
    "Compaction",
    "Summariser",
    "TranscriptError",
    "count_tokens",
    "encoding_for",
]
