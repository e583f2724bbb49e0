"""Plans: validation through the planner's repair loop, replan checks, and the DAG helpers."""

from __future__ import annotations

import json
import re
from typing import Any

import anyio
import pytest
from pydantic import BaseModel, ValidationError

from agents.errors import ModelRequestError
from agents.models import ModelRequest
from agents.testing import FunctionModel, Turn, call, reply
from memory import AssistantMessage, UserMessage
from orchestrator import Event, Limits, Orchestrator, Plan, RunConfig, Subtask
from orchestrator._drafts import ReplanDraft, base_schema
from orchestrator._plan import AskingPlanDraft, PlanDraft, SubtaskDraft, problems, salvage
from orchestrator._plan_checks import same_question
from orchestrator.events import PlanCreated, Replanned, RunFinished
from tests._team import PLANNER, WRITER, PlannerTurn, Team, lookup, opening, plan, script, sub

pytestmark = pytest.mark.anyio

GUARD_S = 10  # a deadlock guard, not a timing claim


GOOD = plan(sub("a"))


def feedback(request: ModelRequest) -> str:
    """The loop's message to the planner about its last reply."""
    message = request.messages[-1]
    assert isinstance(message, UserMessage)
    return message.content


# The first plan


@pytest.mark.parametrize(
    ("bad", "problem", "limits"),
    [
        pytest.param(plan(), "the plan has no subtasks", Limits(), id="empty"),
        pytest.param(
            plan(sub("a", "b"), sub("b", "a")),
            re.compile(r"dependencies form a cycle: (a -> b -> a|b -> a -> b)"),
            Limits(),
            id="cycle",
        ),
        pytest.param(
            plan(sub("a", goal="Look a fact up.")),
            "subtask a's goal copies the description of the tool lookup",
            Limits(),
            id="tool-description",
        ),
        pytest.param(
            plan(sub("a", goal="How and by when must it be claimed?")),
            'subtask a\'s goal does not stand alone: "it" points to nothing in it',
            Limits(),
            id="dangling-pronoun",
        ),
        pytest.param(
            plan(sub("a"), sub("a", goal="Find fact z."), sub("b", "a")),
            "subtask ids must be unique and new: a",
            Limits(),
            id="dup",
        ),
        pytest.param(
            plan(sub("a"), sub("b"), sub("c")),
            "the plan has 3 subtasks; at most 2 allowed",
            Limits(max_subtasks=2),
            id="too-many",
        ),
        pytest.param(
            plan(sub("a", tools=["fly"])),
            "subtask a names unknown tools fly; valid: lookup",
            Limits(),
            id="unknown-tool",
        ),
        pytest.param(
            plan(sub("planner")),
            "these ids are reserved for paor itself, choose others: planner",
            Limits(),
            id="reserved-planner",
        ),
        pytest.param(
            plan(sub("a"), sub("run", "a")),
            "these ids are reserved for paor itself, choose others: run",
            Limits(),
            id="reserved-run",
        ),
        pytest.param(
            plan({"id": "no spaces!", "goal": "x"}),
            "id: 'no spaces!' is not a valid id: use 1 to 40 letters, digits, '_', '-' or '.'",
            Limits(),
            id="bad-id",
        ),
        pytest.param("not json", "the reply is not valid JSON", Limits(), id="not-json"),
        pytest.param({"steps": []}, "subtasks: Field required", Limits(), id="wrong-shape"),
    ],
)
async def test_invalid_plan_is_sent_back_for_repair(
    bad: PlannerTurn, problem: str | re.Pattern[str], limits: Limits
) -> None:
    """An invalid plan goes back to the planner with its problem; the repaired plan runs."""
    team = Team([bad, GOOD], {"a": script("A")})
    with anyio.fail_after(GUARD_S):
        result = await Orchestrator(team.model, [lookup], config=RunConfig(limits=limits)).run(
            "goal"
        )

    first, repair = team.of(PLANNER)
    text = feedback(repair)
    assert text.startswith("Your reply has problems:\n- ")
    assert text.endswith("Reply again with the whole corrected JSON.")
    if isinstance(problem, str):
        assert problem in text
    else:
        assert problem.search(text), text
    # The repair request is the first one plus the bad reply and the feedback.
    assert repair.messages[:2] == first.messages
    assert isinstance(repair.messages[2], AssistantMessage)
    assert repair.output == first.output
    assert result.status == "complete"
    assert [p.ids for p in result.plans] == [("a",)]
    team.assert_clean()


@pytest.mark.parametrize("repairs", [0, 2])
async def test_plan_still_invalid_after_the_repairs_ends_the_run_failed(repairs: int) -> None:
    """Past max_plan_repairs the run returns "failed", saying what was wrong; it does not raise,
    and no sub-agent runs."""
    bad = plan(sub("a", "b"), sub("b", "a"))
    team = Team([bad] * (repairs + 1), {"a": script("A"), "b": script("B")})
    orch = Orchestrator(team.model, config=RunConfig(limits=Limits(max_plan_repairs=repairs)))
    with anyio.fail_after(GUARD_S):
        result = await orch.run("goal")

    assert (result.status, result.answer) == ("failed", "")
    assert result.reason == (
        f"no valid plan after {repairs + 1} attempts: dependencies form a cycle: a -> b -> a"
    )
    assert len(team.of(PLANNER)) == repairs + 1
    assert not team.of("a")
    assert not team.of(WRITER)
    team.assert_clean()


async def test_a_plan_that_cannot_be_made_ends_the_stream_with_a_failed_run() -> None:
    """Streaming, a plan that cannot be made ends with RunFinished(failed) and a failed result;
    the stream never raises for it."""
    team = Team([plan(), plan()], {})
    orch = Orchestrator(team.model, config=RunConfig(limits=Limits(max_plan_repairs=1)))
    seen: list[Event] = []

    with anyio.fail_after(GUARD_S):
        async with orch.stream("goal", run_id="r-1") as events:
            async for event in events:
                seen.append(event)
    (finished,) = seen
    assert isinstance(finished, RunFinished)
    assert (finished.status, finished.run_id) == ("failed", "r-1")
    assert finished.reason is not None
    assert "no valid plan after 2 attempts" in finished.reason
    assert "the plan has no subtasks" in finished.reason
    assert finished.usage.requests == 2
    assert (events.result.status, events.result.reason) == ("failed", finished.reason)


async def test_a_failing_planner_model_ends_the_run_failed_at_once() -> None:
    """A planner model that fails outright ends the run failed at once, without repairs."""
    team = Team([ModelRequestError("401 unauthorized", status=401)], {})
    with anyio.fail_after(GUARD_S):
        result = await Orchestrator(team.model).run("goal")
    assert (result.status, result.reason) == (
        "failed",
        "the planner model failed: 401 unauthorized",
    )
    assert len(team.of(PLANNER)) == 1


async def test_a_first_plan_depending_on_tools_is_repaired_and_says_so() -> None:
    """Dependencies that name a tool, no subtask or the subtask itself are dropped from a first
    plan (as a replan's are), the run goes on, and its notes say what was dropped."""
    team = Team(
        [plan(sub("a", "lookup"), sub("b", "a", "zzz", "b"))], {"a": script("A"), "b": script("B")}
    )
    with anyio.fail_after(GUARD_S):
        result = await Orchestrator(team.model, [lookup]).run("goal")
    assert [s.depends_on for s in result.plans[0].subtasks] == [(), ("a",)]
    assert "plan v1: dropped a's dependencies on lookup (tools, not subtasks)" in result.notes
    assert "plan v1: dropped b's dependencies on zzz (no subtask)" in result.notes
    assert "plan v1: dropped b's dependencies on b (itself)" in result.notes
    assert len(team.of(PLANNER)) == 1


async def test_a_first_plans_repeated_id_that_nothing_depends_on_is_renamed() -> None:
    """Subtasks sharing an id that no subtask depends on are told apart (Qwen2.5-Coder-0.5B
    named every subtask "call"); an id repeated where another subtask depends on it is
    ambiguous, and goes back to the planner."""
    team = Team(
        [
            plan(sub("call"), sub("call", goal="Find fact call-2."), sub("call")),
            plan(sub("x"), sub("x", goal="Find fact z."), sub("y", "x")),
            plan(sub("x"), sub("y", "x")),
        ],
        {"call": script("A"), "call-2": script("B"), "x": script("X"), "y": script("Y")},
    )
    with anyio.fail_after(GUARD_S):
        result = await Orchestrator(team.model, [lookup]).run("goal")
    assert [s.id for s in result.plans[0].subtasks] == ["call", "call-2"]
    assert "plan v1: renamed a repeated id call to call-2" in result.notes
    assert "plan v1: left out a second call: it repeats its goal" in result.notes
    assert [r.answer for r in result.reports] == ["A", "B"]
    assert len(team.of(PLANNER)) == 1
    with anyio.fail_after(GUARD_S):
        again = await Orchestrator(team.model, [lookup]).run("goal")
    assert [s.id for s in again.plans[0].subtasks] == ["x", "y"]
    assert "subtask ids must be unique and new: x" in feedback(team.of(PLANNER)[2])


async def test_plan_request_asks_for_structured_json_with_the_tool_menu() -> None:
    """The planner is asked for a PlanDraft as structured output, with no tools, knowing the goal,
    the tools and the size limit."""
    team = Team([GOOD], {"a": script("A")})
    orch = Orchestrator(team.model, [lookup], config=RunConfig(limits=Limits(max_subtasks=5)))
    with anyio.fail_after(GUARD_S):
        await orch.run("Compare two things")

    (request,) = team.of(PLANNER)
    assert request.tools == ()
    assert request.output is not None
    schema = json.loads(base_schema(PlanDraft))  # without titles or docstrings
    schema["properties"]["subtasks"].update(minItems=1, maxItems=5)
    # The run's tool names are an enum: a grammar-constrained planner cannot invent a tool.
    schema["$defs"]["SubtaskDraft"]["properties"]["tools"].update(
        items={"enum": ["lookup"]}, maxItems=1
    )
    # Without `direct_calls` a subtask cannot be, nor start with, a tool call written out.
    schema["$defs"]["SubtaskDraft"]["properties"].pop("call")
    schema["$defs"]["SubtaskDraft"]["properties"].pop("first_call")
    schema["$defs"].pop("CallDraft")
    # Without `typed_subtasks` a subtask has no output schema.
    schema["$defs"]["SubtaskDraft"]["properties"].pop("output_schema")
    assert (request.output.name, request.output.schema_) == ("plan", schema)
    system = request.messages[0].content
    assert system is not None
    assert "at most 5" in system
    assert opening(request) == (
        "Goal: Compare two things\n\nTools the agents can use:\n- lookup: Look a fact up."
    )


async def test_each_run_edits_its_own_copy_of_the_plan_schema() -> None:
    """The plan schema is generated once, but each run's limits go into a copy of its own: a later
    run with other tools and another size limit leaves an earlier request's schema as it was."""
    first, second = Team([GOOD], {"a": script("A")}), Team([GOOD], {"a": script("A")})
    with anyio.fail_after(GUARD_S):
        await Orchestrator(
            first.model, [lookup], config=RunConfig(limits=Limits(max_subtasks=5))
        ).run("g")
        await Orchestrator(second.model, [], config=RunConfig(limits=Limits(max_subtasks=3))).run(
            "g"
        )

    def limits(team: Team) -> tuple[object, object, object]:
        (request,) = team.of(PLANNER)
        assert request.output is not None
        schema = request.output.schema_
        tools = schema["$defs"]["SubtaskDraft"]["properties"]["tools"]
        return schema["properties"]["subtasks"]["maxItems"], tools["items"], tools["maxItems"]

    assert limits(first) == (5, {"enum": ["lookup"]}, 1)
    assert limits(second) == (3, {"type": "string"}, 0)


# Replans


async def test_invalid_replan_is_sent_back_for_repair() -> None:
    """A replan that removes finished work is sent back; a fix with a dependency on an unknown
    id is salvaged (the dependency dropped) and adopted."""
    team = Team(
        [plan(sub("a"), sub("b", "a"))],  # a is done by the time b fails
        {
            "a": script("A"),
            "b": script(ModelRequestError("400 bad request", status=400)),
            "b2": script("B2"),
        },
        replans=[
            {"remove": ["a"], "add": []},
            {"remove": [], "add": [sub("b2", "a", "ghost")]},
        ],
    )
    orch = Orchestrator(team.model, config=RunConfig(limits=Limits(max_plan_repairs=3)))
    with anyio.fail_after(GUARD_S):
        result = await orch.run("goal")

    first, *repairs = team.of(PLANNER)[1:]
    assert first.output is not None
    replan_schema = json.loads(base_schema(ReplanDraft))
    replan_schema["$defs"]["SubtaskDraft"]["properties"]["tools"].update(maxItems=0)
    replan_schema["$defs"]["SubtaskDraft"]["properties"].pop("call")
    replan_schema["$defs"]["SubtaskDraft"]["properties"].pop("first_call")
    replan_schema["$defs"].pop("CallDraft")
    replan_schema["$defs"]["SubtaskDraft"]["properties"].pop("output_schema")
    replan_schema["properties"]["remove"].update(maxItems=0)  # nothing is pending or running
    assert (first.output.name, first.output.schema_) == ("replan", replan_schema)
    problems = [feedback(r) for r in repairs]
    assert "only pending or running subtasks can be removed, not: a" in problems[0]
    (diff,) = result.diffs
    assert (diff.trigger, diff.added, diff.kept) == ("b", ("b2",), ("a",))
    assert result.plans[-1].ids == ("a", "b2")
    assert result.plans[-1].get("b2").depends_on == ("a",)
    assert {r.agent_id: r.status for r in result.reports} == {
        "a": "done",
        "b": "failed",
        "b2": "done",
    }
    team.assert_clean()


def test_salvage_renames_taken_ids_drops_repeats_and_unknown_dependencies_and_cuts_to_room() -> (
    None
):
    """A replan's additions are repaired where the intent is plain, and each repair is noted."""
    draft = PlanDraft(
        subtasks=[
            SubtaskDraft(id="b", goal="Find B again.", depends_on=["a", "ghost"]),
            SubtaskDraft(id="c", goal="find  b AGAIN."),
            SubtaskDraft(id="d", goal="Find D."),
            SubtaskDraft(id="e", goal="Find E."),
        ]
    )
    fixed, notes = salvage(draft, taken={"a", "b"}, room=2)
    assert [(s.id, s.depends_on) for s in fixed.subtasks] == [("b-2", ["a"]), ("d", [])]
    assert len(notes) == 4
    assert any("renamed b to b-2" in n for n in notes)
    assert any("repeats another subtask's goal" in n for n in notes)


def test_problems_are_one_bounded_line_each_whatever_the_ids() -> None:
    """Problems quoting model-written ids with line breaks, or very long ones, stay one short
    line each (they end up in a one-line PlanError when the repairs run out)."""
    bad = Plan(subtasks=(Subtask(id="a", goal="g", depends_on=("zz\nzz", "y" * 5000)),))
    (problem,) = problems(bad, max_subtasks=5, tools=())
    assert "\n" not in problem
    assert problem.startswith("subtask a depends on unknown ids: zz zz, yyy")
    assert len(problem) <= 300


def test_salvage_renames_an_addition_that_takes_a_reserved_id() -> None:
    """A replan's subtask named like one of the run's own agents gets a fresh id."""
    draft = PlanDraft(subtasks=[SubtaskDraft(id="planner", goal="Plan more.")])
    fixed, notes = salvage(draft, taken={"a"}, room=2)
    assert [s.id for s in fixed.subtasks] == ["planner-2"]
    assert notes == ["renamed planner to planner-2: the id was taken"]


async def test_replan_that_cannot_be_repaired_lets_the_run_go_on() -> None:
    """A replan still invalid after its repairs is abandoned: the run finishes with what it has."""
    team = Team(
        [plan(sub("a"), sub("b", "a"))],  # a is done by the time b is blocked
        {"a": script("A"), "b": script(call("report_issue", kind="blocked", reason="no access"))},
        replans=[{"remove": ["a"]}, {"remove": ["a"]}],
        synthesis="Only A.",
    )
    orch = Orchestrator(team.model, config=RunConfig(limits=Limits(max_plan_repairs=1)))
    with anyio.fail_after(GUARD_S):
        result = await orch.run("goal")

    assert len(team.of(PLANNER)) == 3
    replan_prompt = opening(team.of(PLANNER)[1])
    assert "Subtask b reported a problem: it is blocked: no access" in replan_prompt
    assert "- a [done] Find fact a.\n  result: A" in replan_prompt
    assert "only pending or running subtasks can be removed, not: a" in feedback(
        team.of(PLANNER)[2]
    )
    assert not [e for e in result.events if isinstance(e, Replanned)]
    assert [p.version for p in result.plans] == [1]
    assert (result.answer, result.status, result.reason) == ("Only A.", "incomplete", "blocked: b")
    (note,) = result.notes
    assert note.startswith("replan after b failed: no valid replan after 2 attempts")
    team.assert_clean()


# The DAG helpers


def dag(*edges: tuple[str, tuple[str, ...]]) -> Plan:
    """A plan from (id, depends_on) pairs."""
    return Plan(subtasks=tuple(Subtask(id=i, goal=f"goal {i}", depends_on=d) for i, d in edges))


DIAMOND = dag(("a", ()), ("b", ("a",)), ("c", ("a",)), ("d", ("b", "c")), ("e", ()))


def test_dependents_are_transitive() -> None:
    """`dependents` finds every subtask downstream of one, directly or not, and no other."""
    assert DIAMOND.dependents("a") == {"b", "c", "d"}
    assert DIAMOND.dependents("b") == {"d"}
    assert DIAMOND.dependents("d") == set()
    assert DIAMOND.dependents("e") == set()


def test_critical_path_is_the_longest_chain() -> None:
    """`critical_path` counts the longest dependency chain, by unit cost or by given costs."""
    assert DIAMOND.critical_path() == 3
    assert DIAMOND.critical_path({"b": 5.0, "e": 2.0}) == 1 + 5 + 1
    assert DIAMOND.critical_path({"e": 10.0}) == 10
    assert dag(("x", ())).critical_path() == 1
    assert Plan(subtasks=()).critical_path() == 0


def test_plan_lookup_and_ids() -> None:
    """A plan lists its ids in order and finds a subtask by id (KeyError when missing)."""
    assert DIAMOND.ids == ("a", "b", "c", "d", "e")
    assert DIAMOND.get("c").depends_on == ("a",)
    with pytest.raises(KeyError):
        DIAMOND.get("z")


@pytest.mark.parametrize(
    "fields",
    [
        {"id": "has space", "goal": "g"},
        {"id": "x" * 41, "goal": "g"},
        {"id": "a", "goal": ""},
        {"id": "a", "goal": "g", "surprise": 1},
    ],
)
def test_subtask_rejects_bad_fields(fields: dict[str, Any]) -> None:
    """A Subtask needs a short well-formed id and a goal, and has no unknown fields."""
    with pytest.raises(ValidationError):
        Subtask.model_validate(fields)


def test_plans_are_frozen() -> None:
    """Plans and subtasks cannot be changed once made."""
    with pytest.raises(ValidationError):
        DIAMOND.get("a").goal = "changed"  # type: ignore[misc]
    with pytest.raises(ValidationError):
        DIAMOND.version = 2  # type: ignore[misc]


async def test_single_subtask_fallback_when_planning_fails() -> None:
    """With on_plan_failure="single" an unplannable goal runs as one subtask, and says so."""
    asked: list[ModelRequest] = []

    def decide(request: ModelRequest) -> str:
        asked.append(request)
        if request.output is not None:
            return '{"subtasks": []}'  # invalid every time: the planner never succeeds
        return "The whole goal, answered." if request.purpose == "step" else "Summary."

    orch = Orchestrator(
        FunctionModel(decide),
        config=RunConfig(limits=Limits(max_plan_repairs=1), on_plan_failure="single"),
    )
    with anyio.fail_after(GUARD_S):
        result = await orch.run("do everything")
    assert [s.id for s in result.plans[0].subtasks] == ["goal"]
    # The goal alone, answered: its answer is the run's, with no synthesis call.
    assert (result.status, result.answer) == ("complete", "The whole goal, answered.")
    assert not [r for r in asked if r.purpose == "synthesis"]
    (note,) = result.notes
    assert note.startswith("planning failed, ran the goal as one subtask: no valid plan")
    assert sum(r.output is not None for r in asked) == 2


async def test_a_plan_asking_the_goal_keeps_one_of_subtasks_that_ask_the_same() -> None:
    """A small model's plan that asks the goal three times runs it once (and a repeated
    sub-question once), dependencies on a dropped copy left out."""
    same = [
        {"id": "1", "goal": "What does the global statement do?"},
        {"id": "2", "goal": "What does the global statement do?"},
        {"id": "3", "goal": "What does the 'global' statement do"},
        {"id": "4", "goal": "Where may a global statement appear?", "depends_on": ["2"]},
    ]

    def planner(request: ModelRequest) -> Any:
        return json.dumps({"subtasks": same})

    orch = Orchestrator(
        FunctionModel(planner), config=RunConfig(limits=Limits(max_subtasks=4), ask_goal=True)
    )
    async with orch.stream("What does the global statement do?") as events:
        async for event in events:
            if isinstance(event, PlanCreated):
                plan = event.plan
                break
    assert [(s.id, s.goal, s.depends_on) for s in plan.subtasks] == [
        ("1", "What does the global statement do?", ()),
        ("4", "Where may a global statement appear?", ()),
    ]


async def test_a_plan_asking_the_goal_puts_it_first_and_drops_subtasks_that_ask_nothing() -> None:
    """With ask_goal, a plan that strays gets the goal itself first (the last subtask making room),
    and subtasks that are ids, numbers, dates or URLs are left out."""
    junk = [
        {"id": "a", "goal": "1.1.2.2.1.1"},
        {"id": "b", "goal": "https://www.example.com/api/v2/api/v2"},
        {"id": "c", "goal": "import_doc_list_by_id"},
        {"id": "d", "goal": "What does a relative import resolve against?"},
        {"id": "e", "goal": "Which names does a star import bring in?"},
        {"id": "f", "goal": "Why is a module cached in sys.modules?"},
    ]

    def planner(request: ModelRequest) -> Any:
        return json.dumps({"subtasks": junk})

    orch = Orchestrator(
        FunctionModel(planner), config=RunConfig(limits=Limits(max_subtasks=3), ask_goal=True)
    )
    async with orch.stream("How does the import statement work?") as events:
        async for event in events:
            if isinstance(event, PlanCreated):
                goals = [s.goal for s in event.plan.subtasks]
                break
    assert goals == [
        "How does the import statement work?",
        "What does a relative import resolve against?",
        "Which names does a star import bring in?",
    ]


async def test_a_goal_that_never_stands_alone_gets_the_runs_goal_on_the_last_attempt() -> None:
    """When the repairs run out on wording alone, the run's goal is added to the subtask's goal
    (a plan is never refused for its wording), and the run's notes say so."""
    copied = json.dumps(plan(sub("a", goal="Look a fact up.")))
    asked: list[ModelRequest] = []

    def decide(request: ModelRequest) -> Turn:
        asked.append(request)
        return reply(copied if request.purpose == "plan" else "100 degrees Celsius.")

    orch = Orchestrator(
        FunctionModel(decide),
        [lookup],
        config=RunConfig(limits=Limits(max_plan_repairs=1), direct_questions=False),
    )
    with anyio.fail_after(GUARD_S):
        result = await orch.run("What is the boiling point of water at sea level?")
    (sub_a,) = result.plans[0].subtasks
    anchored = "Look a fact up. (for the goal: What is the boiling point of water at sea level?)"
    assert sub_a.goal == anchored
    assert "plan v1: the run's goal was added to a, whose goals did not stand alone" in result.notes
    assert [r.purpose for r in asked].count("plan") == 2
    assert anchored in opening(next(r for r in asked if r.purpose == "step"))


async def test_paors_markers_are_taken_out_of_a_plans_fields() -> None:
    """Status text and [OBSERVE] lines the planner pasted into a subtask never reach its agent."""
    marked = plan(
        sub(
            "a",
            goal="Find the refund window.",
            expected_output='[OBSERVE] lookup("refund") ok 3ms\nthe number of days (done)',
        )
    )
    team = Team([marked], {"a": script("The refund window is the value of refund.")})
    with anyio.fail_after(GUARD_S):
        planned = RunConfig(direct_questions=False)  # the planner's fields are under test
        result = await Orchestrator(team.model, [lookup], config=planned).run(
            "How long is the refund window?"
        )
    (sub_a,) = result.plans[0].subtasks
    assert sub_a.expected_output == "the number of days"
    assert "[OBSERVE]" not in opening(team.of("a")[0])


@pytest.mark.parametrize(
    ("one", "other", "same"),
    [
        pytest.param(
            "For how many days is it paid?", "How many days is it paid?", True, id="a word"
        ),
        pytest.param(
            "What is the limit in London?", "What is the limit in Paris?", False, id="name"
        ),
        pytest.param(
            "What is the limit?", "What is the limit per night in London?", False, id="more"
        ),
        pytest.param("What is the limit?", "", False, id="empty"),
    ],
)
def test_a_question_reworded_by_a_word_is_the_same_question(
    one: str, other: str, same: bool
) -> None:
    assert same_question(one, other) is same
    assert same_question(other, one) is same


async def test_a_plan_of_the_goal_reworded_is_not_given_the_goal_twice() -> None:
    """A small planner drops a word of the goal ("For how many days..." planned as "How many
    days..."): that is the goal, so no second agent is started on it, and its checked answer
    is the run's, with no synthesis."""
    goal = "For how many days can an employee self-certify an absence?"

    def decide(request: ModelRequest) -> Any:
        if request.output is not None:
            reworded = {"id": "1", "goal": "How many days can an employee self-certify an absence?"}
            return json.dumps({"subtasks": [reworded]})
        return "Up to 7 calendar days."

    orch = Orchestrator(
        FunctionModel(decide), config=RunConfig(ask_goal=True, direct_questions=False)
    )
    with anyio.fail_after(GUARD_S):
        result = await orch.run(goal)
    assert [s.goal for s in result.plans[0].subtasks] == [
        "How many days can an employee self-certify an absence?"
    ]
    assert (result.status, result.answer) == ("complete", "Up to 7 calendar days.")


@pytest.mark.parametrize("draft", [PlanDraft, AskingPlanDraft, ReplanDraft])
def test_the_planner_model_is_shown_a_bare_schema(draft: type[BaseModel]) -> None:
    """The schema a plan or replan must follow carries no pydantic titles nor the classes'
    docstrings (written for developers: they would cost every plan's prompt), and still
    describes the same fields, defaults and constraints."""
    full = draft.model_json_schema()
    bare = json.loads(base_schema(draft))
    text = json.dumps(bare)

    assert '"title"' not in text
    assert '"description"' not in text
    assert bare.get("required") == full.get("required")
    assert set(bare["properties"]) == set(full["properties"])
    assert set(bare.get("$defs", {})) == set(full.get("$defs", {}))
    if "SubtaskDraft" in bare.get("$defs", {}):
        sub = bare["$defs"]["SubtaskDraft"]["properties"]
        assert sub["id"]["pattern"] == full["$defs"]["SubtaskDraft"]["properties"]["id"]["pattern"]
        assert sub["depends_on"] == {"default": [], "items": {"type": "string"}, "type": "array"}
