"""What a sub-agent reports back, and the acceptance checks that judge a final answer."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from agents._brief import asked
from agents._guards import StopReason
from agents._toolbox import Evidence, Finding
from agents.models._model import Usage

__all__ = ["AcceptanceCheck", "AgentReport", "ReportStatus", "cited_ids", "cites_evidence"]

ReportStatus = Literal["done", "partial", "failed", "blocked"]
"""How a sub-agent's task ended: done, partial (a limit or a stop cut it), failed, blocked."""

AcceptanceCheck = Callable[[str, Sequence[Evidence]], str | None]
"""Judges a final answer given the evidence gathered: None accepts, a string says what is wrong."""


class AgentReport(BaseModel):
    """The structured result of one sub-agent run.

    Attributes:
        agent_id: The agent.
        task: The task it was given.
        status: done; partial (a limit or a failed acceptance check cut it short); failed (nothing
            usable); blocked (the agent reported it cannot do the task).
        answer: The answer, or the best partial answer built from what was gathered.
        evidence: Citable evidence from successful tool calls.
        invalidates: Set when the result contradicts the caller's assumptions: the reason.
        stop_reason: Which exit ended the loop early, if one did: a limit ("steps",
            "deadline", "tokens", "cost", "requests", "tool_calls"), a loop ("stuck"), an error,
            a failed acceptance check or a cancellation.
        notes: Problems met on the way (model errors, rejected answers, loops).
        usage: Tokens, requests and tool calls spent.
        steps: Model turns taken.
        findings: Values its tools declared worth remembering (`@tool(facts=...)`).
        output: The answer as an object of the executor's `output_type` (None without one, or
            when none of its shape was written). One whose content failed a check is kept as
            the best there is, the report `partial` and a note saying why.
    """

    model_config = ConfigDict(frozen=True)

    agent_id: str
    task: str
    status: ReportStatus
    answer: str
    evidence: tuple[Evidence, ...] = ()
    invalidates: str | None = None
    stop_reason: StopReason | Literal["acceptance", "cancelled"] | None = None
    notes: tuple[str, ...] = ()
    usage: Usage = Usage()
    steps: int = 0
    findings: tuple[Finding, ...] = ()
    output: Any = None

    @property
    def ok(self) -> bool:
        """Whether the task was done as asked."""
        return self.status == "done"

    @property
    def question(self) -> str:
        """What its task asked: the task without the lines on what the answer should look like
        (its expected output and acceptance criteria, as a plan's subtask gives them)."""
        return asked(self.task)

    @property
    def cited(self) -> set[str]:
        """The ids its answer cites in [brackets] (`[a, b]` cites two)."""
        return cited_ids(self.answer)


_CITATION = re.compile(r"\[([^\[\]]+)\]")


def cited_ids(text: str) -> set[str]:
    """The ids `text` cites in [brackets]; several may share a pair: `[a, b]` or `[a; b]`."""
    found = {c.strip() for group in _CITATION.findall(text) for c in re.split(r"[,;]", group)}
    found.discard("")
    return found


def cites_evidence(answer: str, evidence: Sequence[Evidence]) -> str | None:
    """An acceptance check: the answer must cite, in [brackets], a source it actually gathered
    (several may share brackets: `[a, b]`).

    Returns:
        None if the answer cites at least one gathered source and no unknown one; else the problem.
    """
    if not evidence:
        return "you gathered no evidence; use the tools to find some before answering"
    sources = {e.source for e in evidence}
    cited = cited_ids(answer)
    unknown = sorted(c for c in cited if c not in sources)
    if unknown:
        return f"these citations match no gathered source: {', '.join(unknown[:5])}"
    if not cited & sources:
        listed = ", ".join(f"[{s}]" for s in sorted(sources)[:8])
        return f"cite the evidence you used in brackets, one of: {listed}"
    return None
