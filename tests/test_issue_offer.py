"""`report_issue` is offered only where someone acts on it: to a run's sub-agents when the run
may replan and their plan has more than the one subtask (an issue has nothing later to change in a
plan of one), never to a batch task (no planner reads its issue), so the other requests do not
carry its schema."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from agents.models import ModelRequest
from agents.testing import FunctionModel, Turn, by_purpose, call
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


ANSWER = "The key k is the value of k."
TWO = (subtask("a", "Look up the key k."), subtask("b", "Look up the key j."))


def model(
    requests: list[ModelRequest], plan: tuple[dict[str, Any], ...] = TWO, *, looks: bool = True
) -> FunctionModel:
    """Plans `plan`; each sub-agent looks k up (with `looks`), then answers."""

    def step(request: ModelRequest) -> Turn:
        requests.append(request)
        if looks and not any(message.role == "tool" for message in request.messages):
            return call("lookup", key="k")
        return ANSWER

    return FunctionModel(
        by_purpose(
            plan=plan_reply(*plan),
            step=step,
            synthesis=synthesis_reply(ANSWER),
        )
    )


@pytest.mark.parametrize(("replans", "wanted"), [(2, True), (0, False)])
async def test_a_run_offers_report_issue_only_when_it_may_replan(
    replans: int, wanted: bool
) -> None:
    requests: list[ModelRequest] = []
    config = RunConfig(limits=Limits(max_replans=replans))
    orchestrator = Orchestrator(model(requests), [lookup], config=config)
    with anyio.fail_after(GUARD_S):
        result = await orchestrator.run("Look up the keys k and j, then compare them.")
    assert result.answer == ANSWER
    names = offered(requests)
    assert "lookup" in names
    assert ("report_issue" in names) is wanted


@pytest.mark.parametrize(
    ("goal", "planned"),
    [
        ("Look up the keys k and j, then compare them.", True),  # a plan of one subtask
        ("What is the key k?", False),  # one short question: its own plan, no planning call
    ],
)
async def test_the_sole_subtask_of_a_plan_is_not_offered_report_issue(
    goal: str, planned: bool
) -> None:
    requests: list[ModelRequest] = []
    team = model(requests, (subtask("a", "Look up the keys k and j."),))
    with anyio.fail_after(GUARD_S):
        result = await Orchestrator(team, [lookup]).run(goal)
    assert result.answer == ANSWER
    assert any(r.purpose == "plan" for r in team.requests) is planned
    assert requests
    names = offered(requests)
    assert "lookup" in names
    assert "report_issue" not in names


async def test_a_batch_task_is_not_offered_report_issue() -> None:
    """The executor `paor batch` runs each task on (its Temporal twin is built the same way)."""
    requests: list[ModelRequest] = []
    corpus = Corpus([Document(id="keys", title="Keys", text="The key k is 7.")])
    executor = research_executor(model(requests, looks=False), corpus, grounded=False)
    with anyio.fail_after(GUARD_S):
        report = await executor.run("What is k?")
    assert report.answer == ANSWER
    names = offered(requests)
    assert "search_docs" in names
    assert "report_issue" not in names
