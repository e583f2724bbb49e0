"""The executor's prompt, its first look, its answer check, and its report's statuses."""

from agents._answers import Parrot, unseen_numbers, unusable_answer
from agents._executor import DEFAULT_INSTRUCTIONS
from agents._first_look import FirstLook
from agents._own_text import strip_markers
from agents._report import ReportStatus, cited_ids

__all__ = [
    "DEFAULT_INSTRUCTIONS",
    "FirstLook",
    "Parrot",
    "ReportStatus",
    "cited_ids",
    "strip_markers",
    "unseen_numbers",
    "unusable_answer",
]
