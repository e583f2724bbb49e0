"""Scoring a research report's Markdown against its question: pure functions, and the questions.

A report is judged on its own text, everything before its `## Sources` heading (the title, which
is the question, and paor's `Evidence:` listings of what a section gathered are left out):

- relevant citation: it cites, in brackets, at least one document that answers the question;
- key-fact recall: the share of the question's key facts it states (each fact is a list of
  alternative phrasings, matched case-insensitively with whitespace normalised);
- leaks: placeholders, text copied from the prompts, tool descriptions or the JSON decision guide
  (any run of 6 words), and raw tool-call JSON, each with the offending snippet;
- duplicate headings.

`score_report` and the checks it is made of are pure; the prompts a report must not copy are read
from the library itself. The only I/O is `load_questions` reading `research_questions.json`.
"""

from __future__ import annotations

import functools
import json
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from agents import cites_evidence
from agents.errors import ModelRequestError
from agents.executor import DEFAULT_INSTRUCTIONS
from agents.models import ModelRequest, ModelResponse
from agents.models._decisions import (
    render_messages,  # the JSON protocol's guide, as the model sees it
)
from agents.toolkits import Corpus, Document
from agents.tools import Evidence
from orchestrator import RunConfig
from orchestrator._research import research_orchestrator

__all__ = [
    "PROMPT_RUN",
    "QUESTIONS",
    "FactHit",
    "Leak",
    "Question",
    "Score",
    "citations",
    "duplicate_headings",
    "fact_hits",
    "find_leaks",
    "library_prompts",
    "load_questions",
    "own_text",
    "prose",
    "research_tool_names",
    "score_report",
    "select",
    "visible_text",
]

QUESTIONS = Path(__file__).resolve().parent / "research_questions.json"
# Words: a run this long copied from a prompt is a leak, not a coincidence. No run of 6 words of
# the prompts occurs anywhere in the Python reference, and SmolLM2's copies ("The task cannot be
# done at all", from report_issue's earlier description) are 7 words long: 8 would miss them.
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


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Question(_Frozen):
    """One question of the evaluation.

    Attributes:
        id: A short name ("yield").
        question: The topic handed to `research`, as a user would ask it.
        expected: Document ids that answer it (1 to 3).
        facts: Key facts (2 to 3), each a list of lowercase phrasings any of which counts.
        held_out: Written with the rest, then never looked at while prompts are tuned (their
            reports are not read): their figures say what a new question gets.
    """

    id: str
    question: str
    expected: tuple[str, ...] = Field(min_length=1, max_length=3)
    facts: tuple[tuple[str, ...], ...] = Field(min_length=2, max_length=3)
    held_out: bool = False

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
        research_tool_names() if tool_names is None else tool_names,
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
    executor = orch.executor()
    specs = executor.toolbox.menu(0.0) + executor.control.menu(0.0)
    prompts = {
        "research planner prompt": orch.config.planner_instructions,
        "research agent prompt": executor.instructions,
        "research synthesis prompt": orch.config.synthesis_instructions,
        "default planner prompt": RunConfig().planner_instructions,
        "default synthesis prompt": RunConfig().synthesis_instructions,
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


def research_tool_names() -> tuple[str, ...]:
    """The names of the tools a research run's agents get (what a raw tool call could name)."""
    return _research_setup()[1]
