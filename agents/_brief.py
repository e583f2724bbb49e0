"""A task as an orchestrator hands it to a sub-agent: the question, then what a good answer is.

    What is the hotel limit per night in London?
    Expected output: The limit in EUR.
    A good answer: names the city.

The question is what the agent searches for first and what its answer must be about (the support
rule weighs the question's terms, not the words of the labels); the lines after it shape the
answer.
"""

from __future__ import annotations

__all__ = ["asked", "task_brief"]

_EXPECTED = "Expected output: "
_GOOD = "A good answer: "


def task_brief(goal: str, *, expected_output: str = "", acceptance: str = "") -> str:
    """The task text for `goal`, with what the answer should look like when that is said."""
    parts = [goal]
    if expected_output:
        parts.append(f"{_EXPECTED}{expected_output}")
    if acceptance:
        parts.append(f"{_GOOD}{acceptance}")
    return "\n".join(parts)


def asked(task: str) -> str:
    """The question of a task: `task` without the lines `task_brief` adds after it."""
    lines = task.split("\n")
    for index, line in enumerate(lines):
        if index and line.startswith((_EXPECTED, _GOOD)):
            return "\n".join(lines[:index])
    return task
