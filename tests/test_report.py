"""The Markdown research report: one heading per question, questions in the banner, extracts for
unusable answers, and citations that always name a corpus document."""

from __future__ import annotations

import re

import pytest

from agents import AgentReport
from agents.toolkits import Corpus, Document
from agents.tools import Evidence
from orchestrator import RunResult
from orchestrator._report import clean_citations, write_report

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
PROMPT = "Answer in one short paragraph of your own words, and cite each document you used."


def report(agent_id: str, task: str, answer: str, *sources: str, **fields: object) -> AgentReport:
    """A sub-agent report whose evidence is one search hit per source."""
    found = [Evidence(source=s, excerpt=f"text of {s}", tool="search_docs") for s in sources]
    values: dict[str, object] = {"status": "done", **fields}
    return AgentReport.model_validate(
        {"agent_id": agent_id, "task": task, "answer": answer, "evidence": found, **values}
    )


def result(answer: str, *reports: AgentReport, **fields: object) -> RunResult:
    """A run with these reports (complete unless `status` says otherwise)."""
    values: dict[str, object] = {"status": "complete", **fields}
    return RunResult.model_validate(
        {"run_id": "r", "goal": "g", "answer": answer, "reports": reports, **values}
    )


def headings(markdown: str) -> list[str]:
    """Every Markdown heading line."""
    return [line for line in markdown.splitlines() if line.startswith("#")]


@pytest.mark.parametrize(
    ("text", "cleaned"),
    [
        ("Empty [] brackets.", "Empty brackets."),
        ("A [start] marker.", "A marker."),
        ("Nested [[py/generators]].", "Nested [py/generators]."),
        ("Nested [[py/made-up]] junk.", "Nested junk."),
        ("Cut off at the end [py/gen", "Cut off at the end"),
        (
            "Twice [py/generators], [py/generators]; [py/generators] [py/iterators].",
            "Twice [py/generators, py/iterators].",
        ),
        (
            "Listed [py/generators, py/iterators], [py/generators].",
            "Listed [py/generators, py/iterators].",
        ),
        ("A link [py/generators](http://x) stays.", "A link [py/generators](http://x) stays."),
    ],
)
def test_the_citation_cleaner_leaves_no_bracket_that_is_not_a_real_citation(
    text: str, cleaned: str
) -> None:
    """Empty, unknown and nested brackets are removed; real ones survive unwrapped."""
    assert clean_citations(text, CORPUS) == cleaned


def test_the_citation_cleaner_is_linear_on_long_runs_of_spaces() -> None:
    """A megabyte of spaces around brackets is cleaned in one pass (a ReDoS guard)."""
    spaces = " " * 1_000_000
    assert clean_citations(f"[py/generators]{spaces}x", CORPUS).endswith("x")
    assert clean_citations(f"a{spaces}[unclosed", CORPUS) == "a"


def test_a_question_asked_twice_gets_one_section_and_no_heading_repeats() -> None:
    """Two sub-agents on the same question share a section; answers' own headings are demoted."""
    first = report("a", "How do generators pause?", "At yield [py/generators].", "py/generators")
    second = report("b", "How do  generators pause", "## Summary\nOn next() [py/generators].")
    markdown = write_report(
        "Generators", result("They pause [py/generators].", first, second), CORPUS
    )
    found = headings(markdown)
    assert len(found) == len(set(found))
    assert found.count("## How do generators pause?") == 1
    assert "**Summary**\nOn next() [py/generators]." in markdown


def test_the_banner_names_the_questions_left_open_not_their_ids() -> None:
    """An incomplete run says which questions were not done, in words."""
    failed = report("q7x", "What ends an iteration?", "", status="failed")
    run = result(
        "Partly.", failed, status="incomplete", reason="the deadline budget ran out; failed: q7x"
    )
    markdown = write_report("Iteration", run, CORPUS)
    assert (
        "> **Incomplete.** the deadline budget ran out; failed: “What ends an iteration?”"
        in markdown
    )
    assert "q7x" not in markdown


@pytest.mark.parametrize(
    "answer",
    [
        "<your answer>",
        "Incomplete: stopped early (steps).\nWhat was gathered:\n- [py/generators] text",
        '{"name": "search_docs", "arguments": {"query": "yield"}}',
        f"{PROMPT} [py/generators]",
    ],
    ids=["placeholder", "digest", "raw-call", "parrot"],
)
def test_an_unusable_answer_is_replaced_by_cited_extracts(answer: str) -> None:
    """Junk never reaches the report: the best passages gathered are quoted, cited and marked."""
    partial = report("a", "How does a generator pause?", answer, "py/generators", status="partial")
    markdown = write_report("Generators", result(answer, partial), CORPUS, told=[PROMPT])
    section = markdown.split("## How does a generator pause?\n\n")[1].split("## Sources")[0]
    assert section.startswith("*Extracted: the passages that best match the question.*")
    assert "“A generator function pauses at each yield expression" in section
    assert "[py/generators]" in section
    assert answer.splitlines()[0][:20] not in markdown
    assert "*No usable summary was written; the questions answered below:*" in markdown


def test_every_citation_in_a_report_names_a_corpus_document() -> None:
    """Whatever the models wrote, every bracketed id left in the report is a corpus document."""
    messy = report(
        "a",
        "What is [py/x] about [] ?",
        "It [start] pauses [[py/y]] [py/generators].",
        "py/generators",
    )
    markdown = write_report("T [made/up]", result("S [py/iterators] [x].", messy), CORPUS)
    cited = {c.strip() for group in re.findall(r"\[([^\]]*)\]", markdown) for c in group.split(",")}
    assert cited <= {d.id for d in CORPUS.documents}
