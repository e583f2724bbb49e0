"""Where a run runs and what a replay reports."""

from orchestrator._durable import ReplayReport
from orchestrator._research import Backend

__all__ = [
    "Backend",
    "ReplayReport",
]
