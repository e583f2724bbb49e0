"""The research evaluation: scoring hand-written reports, the question file, and one scripted run."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest

from agents.models import ModelRequest
from agents.testing import FunctionModel, Turn, call
from agents.toolkits import Corpus
from benchmarks._report import write_json
from benchmarks._research_scoring import (
    Question,
    citations,
    duplicate_headings,
    find_leaks,
    library_prompts,
    load_questions,
    own_text,
    prose,
    score_report,
    select,
)
from benchmarks.research_eval import (
    Outcome,
    Settings,
    evaluate,
    main,
    render,
    render_protocols,
    results_json,
    written_answers,
)
from memory import ToolMessage
from orchestrator import RunResult
from orchestrator._research import RESEARCH_AGENT, RESEARCH_SYNTHESIS

YIELD = Question(
    id="yield",
    question="How do Python generators and the yield statement work?",
    expected=("python/yield", "python/types"),
    facts=(("generator",), ("next()", "__next__"), ("suspend", "suspended", "paused")),
)


def report(summary: str, *sections: tuple[str, str], sources: str = "python/yield") -> str:
    """A report laid out as `research` renders one: title, summary, sections, sources, evidence."""
    lines = [f"# {YIELD.question}", "", "## Summary", "", summary, ""]
    for heading, body in sections:
        lines += [f"## {heading}", "", body, ""]
    lines += ["## Sources", "", f"1. [{sources}] The yield statement", ""]
    lines += ["## Evidence", "", f"- [{sources}] “A generator function is suspended.”", ""]
    return "\n".join(lines)


GOOD = report(
    "A generator function is suspended at each yield; calling next() resumes it [python/yield].",
    (
        "What does calling a generator function return?",
        "An iterator whose __next__ runs the body up to the next yield [python/types].\n\n"
        "```python\n# first\ndef gen():\n    # second\n    yield 1\n# first\n```",
    ),
)


def test_a_good_report_cites_an_expected_document_and_recalls_every_fact() -> None:
    """A report whose own text cites an expected document and states each fact scores full."""
    score = score_report(GOOD, YIELD)

    assert score.relevant_citation
    assert score.retrieved
    assert score.cited == ("python/yield", "python/types")
    assert score.recall == 1.0
    assert [hit.found for hit in score.facts] == ["generator", "next()", "suspend"]
    assert score.leaks == ()
    assert score.duplicate_headings == ()


def test_citations_only_in_sources_evidence_or_the_evidence_line_do_not_count() -> None:
    """Documents listed under Sources and Evidence, or on paor's `Evidence:` line, are not the
    report citing them; they still count as retrieved."""
    markdown = report(
        "Generators produce values lazily.",
        ("What does yield do?", "It hands a value back.\n\nEvidence: [python/yield]"),
    )

    score = score_report(markdown, YIELD)

    assert score.cited == ()
    assert not score.relevant_citation
    assert score.retrieved
    assert "Evidence:" not in own_text(markdown)


def test_facts_in_the_title_alone_are_not_recalled() -> None:
    """The title is the question: its words are not the report's answer."""
    markdown = report("Nothing was found.").replace(YIELD.question, "generator next() suspended")

    assert score_report(markdown, YIELD).recall == 0.0


def test_facts_in_sub_questions_or_the_not_answered_list_are_not_recalled() -> None:
    """Headings and the list of unanswered sub-questions restate the question: no recall there."""
    markdown = report(
        "Nothing was found.",
        ("Is a generator suspended by next()?", "It is not known."),
        ("Not answered", "- What does a generator do when suspended? (failed)"),
    )

    assert score_report(markdown, YIELD).recall == 0.0
    assert "It is not known." in prose(markdown)


def test_passages_paor_quotes_in_place_of_an_answer_are_not_the_models_text() -> None:
    """A section paor replaced with cited extracts is counted as replaced; its citation counts
    only with extracts, and the quoted document text recalls no fact."""
    extract = (
        "*Extracted: the passages that best match the question.*\n\n"
        "> “A generator function is suspended; next() resumes it.” [python/yield]"
    )
    markdown = report("Nothing was found.", ("What does yield do?", extract))

    score = score_report(markdown, YIELD)

    assert (score.relevant_citation, score.relevant_with_extracts) == (False, True)
    assert score.replaced == 1
    assert score.recall == 0.0


def test_a_summary_paor_wrote_is_not_the_models() -> None:
    """paor's fallback summary (a list of the questions answered) recalls nothing."""
    fallback = (
        "*No usable summary was written; the questions answered below:*\n\n"
        "- Is a generator suspended by next()?"
    )

    score = score_report(report(fallback), YIELD)

    assert not score.summary_written
    assert score.recall == 0.0
    assert score_report(GOOD, YIELD).summary_written


def test_written_answers_leave_out_what_paor_writes_in_their_place() -> None:
    """An agent's digest and paor's joined results are not answers a model wrote."""
    result = RunResult.model_validate(
        {
            "run_id": "r",
            "goal": "g",
            "answer": "Results gathered by the agents:\n\n## q (done)",
            "status": "incomplete",
            "reports": [
                {
                    "agent_id": "a",
                    "task": "t",
                    "answer": "It pauses [python/yield].",
                    "status": "done",
                },
                {
                    "agent_id": "b",
                    "task": "t",
                    "answer": "Incomplete: stopped early (steps).",
                    "status": "partial",
                },
            ],
        }
    )

    assert written_answers(result) == ["It pauses [python/yield]."]


def test_a_citation_inside_a_list_counts() -> None:
    """`[python/a, python/yield]` cites both documents; a Markdown link is no citation."""
    markdown = report("Generators pause [python/a, python/yield]. See [docs](https://x.org).")

    assert citations(own_text(markdown)) == ["python/a", "python/yield"]
    assert score_report(markdown, YIELD).relevant_citation


def test_facts_match_ignoring_case_and_spacing() -> None:
    """A phrasing matches across line breaks and capitals."""
    question = YIELD.model_copy(update={"facts": (("suspended at each yield",), ("generator",))})
    markdown = report("It is SUSPENDED\n  at each   Yield [python/yield].")

    hits = score_report(markdown, question).facts

    assert [hit.found for hit in hits] == ["suspended at each yield", None]


@pytest.mark.parametrize(
    ("text", "kind", "source"),
    [
        ("The answer is <your answer> [python/yield].", "placeholder", "<your ...>"),
        ("Call the tool <name> first.", "placeholder", "<name>"),
        ("TODO: explain generators.", "placeholder", "TODO"),
        ('Read it (e.g. "guide/intro").', "placeholder", "the tool description's example id"),
        ('{"name": "search_docs", "parameters": {}}', "tool_call", '{"name":'),
        ('It called "arguments": {"query": "yield"}', "tool_call", '"arguments":'),
        ('{"kind": "tool_calls", "calls": []}', "tool_call", '"kind": "tool_calls"'),
        ("<tool_call>search</tool_call>", "tool_call", "<tool_call>"),
        ('```json\n{"tool": "search_docs"}\n```', "tool_call", "a tool name in a fenced block"),
        ('Then read_doc(doc="python/yield").', "tool_call", "call syntax"),
        ("## gen (done)\nTask: How do generators work?", "prompt", "findings heading"),
        ("## gen (done)\nTask: How do generators work?", "prompt", "findings Task: line"),
    ],
)
def test_each_kind_of_leak_is_found_with_its_snippet(text: str, kind: str, source: str) -> None:
    """Placeholders, raw tool calls and the findings scaffolding are leaks, quoted."""
    leaks = score_report(report(text), YIELD).leaks

    assert any(leak.kind == kind and leak.source == source for leak in leaks), leaks
    assert all(leak.snippet for leak in leaks)


def test_an_ellipsis_as_a_whole_answer_is_a_placeholder() -> None:
    """A section that says only "..." is a placeholder; an ellipsis inside prose is not."""
    markdown = report("Generators pause... then resume [python/yield].", ("What is yield?", "..."))

    leaks = score_report(markdown, YIELD).leaks

    assert [(leak.kind, leak.snippet) for leak in leaks] == [("placeholder", "...")]


@pytest.mark.parametrize(
    "name", ["research agent prompt", "research planner prompt", "JSON decision guide"]
)
def test_a_run_of_words_copied_from_a_library_prompt_is_a_leak(name: str) -> None:
    """Twelve words of a prompt the library shows the model, copied into a report, are caught
    and named (the prompt texts are read from the library, so they track its changes)."""
    copied = " ".join(library_prompts()[name].replace("{max_subtasks}", "3").split()[:12])

    leaks = score_report(report(f"Generators pause [python/yield]. {copied}"), YIELD).leaks

    prompt = [leak for leak in leaks if leak.kind == "prompt"]
    assert prompt, leaks
    assert prompt[0].snippet in copied


def test_a_short_copied_phrase_is_caught_and_the_reference_itself_is_clean() -> None:
    """A phrase copied from report_issue's description is a leak (SmolLM2 copied its earlier
    wording, "The task cannot be done at all"), while no run of the prompts' words occurs in the
    Python reference (so the check flags copies, not topics)."""
    copied = "Tell the planner the task is blocked, but you can report it to the planner."
    reference = "\n\n".join(doc.text for doc in Corpus.python_docs().documents)

    leaks = score_report(report(copied), YIELD).leaks

    assert [(leak.kind, leak.snippet) for leak in leaks] == [
        ("prompt", "Tell the planner the task is blocked,")
    ]
    assert [
        leak for leak in find_leaks(reference, library_prompts()) if leak.kind == "prompt"
    ] == []


def test_prompts_given_explicitly_replace_the_library_ones() -> None:
    """`score_report` takes the texts to look for, so the check itself is pure."""
    prompts = {"mine": "one two three four five six seven eight nine"}
    markdown = report("Generators: two three four five six seven eight nine [python/yield].")

    (leak,) = score_report(markdown, YIELD, prompts=prompts, tool_names=()).leaks

    assert (leak.kind, leak.source, leak.snippet) == (
        "prompt",
        "mine",
        "two three four five six seven eight nine",
    )


def test_duplicate_headings_are_found_at_any_level_but_not_in_code() -> None:
    """Two headings with the same text (normalised) are duplicates; `#` lines in code are not."""
    markdown = report(
        "Summary [python/yield].",
        ("What does yield do?", "It pauses."),
        ("what does   yield do", "It pauses again.\n\n```\n# x\n# x\n```"),
    )

    assert duplicate_headings(markdown) == ["what does yield do"]
    assert duplicate_headings(f"# Summary\n\n{markdown}") == ["summary", "what does yield do"]
    assert score_report(markdown, YIELD).duplicate_headings == ("what does yield do",)


def test_the_question_file_is_valid() -> None:
    """At least 20 questions with unique ids, 2-3 facts each, whose expected documents exist."""
    questions = load_questions()
    corpus = Corpus.python_docs()

    assert len(questions) >= 20
    assert len({q.id for q in questions}) == len(questions)
    for q in questions:
        assert 2 <= len(q.facts) <= 3, q.id
        assert [doc for doc in q.expected if corpus.get(doc) is None] == [], q.id


def test_a_held_out_share_is_interleaved_with_the_tuned_questions() -> None:
    """At least a quarter of the questions are held out, one in every three from the start, so
    the suite's three questions and `dev.py eval`'s ten hold some."""
    questions = load_questions()
    held_out = [q.held_out for q in questions]

    assert sum(held_out) / len(questions) >= 0.25
    assert held_out[:3] == [False, False, True]
    assert sum(held_out[:10]) == 3


def test_the_totals_are_split_into_tuned_and_held_out_questions() -> None:
    """The results hold the totals over each part apart, and the tables show them per protocol."""
    outcomes = [
        Outcome(
            id=name,
            question=name,
            expected=("python/yield",),
            held_out=held,
            status=status,
            reason=None,
            seconds=1.0,
            requests=1,
            tool_calls=0,
            prompt_tokens=1,
            completion_tokens=1,
            score=score_report(GOOD, YIELD),
        )
        for name, held, status in [("a", False, "complete"), ("b", True, "incomplete")]
    ]
    results = [
        results_json(
            outcomes,
            about={"model": "m", "base_url": None, "protocol": protocol},
            settings=Settings(),
        )
        for protocol in ("tools", "json")
    ]

    split = results[0]["split"]
    assert (split["tuned"]["questions"], split["held_out"]["questions"]) == (1, 1)
    assert split["held_out"]["statuses"] == {"incomplete": 1}
    table = render_protocols(results)
    assert "| tools | 2 | 100% | 100% | 0 | 1 | 2 |" in table
    assert "|   held-out | 1 | 100% | 100% | 0 | 0 | 1 |" in table
    compared = table.split("By protocol:")[1]
    assert ("| tools | 2 |" in compared, "| json | 2 |" in compared) == (True, True)


def test_select_takes_the_first_questions_or_the_named_ones() -> None:
    """`--questions N` takes a prefix; `--only` keeps the file's order and refuses unknown ids."""
    questions = load_questions()

    assert select(questions, count=2) == questions[:2]
    assert [q.id for q in select(questions, only=["with", "yield"])] == ["yield", "with"]
    with pytest.raises(ValueError, match="no such question: nope"):
        select(questions, only=["nope"])


@pytest.mark.parametrize("argv", [["--model", "gpt-4.1-mini"], ["--protocol", "all"]])
def test_model_options_without_an_endpoint_are_a_usage_error(argv: list[str]) -> None:
    """--model names a model at --base-url, and SmolLM2 speaks only JSON: without an endpoint
    or a GGUF file the embedded model runs, so they are refused."""
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2


# One scripted run of the evaluation.

SCRIPT = {
    YIELD.question: (
        ("python/types", 18),
        "A generator function returns an iterator; calling its __next__() method runs the "
        "function until it provides a value using yield [python/types].",
    ),
    "What does the with statement do, and which methods must a context manager define?": (
        ("python/with", None),
        "It calls __enter__ and then __exit__ [python/with]. TODO",
    ),
}


def goal_of(request: ModelRequest) -> str:
    """The goal a planner or synthesis request is about ("Goal: ..." opens the user message)."""
    return str(request.messages[1].content).removeprefix("Goal: ").splitlines()[0]


def team(request: ModelRequest) -> Turn:
    """Plan the question as one subtask, read the expected document, answer, summarise."""
    if request.output is not None:
        return json.dumps({"subtasks": [{"id": "q", "goal": goal_of(request)}]})
    if request.messages[0].content == RESEARCH_SYNTHESIS:
        return SCRIPT[goal_of(request)][1]
    task = str(request.messages[1].content).removeprefix("Task: ").splitlines()[0]
    (doc, chunk), answer = SCRIPT[task]
    read = any(isinstance(m, ToolMessage) and m.name == "read_doc" for m in request.messages)
    return answer if read else call("read_doc", doc=doc, chunk=chunk)


@pytest.mark.anyio
async def test_an_evaluation_runs_each_question_and_writes_the_results(tmp_path: Path) -> None:
    """Each question is researched with the research prompts and scored; the JSON holds the
    model, each question's outcome and the totals; each report is written."""
    model = FunctionModel(team)
    questions = select(load_questions(), only=["yield", "with"])

    outcomes = await evaluate(
        questions, model, settings=Settings(deadline_s=30), reports=tmp_path / "reports"
    )
    results = results_json(
        outcomes,
        about={"model": model.name, "base_url": None, "protocol": "json"},
        settings=Settings(),
    )
    write_json(results, tmp_path / "results.json")
    saved = json.loads(await anyio.Path(tmp_path / "results.json").read_text())

    assert {"model", "base_url", "protocol", "finished", "settings", "questions", "totals"} <= set(
        saved
    )
    assert [q["id"] for q in saved["questions"]] == ["yield", "with"]
    first, second = saved["questions"]
    assert first["status"] == "complete", first["reason"]
    assert first["requests"] + second["requests"] == len(model.requests)
    assert first["score"]["relevant_citation"] is True
    assert first["score"]["leaks"] == []
    assert [leak["source"] for leak in second["score"]["leaks"]] == ["TODO", "TODO"]
    assert [leak["source"] for leak in second["raw_leaks"]] == ["TODO", "TODO"]
    assert (second["score"]["replaced"], second["score"]["summary_written"]) == (0, True)
    assert saved["totals"]["relevant_citation_rate"] == 1.0
    assert saved["totals"]["leaks_by_kind"] == {"placeholder": 2}
    assert saved["totals"]["statuses"] == {"complete": 2}
    written = await anyio.Path(first["report"]).read_text()
    assert written.startswith(f"# {YIELD.question}\n")
    assert "| yield | complete | yes | 2/3 | 0 |" in render(saved)
    agent_prompts = {r.messages[0].content for r in model.requests if r.tools}
    assert agent_prompts == {RESEARCH_AGENT}
