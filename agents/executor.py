"""The executor's prompt, its first look, and its report's statuses."""

from agents._executor import DEFAULT_INSTRUCTIONS
from agents._first_look import FirstLook
from agents._report import ReportStatus

__all__ = [
    "DEFAULT_INSTRUCTIONS",
    "FirstLook",
    "ReportStatus",
]
