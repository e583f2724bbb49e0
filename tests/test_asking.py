"""Asking the user: the planner and any sub-agent may ask a clarifying question (when the run
allows it), answered like an approval is decided; the answer is a recorded fact of the run; a run
asks at most its limit, and an agent that may not ask is told so; a question can wait through a
pause and be answered from another process."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from agents import ConfigurationError, Executor, tool
from agents.approvals import ApprovalRequest, Decision
from agents.events import ApprovalDecided
from agents.testing import ScriptedModel, call, calls, observation, reply
from memory import Journal
from orchestrator import Limits, Orchestrator, RunConfig
from orchestrator.cli import main
from tests._team import PLANNER, Team, opening, plan, script, sub

pytestmark = pytest.mark.anyio

ROOT = Path(__file__).resolve().parent.parent
GUARD_S = 45  # a guard against a hang, not a timing claim


class User:
    """Answers every question with the next scripted answer, keeping what it was asked."""

    def __init__(self, *answers: str) -> None:
        self.answers = list(answers)
        self.asked: list[ApprovalRequest] = []

    async def __call__(self, request: ApprovalRequest) -> Decision:
        assert request.kind == "question"
        self.asked.append(request)
        return Decision.answer(self.answers.pop(0))


def tool_texts(requests: list[Any]) -> list[str]:
    return [observation(str(m.content)) for m in requests[-1].messages if m.role == "tool"]


async def test_a_sub_agent_asks_and_reads_the_answer() -> None:
    """ask_user is on the menu; the answer is the call's result and a fact of the run."""
    team = Team(
        [plan(sub("hotel", goal="Find a cheap hotel."))],
        {"hotel": script(call("ask_user", question="What is your budget?"), "Hotel Sol, 80 EUR.")},
    )
    user = User("At most 90 EUR a night.")
    orch = Orchestrator(team.model, config=RunConfig(questions=2))
    with anyio.fail_after(GUARD_S):
        result = await orch.run("Find me a cheap hotel in Porto.", approver=user)
    assert "ask_user" in {t.name for t in team.of("hotel")[0].tools}
    assert tool_texts(team.of("hotel")) == ["The user answered: At most 90 EUR a night."]
    ((asked),) = user.asked
    assert (asked.agent_id, asked.description) == ("hotel", "What is your budget?")
    (fact,) = result.answered
    assert (fact.agent_id, fact.question, fact.answer) == (
        "hotel", "What is your budget?", "At most 90 EUR a night.",
    )  # fmt: skip
    decided = [e for e in result.events if isinstance(e, ApprovalDecided)]
    assert [(d.kind, d.action) for d in decided] == [("question", "answer")]


async def test_the_planner_asks_before_it_plans_and_everyone_knows_the_answer() -> None:
    """A planner reply that is a question is asked; the next plan, and the sub-agents, see
    the answer."""
    team = Team(
        [
            {"question": "Which city?", "subtasks": [sub("x", goal="Find any hotel anywhere.")]},
            plan(sub("hotel", goal="Find a hotel.")),
        ],
        {"hotel": script("Hotel Sol in Porto.")},
    )
    orch = Orchestrator(team.model, config=RunConfig(questions=1))
    with anyio.fail_after(GUARD_S):
        result = await orch.run("Find me a cheap hotel.", approver=User("Porto."))
    assert result.status == "complete"
    first, second = team.of(PLANNER)
    assert '"question"' in opening(first)
    assert "Asked the user: Which city?\nThey answered: Porto." in opening(second)
    assert '"question"' not in opening(second)  # no question is left to ask
    # A sub-agent is told after its instructions, in the prefix its siblings share.
    assert "They answered: Porto." in str(team.of("hotel")[0].messages[0].content)
    assert [a.answer for a in result.answered] == ["Porto."]


async def test_a_run_asks_at_most_its_limit_and_an_agent_past_it_is_told() -> None:
    """With one question allowed, the second agent to ask is told it may not."""
    asking = script(call("ask_user", question="Budget?"), "Done.")
    team = Team([plan(sub("a"), sub("b"))], {"a": asking, "b": asking})
    user = User("100 EUR.", "unused")
    orch = Orchestrator(team.model, config=RunConfig(questions=1, limits=Limits(max_concurrency=1)))
    with anyio.fail_after(GUARD_S):
        result = await orch.run("Plan it.", approver=user)
    told = sorted(tool_texts(team.of("a")) + tool_texts(team.of("b")))
    assert told == [
        "Error: ask_user You may not ask: the run has asked the user all the questions it may "
        "(1). Go on with what you have, or say what is missing.",
        "The user answered: 100 EUR.",
    ]
    assert len(user.asked) == 1
    assert len(result.answered) == 1


async def test_without_questions_allowed_the_tool_is_not_offered() -> None:
    """questions=0 (the default): no ask_user on the menu; asking needs an approver."""
    model = ScriptedModel([reply("fine")])
    await Executor(model, approver=lambda request: Decision.approve()).run("t")  # type: ignore[arg-type, return-value]
    assert "ask_user" not in {t.name for t in model.requests[0].tools}
    asking = Orchestrator(model, config=RunConfig(questions=1))
    with pytest.raises(ConfigurationError, match="questions need an approver="):
        asking.stream("t")
    with pytest.raises(ConfigurationError, match="questions need an approver="):
        await asking.run("t")
    assert len(model.requests) == 1  # refused before any model call


async def test_a_question_waits_through_a_pause_and_is_answered_from_another_process(
    tmp_path: Path,
) -> None:
    """The run pauses on the question (exit of the first process); a second process answers:
    the agent reads the answer, nothing it did before is done again, and the answer is kept."""
    journal, out = tmp_path / "journal.db", tmp_path / "out.json"

    async def child(*argv: str) -> dict[str, Any]:
        command = [sys.executable, "-m", "tests._ask_child", str(journal), str(out), *argv]
        with anyio.fail_after(GUARD_S):
            done = await anyio.run_process(command, cwd=ROOT, check=False)
        assert done.returncode == 0, done.stderr.decode()[-3000:]
        data: dict[str, Any] = json.loads(out.read_text())
        return data

    first = await child("run")
    assert first["status"] == "paused"
    (waiting,) = first["waiting"]
    assert waiting["kind"] == "question"
    assert waiting["description"] == "What is your budget?"
    second = await child("answer", waiting["approval_id"], "At most 90 EUR a night.")
    assert second["status"] == "complete"
    assert second["asked"] == 1  # the agent's reply after the answer; its question not re-asked
    assert second["told"] == ["The user answered: At most 90 EUR a night."]
    assert second["answered"] == [["hotel", "What is your budget?", "At most 90 EUR a night."]]


async def test_paor_show_says_what_was_asked_and_answered(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A finished run's page in the terminal lists its questions with their answers."""
    team = Team(
        [plan(sub("hotel", goal="Find a cheap hotel."))],
        {"hotel": script(call("ask_user", question="What is your budget?"), "Hotel Sol, 80 EUR.")},
    )
    path = tmp_path / "journal.db"
    async with Journal(path) as journal:
        orch = Orchestrator(team.model, journal=journal, config=RunConfig(questions=1))
        await orch.run("Find me a cheap hotel in Porto.", run_id="shown", approver=User("90 EUR."))
    assert await anyio.to_thread.run_sync(main, ["show", "shown", "--journal", str(path)]) == 0
    assert "asked by hotel: What is your budget?\n  answered: 90 EUR.\n" in capsys.readouterr().out


async def test_a_question_may_come_with_other_calls_in_one_turn() -> None:
    """Unlike report_issue, ask_user needs no turn of its own: both calls get their results."""

    @tool
    async def lookup(key: str) -> str:
        """Look a fact up.

        Args:
            key: Which.
        """
        return f"{key} is 1"

    model = ScriptedModel(
        [calls(("lookup", {"key": "a"}), ("ask_user", {"question": "Which b?"})), reply("Done.")]
    )
    await Executor(model, [lookup], approver=User("The blue one."), questions=1).run("t")
    assert tool_texts(model.requests) == ["a is 1", "The user answered: The blue one."]
