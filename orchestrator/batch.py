"""Batch files: JSON Lines of `{"id": ..., "goal": ...}`, one task a line (`run_batch` is at the
front door). `load_tasks` reads and checks one whole; `OutputLocked` is raised when another batch
is writing the same output file."""

from orchestrator._batch_files import OutputLocked, load_tasks

__all__ = [
    "OutputLocked",
    "load_tasks",
]
