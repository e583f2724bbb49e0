"""The executor's prompt, its tasks, its first look, its answer check, and its report's statuses.

`described` lists every description a model reads about some tools (the answer check's `Parrot`
is told them, so an answer that only copies them is not taken). `Configured` is the frozen base
of `Executor` and `Orchestrator`: options fixed when one is built, `clone()` for a changed copy.
"""

from agents._answers import Parrot, described, unseen_numbers, unusable_answer
from agents._brief import asked, task_brief
from agents._configured import Configured
from agents._executor import DEFAULT_INSTRUCTIONS
from agents._first_look import FirstLook
from agents._own_text import strip_markers
from agents._report import ReportStatus, cited_ids
from agents._support import sourced, unsupported

__all__ = [
    "DEFAULT_INSTRUCTIONS",
    "Configured",
    "FirstLook",
    "Parrot",
    "ReportStatus",
    "asked",
    "cited_ids",
    "described",
    "sourced",
    "strip_markers",
    "task_brief",
    "unseen_numbers",
    "unsupported",
    "unusable_answer",
]
