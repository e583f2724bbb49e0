"""Research reports: citations checked against the corpus, the Markdown layout, and `research()`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agents import AgentReport, ConfigurationError
from agents.models import ModelRequest
from agents.testing import FunctionModel, Turn
from agents.toolkits import Corpus, Document
from agents.tools import Evidence
from memory import AssistantMessage, UserMessage
from orchestrator import Event, Limits, RunResult
from orchestrator._research import (
    RESEARCH_AGENT,
    RESEARCH_PLANNER,
    RESEARCH_SYNTHESIS,
    ResearchReport,
    clean_citations,
    render_report,
    research,
)
from orchestrator.events import PlanCreated, RunFinished

pytestmark = pytest.mark.anyio

CORPUS = Corpus(
    [
        Document(
            id="py/generators",
            title="Generators",
            text="A generator function pauses at each yield expression and resumes on next().",
        ),
        Document(
            id="py/iterators",
            title="Iterators",
            text="An iterator has a __next__ method; raising StopIteration ends the iteration.",
        ),
    ]
)
TOPIC = "How do generators work?"
GEN_GOAL = "How does a generator pause?"
STOP_GOAL = "What ends an iteration?"


def evidence(source: str, excerpt: str) -> Evidence:
    """Evidence as search_docs records it."""
    return Evidence(source=source, excerpt=excerpt, tool="search_docs")


def agent_report(
    agent_id: str, task: str, answer: str, *found: Evidence, **fields: object
) -> AgentReport:
    """A finished sub-agent report (done unless `status` says otherwise)."""
    values: dict[str, object] = {"status": "done", **fields}
    return AgentReport.model_validate(
        {"agent_id": agent_id, "task": task, "answer": answer, "evidence": found, **values}
    )


def run_result(answer: str, *reports: AgentReport, **fields: object) -> RunResult:
    """A finished run (complete unless `status` says otherwise)."""
    values: dict[str, object] = {"status": "complete", **fields}
    return RunResult.model_validate(
        {"run_id": "r1", "goal": "g", "answer": answer, "reports": reports, **values}
    )


@pytest.mark.parametrize(
    ("text", "cleaned"),
    [
        ("Generators pause [py/generators].", "Generators pause [py/generators]."),
        ("Generators pause [py/made-up].", "Generators pause."),
        ("They pause [py/made-up] at yield.", "They pause at yield."),
        ("[py/made-up] They pause.", "They pause."),
        ("Both [py/generators, py/made-up; py/iterators].", "Both [py/generators, py/iterators]."),
        ("Spaced [ py/generators ].", "Spaced [py/generators]."),
        (
            "See [the guide](https://example.com/guide).",
            "See [the guide](https://example.com/guide).",
        ),
    ],
    ids=["real", "invented", "invented-mid-sentence", "invented-first", "mixed", "spaced", "link"],
)
def test_clean_citations_keeps_only_real_documents(text: str, cleaned: str) -> None:
    """Citations of corpus documents stay, invented ones go without leaving a gap, links stay."""
    assert clean_citations(text, CORPUS) == cleaned


def test_render_report_lays_out_summary_sections_sources_and_evidence() -> None:
    """A complete run renders as title, cleaned summary, a section per answer, sources, excerpts."""
    gen = agent_report(
        "gen",
        f"{GEN_GOAL}\nExpected output: one paragraph",
        "It pauses at yield [py/generators] [py/coroutines].",
        evidence("py/generators", "A generator function   pauses\nat each yield."),
        evidence("py/made-up", "not in the corpus"),
    )
    stop = agent_report(
        "stop",
        STOP_GOAL,
        "StopIteration ends it.",
        evidence("py/iterators", "Raising StopIteration ends the iteration."),
        status="partial",
        stop_reason="steps",
    )
    result = run_result("Generators pause [py/generators]; invented [py/nowhere].", gen, stop)

    assert render_report("  How do generators work?  ", result, CORPUS) == (
        "# How do generators work?\n"
        "\n"
        "## Summary\n"
        "\n"
        "Generators pause [py/generators]; invented.\n"
        "\n"
        f"## {GEN_GOAL}\n"
        "\n"
        "It pauses at yield [py/generators].\n"
        "\n"
        f"## {STOP_GOAL}\n"
        "\n"
        "StopIteration ends it.\n"
        "\n"
        "*Status: partial (steps)*\n"
        "\n"
        "Evidence: [py/iterators]\n"
        "\n"
        "## Sources\n"
        "\n"
        "1. [py/generators] Generators\n"
        "2. [py/iterators] Iterators\n"
        "\n"
        "## Evidence\n"
        "\n"
        "- [py/generators] “A generator function pauses at each yield.”\n"
        "- [py/iterators] “Raising StopIteration ends the iteration.”\n"
    )


def test_render_report_flags_an_incomplete_run_and_lists_what_was_not_answered() -> None:
    """An incomplete run opens with a banner giving the reason; failed subtasks are listed."""
    failed = agent_report("stop", STOP_GOAL, "", status="failed")
    result = run_result(
        "Nothing found.", failed, status="incomplete", reason="the tokens budget ran out"
    )

    markdown = render_report("Iteration", result, CORPUS)

    assert markdown.splitlines()[:3] == [
        "# Iteration",
        "",
        "> **Incomplete.** the tokens budget ran out",
    ]
    assert f"## Not answered\n\n- {STOP_GOAL} (failed)\n" in markdown
    assert "## Sources\n\nNo documents were gathered.\n" in markdown
    assert f"## {STOP_GOAL}" not in markdown


def test_render_report_banner_falls_back_to_the_status() -> None:
    """A failed run without a reason still says it is incomplete, naming the status."""
    markdown = render_report("Iteration", run_result("No results.", status="failed"), CORPUS)

    assert "> **Incomplete.** failed\n" in markdown


def test_render_report_shows_the_run_notes_under_the_banner() -> None:
    """Problems the run worked around are quoted as notes before the summary."""
    result = run_result(
        "Summary.",
        status="incomplete",
        reason="failed: a",
        notes=("planning failed, ran the goal as one subtask: no valid plan",),
    )

    assert render_report("Topic", result, CORPUS).startswith(
        "# Topic\n\n> **Incomplete.** failed: a\n\n"
        "> Note: planning failed, ran the goal as one subtask: no valid plan\n\n## Summary\n"
    )


def test_sub_questions_lose_invented_citations_too() -> None:
    """The planner model writes the sub-questions: headings and the "Not answered" list are cleaned
    like answers."""
    answered = agent_report("gen", "How do generators pause [py/made-up]?", "At yield.")
    failed = agent_report("stop", "What does [py/iterators] say [py/x]?", "", status="failed")

    markdown = render_report("Generators", run_result("Summary.", answered, failed), CORPUS)

    assert "## How do generators pause?\n" in markdown
    assert "## Not answered\n\n- What does [py/iterators] say? (failed)\n" in markdown


def test_a_section_without_usable_evidence_says_so() -> None:
    """An answer with no citation and no corpus evidence gets "Evidence: none found."."""
    report = agent_report("gen", GEN_GOAL, "It pauses [py/made-up].")

    markdown = render_report("Generators", run_result("Summary.", report), CORPUS)

    assert f"## {GEN_GOAL}\n\nIt pauses.\n\nEvidence: none found.\n" in markdown


def task_of(request: ModelRequest) -> str:
    """The goal a sub-agent was given (the first line of its task message)."""
    message = request.messages[1]
    assert isinstance(message, UserMessage)
    return message.content.removeprefix("Task: ").splitlines()[0]


def steps_taken(request: ModelRequest) -> int:
    """How many turns the asking agent has taken so far."""
    return sum(isinstance(m, AssistantMessage) for m in request.messages)


def team(request: ModelRequest) -> Turn:
    """Planner, two researchers and the writer; the second researcher first cites a document it
    never gathered."""
    if request.output is not None:
        return json.dumps(
            {"subtasks": [{"id": "gen", "goal": GEN_GOAL}, {"id": "stop", "goal": STOP_GOAL}]}
        )
    if request.messages[0].content == RESEARCH_SYNTHESIS:
        return "Generators pause [py/generators]; StopIteration ends loops [py/iterators] [py/x]."
    turns: dict[str, list[Turn]] = {  # each agent answers from its first look (a search)
        TOPIC: ["They pause at yield [py/generators]."],  # the topic itself is always asked
        GEN_GOAL: ["It pauses at each yield [py/generators]."],
        STOP_GOAL: [
            "It ends with StopIteration [py/generators].",
            "It ends with StopIteration [py/iterators].",
        ],
    }
    return turns[task_of(request)][steps_taken(request)]


async def test_research_plans_researches_and_writes_a_cited_report() -> None:
    """`research()` plans with the research prompt, holds sub-agents to citing what they gathered,
    and renders the run as a report whose citations all name corpus documents."""
    model = FunctionModel(team)
    events: list[Event] = []

    report = await research(
        "How do generators work?",
        model=model,
        corpus=CORPUS,
        limits=Limits(max_subtasks=3),
        on_event=events.append,
    )

    assert report.result.status == "complete", report.result.reason
    assert report.markdown == render_report("How do generators work?", report.result, CORPUS)
    assert "## Summary\n\nGenerators pause [py/generators]; StopIteration ends loops " in (
        report.markdown
    )
    assert "[py/iterators].\n" in report.markdown
    assert "[py/x]" not in report.markdown
    assert isinstance(events[0], PlanCreated)
    assert isinstance(events[-1], RunFinished)
    assert [s.goal for s in report.result.plans[0].subtasks] == [TOPIC, GEN_GOAL, STOP_GOAL]

    planner = [r for r in model.requests if r.output is not None]
    assert [r.messages[0].content for r in planner] == [
        RESEARCH_PLANNER.replace("{max_subtasks}", "3")
    ]
    agents = [r for r in model.requests if r.messages[0].content == RESEARCH_AGENT]
    assert {tool.name for tool in agents[0].tools} >= {"search_docs", "read_doc"}
    stop = [r for r in agents if task_of(r) == STOP_GOAL]
    assert len(stop) == 2
    first_look = stop[0].messages[2]
    assert isinstance(first_look, UserMessage)
    assert first_look.content.startswith("What a first search for the task found:\n[{")
    assert "[OBSERVE]" not in first_look.content  # a small model copies the call's line
    assert '"doc": "py/iterators"' in first_look.content
    assert [m.role for m in stop[0].messages] == ["system", "user", "user"]
    rejection = stop[1].messages[-1]
    assert isinstance(rejection, UserMessage)
    assert "these citations match no gathered source: py/generators" in rejection.content
    (writer,) = [r for r in model.requests if r.messages[0].content == RESEARCH_SYNTHESIS]
    findings = writer.messages[1]
    assert isinstance(findings, UserMessage)
    assert "It ends with StopIteration [py/iterators]." in findings.content


def test_notes_carry_no_bracketed_text_that_is_not_a_citation() -> None:
    """A run note quoting brackets (a pattern, a list) cannot smuggle a fake citation in."""
    corpus = Corpus([Document(id="guide/a", title="A", text="alpha beta gamma")])
    result = RunResult(
        run_id="r",
        goal="g",
        answer="Summary [guide/a].",
        status="complete",
        notes=("planning failed: id must match [A-Za-z0-9_.-]",),
    )
    report = render_report("Topic", result, corpus)
    assert "[A-Za-z" not in report
    assert "> Note: planning failed: id must match" in report


@pytest.mark.parametrize("given", [{}, {"model": "backend"}])
async def test_research_arguments_that_do_not_fit_the_backend_are_refused(
    given: dict[str, str],
) -> None:
    """In process `research()` needs a model; with a backend (whose workers hold the model) a
    model is refused: either way, before anything runs."""
    backend = _Refusing()
    kwargs: dict[str, Any] = {"backend": backend} if given else {}
    if given:
        kwargs["model"] = FunctionModel(team)
    with pytest.raises(ConfigurationError):
        await research("How do generators work?", corpus=CORPUS, **kwargs)
    assert backend.asked == 0


class _Refusing:
    """A backend that counts what it is asked."""

    def __init__(self) -> None:
        self.asked = 0

    async def research(self, topic: str, **kwargs: Any) -> ResearchReport:
        """Count the call; never reached in these tests."""
        self.asked += 1
        raise AssertionError("not reached")


def test_an_answer_copying_report_issues_description_is_not_printed() -> None:
    """The built-in report_issue tool's words count as prompt text too: a copy becomes extracts."""
    copied = "Tell the planner the task is blocked, so the issue is not reported."
    partial = agent_report(
        "gen", GEN_GOAL, copied, evidence("py/generators", "pauses"), status="partial"
    )
    markdown = render_report("Generators", run_result(copied, partial), CORPUS)
    assert "Tell the planner the task is blocked" not in markdown
    assert "*Extracted: the passages that best match the question.*" in markdown


# Extracts that hold the answer; sources that are what the report cites (issue 30)

REFUND_TOPIC = "How long do customers have to file a refund claim?"
REFUND_FACT = "Claims must be filed within 60 days of the purchase."
POLICY_FILES = {
    "refunds.md": (
        "# Refund policy\n\nNorthwind Outfitters wants every customer to be happy with what they "
        "buy, and most problems are solved quickly by the store that sold the item. Our staff can "
        "exchange an item for another size or colour on the spot, and they can repair many "
        "products in the store. If an exchange or a repair does not solve the problem, customers "
        "may ask for their money back under this policy. Refunds are paid to the card that was "
        f"used for the purchase. {REFUND_FACT} A claim filed later than that is declined.\n"
    ),
    "security.md": (
        "# Security\n\nA lost laptop is a security incident. Incidents must be reported within 4 "
        "hours. Customers are told when their data is affected.\n"
    ),
    "travel.md": "# Travel\n\nHotel nights are reimbursed up to EUR 240 per night.\n",
}


def policy_team(request: ModelRequest) -> Turn:
    """Planner (the topic alone), a researcher answering from its first look, and the writer."""
    if request.output is not None:
        return json.dumps({"subtasks": [{"id": "refunds", "goal": REFUND_TOPIC}]})
    if request.messages[0].content == RESEARCH_SYNTHESIS:
        return "Claims are filed within 60 days [refunds]."
    return "Within 60 days of the purchase [refunds]."


async def test_a_research_report_cites_its_sources_and_lists_the_rest_as_searched(
    tmp_path: Path,
) -> None:
    """The first look shows the agent the sentence with the fact, whole; the report's Sources
    hold only the cited document, and the others the search found are listed as also searched."""
    for name, text in POLICY_FILES.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    corpus = Corpus.from_folder(tmp_path)
    model = FunctionModel(policy_team)

    report = await research(REFUND_TOPIC, model=model, corpus=corpus)

    assert report.result.status == "complete", report.result.reason
    agent = next(r for r in model.requests if r.messages[0].content == RESEARCH_AGENT)
    first_look = agent.messages[2]
    assert isinstance(first_look, UserMessage)
    assert REFUND_FACT in first_look.content
    gathered = {e.source for r in report.result.reports for e in r.evidence}
    assert gathered == {"refunds", "security"}
    sources = report.markdown.split("## Sources\n\n")[1].split("\n## ")[0]
    assert sources == (
        "1. [refunds] Refund policy\n\nAlso searched (found or read, not cited):\n\n"
        "- `security` Security\n"
    )
    evidence = report.markdown.split("## Evidence\n\n")[1]
    assert evidence.startswith("- [refunds] “")
    assert REFUND_FACT in evidence
    assert "[security]" not in report.markdown
