"""Research reports: sub-questions researched in parallel over a corpus, written up in Markdown.

The planner splits the topic into sub-questions; each is researched by a sub-agent with the
`search_docs` and `read_doc` tools, whose final answer must cite the documents it gathered (the
`cites_evidence` acceptance check). The report is assembled here, not left to the model: a title,
the synthesised summary, one section per sub-question, the sources and the evidence excerpts.
Citations that match no corpus document are removed, so every citation left points at a real one.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from agents import AgentReport, ChatModel, ConfigurationError, FirstLook, cites_evidence
from agents.toolkits import Corpus, research_tools
from memory import Journal
from orchestrator._events import Event
from orchestrator._limits import Limits
from orchestrator._orchestrator import Orchestrator
from orchestrator._state import RunResult

__all__ = ["Backend", "ResearchReport", "research", "research_orchestrator"]

RESEARCH_PLANNER = (
    "You plan research in a document collection. Split the topic into at most {max_subtasks} "
    "focused sub-questions that can be researched independently (no dependencies unless one "
    "truly needs another's answer). Each subtask's goal is one clear question. Reply with JSON only."
)
RESEARCH_AGENT = (
    "You research one question in a document collection. Use search_docs to find passages and "
    "read_doc to read more. Then answer in one short paragraph of your own words, and cite each "
    "document you used by writing its doc id, exactly as search_docs showed it, inside square "
    "brackets. Cite only documents you read or found."
)
RESEARCH_SYNTHESIS = (
    "You write the summary of a research report from the findings below. Two short paragraphs at "
    "most; keep the citations in [brackets] exactly as given; say what remains unclear."
)
# The spaces before a citation are part of the match, so that removing one leaves no gap.
_CITATION = re.compile(r"([ \t]*)\[([^\[\]\n]{1,120})\](?!\()")
_EXCERPT = 280
RESEARCH_FIRST_LOOK = FirstLook(tool="search_docs", argument="query")
"""Every research agent starts from the search results for its question."""


@dataclass(frozen=True, slots=True)
class ResearchReport:
    """A written research report.

    Attributes:
        topic: The topic.
        markdown: The report.
        result: The run behind it.
    """

    topic: str
    markdown: str
    result: RunResult


class Backend(Protocol):
    """Where a research run runs, if not in this process (`orchestrator.temporal.TemporalBackend`
    runs it on Temporal workers, which hold the model)."""

    async def research(
        self,
        topic: str,
        *,
        corpus: Corpus,
        limits: Limits | None = None,
        on_event: Callable[[Event], None] | None = None,
        meta: dict[str, Any] | None = None,
    ) -> ResearchReport:
        """Research `topic` there; the report is rendered here, against `corpus`."""
        ...


async def research(
    topic: str,
    *,
    model: ChatModel | None = None,
    corpus: Corpus,
    limits: Limits | None = None,
    on_event: Callable[[Event], None] | None = None,
    journal: Journal | None = None,
    meta: dict[str, Any] | None = None,
    resume: str | None = None,
    backend: Backend | None = None,
) -> ResearchReport:
    """Research `topic` over `corpus` and write the report.

    Args:
        topic: What to research (a resumed run keeps its own).
        model: The model for the planner and the sub-agents (in process: required).
        corpus: The documents.
        limits: The run's budget.
        on_event: Called with every event of the run (for progress displays).
        journal: Record the run here (in process only).
        meta: Stored with the recorded run (how to rebuild it for `resume`).
        resume: The id of a crashed run to continue instead of starting one (needs `journal`).
        backend: Run it there instead of in this process (its workers hold the model).

    Raises:
        ConfigurationError: The arguments do not fit the backend.
    """
    if backend is not None:
        if model is not None or journal is not None or resume is not None:
            raise ConfigurationError(
                "with a backend, the model, journal and resume are the backend's, not research()'s"
            )
        return await backend.research(
            topic, corpus=corpus, limits=limits, on_event=on_event, meta=meta
        )
    if model is None:
        raise ConfigurationError("research() in process needs a model")
    orch = research_orchestrator(model, corpus, limits=limits, journal=journal)
    stream = orch.stream_resume(resume) if resume else orch.stream(topic, meta=meta)
    async with stream as events:
        async for event in events:
            if on_event is not None:
                on_event(event)
    result = events.result
    topic = result.goal
    return ResearchReport(topic=topic, markdown=render_report(topic, result, corpus), result=result)


def research_orchestrator(
    model: ChatModel,
    corpus: Corpus,
    *,
    limits: Limits | None = None,
    journal: Journal | None = None,
) -> Orchestrator:
    """The orchestrator `research` runs: its prompts, tools and acceptance check (the same one
    must replay a recorded research run)."""
    return Orchestrator(
        model,
        research_tools(corpus),
        limits=limits,
        acceptance=cites_evidence,
        instructions=RESEARCH_AGENT,
        planner_instructions=RESEARCH_PLANNER,
        synthesis_instructions=RESEARCH_SYNTHESIS,
        on_plan_failure="single",
        journal=journal,
        first_look=RESEARCH_FIRST_LOOK,
    )


def render_report(topic: str, result: RunResult, corpus: Corpus) -> str:
    """The Markdown report for a finished research run."""
    lines = [f"# {topic.strip()}", ""]
    if not result.complete:
        lines += [
            f"> **Incomplete.** {clean_citations(result.reason or result.status, corpus)}",
            "",
        ]
    lines += [f"> Note: {clean_citations(note, corpus)}" for note in result.notes]
    if result.notes:
        lines.append("")
    lines += ["## Summary", "", clean_citations(result.answer, corpus), ""]
    sections = [r for r in result.reports if r.status in ("done", "partial")]
    for report in sections:
        lines += _section(report, corpus)
    failed = [r for r in result.reports if r not in sections]
    if failed:
        lines += ["## Not answered", ""]
        lines += [f"- {_question(r, corpus)} ({r.status})" for r in failed] + [""]
    lines += _sources(result, corpus)
    return "\n".join(lines).rstrip() + "\n"


def clean_citations(text: str, corpus: Corpus) -> str:
    """Keep only citations of documents that exist in the corpus."""

    def keep(match: re.Match[str]) -> str:
        ids = [part.strip() for part in re.split(r"[,;]", match.group(2))]
        real = [i for i in ids if corpus.get(i) is not None]
        return f"{match.group(1)}[{', '.join(real)}]" if real else ""

    return _CITATION.sub(keep, text).strip()


def _section(report: AgentReport, corpus: Corpus) -> list[str]:
    question = _question(report, corpus)
    body = clean_citations(report.answer, corpus) or "(no answer)"
    lines = [f"## {question}", "", body, ""]
    if report.status != "done":
        lines += [
            f"*Status: {report.status}"
            + (f" ({report.stop_reason})*" if report.stop_reason else "*"),
            "",
        ]
    gathered = list(dict.fromkeys(e.source for e in report.evidence if corpus.get(e.source)))
    if not _CITATION.search(body):
        cited = ", ".join(f"[{g}]" for g in gathered[:6])
        lines += [f"Evidence: {cited}" if cited else "Evidence: none found.", ""]
    return lines


def _question(report: AgentReport, corpus: Corpus) -> str:
    """The sub-question a report answers (model-written, so its citations are checked too)."""
    return clean_citations(report.task.splitlines()[0], corpus) or report.agent_id


def _sources(result: RunResult, corpus: Corpus) -> list[str]:
    excerpts: dict[str, str] = {}
    for report in result.reports:
        for e in report.evidence:
            if corpus.get(e.source) is not None:
                excerpts.setdefault(e.source, e.excerpt)
    if not excerpts:
        return ["## Sources", "", "No documents were gathered.", ""]
    lines = ["## Sources", ""]
    for number, doc_id in enumerate(excerpts, 1):
        doc = corpus.get(doc_id)
        lines.append(f"{number}. [{doc_id}] {doc.title if doc else doc_id}")
    lines += ["", "## Evidence", ""]
    for doc_id, excerpt in excerpts.items():
        text = " ".join(excerpt.split())[:_EXCERPT]
        lines.append(f"- [{doc_id}] “{text}”")
    return [*lines, ""]
