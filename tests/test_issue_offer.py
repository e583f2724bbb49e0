"""`report_issue` is offered only where someone acts on it: to a run's sub-agents when the run
may replan, never to a batch task (no planner reads its issue), so the other requests do not
carry its schema."""

from __future__ import annotations

import anyio
import pytest

from agents.models import ModelRequest
from agents.testing import FunctionModel, by_purpose
from agents.toolkits import Corpus, Document
from orchestrator import Limits, Orchestrator, RunConfig
from orchestrator._research import research_executor
from orchestrator.testing import plan_reply, subtask, synthesis_reply
from tests._team import lookup

pytestmark = pytest.mark.anyio

GUARD_S = 10  # a deadlock guard, not a timing claim


def offered(requests: list[ModelRequest]) -> set[str]:
    """The tool names the sub-agents' requests offered."""
    return {spec.name for r in requests if r.purpose == "step" for spec in r.tools}


def model(requests: list[ModelRequest]) -> FunctionModel:
    def step(request: ModelRequest) -> str:
        requests.append(request)
        return "The key is 7."

    return FunctionModel(
        by_purpose(
            plan=plan_reply(subtask("a", "Look up the key k.")),
            step=step,
            synthesis=synthesis_reply("The key is 7."),
        )
    )


@pytest.mark.parametrize(("replans", "wanted"), [(2, True), (0, False)])
async def test_a_run_offers_report_issue_only_when_it_may_replan(
    replans: int, wanted: bool
) -> None:
    requests: list[ModelRequest] = []
    config = RunConfig(limits=Limits(max_replans=replans))
    with anyio.fail_after(GUARD_S):
        result = await Orchestrator(model(requests), [lookup], config=config).run("What is k?")
    assert result.answer == "The key is 7."
    names = offered(requests)
    assert "lookup" in names
    assert ("report_issue" in names) is wanted


async def test_a_batch_task_is_not_offered_report_issue() -> None:
    """The executor `paor batch` runs each task on (its Temporal twin is built the same way)."""
    requests: list[ModelRequest] = []
    corpus = Corpus([Document(id="keys", title="Keys", text="The key k is 7.")])
    executor = research_executor(model(requests), corpus, grounded=False)
    with anyio.fail_after(GUARD_S):
        report = await executor.run("What is k?")
    assert report.answer == "The key is 7."
    names = offered(requests)
    assert "search_docs" in names
    assert "report_issue" not in names
