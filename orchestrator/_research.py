"""Research reports: sub-questions researched in parallel over a corpus, written up in Markdown.

The planner splits the topic into sub-questions; each is researched by a sub-agent with the
`search_docs` and `read_doc` tools, whose final answer must cite the documents it gathered (the
`cites_evidence` acceptance check). The report is assembled here, not left to the model: a title,
the synthesised summary, one section per sub-question, the sources and the evidence excerpts.
Citations that match no corpus document are removed, so every citation left points at a real one.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

import anyio

from agents import AgentLimits, ChatModel, ConfigurationError, Executor, Tool, cites_evidence
from agents.approvals import Approver, Decision
from agents.executor import FirstLook
from agents.toolkits import Corpus, research_tools
from memory import Journal
from orchestrator._config import RunConfig
from orchestrator._events import Event
from orchestrator._limits import Limits
from orchestrator._orchestrator import Orchestrator, RunStream
from orchestrator._report import clean_citations, write_report
from orchestrator._state import RunResult

__all__ = [
    "Backend",
    "ResearchReport",
    "clean_citations",
    "grounding",
    "render_report",
    "research",
    "research_config",
    "research_executor",
    "research_orchestrator",
    "with_approval",
]

RESEARCH_PLANNER = (
    "You plan research in a document collection. Write at most {max_subtasks} subtasks. The first "
    "subtask's goal is the topic itself, as one question. When the topic asks for one fact (a "
    "number, a date, a name, a single rule), that one subtask is the whole plan. Otherwise each "
    "other subtask asks about one specific part of the topic (a term, a rule or a case the topic "
    "names), in plain words; no two ask the same thing. The subtasks are independent: leave "
    "depends_on empty. Reply with JSON only."
)
RESEARCH_AGENT = (
    "You research one question in a document collection. Use search_docs to find passages and "
    "read_doc to read more. Then answer in one to three sentences that say what the documents "
    "say, in their words, with every number and its unit as written there, and cite each "
    "document you used by writing its doc id, exactly as search_docs showed it, inside square "
    "brackets. Cite only documents you read or found. If they do not answer the question, say so."
)
RESEARCH_SYNTHESIS = (
    "You write the summary of a research report from the findings below. Two short paragraphs at "
    "most; keep the citations in [brackets] exactly as given; say what remains unclear."
)
RESEARCH_FIRST_LOOK = FirstLook(tool="search_docs", argument="query")
"""Every research agent starts from the search results for its question."""
Approve = Literal["plan", "tools", "all"]
"""What waits for a person in a research run: every plan version, the calls of tools that
change something (read-only ones never wait), or both."""


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
    stop: anyio.Event | None = None,
    tools: Sequence[Tool] = (),
    approve: Approve | None = None,
    approver: Approver | None = None,
    decisions: dict[str, Decision] | None = None,
    questions: int = 0,
    output_type: Any = None,
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
        stop: Setting it stops the run and keeps its work (`RunStream.cancel`): the report is
            written from what exists (in process only).
        tools: More tools for the sub-agents, beside the corpus's (e.g. an MCP server's).
        approve: What waits for `approver`'s decision (see `Approve`).
        approver: Who decides (see `agents.approvals`; `PAUSE`: a journaled run pauses).
        decisions: For a paused run resumed, decisions on what it waits for.
        questions: How many clarifying questions the run may ask (`approver` answers them).
        output_type: The answer's type, or an `agents.models.OutputSpec` (`paor research
            --schema`): the report's answer is then the object's JSON, `result.output` the
            object (in process only).

    Raises:
        ConfigurationError: The arguments do not fit the backend.
    """
    if backend is not None:
        if output_type is not None:
            raise ConfigurationError("a typed research run is not available on a backend yet")
        if model is not None or journal is not None or resume is not None or stop is not None:
            raise ConfigurationError(
                "with a backend, the model, journal, resume and stop are the backend's, not research()'s"
            )
        return await backend.research(
            topic, corpus=corpus, limits=limits, on_event=on_event, meta=meta
        )
    if model is None:
        raise ConfigurationError("research() in process needs a model")
    if (approve is not None or questions) and approver is None:
        raise ConfigurationError("approve= and questions= need an approver= to ask")
    orch = research_orchestrator(
        model, corpus, limits=limits, journal=journal, tools=tools, approve=approve,
        questions=questions,
    )  # fmt: skip
    asks = approver if approve is not None or questions else None
    stream = (
        orch.stream_resume(resume, decisions=decisions, approver=asks, output_type=output_type)
        if resume
        else orch.stream(topic, meta=meta, approver=asks, output_type=output_type)
    )
    async with stream as events, anyio.create_task_group() as tg:
        if stop is not None:
            tg.start_soon(_cancel_run_when_set, stop, events)
        async for event in events:
            if on_event is not None:
                on_event(event)
        tg.cancel_scope.cancel()
    result = events.result
    topic = result.goal
    markdown = (
        "" if result.status == "paused" else render_report(topic, result, corpus, tools=tools)
    )
    return ResearchReport(topic=topic, markdown=markdown, result=result)


async def _cancel_run_when_set(stop: anyio.Event, events: RunStream) -> None:
    await stop.wait()
    events.cancel("stopped by the user")


def research_config(
    limits: Limits | None = None, *, approve: Approve | None = None, questions: int = 0
) -> RunConfig:
    """What a research run is: its prompts, a single-subtask plan when planning fails or the
    topic is one question, the first look into the corpus, cited answers, the goal asked first; with `approve`, every
    plan version reviewed ("plan", "all"), and `questions` the run may ask."""
    return RunConfig(
        limits=limits or Limits(),
        instructions=RESEARCH_AGENT,
        planner_instructions=RESEARCH_PLANNER,
        synthesis_instructions=RESEARCH_SYNTHESIS,
        on_plan_failure="single",
        first_look=RESEARCH_FIRST_LOOK,
        cite=True,
        ask_goal=True,
        direct_questions=True,
        review="every" if approve in ("plan", "all") else None,
        questions=questions,
    )


def research_orchestrator(
    model: ChatModel,
    corpus: Corpus,
    *,
    limits: Limits | None = None,
    journal: Journal | None = None,
    tools: Sequence[Tool] = (),
    approve: Approve | None = None,
    questions: int = 0,
) -> Orchestrator:
    """The orchestrator `research` runs: its configuration (`research_config`), tools (the
    corpus's, then `tools`, those that change something waiting for a person under `approve`)
    and acceptance check (the same one must replay a recorded research run). With `approve` or
    `questions`, its runs need an approver (`RunOptions`)."""
    return Orchestrator(
        model,
        with_approval([*research_tools(corpus), *tools], approve),
        config=research_config(limits, approve=approve, questions=questions),
        acceptance=cites_evidence,
        journal=journal,
    )


def with_approval(tools: Sequence[Tool], approve: Approve | None) -> list[Tool]:
    """`tools`, each that changes something waiting for a person when `approve` says so
    (a tool that decides for itself which calls wait keeps its own rule)."""
    if approve not in ("tools", "all"):
        return list(tools)
    return [dataclasses.replace(t, needs_approval=True) if _changes(t) else t for t in tools]


def _changes(tool: Tool) -> bool:
    """Whether a tool's calls change something (an MCP tool: unless its server says it only
    reads), and it has no approval rule of its own."""
    return not tool.needs_approval and (tool.side_effects or getattr(tool, "destructive", False))


def research_executor(
    model: ChatModel,
    corpus: Corpus,
    *,
    limits: AgentLimits | None = None,
    tools: Sequence[Tool] = (),
    approve: Approve | None = None,
    approver: Approver | None = None,
    grounded: bool = True,
) -> Executor:
    """The sub-agent `batch` runs on each task: the research agent's prompt over the corpus's
    tools and `tools` (the same one must resume a recorded batch); with `approve`, the calls
    of tools that change something wait for `approver`. `grounded` (the default) gives it what
    a research agent has (see `grounding`). It is not offered `report_issue`: a batch task has
    no planner to read an issue, so the tool would only cost every request its schema."""
    menu = with_approval([*research_tools(corpus), *tools], approve)
    chosen = approver if approve is not None else None
    return Executor(
        model, menu, instructions=RESEARCH_AGENT, limits=limits, approver=chosen,
        signals=False, **grounding(grounded),
    )  # fmt: skip


def grounding(grounded: bool) -> dict[str, Any]:
    """The executor options that make an answer rest on the corpus: research's first search for
    the task, the sources gathered so far named in each request, and an answer that must cite
    one of them (`cites_evidence`; else it is sent back, then `partial`). Not `grounded`: the
    caller said answers need not rest on the corpus, so none of that, and no evidence rule."""
    if not grounded:
        return {"require_evidence": False}
    return {"first_look": RESEARCH_FIRST_LOOK, "acceptance": cites_evidence, "cite": True}


def render_report(
    topic: str, result: RunResult, corpus: Corpus, *, tools: Sequence[Tool] = ()
) -> str:
    """The Markdown report for a finished research run (see `orchestrator._report`): answers that
    copy the research prompts or the tools' descriptions (paor's own included) are not used."""
    told = [RESEARCH_PLANNER, RESEARCH_AGENT, RESEARCH_SYNTHESIS]
    specs = [t.spec() for t in (*research_tools(corpus), *tools)]
    return write_report(topic, result, corpus, told=told, tools=specs)
