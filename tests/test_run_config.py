"""The run configuration: one frozen, serialisable home for what a run is, recorded by the journal,
given per Orchestrator or per run; the approver, effects and event options belong to one run."""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

import anyio
import pytest
from pydantic import ValidationError

from agents import Budget, ConfigurationError, tool
from agents.approvals import PAUSE
from agents.effects import LiveEffects
from agents.testing import FunctionModel, by_purpose, task_of
from memory import Journal, SystemMessage
from orchestrator import Limits, Orchestrator, RunConfig
from orchestrator.cli._inspect import render_run
from orchestrator.testing import plan_reply, subtask, synthesis_reply
from tests._team import WRITER, Team, opening, plan, sub

GUARD_S = 10  # a guard against hangs, not a timing claim


@tool
def lookup(key: str) -> str:
    """Look a key up."""
    return f"value of {key}"


def _team(*more: str) -> FunctionModel:
    """Plans "Find fact a." (and a subtask for each of `more`), answers each, then the goal."""
    plan = plan_reply(
        subtask("a", "Find fact a."), *(subtask(f"s{i}", goal) for i, goal in enumerate(more))
    )
    given: dict[str, Any] = {
        "plan": plan,
        "step": lambda r: f"Answer to {task_of(r)}",
        "synthesis": synthesis_reply("The final answer."),
    }
    return FunctionModel(by_purpose(**given), tokens="estimated")


def _system_prompts(model: FunctionModel, purpose: str) -> list[str]:
    return [
        m.content
        for r in model.requests
        if r.purpose == purpose
        for m in r.messages
        if isinstance(m, SystemMessage)
    ]


def test_the_orchestrator_takes_at_most_eight_parameters() -> None:
    """What a run is lives in RunConfig; the constructor keeps what outlives a run."""
    given = [p for p in inspect.signature(Orchestrator.__init__).parameters if p != "self"]
    assert len(given) <= 8, given


def test_a_config_is_frozen_strict_and_round_trips_through_json() -> None:
    config = RunConfig(limits=Limits(deadline_s=30, max_subtasks=3), cite=True, review="first")
    assert RunConfig.model_validate_json(config.model_dump_json()) == config
    with pytest.raises(ValidationError):
        config.cite = False  # type: ignore[misc]
    with pytest.raises(ValidationError, match="limts"):
        RunConfig(limts=Limits())  # type: ignore[call-arg]
    with pytest.raises(ValidationError):
        RunConfig(questions=-1)


def test_run_limits_become_a_ledger_in_one_place() -> None:
    """A run's limits and an agent's make their ledgers the same way."""
    budget = Budget.from_limits(Limits(deadline_s=10, max_tokens=500, max_tool_calls=3), now=100.0)
    assert (budget.deadline, budget.max_tokens, budget.max_tool_calls) == (110.0, 500, 3)
    assert budget.max_requests is None


@pytest.mark.anyio
async def test_a_run_may_be_given_its_own_config() -> None:
    """The Orchestrator's config is the default; a run's own replaces it for that run only."""
    model = _team()
    orch = Orchestrator(model, [lookup], config=RunConfig(instructions="Default prompt."))
    with anyio.fail_after(GUARD_S):
        first = await orch.run("goal")
        own = orch.config.model_copy(update={"instructions": "This run's prompt."})
        second = await orch.run("goal", config=own)
    assert first.status == second.status == "complete"
    prompts = _system_prompts(model, "step")
    assert any(p.startswith("Default prompt.") for p in prompts)
    assert any(p.startswith("This run's prompt.") for p in prompts)
    assert orch.config.instructions == "Default prompt."


@pytest.mark.anyio
async def test_review_or_questions_without_an_approver_is_refused_before_any_work() -> None:
    model = _team()
    orch = Orchestrator(model, [lookup], config=RunConfig(review="first"))
    with pytest.raises(ConfigurationError, match="approver"):
        orch.stream("goal")
    with pytest.raises(ConfigurationError, match="approver"):
        await orch.run("goal", config=RunConfig(questions=1))
    assert model.requests == []
    stream = orch.stream("goal", approver=PAUSE)  # given to the run: accepted
    assert stream.approver is PAUSE
    assert stream.config.review == "first"


@pytest.mark.anyio
async def test_the_journal_records_each_runs_config_and_show_prints_it(tmp_path: Path) -> None:
    """The config a run started with is in its journal row (its meta left as the caller gave it),
    and `paor show` says what it set apart from the defaults."""
    # No replans: the team's agents answer without a search, which a cited run does not take.
    config = RunConfig(limits=Limits(deadline_s=60, max_subtasks=3, max_replans=0), cite=True)
    async with Journal(tmp_path / "j.db") as journal:
        orch = Orchestrator(_team(), [lookup], config=config, journal=journal)
        with anyio.fail_after(GUARD_S):
            result = await orch.run("goal", meta={"who": "test"})
            info = await journal.run(result.run_id)
            records = await journal.load(result.run_id)
    assert info is not None
    assert info.meta == {"who": "test"}
    assert info.config is not None
    # Recorded with the defaults that follow the model made explicit: a replay asks the same.
    assert RunConfig.model_validate(info.config) == config.model_copy(
        update={"pass_results": False}
    )
    shown = render_run(info, records)
    assert "config: " in shown
    line = next(x for x in shown.splitlines() if x.startswith("config: "))
    assert "cite=true" in line
    assert '"deadline_s": 60.0' in line
    assert '"max_subtasks": 3' in line
    assert "ask_goal" not in line  # a default is not repeated


@pytest.mark.anyio
async def test_a_run_is_given_its_effects_and_event_options() -> None:
    """keep_events and the effect boundary belong to the run, not the Orchestrator."""
    orch = Orchestrator(_team(), [lookup])
    with anyio.fail_after(GUARD_S):
        kept = await orch.run("goal")
        bare = await orch.run("goal", keep_events=False, effects=LiveEffects())
    assert kept.events
    assert not bare.events
    assert bare.status == "complete"


@pytest.mark.anyio
@pytest.mark.parametrize(("chars", "kept"), [(None, 3_999), (1_500, 1_500), (200, 200)])
async def test_result_chars_bounds_what_dependents_and_the_writer_read(
    chars: int | None, kept: int
) -> None:
    """`RunConfig.result_chars`: the most of one subtask's result that a dependent sub-agent and
    the final writer read; None lifts the cut (long results behind a large window)."""
    long_answer = "x" * 3_999 + "!"
    team = Team(
        [plan(sub("a"), sub("b", "a"))],
        {"a": lambda _: long_answer, "b": lambda _: "B done."},
        synthesis="The answer.",
    )
    config = RunConfig(result_chars=chars)
    with anyio.fail_after(GUARD_S):
        result = await Orchestrator(team.model, config=config).run("goal")
    assert result.status == "complete"
    for prompt in (opening(team.of("b")[0]), opening(team.of(WRITER)[0])):
        assert "x" * kept in prompt
        assert "x" * (kept + 1) not in prompt
        assert ("!" in prompt) == (chars is None)


def test_result_chars_below_a_useful_size_is_refused() -> None:
    with pytest.raises(ValidationError, match="greater than or equal to 100"):
        RunConfig(result_chars=10)


@pytest.mark.anyio
async def test_a_replay_takes_the_configuration_the_run_was_recorded_with(tmp_path: Path) -> None:
    """An Orchestrator built with other defaults replays a run as it was configured (here no
    replans, so the agents of its plan of two were not offered `report_issue`): no drift; a
    `config=` given to the replay still wins, and then each agent's first request that differs
    is reported."""
    config = RunConfig(limits=Limits(max_replans=0))
    team = _team("Find fact b.")
    async with Journal(tmp_path / "j.db") as journal:
        with anyio.fail_after(GUARD_S):
            recorded = await Orchestrator(team, [lookup], journal=journal, config=config).run(
                "goal"
            )
            replayer = Orchestrator(FunctionModel(by_purpose()), [lookup], journal=journal)
            same = await replayer.replay(recorded.run_id)
            other = await replayer.replay(recorded.run_id, config=RunConfig())
    assert same.ok, same.drift
    assert same.result is not None
    assert same.result.answer == recorded.answer
    assert not other.ok
    assert sorted((d.agent_id, d.kind) for d in other.drift) == [("a", "model"), ("s0", "model")]
