"""History compaction's result; token counts; a transcript's own error."""

from memory._compaction import Compaction
from memory._tokens import count_tokens
from memory._transcript import TranscriptError

__all__ = [
    "Compaction",
    "TranscriptError",
    "count_tokens",
]
