"""The executor's prompt, its tasks, its first look, and its answer check.

`AnswerCheck` holds the rules an executor applies to a final answer, for a loop of one's own that
asks a model for one (the planner's synthesis and a research report use it). `Configured` is the
frozen base of `Executor` and `Orchestrator`: options fixed when one is built, `clone()` for a
changed copy.
"""

from agents._answer_check import AnswerCheck
from agents._brief import task_brief
from agents._configured import Configured
from agents._executor import DEFAULT_INSTRUCTIONS
from agents._first_look import FirstLook
from agents._own_text import strip_markers

__all__ = [
    "DEFAULT_INSTRUCTIONS",
    "AnswerCheck",
    "Configured",
    "FirstLook",
    "strip_markers",
    "task_brief",
]
