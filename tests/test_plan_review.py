"""Plan review in process: a person approves the first plan (and, under "every", each replan's
new version) as drawn, edits it (validated like the planner's, problems shown and asked again),
or rejects it with feedback the planner reads, a bounded number of times."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from agents import ConfigurationError, tool
from agents.approvals import ApprovalRequest, Decision
from agents.errors import ModelRequestError
from agents.events import ApprovalDecided, ApprovalRequested
from agents.testing import call
from orchestrator import Orchestrator, Plan, RunConfig
from orchestrator._review import MAX_REJECTIONS, draw_plan
from tests._team import PLANNER, Team, opening, plan, script, sub

pytestmark = pytest.mark.anyio

GUARD_S = 20  # a deadlock guard, not a timing claim


@tool
async def lookup(key: str) -> str:
    """Look a fact up.

    Args:
        key: What to look up.
    """
    return f"the value of {key}"


class Person:
    """Answers each plan request with the next scripted decision, keeping what it was shown."""

    def __init__(self, *decisions: Decision) -> None:
        self.decisions = list(decisions)
        self.shown: list[ApprovalRequest] = []

    async def __call__(self, request: ApprovalRequest) -> Decision:
        self.shown.append(request)
        return self.decisions.pop(0)


def two_facts(*plans: dict[str, Any]) -> Team:
    return Team(
        plans or [plan(sub("a"), sub("b", "a", tools=["lookup"]))],
        {
            "a": script(call("lookup", key="a"), "A [lookup]"),
            "b": script(call("lookup", key="b"), "B"),
            "c": script("C"),
        },
    )


async def test_an_approved_plan_runs_as_drawn() -> None:
    """The person is shown the plan drawn as text, with its data; approved, it runs."""
    team, person = two_facts(), Person(Decision.approve())
    orch = Orchestrator(team.model, [lookup], config=RunConfig(review="first"))
    with anyio.fail_after(GUARD_S):
        result = await orch.run("goal", approver=person)
    assert result.status == "complete"
    (request,) = person.shown
    assert (request.kind, request.agent_id, request.approval_id) == ("plan", "run", "run#4")
    assert request.description.splitlines() == [
        "Plan v1: 2 subtask(s)",
        "- [a] Find fact a.",
        "- [b] Find fact b.",
        "    after: a",
        "    tools: lookup",
    ]
    assert request.plan is not None
    assert [s["id"] for s in request.plan["subtasks"]] == ["a", "b"]
    kinds = [type(e) for e in result.events]
    assert kinds.index(ApprovalRequested) < kinds.index(ApprovalDecided)
    decided = next(e for e in result.events if isinstance(e, ApprovalDecided))
    assert (decided.kind, decided.action, decided.by) == ("plan", "approve", "person")


async def test_a_rejection_goes_back_to_the_planner_with_its_feedback() -> None:
    """The planner plans again, told why; the second plan is the one that runs."""
    team = two_facts(plan(sub("a"), sub("b", "a")), plan(sub("a"), sub("c")))
    person = Person(Decision.reject("c is what matters, not b"), Decision.approve())
    orch = Orchestrator(team.model, [lookup], config=RunConfig(review="first"))
    with anyio.fail_after(GUARD_S):
        result = await orch.run("goal", approver=person)
    assert [p.ids for p in result.plans] == [("a", "c")]
    second = opening(team.of(PLANNER)[1])
    assert "A person rejected your last plan. Their feedback: c is what matters, not b" in second
    assert not team.of("b")
    team.assert_clean()


async def test_rejections_are_bounded_and_no_fallback_plan_runs_unasked() -> None:
    """After MAX_REJECTIONS + 1 rejections the run ends failed with the last feedback, even where
    a failed plan would run the goal as one subtask."""
    rounds = MAX_REJECTIONS + 1
    team = two_facts(*[plan(sub("a"))] * rounds)
    person = Person(*[Decision.reject(f"no {i}") for i in range(rounds)])
    orch = Orchestrator(
        team.model,
        [lookup],
        config=RunConfig(review="first", on_plan_failure="single"),
    )
    with anyio.fail_after(GUARD_S):
        result = await orch.run("goal", approver=person)
    assert result.status == "failed"
    assert result.reason is not None
    assert f"rejected {rounds} plans" in result.reason
    assert len(team.of(PLANNER)) == rounds
    assert not team.of("a")


async def test_an_edit_with_problems_is_shown_them_and_a_good_edit_runs() -> None:
    """An edited plan is validated like the planner's: its problems go back to the person, who
    edits again; the valid edit is what runs."""
    bad = {"subtasks": [{"id": "a", "goal": "Find fact a.", "depends_on": ["nope"]}]}
    good = Plan(subtasks=({"id": "c", "goal": "Find fact c."},))
    team, person = two_facts(), Person(Decision.edit(bad), Decision.edit(good))
    orch = Orchestrator(team.model, [lookup], config=RunConfig(review="first"))
    with anyio.fail_after(GUARD_S):
        result = await orch.run("goal", approver=person)
    first, second = person.shown
    assert first.problems == ()
    assert any("nope" in p for p in second.problems)
    assert [p.ids for p in result.plans] == [("c",)]
    assert team.of("c")
    assert not team.of("a")
    decided = [e for e in result.events if isinstance(e, ApprovalDecided)]
    assert [d.edited for d in decided] == [True, True]


async def test_every_replan_is_reviewed_with_what_it_changes() -> None:
    """Under review="every" a replan's new version is drawn with what it keeps, adds and
    removes; a rejected replan is made again with the feedback."""
    team = Team(
        [plan(sub("a"), sub("b"), sub("c", "b"))],
        {
            "a": script("A"),
            "b": script(ModelRequestError("400 bad request", status=400)),
            "c": script("C"),
            "d": script("D"),
            "e": script("E"),
        },
        replans=[
            {"remove": [], "add": [sub("d")], "rationale": "try d"},
            {"remove": [], "add": [sub("e")], "rationale": "try e"},
        ],
    )
    person = Person(Decision.approve(), Decision.reject("d will not help"), Decision.approve())
    orch = Orchestrator(team.model, [lookup], config=RunConfig(review="every"))
    with anyio.fail_after(GUARD_S):
        result = await orch.run("goal", approver=person)
    _first, rejected, approved = person.shown
    assert "Replanned because b it failed" in rejected.description
    assert "  adds: d" in rejected.description
    assert "+ [d] Find fact d." in rejected.description
    assert "  adds: e" in approved.description
    assert "d will not help" in opening(team.of(PLANNER)[2])
    (diff,) = result.diffs
    assert diff.added == ("e",)
    assert not team.of("d")
    assert team.of("e")


def test_a_replan_edit_may_not_change_what_already_ran() -> None:
    """Completed subtasks stay, and a subtask already in the run cannot be rewritten."""
    from orchestrator._review import checked_edit

    before = Plan(subtasks=({"id": "a", "goal": "A."}, {"id": "b", "goal": "B."}))
    proposed = before.model_copy(update={"version": 2})
    found = checked_edit(
        {"subtasks": [{"id": "b", "goal": "Something else."}]},
        proposed=proposed, before=before, status={"a": "done", "b": "pending"},
        reserved=(), max_subtasks=5, tools=(),
    )  # fmt: skip
    assert isinstance(found, list)
    assert any(p.startswith("a is done: only pending or running") for p in found)
    assert any(p.startswith("b is already in the run (pending)") for p in found)
    odd = checked_edit(
        [1], proposed=proposed, before=None, status={}, reserved=(), max_subtasks=5, tools=()
    )
    assert odd == ["the edited plan is not a JSON object"]


def test_the_drawing_names_what_a_replan_keeps_adds_removes_and_cancels() -> None:
    """Running subtasks a replan drops are cancelled; pending ones are removed."""
    before = Plan(
        subtasks=({"id": "a", "goal": "A."}, {"id": "b", "goal": "B."}, {"id": "c", "goal": "C."})
    )
    after = Plan(version=2, subtasks=({"id": "a", "goal": "A."}, {"id": "d", "goal": "D."}))
    text = draw_plan(after, before=before, status={"a": "done", "b": "running", "c": "pending"})
    assert "  keeps: a\n  adds: d\n  removes: c\n  cancels (running): b" in text
    assert "- [a] (done) A." in text


async def test_review_needs_an_approver() -> None:
    """review= without approver= is refused when a run is started, before anything runs."""
    team = two_facts()
    orch = Orchestrator(team.model, config=RunConfig(review="first"))
    with pytest.raises(ConfigurationError, match="review needs an approver="):
        orch.stream("goal")
    with pytest.raises(ConfigurationError, match="review needs an approver="):
        await orch.run("goal")
    assert not team.of(PLANNER)
