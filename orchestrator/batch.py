"""Batch files: reading and checking them (`run_batch` is at the front door)."""

from orchestrator._batch import OutputLocked, check_output, load_tasks

__all__ = [
    "OutputLocked",
    "check_output",
    "load_tasks",
]
