"""Tools beyond `@tool`: outcomes, results, the shared toolbox, and result shaping."""

from agents._shaping import not_empty, shape
from agents._toolbox import Evidence, Finding, Toolbox, ToolResult
from agents._tools import ToolOutcome

__all__ = [
    "Evidence",
    "Finding",
    "ToolOutcome",
    "ToolResult",
    "Toolbox",
    "not_empty",
    "shape",
]
