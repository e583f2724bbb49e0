"""`research_on_temporal`: `research()` with the run on Temporal workers, the report written here.

The workflow runs the orchestrator `research_orchestrator` builds: the research prompts, the
`cites_evidence` check (named, as functions do not serialise), a single-subtask plan when planning
fails, and the tools `search_docs` and `read_doc`, which the workers serve over their corpus. The
report is rendered by the caller, with its own corpus: it must be the one the workers search, or
the citations of documents it lacks are dropped.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from temporalio.client import Client

from agents.toolkits import Corpus
from orchestrator._events import Event
from orchestrator._limits import Limits
from orchestrator._research import Approve, ResearchReport, render_report, research_config
from orchestrator.temporal._activities import DEFAULT_TASK_QUEUE, RESEARCH_TOOLS
from orchestrator.temporal._client import new_run_id, start
from orchestrator.temporal._inputs import RunInput
from orchestrator.temporal._remote import RemoteRun, run_result

__all__ = ["RESEARCH_TOOLS", "follow_research", "research_input", "research_on_temporal"]


def research_input(
    topic: str,
    *,
    limits: Limits | None = None,
    run_id: str | None = None,
    meta: dict[str, Any] | None = None,
    tools: Sequence[str] = (),
    approve: Approve | None = None,
    questions: int = 0,
) -> RunInput:
    """The workflow input of a research run on `topic` (the worker's model "default"), its
    agents given the research tools and `tools` (names the workers serve, e.g. MCP tools);
    with `approve`, what waits for a person (see `orchestrator.temporal._approvals`)."""
    return RunInput(
        meta=meta or {},
        goal=topic,
        run_id=run_id or new_run_id(),
        tools=(*RESEARCH_TOOLS, *tools),
        config=research_config(limits, questions=questions),
        acceptance="cites_evidence",
        approve=approve,
    )


async def research_on_temporal(
    client: Client,
    topic: str,
    *,
    corpus: Corpus,
    limits: Limits | None = None,
    run_id: str | None = None,
    task_queue: str = DEFAULT_TASK_QUEUE,
    execution_timeout: float | None = None,
    on_event: Callable[[Event], None] | None = None,
    meta: dict[str, Any] | None = None,
    tools: Sequence[str] = (),
) -> ResearchReport:
    """Research `topic` on the workers of `task_queue` and write the report.

    Args:
        client: A client made by `connect`.
        topic: What to research.
        corpus: The workers' corpus (citations are checked against it).
        limits: The run's budget.
        run_id: The run's id, which is also its workflow id (generated if omitted).
        task_queue: The workers' queue.
        execution_timeout: Seconds the whole workflow may take (no limit if None).
        on_event: Called with each of the run's events as it happens.
        meta: JSON data kept with the run.
        tools: More tools for the agents, beside the research tools, by the names the workers
            serve them under (`paor worker --mcp FILE` serves the tools of MCP servers).

    Raises:
        RunError: The run's workflow failed, was cancelled or terminated, or timed out.
    """
    given = research_input(topic, limits=limits, run_id=run_id, meta=meta, tools=tools)
    run = await start(client, given, task_queue=task_queue, execution_timeout=execution_timeout)
    return await follow_research(run, corpus, on_event=on_event)


async def follow_research(
    run: RemoteRun, corpus: Corpus, *, on_event: Callable[[Event], None] | None = None
) -> ResearchReport:
    """Wait for a research run on Temporal (showing its events to `on_event`); its report."""
    if on_event is None:
        result = await run_result(run.handle)  # nothing watches: no pages in the history
    else:
        async with run:
            async for event in run:
                on_event(event)
        result = run.result
    markdown = render_report(result.goal, result, corpus)
    return ResearchReport(topic=result.goal, markdown=markdown, result=result)
