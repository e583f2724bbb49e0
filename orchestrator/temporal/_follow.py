"""Following a research run on Temporal that may wait for people: decide on the terminal, or stop.

The run's events come as they happen (`RemoteRun`). When one says an approval is requested, the
run itself is asked whether it still waits for it (a follower that attaches late sees requests
decided long ago): if it does, the person at the terminal decides, or, with nobody there, the
follower stops and says what waits. The run goes on waiting on Temporal; `paor approve --temporal`
decides and follows it again.
"""

from __future__ import annotations

from collections.abc import Callable

from temporalio.client import Client

from agents.approvals import Approver
from agents.events import ApprovalRequested
from agents.toolkits import Corpus
from orchestrator._events import Event
from orchestrator._research import ResearchReport, render_report
from orchestrator._state import RunResult
from orchestrator.temporal._approvals import decide_on_temporal, waiting_on_temporal
from orchestrator.temporal._remote import RemoteRun

__all__ = ["follow_deciding"]


async def follow_deciding(
    client: Client,
    run: RemoteRun,
    corpus: Corpus,
    goal: str,
    asker: Approver | None,
    on_event: Callable[[Event], None],
) -> ResearchReport:
    """The run's report, each decision it waits for asked of `asker` on the way; with no one
    to ask, a report of the paused run (status "paused", `waiting` saying what for)."""
    run_id = run.handle.id
    async with run:
        async for event in run:
            on_event(event)
            if not isinstance(event, ApprovalRequested):
                continue
            waiting = await waiting_on_temporal(client, run_id)
            request = next((w for w in waiting if w.approval_id == event.approval_id), None)
            if request is None:
                continue  # decided already
            if asker is None or asker.decide is None:
                result = RunResult(
                    run_id=run_id, goal=goal, answer="", status="paused",
                    reason="waits for a decision", waiting=tuple(waiting),
                )  # fmt: skip
                return ResearchReport(topic=goal, markdown="", result=result)
            await decide_on_temporal(
                client, run_id, request.approval_id, await asker.decide(request)
            )
    result = run.result
    return ResearchReport(
        topic=result.goal, markdown=render_report(result.goal, result, corpus), result=result
    )
