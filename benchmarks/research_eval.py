"""The research evaluation: `paor research` on questions about the Python reference, scored.

    python -m benchmarks.research_eval [--base-url URL] [--model NAME] [--protocol auto|tools|json]
        [--questions N | --only ID,...] [--deadline S] [--out FILE.json] [--reports DIR]

Each question of `research_questions.json` is researched in turn by `orchestrator.research` over
`Corpus.python_docs()`, with the limits `paor research` uses, against one model for the whole run:
the embedded SmolLM2 unless `--base-url` names an endpoint. A report is judged on its own text,
everything before its `## Sources` heading (the title, which is the question, and paor's
`Evidence:` listings of what a section gathered are left out):

- relevant citation: it cites, in brackets, at least one document that answers the question;
- key-fact recall: the share of the question's key facts it states (each fact is a list of
  alternative phrasings, matched case-insensitively with whitespace normalised);
- leaks: placeholders, text copied from the prompts, tool descriptions or the JSON decision guide
  (any run of 6 words), and raw tool-call JSON, each with the offending snippet;
- duplicate headings; and the run's status, seconds, model requests and tokens.

The scoring functions (`score_report` and the checks it is made of) are pure.
"""

from __future__ import annotations

import argparse
import functools
import json
import logging
import os
import platform
import re
import sys
import time
from collections import Counter
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Literal

import anyio
import structlog
from pydantic import BaseModel, ConfigDict, Field, field_validator

import agents
from agents import (
    DEFAULT_INSTRUCTIONS,
    ChatModel,
    Evidence,
    LocalModel,
    ModelRequest,
    ModelRequestError,
    ModelResponse,
    cites_evidence,
    local_model_available,
    open_model,
)
from agents._decisions import render_messages  # the JSON protocol's guide, as the model sees it
from agents.toolkits import Corpus, Document
from benchmarks._report import _table, write_json
from orchestrator import Limits, research
from orchestrator._planner import PLANNER_INSTRUCTIONS, SYNTHESIS_INSTRUCTIONS
from orchestrator._research import research_orchestrator
from orchestrator._state import RunResult

__all__ = [
    "FactHit",
    "Leak",
    "Outcome",
    "Question",
    "Score",
    "Settings",
    "Totals",
    "citations",
    "duplicate_headings",
    "evaluate",
    "fact_hits",
    "find_leaks",
    "library_prompts",
    "load_questions",
    "main",
    "own_text",
    "prose",
    "render",
    "results_json",
    "run_for_suite",
    "score_report",
    "select",
    "totals",
    "visible_text",
    "written_answers",
]

HERE = Path(__file__).resolve().parent
QUESTIONS = HERE / "research_questions.json"
RESULTS = HERE / "research_results.json"
QUICK = 3
# Words: a run this long copied from a prompt is a leak, not a coincidence. No run of 6 words of
# the prompts occurs anywhere in the Python reference, and SmolLM2's copies ("The task cannot be
# done at all", from report_issue's description) are 7 words long: 8 would miss them.
PROMPT_RUN = 6
_SNIPPET = 160
_SOURCES = re.compile(r"^## Sources[ \t]*$", re.M)
_CITATION = re.compile(r"\[([^\[\]\n]{1,200})\](?!\()")
_NOT_ANSWERED = re.compile(r"^## Not answered[ \t]*$.*?(?=^#|\Z)", re.M | re.S)
_FALLBACK_SUMMARY = re.compile(r"^\*No usable summary[^\n]*\n(?:[ \t]*\n|- [^\n]*\n)*", re.M)
_INSERTED = re.compile(r"^(?:>.*|\*[^*\n].*\*|Evidence: .*|\(no answer: .*\))[ \t]*$", re.M)
_REPLACED = re.compile(r"^(?:\*Extracted: |\(no answer: )", re.M)
_HEADING = re.compile(r"^#{1,6}[ \t]+(.+?)[ \t#]*$", re.M)
_FENCE = re.compile(r"^```[^\n]*\n.*?^```", re.M | re.S)
_PUNCT = ".,;:!?\"'()[]{}*`“”‘’"

LeakKind = Literal["placeholder", "prompt", "tool_call"]
Status = Literal["complete", "incomplete", "failed", "error"]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Question(_Frozen):
    """One question of the evaluation.

    Attributes:
        id: A short name ("yield").
        question: The topic handed to `research`, as a user would ask it.
        expected: Document ids that answer it (1 to 3).
        facts: Key facts (2 to 3), each a list of lowercase phrasings any of which counts.
    """

    id: str
    question: str
    expected: tuple[str, ...] = Field(min_length=1, max_length=3)
    facts: tuple[tuple[str, ...], ...] = Field(min_length=2, max_length=3)

    @field_validator("facts")
    @classmethod
    def _phrasings(cls, facts: tuple[tuple[str, ...], ...]) -> tuple[tuple[str, ...], ...]:
        for fact in facts:
            if not fact or any(not p.strip() or p != p.lower() for p in fact):
                raise ValueError(f"a fact needs lowercase, non-empty phrasings: {fact}")
        return facts


class Leak(_Frozen):
    """Something in a report that should not be there.

    Attributes:
        kind: placeholder, prompt (text copied from a prompt, a tool description or the decision
            guide) or tool_call (raw tool-call JSON or call syntax).
        source: Which pattern or which prompt it matched.
        snippet: The offending text.
    """

    kind: LeakKind
    source: str
    snippet: str


class FactHit(_Frozen):
    """One key fact and the phrasing that was found for it, if any."""

    phrases: tuple[str, ...]
    found: str | None


class Score(_Frozen):
    """How one report scores; "written" means by the model, not inserted by paor.

    Attributes:
        cited: Every document the written text cites.
        relevant_citation: Whether one of them answers the question.
        relevant_with_extracts: The same, counting the passages paor quotes in place of an
            answer it could not use.
        retrieved: Whether a document that answers it is among the report's sources.
        facts: Each key fact, found in the written prose or not.
        recall: The share of key facts found.
        leaks: Placeholders, prompt text and tool-call JSON in the report before its sources.
        duplicate_headings: Heading texts that appear more than once (normalised).
        replaced: Sections whose answer paor did not use (quoted passages or no answer instead).
        summary_written: Whether the summary is the model's (not paor's list of questions).
    """

    cited: tuple[str, ...]
    relevant_citation: bool
    relevant_with_extracts: bool
    retrieved: bool
    facts: tuple[FactHit, ...]
    recall: float
    leaks: tuple[Leak, ...]
    duplicate_headings: tuple[str, ...]
    replaced: int
    summary_written: bool


class Outcome(_Frozen):
    """One question's run and its score (no score if the run raised); `raw_leaks` are those in
    the final answers the models wrote, before paor chose what to put in the report."""

    id: str
    question: str
    expected: tuple[str, ...]
    status: Status
    reason: str | None
    seconds: float
    requests: int
    tool_calls: int
    prompt_tokens: int
    completion_tokens: int
    score: Score | None
    raw_leaks: tuple[Leak, ...] = ()
    report: str | None = None


class Totals(_Frozen):
    """The figures over every question (a run that raised scores zero on each)."""

    questions: int
    relevant_citation_rate: float
    relevant_with_extracts_rate: float
    retrieval_rate: float
    mean_recall: float
    leaks: int
    leaks_by_kind: dict[str, int]
    raw_leaks: int
    replaced_sections: int
    summaries_written: int
    duplicate_heading_reports: int
    statuses: dict[str, int]
    seconds: float
    requests: int
    prompt_tokens: int
    completion_tokens: int


class Settings(_Frozen):
    """The limits of each question's run: `paor research`'s defaults, with a deadline."""

    deadline_s: float = Field(default=120.0, gt=0)
    max_subtasks: int = Field(default=3, ge=1)
    max_steps: int = Field(default=6, ge=1)
    max_tokens: int | None = Field(default=None, ge=1)

    def limits(self) -> Limits:
        """The `Limits` a research run gets, built as `paor research` builds them."""
        return Limits(
            max_subtasks=self.max_subtasks,
            deadline_s=self.deadline_s,
            max_tokens=self.max_tokens,
            agent=agents.Limits(max_steps=self.max_steps),
        )


# Questions.


def load_questions(path: Path = QUESTIONS) -> list[Question]:
    """The questions in `path` (a JSON list), checked; ids must be unique."""
    questions = [Question.model_validate(q) for q in json.loads(path.read_text())]
    repeated = [i for i, n in Counter(q.id for q in questions).items() if n > 1]
    if repeated:
        raise ValueError(f"{path}: repeated question ids: {', '.join(repeated)}")
    return questions


def select(
    questions: Sequence[Question], *, count: int | None = None, only: Sequence[str] = ()
) -> list[Question]:
    """The first `count` questions, or those named in `only` (in the file's order).

    Raises:
        ValueError: `only` names a question that does not exist.
    """
    if only:
        unknown = sorted(set(only) - {q.id for q in questions})
        if unknown:
            raise ValueError(f"no such question: {', '.join(unknown)}")
        return [q for q in questions if q.id in only]
    return list(questions[:count] if count is not None else questions)


# Scoring: pure functions of a report's Markdown.


def visible_text(markdown: str) -> str:
    """The report before its `## Sources` heading, without the title (which is the question)."""
    lines = _SOURCES.split(markdown, maxsplit=1)[0].splitlines()
    return "\n".join(lines[1:] if lines and lines[0].startswith("# ") else lines)


def own_text(markdown: str) -> str:
    """What the model wrote: the visible text without what paor inserts (the Incomplete banner
    and notes, quoted extracts and other `>` lines, `*Status:*`-style markers, `Evidence:` lines,
    the fallback summary's list of questions and the list of questions not answered)."""
    text = _FALLBACK_SUMMARY.sub("", _NOT_ANSWERED.sub("", visible_text(markdown)))
    return _INSERTED.sub("", text)


def prose(markdown: str) -> str:
    """Where key facts are looked for: the model's text without headings (the sub-questions
    restate the question)."""
    return "\n".join(line for line in own_text(markdown).splitlines() if not line.startswith("#"))


def citations(text: str) -> list[str]:
    """The document ids cited in [brackets], lists included ("[python/a, python/b]"), in order."""
    found = (part.strip() for m in _CITATION.finditer(text) for part in re.split(r"[,;]", m[1]))
    return list(dict.fromkeys(c for c in found if c))


def fact_hits(text: str, facts: Iterable[Sequence[str]]) -> list[FactHit]:
    """For each fact, the first of its phrasings found in `text`, ignoring case and spacing.

    A phrasing must start a word ("bound" is not found in "unbound") but may be the start of a
    longer one ("suspend" is found in "suspended").
    """
    flat = _flatten(text)
    return [
        FactHit(phrases=tuple(fact), found=next((p for p in fact if _starts_word(p, flat)), None))
        for fact in facts
    ]


def _starts_word(phrase: str, flat: str) -> bool:
    edge = r"(?<![\w])" if re.match(r"\w", phrase) else ""
    return re.search(edge + re.escape(_flatten(phrase)), flat) is not None


def duplicate_headings(markdown: str) -> list[str]:
    """Heading texts, at any level, that appear more than once (outside code blocks)."""
    headings = _HEADING.findall(_FENCE.sub("", markdown))
    counts = Counter(_flatten(h).rstrip(".:?!") for h in headings)
    return [heading for heading, n in counts.items() if n > 1]


def find_leaks(text: str, prompts: Mapping[str, str], tool_names: Iterable[str] = ()) -> list[Leak]:
    """Placeholders, runs of `PROMPT_RUN` words copied from `prompts` (name to text), and raw
    tool calls (JSON, or call syntax naming one of `tool_names`) in `text`."""
    names = tuple(tool_names)
    return [*_placeholders(text), *_prompt_copies(text, prompts), *_tool_calls(text, names)]


def score_report(
    markdown: str,
    question: Question,
    *,
    prompts: Mapping[str, str] | None = None,
    tool_names: Iterable[str] | None = None,
) -> Score:
    """Score one report against its question.

    Args:
        markdown: The report, as `research` rendered it.
        question: What it was asked.
        prompts: Texts whose copying is a leak, by name (default: `library_prompts()`).
        tool_names: The tools a raw call could name (default: the research tools).
    """
    cited = citations(own_text(markdown))
    hits = fact_hits(prose(markdown), question.facts)
    parts = _SOURCES.split(markdown, maxsplit=1)
    sources = citations(parts[1]) if len(parts) == 2 else []
    visible = visible_text(markdown)
    leaks = find_leaks(
        visible,
        library_prompts() if prompts is None else prompts,
        _tool_names() if tool_names is None else tool_names,
    )
    return Score(
        cited=tuple(cited),
        relevant_citation=any(c in question.expected for c in cited),
        relevant_with_extracts=any(c in question.expected for c in citations(visible)),
        retrieved=any(s in question.expected for s in sources),
        facts=tuple(hits),
        recall=sum(h.found is not None for h in hits) / len(hits),
        leaks=tuple(leaks),
        duplicate_headings=tuple(duplicate_headings(markdown)),
        replaced=len(_REPLACED.findall(visible)),
        summary_written=not _FALLBACK_SUMMARY.search(visible),
    )


_PLACEHOLDERS = {
    "<your ...>": re.compile(r"<your [^<>\n]{1,40}>", re.I),
    "<name>": re.compile(r"<(?:name|answer|tool|query|doc|id|text|question|arguments)>", re.I),
    "TODO": re.compile(r"\bTODO\b"),
    "the tool description's example id": re.compile(r"guide/intro"),
}
_TOOL_CALLS = {
    '{"name":': re.compile(r'\{\s*"name"\s*:'),
    '"arguments":': re.compile(r'"arguments"\s*:'),
    '"kind": "tool_calls"': re.compile(r'"kind"\s*:\s*"(?:tool_calls|final)"'),
    '"tool":': re.compile(r'"tool"\s*:\s*"'),
    "<tool_call>": re.compile(r"</?tool_call>"),
}
# The findings format the synthesis prompt shows (`## gen (done)`, `Task: ...`): copied, or paor's
# own fallback when synthesis fails, it reads as scaffolding either way.
_SCAFFOLDING = {
    "findings heading": re.compile(
        r"^#{1,6} \S+ \((?:done|partial|failed|blocked|cancelled|dropped)\)[ \t]*$", re.M
    ),
    "findings Task: line": re.compile(r"^Task: .*$", re.M),
    "findings Sources: line": re.compile(r"^Sources: \[.*$", re.M),
    "planner Goal: line": re.compile(r"^Goal: .*$", re.M),
}
_PAOR_ANSWERS = ("Incomplete: stopped early", "Results gathered by the agents:", "Incomplete (")
_ELLIPSES = frozenset({"...", "…", '"..."', "'...'", "`...`"})


def _placeholders(text: str) -> list[Leak]:
    found = [
        Leak(kind="placeholder", source=name, snippet=_around(text, m.start(), m.end()))
        for name, pattern in _PLACEHOLDERS.items()
        for m in pattern.finditer(text)
    ]
    bodies = _HEADING.split(text)[::2]  # split keeps the heading texts at odd positions
    found += [
        Leak(kind="placeholder", source="... as a whole answer", snippet=body.strip())
        for body in bodies
        if body.strip() in _ELLIPSES
    ]
    return found


def _tool_calls(text: str, tool_names: Sequence[str]) -> list[Leak]:
    found = [
        Leak(kind="tool_call", source=name, snippet=_around(text, m.start(), m.end()))
        for name, pattern in _TOOL_CALLS.items()
        for m in pattern.finditer(text)
    ]
    if tool_names:
        names = "|".join(map(re.escape, tool_names))
        found += [
            Leak(kind="tool_call", source="a tool name in a fenced block", snippet=_squash(m[0]))
            for m in _FENCE.finditer(text)
            if re.search(rf"\b(?:{names})\b", m[0])
        ]
        found += [
            Leak(kind="tool_call", source="call syntax", snippet=_around(text, m.start(), m.end()))
            for m in re.finditer(rf"\b(?:{names})\s*\(", text)
        ]
    return found


def _prompt_copies(text: str, prompts: Mapping[str, str]) -> list[Leak]:
    found = [
        Leak(kind="prompt", source=name, snippet=_squash(m[0]))
        for name, pattern in _SCAFFOLDING.items()
        for m in pattern.finditer(text)
    ]
    index = _ngram_index(prompts)
    words = _words(text)
    for start, end in _copied_runs(words, index):
        key = tuple(w for w, _, _ in words[start : start + PROMPT_RUN])
        snippet = _squash(text[words[start][1] : words[end][2]])
        found.append(Leak(kind="prompt", source=index[key], snippet=snippet[:_SNIPPET]))
    return found


def _copied_runs(
    words: Sequence[tuple[str, int, int]], index: Mapping[tuple[str, ...], str]
) -> list[tuple[int, int]]:
    """Maximal runs of words (first and last word index) covered by n-grams found in `index`."""
    runs: list[tuple[int, int]] = []
    for i in range(len(words) - PROMPT_RUN + 1):
        if tuple(w for w, _, _ in words[i : i + PROMPT_RUN]) not in index:
            continue
        end = i + PROMPT_RUN - 1
        if runs and i <= runs[-1][1] + 1:
            runs[-1] = (runs[-1][0], end)
        else:
            runs.append((i, end))
    return runs


def _ngram_index(prompts: Mapping[str, str]) -> dict[tuple[str, ...], str]:
    """Every run of `PROMPT_RUN` words of every prompt, mapped to the prompt's name. A template
    field ("{max_subtasks}") breaks a run: what fills it is not the prompt's text."""
    index: dict[tuple[str, ...], str] = {}
    for name, prompt in prompts.items():
        for part in re.split(r"\{[a-z_]+\}", prompt):
            words = [w for w, _, _ in _words(part)]
            for i in range(len(words) - PROMPT_RUN + 1):
                index.setdefault(tuple(words[i : i + PROMPT_RUN]), name)
    return index


def _words(text: str) -> list[tuple[str, int, int]]:
    """Words, lowercased and stripped of punctuation, with where they are in `text`."""
    found = ((m[0].lower().strip(_PUNCT), m.start(), m.end()) for m in re.finditer(r"\S+", text))
    return [w for w in found if w[0]]


def _flatten(text: str) -> str:
    return " ".join(text.lower().split())


def _squash(text: str) -> str:
    return " ".join(text.split())[:_SNIPPET]


def _around(text: str, start: int, end: int) -> str:
    return _squash(text[max(0, start - 40) : end + 60])


# The prompts a report must not copy, taken from the library at run time.


class _Unused:
    """The model of an orchestrator built only to read its prompts and tools: never asked."""

    name = "unused"

    async def complete(self, request: ModelRequest) -> ModelResponse:
        """Refuse: nothing runs."""
        raise ModelRequestError("this orchestrator only shows its prompts")


@functools.cache
def _research_setup() -> tuple[dict[str, str], tuple[str, ...]]:
    # The tools' descriptions do not depend on the corpus, so a one-document corpus will do.
    corpus = Corpus([Document(id="unused", title="unused", text="unused")])
    orch = research_orchestrator(_Unused(), corpus)
    specs = orch.executor.toolbox.menu(0.0) + orch.executor.control.menu(0.0)
    prompts = {
        "research planner prompt": orch.planner_instructions,
        "research agent prompt": orch.executor.instructions,
        "research synthesis prompt": orch.synthesis_instructions,
        "default planner prompt": PLANNER_INSTRUCTIONS,
        "default synthesis prompt": SYNTHESIS_INSTRUCTIONS,
        "default agent prompt": DEFAULT_INSTRUCTIONS,
    }
    for spec in specs:
        prompts[f"{spec.name} description"] = spec.description
        for arg, schema in spec.parameters.get("properties", {}).items():
            if isinstance(schema.get("description"), str):
                prompts[f"{spec.name}({arg}) description"] = schema["description"]
    prompts["JSON decision guide"] = render_messages(ModelRequest(messages=(), tools=specs))[0][
        "content"
    ]
    gathered = (Evidence(source="unused", excerpt="unused", tool="search_docs"),)
    for number, evidence in enumerate([(), gathered], 1):
        prompts[f"acceptance feedback {number}"] = cites_evidence("no citation", evidence) or ""
    return prompts, tuple(spec.name for spec in specs)


def library_prompts() -> dict[str, str]:
    """The texts a research run shows the model, by name: the research planner, agent and
    synthesis prompts (and the library's defaults), every tool description the agents get, and
    the JSON decision protocol's guide."""
    return dict(_research_setup()[0])


def _tool_names() -> tuple[str, ...]:
    return _research_setup()[1]


# Running.


async def evaluate(
    questions: Sequence[Question],
    model: ChatModel,
    *,
    corpus: Corpus | None = None,
    settings: Settings | None = None,
    reports: Path | None = None,
    on_outcome: Callable[[Outcome], None] | None = None,
) -> list[Outcome]:
    """Research every question in turn with `model` and score each report.

    Args:
        questions: What to ask.
        model: One model for the whole evaluation.
        corpus: The documents (default: the Python reference).
        settings: Each run's limits (default: `paor research`'s, 120 s each).
        reports: Write each report there, as `<question id>.md`.
        on_outcome: Called as each question is done (for progress lines).
    """
    corpus = corpus or Corpus.python_docs()
    settings = settings or Settings()
    if reports is not None:
        await anyio.Path(reports).mkdir(parents=True, exist_ok=True)
    outcomes = []
    for question in questions:
        outcome, markdown = await _run_one(question, model, corpus, settings)
        if reports is not None and markdown is not None:
            path = anyio.Path(reports) / f"{question.id}.md"
            await path.write_text(markdown, encoding="utf-8")
            outcome = outcome.model_copy(update={"report": str(path)})
        outcomes.append(outcome)
        if on_outcome is not None:
            on_outcome(outcome)
    return outcomes


async def _run_one(
    question: Question, model: ChatModel, corpus: Corpus, settings: Settings
) -> tuple[Outcome, str | None]:
    """One research run, scored; a run that raises, or overruns its deadline by more than the
    grace below, is an `error` outcome rather than the end of the evaluation."""
    grace = max(30.0, settings.deadline_s / 2)
    start = time.perf_counter()
    base = {"id": question.id, "question": question.question, "expected": question.expected}
    try:
        with anyio.fail_after(settings.deadline_s + grace):
            report = await research(
                question.question, model=model, corpus=corpus, limits=settings.limits()
            )
    except TimeoutError:
        reason = f"overran its {settings.deadline_s:g} s deadline by more than {grace:g} s"
        return _failed(base, reason, start), None
    except Exception as exc:  # one question's failure is a data point, not the end of the run
        return _failed(base, f"{type(exc).__name__}: {exc}", start), None
    usage = report.result.usage
    outcome = Outcome(
        **base,
        status=report.result.status,
        reason=report.result.reason,
        seconds=round(time.perf_counter() - start, 1),
        requests=usage.requests,
        tool_calls=usage.tool_calls,
        prompt_tokens=usage.prompt_tokens,
        completion_tokens=usage.completion_tokens,
        score=score_report(report.markdown, question),
        raw_leaks=tuple(
            leak
            for answer in written_answers(report.result)
            for leak in find_leaks(answer, library_prompts(), _tool_names())
        ),
    )
    return outcome, report.markdown


def written_answers(result: RunResult) -> list[str]:
    """The final answers the models wrote in a run: each sub-agent's and the summary, leaving out
    the texts paor writes in their place (an agent's digest, the joined results)."""
    answers = [r.answer for r in result.reports] + [result.answer]
    return [a for a in answers if a.strip() and not a.startswith(_PAOR_ANSWERS)]


def _failed(base: dict[str, Any], reason: str, start: float) -> Outcome:
    seconds = round(time.perf_counter() - start, 1)
    return Outcome(
        **base, status="error", reason=reason[:500], seconds=seconds, requests=0, tool_calls=0,
        prompt_tokens=0, completion_tokens=0, score=None,
    )  # fmt: skip


def totals(outcomes: Sequence[Outcome]) -> Totals:
    """The evaluation's figures over `outcomes`."""
    scores = [o.score for o in outcomes if o.score is not None]
    count = max(len(outcomes), 1)
    leaks = [leak for s in scores for leak in s.leaks]
    return Totals(
        questions=len(outcomes),
        relevant_citation_rate=round(sum(s.relevant_citation for s in scores) / count, 3),
        relevant_with_extracts_rate=round(sum(s.relevant_with_extracts for s in scores) / count, 3),
        retrieval_rate=round(sum(s.retrieved for s in scores) / count, 3),
        mean_recall=round(sum(s.recall for s in scores) / count, 3),
        leaks=len(leaks),
        leaks_by_kind=dict(Counter(leak.kind for leak in leaks)),
        raw_leaks=sum(len(o.raw_leaks) for o in outcomes),
        replaced_sections=sum(s.replaced for s in scores),
        summaries_written=sum(s.summary_written for s in scores),
        duplicate_heading_reports=sum(bool(s.duplicate_headings) for s in scores),
        statuses=dict(Counter(o.status for o in outcomes)),
        seconds=round(sum(o.seconds for o in outcomes), 1),
        requests=sum(o.requests for o in outcomes),
        prompt_tokens=sum(o.prompt_tokens for o in outcomes),
        completion_tokens=sum(o.completion_tokens for o in outcomes),
    )


def results_json(
    outcomes: Sequence[Outcome], *, about: Mapping[str, Any], settings: Settings
) -> dict[str, Any]:
    """Everything about an evaluation, as JSON-ready data: `about` (model, base url, protocol,
    command...), the machine, the settings, each question's outcome, and the totals."""
    return {
        **about,
        "finished": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count()},
        "settings": settings.model_dump(),
        "questions": [o.model_dump(mode="json") for o in outcomes],
        "totals": totals(outcomes).model_dump(mode="json"),
    }


_HEADER = (
    "question", "status", "cites expected", "recall", "leaks", "raw leaks", "replaced",
    "dup. headings", "s", "requests", "tokens",
)  # fmt: skip


def render(results: Mapping[str, Any]) -> str:
    """The per-question table and the totals, in Markdown, from `results_json` data."""
    t = results["totals"]
    kinds = ", ".join(f"{k} {n}" for k, n in sorted(t["leaks_by_kind"].items())) or "none"
    statuses = ", ".join(f"{k} {n}" for k, n in sorted(t["statuses"].items()))
    return "\n".join(
        [
            f"Research evaluation: {t['questions']} questions, model {results['model']} "
            f"({results['base_url'] or 'embedded'}, protocol {results['protocol']})",
            "",
            _table(list(_HEADER), [_row(o) for o in results["questions"]]),
            "",
            f"- relevant citation in the model's text: {t['relevant_citation_rate']:.0%} "
            f"(counting paor's extracts: {t['relevant_with_extracts_rate']:.0%}; "
            f"an expected document among the sources: {t['retrieval_rate']:.0%})",
            f"- mean key-fact recall: {t['mean_recall']:.0%}",
            f"- leaks in the reports: {t['leaks']} ({kinds}); in the models' raw answers: "
            f"{t['raw_leaks']}",
            f"- sections whose answer paor replaced: {t['replaced_sections']}; summaries the "
            f"model wrote: {t['summaries_written']} of {t['questions']}",
            f"- reports with duplicate headings: {t['duplicate_heading_reports']}",
            f"- statuses: {statuses}",
            f"- {t['seconds']:.0f} s, {t['requests']} model requests, "
            f"{t['prompt_tokens'] + t['completion_tokens']:,} tokens",
        ]
    )


def _row(outcome: Mapping[str, Any]) -> list[str]:
    score = outcome["score"]
    tokens = f"{outcome['prompt_tokens'] + outcome['completion_tokens']:,}"
    common = [f"{outcome['seconds']:.0f}", str(outcome["requests"]), tokens]
    if score is None:
        return [outcome["id"], "error", *["n/a"] * 6, *common]
    found = sum(f["found"] is not None for f in score["facts"])
    return [
        outcome["id"],
        outcome["status"],
        "yes" if score["relevant_citation"] else "no",
        f"{found}/{len(score['facts'])}",
        str(len(score["leaks"])),
        str(len(outcome["raw_leaks"])),
        str(score["replaced"]),
        str(len(score["duplicate_headings"])),
        *common,
    ]


def _progress(outcome: Outcome) -> str:
    if outcome.score is None:
        return f"{outcome.id}: error after {outcome.seconds:.0f} s ({outcome.reason})"
    s = outcome.score
    found = sum(f.found is not None for f in s.facts)
    return (
        f"{outcome.id}: {outcome.status}, {'cites' if s.relevant_citation else 'does not cite'} "
        f"an expected document, {found}/{len(s.facts)} facts, {len(s.leaks)} leaks "
        f"({len(outcome.raw_leaks)} raw), {s.replaced} sections replaced, "
        f"{outcome.seconds:.0f} s, {outcome.requests} requests"
    )


# The command line, and the benchmark suite's section.


@asynccontextmanager
async def _model(args: argparse.Namespace) -> AsyncIterator[tuple[ChatModel, dict[str, Any]]]:
    """The endpoint named by --base-url (checked to answer), or else the embedded model; and what
    to record about it."""
    if args.base_url:
        async with open_model(args.model, base_url=args.base_url, protocol=args.protocol) as remote:
            yield (
                remote,
                {"model": remote.name, "base_url": args.base_url, "protocol": args.protocol},
            )
        return
    # SmolLM2's protocol is always the JSON one; another GGUF file's is --protocol.
    served = LocalModel(model_path=args.gguf, protocol=args.protocol) if args.gguf else LocalModel()
    async with served as local:
        about = {"model": local.name, "base_url": None, "protocol": local.protocol}
        yield local, {**about, "gguf": str(args.gguf) if args.gguf else None}


async def _evaluate(
    args: argparse.Namespace, questions: Sequence[Question], settings: Settings
) -> dict[str, Any]:
    async with _model(args) as (model, about):
        outcomes = await evaluate(
            questions,
            model,
            settings=settings,
            reports=args.reports,
            on_outcome=lambda o: print(f"  {_progress(o)}", flush=True),
        )
    return results_json(outcomes, about={"command": args.command, **about}, settings=settings)


def run_for_suite(*, quick: bool, out: Path = RESULTS) -> str:
    """The evaluation as a section of `python -m benchmarks`: every question (the first
    `QUICK` with `quick`) over the embedded model, saved to `out`; returns its tables."""
    if not local_model_available():
        return "Research evaluation: skipped (the embedded model is not installed)"
    args = _parser().parse_args(["--questions", str(QUICK)] if quick else [])
    args.command = "python -m benchmarks" + (" --quick" if quick else "")
    results = anyio.run(_evaluate, args, select(load_questions(), count=args.questions), Settings())
    write_json(results, out)
    return f"{render(results)}\n\nresearch results: {out}"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.research_eval",
        description="Score paor research reports on questions about the Python reference.",
    )
    parser.add_argument("--base-url", help="an OpenAI-compatible endpoint (default: embedded)")
    parser.add_argument("--model", help="the model name at --base-url")
    parser.add_argument("--protocol", choices=["auto", "tools", "json"], default="auto")
    parser.add_argument(
        "--gguf", type=Path, help="serve this GGUF file with the embedded llama.cpp server"
    )
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--questions", type=int, metavar="N", help="the first N questions")
    which.add_argument("--only", metavar="ID,...", help="these questions, by id")
    parser.add_argument("--deadline", type=float, default=120.0, help="seconds per question")
    parser.add_argument("--max-subtasks", type=int, default=3)
    parser.add_argument("--max-steps", type=int, default=6, help="steps per sub-agent")
    parser.add_argument("--max-tokens", type=int, help="token budget per question")
    parser.add_argument("--out", type=Path, default=RESULTS, help="where the JSON goes")
    parser.add_argument("--reports", type=Path, metavar="DIR", help="write each report here")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the evaluation from the command line; print the tables and write the JSON."""
    parser = _parser()
    args = parser.parse_args(argv)
    if not args.base_url and not args.gguf and (args.model or args.protocol != "auto"):
        parser.error("--model and --protocol need --base-url or --gguf (SmolLM2 speaks JSON)")
    try:
        settings = Settings(
            deadline_s=args.deadline,
            max_subtasks=args.max_subtasks,
            max_steps=args.max_steps,
            max_tokens=args.max_tokens,
        )
        only = [i.strip() for i in args.only.split(",") if i.strip()] if args.only else []
        questions = select(load_questions(), count=args.questions, only=only)
    except ValueError as exc:
        parser.error(str(exc))
    structlog.configure(  # noqa: TID251 - an application: it configures logging
        wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING),
        logger_factory=structlog.PrintLoggerFactory(sys.stderr),
        cache_logger_on_first_use=True,
    )
    args.command = " ".join(["python -m benchmarks.research_eval", *(argv or sys.argv[1:])])
    results = anyio.run(_evaluate, args, questions, settings)
    print(render(results))
    write_json(results, args.out)
    print(f"results: {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
