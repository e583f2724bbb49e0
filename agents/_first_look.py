"""`FirstLook`: a tool call made for a sub-agent before its first decision."""

from __future__ import annotations

import json

from pydantic import BaseModel, ConfigDict

from memory import ToolCall

__all__ = ["FirstLook"]

_FIRST_LOOK_CHARS = 300  # of the task's first line: a query, not the whole brief


class FirstLook(BaseModel):
    """A tool call made for the model before its first decision, with the task as its argument.

    Small models decide better from evidence than from a blank page: a research agent that starts
    with the search results for its question cites them instead of guessing. The call is a real
    turn (it goes through the effect boundary, is journaled and replayed, and its results are
    evidence); its result reaches the model with the task, as what is known so far.

    Attributes:
        tool: The tool to call.
        argument: The argument that gets the task's first line.
    """

    model_config = ConfigDict(frozen=True)

    tool: str
    argument: str

    def call(self, task: str) -> ToolCall:
        """The call for `task`."""
        question = (task.strip().splitlines() or [""])[0][:_FIRST_LOOK_CHARS]
        return ToolCall(id="", name=self.tool, arguments=json.dumps({self.argument: question}))
