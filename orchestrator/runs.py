"""Where a run runs, what one run is given besides its configuration, and what a replay reports."""

from orchestrator._config import RunOptions
from orchestrator._durable import ReplayReport
from orchestrator._research import Backend

__all__ = [
    "Backend",
    "ReplayReport",
    "RunOptions",
]
