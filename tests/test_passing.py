"""Results passed on as an answer (`agents._passing`, `RunConfig.pass_results`).

A sub-agent offered the built-in `answer_with_results` tool (`Executor.run(pass_results=N)`) may
call it with its last calls: once their results are in, it ends with every result its tools
returned as its answer, with no closing model call. The results stand only when the turn's calls
all succeeded, they fit N characters, they cover what the task asks, and the caller still reads
them; otherwise the model is told why, and it writes its answer (the tool stays on its menu,
which leads every request: a provider's prompt cache keeps holding the agent's history). In an
orchestrator's run only a subtask that gathers and that no other subtask reads is offered it (one
started while the plan streamed in, until the plan says otherwise).
"""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from pydantic import BaseModel

from agents import Budget, ChatModel, Executor, OpenAIChatModel, Usage, tool
from agents.events import AgentEvent
from agents.models import ModelRequest
from agents.testing import FunctionModel, ScriptedModel, Turn, call, calls
from memory import Journal
from orchestrator import Orchestrator, RunConfig
from orchestrator._plan import Plan, Subtask
from orchestrator._setup import _passed_chars, with_model_defaults
from orchestrator._state import Record, RunState
from tests._team import WRITER, Team, lookup, opening, plan, script, sub

pytestmark = pytest.mark.anyio


@tool
async def broken(key: str) -> str:
    """A tool that always fails.

    Args:
        key: Anything.
    """
    raise RuntimeError(f"no {key} today")


def _menu(request: ModelRequest) -> list[str]:
    return [spec.name for spec in request.tools]


def _told(request: ModelRequest) -> str:
    return "\n".join(m.content or "" for m in request.messages if m.role == "user")


async def test_answer_with_results_with_the_last_call_ends_the_agent_with_every_result() -> None:
    model = ScriptedModel(
        [
            call("lookup", key="alpha"),
            calls(("lookup", {"key": "beta"}), ("answer_with_results", {})),
        ]
    )
    report = await Executor(model, [lookup]).run("Find alpha and beta.", pass_results=1000)
    model.assert_complete()
    assert report.status == "done"
    assert report.answer == "the value of alpha\n\nthe value of beta"
    assert report.usage.requests == 2  # no closing answer call
    assert "answer_with_results" in _menu(model.requests[0])
    assert any("passed its tool results on" in n for n in report.notes)
    assert [e.tool for e in report.evidence] == ["lookup", "lookup"]  # paor's tool is no evidence


async def test_one_lookup_beside_the_tool_runs_in_the_agents_own_task() -> None:
    """A turn of one lookup and `answer_with_results` needs no task group: a task of its own for
    each of 10,000 waiting sub-agents' lookups is memory (`benchmarks/_memory.py`)."""
    tasks: list[int] = []

    @tool
    async def where(key: str) -> str:
        """Say where it ran.

        Args:
            key: Anything.
        """
        tasks.append(anyio.get_current_task().id)
        return f"the value of {key}"

    turn = calls(("answer_with_results", {}), ("where", {"key": "alpha"}))
    report = await Executor(ScriptedModel([turn]), [where]).run("Find alpha.", pass_results=1000)
    assert report.answer == "the value of alpha"
    assert tasks == [anyio.get_current_task().id]


async def test_without_pass_results_the_tool_is_neither_offered_nor_run() -> None:
    model = ScriptedModel(
        [calls(("lookup", {"key": "alpha"}), ("answer_with_results", {})), "alpha is known"]
    )
    report = await Executor(model, [lookup]).run("Find alpha.")
    model.assert_complete()
    assert "answer_with_results" not in _menu(model.requests[0])
    assert (report.status, report.answer) == ("done", "alpha is known")
    tool_said = [m.content or "" for m in model.requests[1].messages if m.role == "tool"]
    assert "unknown tool" in tool_said[-1].lower()


async def test_answer_with_results_before_any_result_is_refused_and_the_agent_writes() -> None:
    model = ScriptedModel(
        [call("answer_with_results"), call("lookup", key="alpha"), "alpha is the value"]
    )
    report = await Executor(model, [lookup]).run("Find alpha.", pass_results=1000)
    model.assert_complete()
    assert "no tool has returned anything yet" in _told(model.requests[1])
    # Still offered: the tools that lead every request stay the same (a provider's cache).
    assert _menu(model.requests[1]) == _menu(model.requests[0])
    assert (report.status, report.answer) == ("done", "alpha is the value")
    assert any("results not passed on" in n for n in report.notes)


async def test_a_failed_call_in_the_finishing_turn_refuses_the_results() -> None:
    model = ScriptedModel(
        [
            call("lookup", key="alpha"),
            calls(("broken", {"key": "beta"}), ("answer_with_results", {})),
            "alpha is the value; beta could not be found",
        ]
    )
    report = await Executor(model, [lookup, broken]).run("Find alpha.", pass_results=1000)
    model.assert_complete()
    assert "a call of your last turn failed" in _told(model.requests[2])
    assert report.answer == "alpha is the value; beta could not be found"


async def test_results_longer_than_the_bound_are_refused() -> None:
    model = ScriptedModel(
        [calls(("lookup", {"key": "alpha"}), ("answer_with_results", {})), "alpha is the value"]
    )
    report = await Executor(model, [lookup]).run("Find alpha.", pass_results=10)
    model.assert_complete()
    assert "more than the 10 passed on" in _told(model.requests[1])
    assert report.answer == "alpha is the value"


async def test_results_that_leave_a_part_out_are_refused_until_it_is_looked_up() -> None:
    @tool
    async def capital(country: str) -> str:
        """The capital of a country.

        Args:
            country: The country.
        """
        city = {"France": "Paris", "Japan": "Tokyo"}[country]
        return f"{city} is the capital of {country}."

    model = ScriptedModel(
        [
            calls(("capital", {"country": "France"}), ("answer_with_results", {})),
            calls(("capital", {"country": "Japan"}), ("answer_with_results", {})),
        ]
    )
    task = "What are the capitals of France and Japan?"
    report = await Executor(model, [capital]).run(task, pass_results=1000)
    model.assert_complete()
    assert "says nothing about Japan" in _told(model.requests[1])
    assert report.status == "done"
    assert report.answer == "Paris is the capital of France.\n\nTokyo is the capital of Japan."


async def test_a_caller_that_reads_the_results_itself_gets_a_written_answer() -> None:
    asked: list[bool] = []

    def may_pass() -> bool:
        asked.append(False)
        return False

    model = ScriptedModel(
        [calls(("lookup", {"key": "alpha"}), ("answer_with_results", {})), "alpha is the value"]
    )
    report = await Executor(model, [lookup]).run(
        "Find alpha.", pass_results=1000, may_pass=may_pass
    )
    model.assert_complete()
    assert "answer_with_results" in _menu(model.requests[0])  # offered until asked again
    assert "other steps may read your answer" in _told(model.requests[1])
    assert "answer_with_results" not in _menu(model.requests[1])  # withdrawn for good
    assert asked == [False, False]  # when it called the tool, and before its second decision
    assert report.answer == "alpha is the value"


@pytest.mark.parametrize("reads", [True, False, None])
async def test_the_offer_is_settled_once_before_the_second_decision(reads: bool | None) -> None:
    """Offered, then withdrawn before the second request only if the caller knows by then that
    it reads the results itself (not known yet: it stays, and a call would be judged then)."""
    asked: list[bool | None] = []

    def may_pass() -> bool | None:
        asked.append(reads)
        return reads

    model = ScriptedModel(
        [call("lookup", key="alpha"), call("lookup", key="beta"), "alpha and beta are known"]
    )
    await Executor(model, [lookup]).run(
        "Find alpha and beta.", pass_results=1000, may_pass=may_pass
    )
    menus = ["answer_with_results" in _menu(r) for r in model.requests]
    kept = reads is not False
    assert menus == [True, kept, kept]  # one change at most, after the first request
    assert len(asked) == 1


async def test_the_offer_stays_once_the_first_prompt_is_long_enough_to_be_cached() -> None:
    """A first request a provider could cache (1,024 tokens and more) keeps the tool on the menu
    even when the caller then knows it reads the answer: a changed menu would have the whole
    history read uncached again. Called, it is refused, and the agent writes its answer."""
    asked: list[bool] = []

    def may_pass() -> bool:
        asked.append(False)
        return False

    first = call("lookup", key="alpha").model_copy(
        update={"usage": Usage(requests=1, prompt_tokens=1500, completion_tokens=9)}
    )
    model = ScriptedModel(
        [first, calls(("lookup", {"key": "beta"}), ("answer_with_results", {})), "alpha, beta"]
    )
    report = await Executor(model, [lookup]).run(
        "Find alpha and beta.", pass_results=1000, may_pass=may_pass
    )
    model.assert_complete()
    assert ["answer_with_results" in _menu(r) for r in model.requests] == [True, True, True]
    assert asked == [False]  # not before the second decision: only when it called the tool
    assert "other steps may read your answer" in _told(model.requests[2])
    assert report.answer == "alpha, beta"


class _Value(BaseModel):
    value: str


@pytest.mark.parametrize("kind", ["acceptance", "output", "cite"])
async def test_not_offered_where_a_written_answer_is_judged(kind: str) -> None:
    def decide(request: ModelRequest) -> Turn:
        looked = any(m.role == "tool" for m in request.messages)
        return '{"value": "the value of alpha"}' if looked else call("lookup", key="alpha")

    model = FunctionModel(decide)
    executor = Executor(
        model,
        [lookup],
        acceptance=(lambda answer, evidence: None) if kind == "acceptance" else None,
        cite=kind == "cite",
    )
    output = _Value if kind == "output" else None
    await executor.run("Find alpha.", pass_results=1000, output_type=output)
    assert "answer_with_results" not in _menu(model.requests[0])
    assert "answer_with_results" not in "".join(map(_told, model.requests))


def _config(**fields: object) -> RunConfig:
    return RunConfig.model_validate({"pass_results": True, **fields})


async def test_a_run_passes_the_results_of_a_subtask_only_the_writer_reads() -> None:
    finishing = calls(("lookup", {"key": "alpha"}), ("answer_with_results", {}))
    team = Team(
        [plan(sub("a"), sub("b"))],
        {"a": script(finishing), "b": script(call("lookup", key="beta"), "b is the value of beta")},
    )
    result = await Orchestrator(team.model, [lookup], config=_config()).run(
        "Find alpha and beta for the report."
    )
    team.assert_clean()
    assert result.status == "complete"
    (a,) = [r for r in result.reports if r.agent_id == "a"]
    assert (a.status, a.answer, a.usage.requests) == ("done", "the value of alpha", 1)
    (written,) = team.of(WRITER)
    assert "the value of alpha" in opening(written)


async def test_a_subtask_another_reads_is_not_offered_the_tool() -> None:
    team = Team(
        [plan(sub("a"), sub("b", "a"))],
        {
            "a": script(call("lookup", key="alpha"), "a is the value of alpha"),
            "b": script(calls(("lookup", {"key": "beta"}), ("answer_with_results", {}))),
        },
    )
    result = await Orchestrator(team.model, [lookup], config=_config()).run(
        "Find alpha, then beta, for the report."
    )
    team.assert_clean()
    assert result.status == "complete"
    assert "answer_with_results" not in _menu(team.of("a")[0])
    assert "answer_with_results" in _menu(team.of("b")[0])  # nothing reads b but the writer
    answers = {r.agent_id: r.answer for r in result.reports}
    assert answers == {"a": "a is the value of alpha", "b": "the value of beta"}


async def test_off_by_default_for_a_model_of_ones_own() -> None:
    team = Team([plan(sub("a"), sub("b"))], {"a": script("a"), "b": script("b")})
    await Orchestrator(team.model, [lookup]).run("Find alpha and beta for the report.")
    assert all("answer_with_results" not in _menu(r) for r in [*team.of("a"), *team.of("b")])


async def test_a_passed_result_replays_from_the_journal(tmp_path: Path) -> None:
    finishing = calls(("lookup", {"key": "alpha"}), ("answer_with_results", {}))
    team = Team(
        [plan(sub("a"), sub("b"))],
        {"a": script(finishing), "b": script(call("lookup", key="beta"), "b is the value of beta")},
    )
    async with Journal(tmp_path / "runs.db") as journal:
        live = await Orchestrator(team.model, [lookup], config=_config(), journal=journal).run(
            "Find alpha and beta for the report."
        )
        replay = await Orchestrator(Team([], {}).model, [lookup], journal=journal).replay(
            live.run_id
        )
    assert replay.drift == ()
    assert replay.result is not None
    assert replay.result.answer == live.answer
    assert [r.answer for r in replay.result.reports] == [r.answer for r in live.reports]
    assert "the value of alpha" in [r.answer for r in live.reports]


def _state() -> RunState:
    return RunState(run_id="r", goal="Find alpha and beta for the report.", budget=Budget(),
                    agent_budget=Budget())  # fmt: skip


async def _quiet(event: AgentEvent) -> None:
    return None


def test_an_early_start_is_offered_the_tool_and_asked_again_once_the_plan_has_come() -> None:
    """Started while the plan streamed in, a subtask's readers are not known yet: it is offered
    the tool, and may pass its results on once the plan has come and nothing else reads them;
    one started from the whole plan is offered the tool or not, and not asked again."""
    s = _state()
    a = Subtask(id="a", goal="Find alpha.")
    early = Record(subtask=a, status="running", held=[])
    call = s.agent_call(early, _quiet, text=False, pass_results=500)
    assert call.pass_results == 500
    assert call.may_pass is not None
    assert call.may_pass() is None  # no plan yet: not known
    s.streamed["c"] = Subtask(id="c", goal="Use alpha.", depends_on=("a",))
    assert call.may_pass() is False  # a subtask written so far reads it: known already
    s.streamed.clear()
    s.adopt(Plan(subtasks=(a,)))
    assert call.may_pass()  # nothing reads it
    s.adopt(Plan(subtasks=(a, Subtask(id="b", goal="Use alpha.", depends_on=("a",)))))
    assert not call.may_pass()  # b reads a's answer
    late = s.agent_call(s.records["a"], _quiet, text=False, pass_results=500)
    assert (late.pass_results, late.may_pass) == (0, None)
    b = s.agent_call(s.records["b"], _quiet, text=False, pass_results=500)
    assert (b.pass_results, b.may_pass) == (500, None)
    off = s.agent_call(early, _quiet, text=False, pass_results=0)
    assert (off.pass_results, off.may_pass) == (0, None)  # the run passes nothing on


@pytest.mark.parametrize(
    ("fields", "passes"),
    [
        ({}, True),
        ({"expected_output": "A number."}, False),
        ({"acceptance": "Names the source."}, False),
        ({"output_schema": {"type": "object"}}, False),
        ({"goal": "Find alpha and beta for the report."}, False),  # the goal itself
    ],
    ids=["gathers", "expected-output", "acceptance", "typed", "the-goal"],
)
def test_only_a_subtask_that_gathers_passes_its_results_on(
    fields: dict[str, object], passes: bool
) -> None:
    s = _state()
    sub = Subtask.model_validate({"id": "a", "goal": "Find alpha.", **fields})
    s.adopt(Plan(subtasks=(sub,)))
    assert s.passes_on(sub) is passes


@pytest.mark.parametrize(
    ("model", "configured", "result_chars", "chars"),
    [
        (OpenAIChatModel("m", base_url="https://api.example/v1", api_key="k"), None, 1500, 1500),
        (OpenAIChatModel("m", base_url="https://api.example/v1", api_key="k"), None, None, 65_536),
        (OpenAIChatModel("m", base_url="http://127.0.0.1:9/v1", local=True), None, 1500, 0),
        (ScriptedModel([]), None, 1500, 0),
        (ScriptedModel([]), True, 1500, 1500),
        (OpenAIChatModel("m", base_url="https://api.example/v1", api_key="k"), False, 1500, 0),
    ],
    ids=["hosted", "hosted-whole", "local", "own-model", "turned-on", "turned-off"],
)
def test_results_are_passed_on_by_default_only_from_a_hosted_endpoint(
    model: ChatModel, configured: bool | None, result_chars: int | None, chars: int
) -> None:
    """On where a hosted model decides; as much as the writer reads of a result."""
    config = RunConfig(pass_results=configured, result_chars=result_chars)
    assert _passed_chars(config, model) == chars


async def test_a_tool_of_ones_own_with_the_name_wins() -> None:
    @tool(name="answer_with_results")
    async def own(key: str) -> str:
        """The caller's own tool of that name.

        Args:
            key: Anything.
        """
        return f"own {key}"

    model = ScriptedModel([call("answer_with_results", key="alpha"), "The value is own alpha."])
    report = await Executor(model, [own]).run("Find alpha.", pass_results=1000)
    model.assert_complete()
    assert _menu(model.requests[0]) == ["answer_with_results", "report_issue"]
    assert report.answer == "The value is own alpha."
    assert [e.tool for e in report.evidence] == ["answer_with_results"]  # it ran, as a tool


def test_a_run_records_the_default_it_took_so_a_replay_asks_the_same() -> None:
    """`pass_results=None` follows the model; the run records what it took (a replay given
    another model must ask what the run asked, the tool on its menus or not)."""
    hosted = OpenAIChatModel("m", base_url="https://api.example/v1", api_key="k")
    assert with_model_defaults(RunConfig(), hosted).pass_results is True
    assert with_model_defaults(RunConfig(), ScriptedModel([])).pass_results is False
    assert with_model_defaults(RunConfig(pass_results=False), hosted).pass_results is False


async def test_results_not_known_to_be_read_only_by_the_caller_are_refused() -> None:
    model = ScriptedModel(
        [calls(("lookup", {"key": "alpha"}), ("answer_with_results", {})), "alpha is the value"]
    )
    report = await Executor(model, [lookup]).run(
        "Find alpha.", pass_results=1000, may_pass=lambda: None
    )
    model.assert_complete()
    assert "other steps may read your answer" in _told(model.requests[1])
    assert "answer_with_results" in _menu(model.requests[1])  # still not known: it stays
    assert report.answer == "alpha is the value"
