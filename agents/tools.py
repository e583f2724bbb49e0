"""Tools beyond `@tool`: outcomes, results, the shared toolbox and result shaping, and `SIGNALS`,
the built-in tools an executor offers besides the caller's (`report_issue`)."""

from agents._shaping import not_empty, shape
from agents._signals import SIGNALS
from agents._toolbox import Evidence, Finding, Toolbox, ToolResult
from agents._tools import ToolOutcome

__all__ = [
    "SIGNALS",
    "Evidence",
    "Finding",
    "ToolOutcome",
    "ToolResult",
    "Toolbox",
    "not_empty",
    "shape",
]
