"""Tools beyond `@tool`: outcomes, evidence and findings, the shared toolbox, and result shaping."""

from agents._shaping import not_empty, shape
from agents._toolbox import Evidence, Finding, Toolbox
from agents._tools import ToolOutcome

__all__ = [
    "Evidence",
    "Finding",
    "ToolOutcome",
    "Toolbox",
    "not_empty",
    "shape",
]
