"""The Markdown research report: written by paor from a run, not left to the model.

A title, an Incomplete banner naming the questions left open, the summary, one section per
sub-question (repeated questions merged, so no heading appears twice), what was not answered, the
sources and one evidence excerpt per source. Model-written text is cleaned on the way in:
citations of documents the corpus lacks are removed, headings inside an answer are demoted, and an
answer that is unusable (a placeholder, a copy of the prompts, a tool call written as text, an
executor's digest) is replaced by the passages that best answer the question, quoted, cited and
marked as extracted. Quotes are whole sentences around the one that best matches the question.

The sources are the documents the report's text cites, each with an excerpt gathered from it; the
other documents the agents found or read are listed apart, as also searched, so a reader sees
which documents back the text.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence

from agents import AgentReport
from agents.executor import AnswerCheck
from agents.models import ToolSpec
from agents.toolkits import Corpus, Hit
from orchestrator._state import RunResult

__all__ = ["clean_citations", "write_report"]

# The spaces before a citation are part of the match, so that removing one leaves no gap.
_CITATION = re.compile(r"(?<![ \t])([ \t]*)\[([^\[\]\n]{0,120})\](?!\()")
_DOUBLED = re.compile(r"\[[ \t]*\[([^\[\]\n]{0,120})\][ \t]*\]")
# Two or more citations in a row, separated by nothing but spaces and list punctuation.
_RUN = re.compile(r"\[[^\[\]\n]{1,120}\](?:[ \t]*(?:[,;][ \t]*)?\[[^\[\]\n]{1,120}\](?!\())+")
_IDS = re.compile(r"\[([^\[\]\n]{1,120})\]")
_RUN_IDS = 4
# A citation the token limit cut off ("... [py/gen" at the very end). The lookbehinds make the
# spaces before a bracket one match, not one try per space (quadratic on a long run of them).
_UNCLOSED = re.compile(r"(?<![ \t])[ \t]*\[[^\[\]\n]{0,120}$")
_HEADING = re.compile(r"^[ \t]*#{1,6}[ \t]+(.*?)[ \t#]*$", re.M)
_DIGEST = "Incomplete: stopped early"
_FALLBACK = ("Results gathered by the agents:", "Incomplete (")
_QUOTED = 2
# A second passage is quoted, or a second document named as evidence, only when it scores at least
# this share of the best: at a half, a policy on leave ("full-time") joined one on refund claims
# for "What is the time frame for filing a refund claim?".
_RELEVANT = 2 / 3
_EXCERPT = 300
_SENTENCE_END = re.compile(r"[.!?][\"'”’)\]]*(?= )")
_ALSO_SEARCHED = 20
_QUOTE = re.compile(r"“[^”\n]*”")
REPORT_SHINGLE_WORDS = 6
_ANSWER = "Answer"
_FIXED = frozenset({"summary", "not answered", "sources", "evidence"})
_STATUS_WORDS = {
    "failed": "failed",
    "blocked": "blocked",
    "cancelled": "cancelled",
    "dropped": "not started",
    "partial": "answered in part",
}


def write_report(
    topic: str,
    result: RunResult,
    corpus: Corpus,
    *,
    told: Sequence[str] = (),
    tools: Sequence[ToolSpec] = (),
) -> str:
    """The Markdown report for a finished research run.

    Args:
        topic: The title.
        result: The run.
        corpus: The documents citations must name.
        told: What the models were told (prompts): an answer copying it is not used.
        tools: The tools they were shown: an answer copying a description or calling one in
            text is not used.
    """
    # Stricter than an agent's check: six words of a prompt in a report a person reads is a leak.
    check = AnswerCheck(told, tools=tools, words=REPORT_SHINGLE_WORDS)
    sections = _sections(result, corpus, check, topic)
    lines = [f"# {_plain(clean_citations(topic, corpus)) or _plain(topic)}", ""]
    if not result.complete:
        lines += [f"> **Incomplete.** {clean_citations(_banner(result), corpus)}", ""]
    lines += [f"> Note: {clean_citations(note, corpus)}" for note in result.notes]
    if result.notes:
        lines.append("")
    lines += ["## Summary", "", _summary(result, corpus, check, sections, topic), ""]
    for heading, body in sections.items():
        lines += [f"## {heading}", "", *body]
    failed = [r for r in result.reports if r.status not in ("done", "partial")]
    answered = {_key(_question(r, corpus)) for r in result.reports if r not in failed}
    asked = dict.fromkeys(_question(r, corpus) for r in failed)
    unanswered = [q for q in asked if _key(q) not in answered]
    if unanswered:
        lines += ["## Not answered", ""]
        lines += [f"- {q} ({_status_of(q, failed, corpus)})" for q in unanswered] + [""]
    lines += _sources(_cited(lines, corpus), _excerpts(result.reports, corpus), corpus)
    return "\n".join(lines).rstrip() + "\n"


def clean_citations(text: str, corpus: Corpus) -> str:
    """Keep only citations of documents that exist in the corpus (empty brackets go too)."""

    def keep(match: re.Match[str]) -> str:
        ids = [part.strip() for part in re.split(r"[,;]", match.group(2))]
        real = [found.id for i in ids if (found := corpus.get(i)) is not None]
        return f"{match.group(1)}[{', '.join(real)}]" if real else ""

    cleaned = _CITATION.sub(keep, _DOUBLED.sub(r"[\1]", text))
    return _RUN.sub(_merged, _UNCLOSED.sub("", cleaned)).strip()


def _merged(match: re.Match[str]) -> str:
    """A run of citations (a small model lists the same one dozens of times) as one, each id
    once, at most `_RUN_IDS` of them."""
    ids = [i.strip() for group in _IDS.findall(match.group(0)) for i in re.split(r"[,;]", group)]
    return f"[{', '.join(list(dict.fromkeys(ids))[:_RUN_IDS])}]"


def _sections(
    result: RunResult, corpus: Corpus, check: AnswerCheck, topic: str
) -> dict[str, list[str]]:
    """One section per distinct sub-question; a question asked twice gets one section, and the
    topic's own is "Answer" (first), so no heading repeats the title or another."""
    sections: dict[str, list[str]] = {_ANSWER: []}
    seen: dict[str, str] = {_key(topic): _ANSWER, _key(_ANSWER): _ANSWER}
    for report in (r for r in result.reports if r.status in ("done", "partial")):
        question = _question(report, corpus)
        key = _key(question)
        if key in _FIXED:
            question, key = f"About: {question}", f"about: {key}"
        heading = seen.setdefault(key, question)
        sections.setdefault(heading, []).extend(_section(report, corpus, check))
    return {heading: body for heading, body in sections.items() if body}


def _section(report: AgentReport, corpus: Corpus, check: AnswerCheck) -> list[str]:
    answer = _usable(report.answer, check)
    body = _plain(clean_citations(answer, corpus)) if answer else ""
    lines = [body or _extract(report, corpus), ""]
    if report.status != "done":
        reason = f" ({report.stop_reason})" if report.stop_reason else ""
        lines += [f"*Status: {report.status}{reason}*", ""]
    if body and not _CITATION.search(body):
        backing = _backing(report, corpus, f"{_question(report, corpus)} {body}")
        cited = ", ".join(f"[{doc}]" for doc in backing)
        lines += [f"Evidence: {cited}" if cited else "Evidence: none found.", ""]
    return lines


def _backing(report: AgentReport, corpus: Corpus, text: str) -> list[str]:
    """The documents the report gathered whose passages best match `text` (its question and
    answer), at most `_QUOTED`: an answer without citations is backed by those, not by every hit."""
    gathered = list(_excerpts([report], corpus))
    return [hit.doc for hit in _best_hits(corpus, text, gathered, per_doc=1)] or gathered[:_QUOTED]


def _best_hits(corpus: Corpus, query: str, docs: Collection[str], *, per_doc: int) -> list[Hit]:
    """At most `_QUOTED` hits among `docs`, each scoring at least `_RELEVANT` of the best: a
    passage sharing one word with the question backs nothing."""
    hits = corpus.search(query, _QUOTED, per_doc=per_doc, docs=docs)
    return [hit for hit in hits if hit.score >= hits[0].score * _RELEVANT]


def _usable(answer: str, check: AnswerCheck) -> str:
    """The answer, or "" when it is not the model's own usable text."""
    if answer.startswith(_DIGEST) or answer.startswith(_FALLBACK):
        return ""
    return "" if check.unusable(answer) else answer


def _extract(report: AgentReport, corpus: Corpus) -> str:
    """The passages that best answer the report's question among the documents it gathered:
    whole sentences around the best matching one (what was gathered, if no word of it matches)."""
    excerpts = _excerpts([report], corpus)
    if not excerpts:
        return "(no answer: nothing relevant was found)"
    question = report.task.splitlines()[0]
    found = [(h.doc, h.text) for h in _best_hits(corpus, question, excerpts.keys(), per_doc=2)]
    found = found or list(excerpts.items())[:_QUOTED]
    quotes = [f"> “{_whole(text)}” [{doc}]" for doc, text in found]
    return "*Extracted: the passages that best match the question.*\n\n" + "\n>\n".join(quotes)


def _summary(
    result: RunResult,
    corpus: Corpus,
    check: AnswerCheck,
    sections: dict[str, list[str]],
    topic: str,
) -> str:
    """The synthesised summary, or, when it is unusable, one line per answered question."""
    answer = _usable(result.answer, check)
    if answer:
        return _plain(clean_citations(answer, corpus))
    if not sections:
        return "No question could be answered from the documents."
    lines = ["*No usable summary was written; the questions answered below:*", ""]
    asked = [_plain(topic) if heading == _ANSWER else heading for heading in sections]
    return "\n".join(lines + [f"- {question}" for question in asked])


def _banner(result: RunResult) -> str:
    """Why the run is incomplete, with each subtask named by its question, not its id."""
    reason = result.reason or result.status
    goals = {s.id: s.goal for plan in result.plans for s in plan.subtasks}
    goals.update({r.agent_id: r.task.splitlines()[0] for r in result.reports if r.task})
    parts = []
    for part in reason.split("; "):
        status, colon, ids = part.partition(": ")
        named = [goals.get(i.strip()) for i in ids.split(", ")] if colon else []
        if colon and status in _STATUS_WORDS and all(named):
            questions = "; ".join(f"“{_plain(q or '')}”" for q in named)
            part = f"{_STATUS_WORDS[status]}: {questions}"
        parts.append(part)
    return "; ".join(parts)


def _question(report: AgentReport, corpus: Corpus) -> str:
    """The sub-question a report answers (model-written, so its citations are checked too)."""
    return _plain(clean_citations(report.task.splitlines()[0], corpus)) or report.agent_id


def _status_of(question: str, failed: list[AgentReport], corpus: Corpus) -> str:
    return next(r.status for r in failed if _question(r, corpus) == question)


def _plain(text: str) -> str:
    """Model text without Markdown headings of its own (they would break the report's outline)."""
    return _HEADING.sub(lambda m: f"**{m.group(1)}**" if m.group(1) else "", text).strip()


def _key(question: str) -> str:
    return " ".join(re.sub(r"[^\w\s]", " ", question.lower()).split())


def _excerpts(reports: Sequence[AgentReport], corpus: Corpus) -> dict[str, str]:
    """The first excerpt gathered from each corpus document, in the order they came."""
    excerpts: dict[str, str] = {}
    for e in (e for report in reports for e in report.evidence):
        if corpus.get(e.source) is not None:
            excerpts.setdefault(e.source, e.excerpt)
    return excerpts


def _cited(lines: Sequence[str], corpus: Corpus) -> list[str]:
    """The documents the report's text cites, each once, in order of first citation."""
    cited: dict[str, None] = {}
    for line in lines:
        # An extract quotes a document, whose own brackets are not citations; an answer keeps
        # only real ones (clean_citations), so all of its count.
        text = _QUOTE.sub("", line) if line.startswith("> “") else line
        for match in _CITATION.finditer(text):
            for doc in (part.strip() for part in re.split(r"[,;]", match.group(2))):
                if corpus.get(doc) is not None:
                    cited.setdefault(doc)
    return list(cited)


def _sources(cited: Sequence[str], excerpts: dict[str, str], corpus: Corpus) -> list[str]:
    """Sources (what the text cites, numbered), the other documents found or read, and what was
    gathered from each source."""
    if not cited and not excerpts:
        return ["## Sources", "", "No documents were gathered.", ""]
    lines = ["## Sources", ""]
    lines += [f"{n}. [{doc}] {_title(doc, corpus)}" for n, doc in enumerate(cited, 1)]
    lines += [] if cited else ["No document is cited."]
    lines += _also_searched([doc for doc in excerpts if doc not in cited], corpus)
    # A document cited but never gathered (a summary may name one) has nothing to quote.
    shown = [doc for doc in cited if doc in excerpts]
    if shown:
        lines += ["", "## Evidence", ""]
        lines += [f"- [{doc}] “{_whole(excerpts[doc])}”" for doc in shown]
    return [*lines, ""]


def _also_searched(others: Sequence[str], corpus: Corpus) -> list[str]:
    """The documents found or read but not cited, named without brackets: they back no text."""
    if not others:
        return []
    lines = ["", "Also searched (found or read, not cited):", ""]
    lines += [f"- `{doc}` {_title(doc, corpus)}" for doc in others[:_ALSO_SEARCHED]]
    if len(others) > _ALSO_SEARCHED:
        lines.append(f"- and {len(others) - _ALSO_SEARCHED} more")
    return lines


def _whole(excerpt: str) -> str:
    """An excerpt on one line, cut (if it must be) after a sentence rather than inside one.

    The toolkit's excerpts are whole sentences and short enough already; this bounds others
    (a journal recorded before them, another corpus tool).
    """
    flat = " ".join(excerpt.split())
    if len(flat) <= _EXCERPT:
        return flat
    ends = [m.end() for m in _SENTENCE_END.finditer(flat, _EXCERPT // 3, _EXCERPT)]
    cut = ends[-1] if ends else flat.rfind(" ", 0, _EXCERPT)
    return flat[: cut if cut > 0 else _EXCERPT] + "…"


def _title(doc_id: str, corpus: Corpus) -> str:
    doc = corpus.get(doc_id)
    return doc.title if doc else doc_id
