"""The examples under examples/, run end to end with deterministic fake models."""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import anyio
import pytest

from agents.events import BreakerOpened, ToolCalled
from agents.models import ModelRequest
from agents.testing import FunctionModel, Turn, by_purpose, call, observation, reply
from agents.toolkits import Corpus
from memory import ToolMessage, UserMessage
from orchestrator import RunResult
from orchestrator._batch import BatchSummary, load_tasks
from orchestrator._research import RESEARCH_SYNTHESIS, ResearchReport
from tests._team import PLANNER, WRITER, Team, opening, plan, script

pytestmark = pytest.mark.anyio

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
GUARD_S = 10  # a guard against hangs, not a timing claim


def load(name: str) -> ModuleType:
    """Import examples/<name>/main.py (the folders are not packages) as `example_<name>`."""
    spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / name / "main.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


research_report = load("research_report")
parallel_runs = load("parallel_runs")
travel_assistant = load("travel_assistant")


def task_of(request: ModelRequest) -> str:
    """The goal a sub-agent was given (the first line of its task message)."""
    return opening(request).removeprefix("Task: ").split("\n")[0]


def cite_first_hit(request: ModelRequest) -> Turn:
    """A sub-agent that searches for its goal, then answers citing the first hit it was shown."""
    last = request.messages[-1]
    if not isinstance(last, ToolMessage):
        return call("search_docs", query=task_of(request))
    hits = json.loads(observation(last.content))
    # A question in several parts (the research topic) is answered from several hits.
    shown = hits[:3] if task_of(request) == research_report.TOPIC else hits[:1]
    quotes = (re.sub(r"[\[\]]", "", hit["text"]) for hit in shown)  # grammar snippets: brackets
    return reply(
        " ".join(f"{quote} [{hit['doc']}]" for quote, hit in zip(quotes, shown, strict=True))
    )


def tool_names(request: ModelRequest) -> set[str]:
    """The tools on the menu of a request."""
    return {spec.name for spec in request.tools}


# research_report

QUESTIONS = (
    "Where does Velmora's drinking water come from?",
    "How is Velmora's drinking water treated?",
    "How did Velmora cope with the 2022 drought?",
)
SUMMARY = (
    "Velmora blends reservoir, aquifer and river water [water-sources], treats it at Hollin Ridge "
    "[treatment-plant] and cut demand by a sixth in 2022 [drought-2022]. Its desalination plant "
    "[desalination] is not documented."
)


def research_team(request: ModelRequest) -> Turn:
    """Planner, researchers and writer of the research example."""
    if request.output is not None:
        subtasks = [{"id": f"q{n}", "goal": q} for n, q in enumerate(QUESTIONS, 1)]
        return reply(json.dumps({"subtasks": subtasks}))
    if request.messages[0].content == RESEARCH_SYNTHESIS:
        return reply(SUMMARY)
    return cite_first_hit(request)


async def test_research_report_writes_sections_with_real_citations(tmp_path: Path) -> None:
    """The report answers the topic itself first (the plan is made to ask it, the last question
    making room), then a section per sub-question, and cites only documents of the corpus."""
    out = tmp_path / "report.md"
    model = FunctionModel(research_team)
    report: ResearchReport = await research_report.run(model, out=out)

    markdown = out.read_text(encoding="utf-8")
    assert markdown == report.markdown
    assert report.result.status == "complete"
    asked = (research_report.TOPIC, *QUESTIONS[:2])
    assert [s.goal for s in report.result.plans[0].subtasks] == list(asked)
    headings = re.findall(r"^## (.+)$", markdown, flags=re.M)
    assert headings == ["Summary", "Answer", *QUESTIONS[:2], "Sources", "Evidence"]
    corpus_ids = {d.id for d in Corpus.from_folder(EXAMPLES / "research_report" / "docs").documents}
    cited = {c for group in re.findall(r"\[([^\]]+)\]", markdown) for c in group.split(", ")}
    assert cited <= corpus_ids
    assert {"water-sources", "treatment-plant", "drought-2022"} <= cited
    assert "[desalination]" not in markdown  # the made-up citation was dropped
    shown = {
        task_of(r): json.loads(observation(r.messages[-1].content))[0]["doc"]
        for r in model.requests
        if isinstance(r.messages[-1], ToolMessage)
    }
    assert sorted(shown) == sorted(asked)
    for question, first in shown.items():
        # Each section cites the first document its researcher was shown by search_docs.
        heading = "Answer" if question == research_report.TOPIC else question
        section = markdown.split(f"## {heading}\n", 1)[1].split("\n## ", 1)[0]
        assert f"[{first}]" in section


async def test_research_report_researchers_get_the_corpus_tools(tmp_path: Path) -> None:
    """Every researcher is offered search_docs and read_doc and is told to cite document ids."""
    model = FunctionModel(research_team)
    await research_report.run(model, out=tmp_path / "report.md")

    researchers = [r for r in model.requests if r.output is None and r.tools]
    assert {task_of(r) for r in researchers} == {research_report.TOPIC, *QUESTIONS[:2]}
    assert all({"search_docs", "read_doc"} <= tool_names(r) for r in researchers)
    assert all("cit" in (r.messages[0].content or "") for r in researchers)


# parallel_runs

TASKS = EXAMPLES / "parallel_runs" / "tasks.jsonl"


def batch_agent() -> FunctionModel:
    """Every batch agent searches the Python reference for its goal and cites the first hit."""
    return FunctionModel(cite_first_hit)


def records(out: Path) -> list[dict[str, object]]:
    """The result lines of a batch output file."""
    return [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]


async def test_parallel_runs_answers_every_goal_and_a_rerun_skips_them(tmp_path: Path) -> None:
    """Each goal gets one cited result line; running again asks the model nothing."""
    out = tmp_path / "results.jsonl"
    model = batch_agent()
    summary: BatchSummary = await parallel_runs.run(model, out=out)

    ids = [t.key() for t in load_tasks(TASKS)]
    assert len(ids) == 6
    lines = records(out)
    assert sorted(str(r["id"]) for r in lines) == sorted(ids)
    assert all(r["status"] == "done" and "[python/" in str(r["answer"]) for r in lines)
    assert summary.statuses == {"done": 6}
    asked = len(model.requests)

    again: BatchSummary = await parallel_runs.run(model, out=out)
    assert again.skipped == 6
    assert not again.statuses
    assert len(model.requests) == asked
    assert records(out) == lines


async def test_parallel_runs_resumes_an_interrupted_batch(tmp_path: Path) -> None:
    """Goals already in the output are not run again; only the rest are."""
    out = tmp_path / "results.jsonl"
    first_two = tmp_path / "first_two.jsonl"
    first_two.write_text("".join(TASKS.read_text().splitlines(keepends=True)[:2]))
    await parallel_runs.run(batch_agent(), tasks=first_two, out=out)

    model = batch_agent()
    summary: BatchSummary = await parallel_runs.run(model, out=out)

    goals = [t.goal for t in load_tasks(TASKS)]
    assert summary.skipped == 2
    assert summary.statuses == {"done": 4}
    assert {task_of(r) for r in model.requests} == set(goals[2:])
    assert sorted(str(r["id"]) for r in records(out)) == sorted(t.key() for t in load_tasks(TASKS))


async def test_parallel_runs_share_one_token_budget(tmp_path: Path) -> None:
    """Once the batch's tokens are spent no goal starts; a re-run with a fresh budget does them."""
    out = tmp_path / "results.jsonl"
    model = batch_agent()
    # Each fake reply costs 15 tokens: the first goal (search, then answer) spends all 30.
    summary: BatchSummary = await parallel_runs.run(model, out=out, concurrency=1, max_tokens=30)

    assert summary.statuses == {"done": 1}
    assert summary.not_started == 5
    assert len(model.requests) == 2
    assert len(records(out)) == 1

    rest: BatchSummary = await parallel_runs.run(model, out=out)
    assert rest.skipped == 1
    assert rest.statuses == {"done": 5}
    assert sorted(str(r["id"]) for r in records(out)) == sorted(t.key() for t in load_tasks(TASKS))


async def test_parallel_runs_respect_the_concurrency_limit(tmp_path: Path) -> None:
    """No more agents ask the model at once than the limit allows, and that many do."""
    in_flight = peak = 0
    limit_reached = anyio.Event()

    async def decide(request: ModelRequest) -> Turn:
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        if in_flight == 2:
            limit_reached.set()
        await limit_reached.wait()  # the first request waits for a second one to run beside it
        in_flight -= 1
        return cite_first_hit(request)

    with anyio.fail_after(10):
        summary: BatchSummary = await parallel_runs.run(
            FunctionModel(decide), out=tmp_path / "results.jsonl", concurrency=2
        )
    assert peak == 2
    assert summary.statuses == {"done": 6}


# travel_assistant

WEATHER = "Get the weather forecast for Porto on 2025-06-14 and 2025-06-15."
TRANSPORT = (
    "Get from Lisbon to Porto on 2025-06-14 for at most 120 EUR: a flight if there is one, "
    "else book a train."
)
BOOKED = "No flight under 120 EUR; booked Alfa Pendular 121, 08:39 to 11:27, 31.40 EUR."
ANSWER = (
    "You travel to Porto by train on Saturday: Alfa Pendular 121 leaves Lisbon at 08:39 (31.40 "
    "EUR, booked; no flight was available). The forecast service was down, so pack for rain."
)


def travel_team() -> Team:
    """The planner, the weather and transport agents, and the writer of the travel example."""
    weather = script(
        call("get_weather", city="Porto", date="2025-06-14", temp_unit="c"),  # bound to unit
        call("get_weather", city="Porto", date="2025-06-15"),
        call("report_issue", kind="blocked", reason="The forecast service is down."),
    )
    transport = script(
        call("ask_user", question="What is your budget for the trip?"),
        call(  # maxPrice: bound to max_price
            "search_flights", origin="Lisbon", destination="Porto", date="2025-06-14", maxPrice=120
        ),
        call("book_train", origin="Lisbon", destination="Porto", date="2025-06-14"),
        reply(BOOKED),
    )
    return Team(
        plans=[
            plan(
                {"id": "weather", "goal": WEATHER, "tools": ["get_weather"]},
                {"id": "transport", "goal": TRANSPORT, "tools": ["search_flights", "book_train"]},
            )
        ],
        agents={"weather": weather, "transport": transport},
        replans=[{"remove": [], "add": [], "rationale": "No other forecast source exists."}],
        synthesis=ANSWER,
    )


async def run_trip(team: Team) -> RunResult:
    """Run the travel example with `team`, with a forecast timeout short enough for tests."""
    result: RunResult = await travel_assistant.run(team.model, weather_timeout=0.05)
    team.assert_clean()
    return result


async def test_travel_breaker_opens_and_weather_leaves_the_menu(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A timeout then a 403 open get_weather's breaker; the agent's next menu lacks it."""
    team = travel_team()
    result = await run_trip(team)

    weather_calls = [
        e for e in result.events if isinstance(e, ToolCalled) and e.tool == "get_weather"
    ]
    assert [e.error_kind for e in weather_calls] == ["timeout", "failed"]
    opened = [e for e in result.events if isinstance(e, BreakerOpened)]
    assert [(e.agent_id, e.tool) for e in opened] == [("weather", "get_weather")]
    asked = team.of("weather")
    assert ["get_weather" in tool_names(r) for r in asked] == [True, True, False]
    told = asked[2].messages[-1]
    assert isinstance(told, ToolMessage)
    assert "HTTP 403" in told.content
    assert "disabled" in told.content
    assert "BREAKER OPENED on get_weather" in capsys.readouterr().out


async def test_travel_planner_hears_the_weather_tool_is_unavailable() -> None:
    """The blocked weather subtask triggers a replan whose menu marks get_weather unavailable."""
    team = travel_team()
    result = await run_trip(team)

    replan = team.of(PLANNER)[1]
    assert replan.output is not None
    assert replan.output.name == "replan"
    prompt = replan.messages[1]
    assert isinstance(prompt, UserMessage)
    assert "get_weather: UNAVAILABLE" in prompt.content
    assert len(result.diffs) == 1
    assert result.status == "incomplete"
    assert result.reason == "blocked: weather"


async def test_travel_empty_flights_are_rejected_and_the_train_is_the_answer(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """An empty flight search fails its success check; the train booking becomes the answer."""
    team = travel_team()
    result = await run_trip(team)

    asked = team.of("transport")
    rejected = asked[2].messages[-1]
    assert isinstance(rejected, ToolMessage)
    assert not rejected.ok
    assert "no data" in rejected.content
    booked = asked[3].messages[-1]
    assert isinstance(booked, ToolMessage)
    assert booked.ok
    assert "Alfa Pendular 121" in booked.content
    assert "CP-" in booked.content
    flights = [e for e in result.events if isinstance(e, ToolCalled) and e.tool == "search_flights"]
    assert [e.error_kind for e in flights] == ["rejected"]
    assert BOOKED in opening(team.of(WRITER)[0])
    assert result.answer == ANSWER
    out = capsys.readouterr().out
    assert "search_flights: REJECTED" in out
    assert "book_train: ok" in out


async def test_travel_binds_a_near_miss_asks_the_budget_and_heads_every_observation(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The weather agent's temp_unit="c" runs as unit="celsius" and its failure's first line
    says so; the transport agent asks the budget, the scripted traveller answers, and its
    maxPrice is bound to max_price; the run keeps the answer."""
    team = travel_team()
    traveller = travel_assistant.Traveller()
    result = await travel_assistant.run(team.model, weather_timeout=0.05, traveller=traveller)
    team.assert_clean()

    failed = team.of("weather")[1].messages[-1]
    assert isinstance(failed, ToolMessage)
    head = failed.content.split("\n", 1)[0]
    assert head == (
        """[OBSERVE] get_weather("Porto", "2025-06-14", "celsius") failed (timeout); """
        "bound temp_unit→unit, unit 'c'→'celsius'"
    )

    transport = team.of("transport")
    assert traveller.asked == ["What is your budget for the trip?"]
    told = transport[1].messages[-1]
    assert isinstance(told, ToolMessage)
    assert observation(told.content) == f"The user answered: {travel_assistant.BUDGET}"
    searched = transport[2].messages[-1]
    assert isinstance(searched, ToolMessage)
    assert "bound maxPrice→max_price" in searched.content.split("\n", 1)[0]
    assert [(a.agent_id, a.answer) for a in result.answered] == [
        ("transport", travel_assistant.BUDGET)
    ]
    out = capsys.readouterr().out
    assert "[transport] asks the traveller: What is your budget for the trip?" in out
    assert f"[transport] the traveller answers: {travel_assistant.BUDGET}" in out


# contract_review: typed output


async def test_contract_review_returns_one_typed_record_per_contract() -> None:
    """Three sub-agents read one contract each (in parallel), and the run's answer is a
    validated `Review`, its dates and amounts taken from the contracts' text."""
    example = load("contract_review")
    docs = ("harbour-cleaning", "crane-maintenance", "pilot-boats")
    facts = {
        "harbour-cleaning": ("Brightwater Marine Ltd", 184000, "28 February 2027", 90),
        "crane-maintenance": ("Kessler Lifting Systems GmbH", 412500, "30 June 2026", 180),
        "pilot-boats": ("Nordhavn Pilot Services AS", 96000, "31 December 2028", 60),
    }
    kinds = {"harbour-cleaning": "agreement", "crane-maintenance": "contract"}
    kinds["pilot-boats"] = "charter"
    goals = {d: f"Supplier, annual fee and notice of the {d} {kinds[d]}?" for d in docs}
    plan_json = json.dumps({"subtasks": [{"id": d, "goal": goals[d]} for d in docs]})

    def step(request: ModelRequest) -> Turn:
        task = request.messages[1].content or ""
        doc = next(d for d in docs if d in task)
        if not any(isinstance(m, ToolMessage) for m in request.messages):
            return call("read_doc", doc=doc)
        supplier, fee, ends, notice = facts[doc]
        said = f"The supplier is {supplier}. The annual fee is EUR {fee:,}. It ends on {ends}"
        return reply(f"{said}; notice of termination: {notice} days [{doc}]")

    iso = {"harbour-cleaning": "2027-02-28", "crane-maintenance": "2026-06-30"}
    iso["pilot-boats"] = "2028-12-31"

    def synthesis(request: ModelRequest) -> Turn:
        records = [
            {"document": d, "supplier": s, "annual_fee_eur": f, "ends": iso[d], "notice_days": n}
            for d, (s, f, _, n) in facts.items()
        ]
        return reply(json.dumps({"contracts": records, "ends_first": "crane-maintenance"}))

    routes: dict[str, Any] = {"plan": plan_json, "step": step, "synthesis": synthesis}
    model = FunctionModel(by_purpose(**routes))
    with anyio.fail_after(GUARD_S):
        result = await example.review(model)
    assert result.status == "complete", result.reason
    review = result.output
    assert review is not None
    assert isinstance(review, example.Review)
    assert [c.document for c in review.contracts] == list(docs)
    assert review.contracts[1].ends.isoformat() == "2026-06-30"
    assert review.ends_first == "crane-maintenance"
    (writer,) = [r for r in model.requests if r.purpose == "synthesis"]
    assert writer.output is not None
    assert writer.output.name == "Review"
