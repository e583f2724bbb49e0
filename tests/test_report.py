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


# Extracts that hold the answer, and sources that are what the report cites (issue 30)

POLICIES = Corpus(
    [
        Document(
            id="refunds",
            title="Refund policy",
            text=(
                "Northwind Outfitters wants every customer to be happy with what they buy, and "
                "most problems are solved quickly by the store that sold the item. Our staff can "
                "exchange an item for another size or colour on the spot, and they can repair "
                "many products in the store. If an exchange or a repair does not solve the "
                "problem, customers may ask for their money back under this policy. Refunds are "
                "paid to the card that was used for the purchase. Claims must be filed within 60 "
                "days of the purchase. A claim filed later than that is declined."
            ),
        ),
        Document(
            id="travel",
            title="Travel expenses",
            text="Customers never pay for staff travel. Hotel nights cost up to EUR 240.",
        ),
        Document(
            id="leave",
            title="Annual leave",
            text=(
                "Every employee on a full-time contract earns paid leave from the first day of "
                "work, and part-time employees earn leave in proportion to their hours. Leave is "
                "requested in the HR portal and approved by the line manager, who checks that "
                "the team can cover the absence. Requests for more than two weeks in a row "
                "should be made at least a month in advance. Unused days may be carried into the "
                "next year, but they expire at the end of March. Full-time employees receive 25 "
                "working days of paid leave per calendar year."
            ),
        ),
        Document(id="unread", title="Unread", text="Nothing anyone searched for."),
    ]
)
REFUND_QUESTION = "How long do customers have to file a refund claim?"
FACT = "Claims must be filed within 60 days of the purchase."


def quotes(markdown: str) -> list[str]:
    """The quoted passages of a report's extracts and evidence, without their quote marks."""
    return re.findall(r"“([^”]*)”", markdown)


def section_of(markdown: str, heading: str) -> str:
    """The text under a `## ` heading, up to the next one."""
    return markdown.split(f"## {heading}\n\n")[1].split("\n## ")[0]


@pytest.mark.parametrize(
    ("question", "doc_id", "fact"),
    [
        (REFUND_QUESTION, "refunds", FACT),
        (
            "How many days of paid leave do full-time employees get?",
            "leave",
            "Full-time employees receive 25 working days of paid leave per calendar year.",
        ),
    ],
    ids=["refunds", "leave"],
)
def test_an_extract_quotes_the_sentence_that_answers_whole(
    question: str, doc_id: str, fact: str
) -> None:
    """An extract holds the sentence with the asked fact, whole, though it lies past the first
    300 characters, and its quotes start and end at sentence bounds."""
    junk = report("a", question, "<your answer>", "refunds", "leave", status="partial")
    markdown = write_report("Policies", result("<your answer>", junk), POLICIES)
    section = section_of(markdown, question)
    assert section.startswith("*Extracted: the passages that best match the question.*")
    (quote,) = quotes(section)
    assert fact in quote
    assert f"[{doc_id}]" in section
    text = next(d.text for d in POLICIES.documents if d.id == doc_id)
    assert text.index(fact) > 300
    body = quote.removeprefix("…").removesuffix("…")
    assert f". {body}" in text or text.startswith(body)
    assert body.endswith(".")


def test_sources_are_the_cited_documents_and_the_others_are_also_searched() -> None:
    """Sources number only what the text cites; documents found but not cited are listed apart,
    without brackets, and only sources get an evidence excerpt."""
    answered = report(
        "a", REFUND_QUESTION, "Within 60 days [refunds].", "refunds", "travel", "leave"
    )
    markdown = write_report("Refunds", result("Within 60 days [refunds].", answered), POLICIES)
    sources = section_of(markdown, "Sources")
    assert sources.startswith("1. [refunds] Refund policy\n\n")
    assert "2. " not in sources
    assert sources.endswith(
        "Also searched (found or read, not cited):\n\n- `travel` Travel expenses\n"
        "- `leave` Annual leave\n"
    )
    assert "unread" not in markdown
    assert section_of(markdown, "Evidence") == "- [refunds] “text of refunds”\n"
    cited = {c.strip() for group in re.findall(r"\[([^\]]*)\]", markdown) for c in group.split(",")}
    assert cited == {"refunds"}


def test_an_uncited_answer_is_backed_by_the_documents_that_match_it_not_every_hit() -> None:
    """An answer without citations names as evidence the gathered documents that best match it,
    and only those are sources."""
    plain = report("a", REFUND_QUESTION, "Claims are filed within 60 days.", "travel", "refunds")
    markdown = write_report("Refunds", result("Sixty days.", plain), POLICIES)
    assert "Evidence: [refunds]\n" in markdown
    assert "1. [refunds] Refund policy\n" in section_of(markdown, "Sources")
    assert "- `travel` Travel expenses" in section_of(markdown, "Sources")


def test_a_report_citing_nothing_lists_what_was_searched_apart() -> None:
    """When no text cites a document, Sources says so and lists the searched ones apart."""
    plain = report("a", "What is this?", "Nobody knows.", "refunds")
    plain = plain.model_copy(update={"evidence": ()})
    searched = report("b", "Anything?", "", "leave", status="failed")
    markdown = write_report("Topic", result("Unclear.", plain, searched), POLICIES)
    assert section_of(markdown, "Sources") == (
        "No document is cited.\n\nAlso searched (found or read, not cited):\n\n"
        "- `leave` Annual leave\n"
    )
    assert "## Evidence" not in markdown


def test_a_long_excerpt_is_cut_after_a_sentence() -> None:
    """An evidence excerpt recorded longer than a quote (an older journal) ends at a sentence."""
    long = " ".join(f"Sentence {i} says something about refunds." for i in range(30))
    found = Evidence(source="refunds", excerpt=long, tool="read_doc")
    answered = AgentReport.model_validate(
        {"agent_id": "a", "task": "Refunds?", "answer": "Yes [refunds].", "evidence": [found],
         "status": "done"}
    )  # fmt: skip
    markdown = write_report("Refunds", result("Yes [refunds].", answered), POLICIES)
    (quote,) = quotes(section_of(markdown, "Evidence"))
    assert quote.endswith("refunds.…")
    assert len(quote) <= 302


def test_a_passage_sharing_a_word_with_the_question_is_not_quoted_beside_the_answer() -> None:
    """The second passage is quoted only when it matches about as well as the first: "full-time"
    in the leave policy does not make it a source for a question on a refund claim's time frame."""
    question = "What is the expected time frame for filing a refund claim?"
    junk = report("a", question, "<your answer>", "refunds", "leave", status="partial")
    markdown = write_report("Refunds", result("<your answer>", junk), POLICIES)
    assert [q for q in quotes(section_of(markdown, question)) if FACT in q]
    assert "[leave]" not in markdown
    assert "- `leave` Annual leave" in section_of(markdown, "Sources")


def test_paors_own_layout_and_raw_calls_never_reach_a_report_as_prose() -> None:
    """A summary that is the synthesis prompt's layout, an answer that is a call of any name and a
    section that is a signal's JSON are replaced by extracts, never printed as the report's text."""
    layout = "**find_is_and_eq (done)**\nTask: what is `is`\nExpected output: is is equal to equals"
    call_text = '{"name": "is", "arguments": "[py/generators, py/iterators]"}'
    signal = '{"name": "invalidates", "reason": "the premise is wrong"}'
    run = result(
        layout,
        report("a", "What does a generator do?", call_text, "py/generators"),
        report("b", "How does iteration end?", signal, "py/iterators", status="partial"),
    )
    markdown = write_report("Generators", run, CORPUS)
    for leaked in ("Expected output:", "(done)", '"name"', "invalidates", "Task:"):
        assert leaked not in markdown, leaked
