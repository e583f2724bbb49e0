"""The Markdown research report: written by paor from a run, not left to the model.

A title, an Incomplete banner naming the questions left open, the summary, one section per
sub-question (repeated questions merged, so no heading appears twice), what was not answered, the
sources and one evidence excerpt per source. Model-written text is cleaned on the way in:
citations of documents the corpus lacks are removed, headings inside an answer are demoted, and an
answer that is unusable (a placeholder, a copy of the prompts, a tool call written as text, an
executor's digest) is replaced by the passages that best answer the question, quoted, cited and
marked as extracted.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from agents import AgentReport
from agents._answers import Parrot, unusable_answer
from agents.toolkits import Corpus
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
_EXCERPT = 280
_QUOTED = 2
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


def write_report(topic: str, result: RunResult, corpus: Corpus, *, told: Sequence[str] = ()) -> str:
    """The Markdown report for a finished research run.

    Args:
        topic: The title.
        result: The run.
        corpus: The documents citations must name.
        told: What the models were told (prompts, tool descriptions): an answer copying it is
            not used.
    """
    # Stricter than an agent's check: six words of a prompt in a report a person reads is a leak.
    parrot = Parrot(told, words=REPORT_SHINGLE_WORDS)
    sections = _sections(result, corpus, parrot, topic)
    lines = [f"# {_plain(clean_citations(topic, corpus)) or _plain(topic)}", ""]
    if not result.complete:
        lines += [f"> **Incomplete.** {clean_citations(_banner(result), corpus)}", ""]
    lines += [f"> Note: {clean_citations(note, corpus)}" for note in result.notes]
    if result.notes:
        lines.append("")
    lines += ["## Summary", "", _summary(result, corpus, parrot, sections, topic), ""]
    for heading, body in sections.items():
        lines += [f"## {heading}", "", *body]
    failed = [r for r in result.reports if r.status not in ("done", "partial")]
    answered = {_key(_question(r, corpus)) for r in result.reports if r not in failed}
    asked = dict.fromkeys(_question(r, corpus) for r in failed)
    unanswered = [q for q in asked if _key(q) not in answered]
    if unanswered:
        lines += ["## Not answered", ""]
        lines += [f"- {q} ({_status_of(q, failed, corpus)})" for q in unanswered] + [""]
    lines += _sources(result, corpus)
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
    result: RunResult, corpus: Corpus, parrot: Parrot, topic: str
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
        sections.setdefault(heading, []).extend(_section(report, corpus, parrot))
    return {heading: body for heading, body in sections.items() if body}


def _section(report: AgentReport, corpus: Corpus, parrot: Parrot) -> list[str]:
    answer = _usable(report.answer, parrot)
    body = _plain(clean_citations(answer, corpus)) if answer else ""
    lines = [body or _extract(report, corpus), ""]
    if report.status != "done":
        reason = f" ({report.stop_reason})" if report.stop_reason else ""
        lines += [f"*Status: {report.status}{reason}*", ""]
    if body and not _CITATION.search(body):
        gathered = list(dict.fromkeys(e.source for e in report.evidence if corpus.get(e.source)))
        cited = ", ".join(f"[{g}]" for g in gathered[:6])
        lines += [f"Evidence: {cited}" if cited else "Evidence: none found.", ""]
    return lines


def _usable(answer: str, parrot: Parrot) -> str:
    """The answer, or "" when it is not the model's own usable text."""
    if answer.startswith(_DIGEST) or answer.startswith(_FALLBACK):
        return ""
    return "" if unusable_answer(answer, parrot=parrot) else answer


def _extract(report: AgentReport, corpus: Corpus) -> str:
    """The passages that best answer the report's question among the documents it gathered."""
    gathered = {e.source for e in report.evidence if corpus.get(e.source)}
    if not gathered:
        return "(no answer: nothing relevant was found)"
    question = report.task.splitlines()[0]
    hits = [h for h in corpus.search(question, top_k=20) if h.doc in gathered][:_QUOTED]
    quotes = [f"> “{_flat(h.text)}” [{h.doc}]" for h in hits]
    if not quotes:
        excerpts = {e.source: e.excerpt for e in report.evidence if e.source in gathered}
        quotes = [f"> “{_flat(text)}” [{doc}]" for doc, text in list(excerpts.items())[:_QUOTED]]
    return "*Extracted: the passages that best match the question.*\n\n" + "\n>\n".join(quotes)


def _summary(
    result: RunResult, corpus: Corpus, parrot: Parrot, sections: dict[str, list[str]], topic: str
) -> str:
    """The synthesised summary, or, when it is unusable, one line per answered question."""
    answer = _usable(result.answer, parrot)
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


def _flat(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= _EXCERPT else flat[:_EXCERPT] + "…"


def _sources(result: RunResult, corpus: Corpus) -> list[str]:
    excerpts: dict[str, str] = {}
    for report in result.reports:
        for e in report.evidence:
            if corpus.get(e.source) is not None:
                excerpts.setdefault(e.source, e.excerpt)
    if not excerpts:
        return ["## Sources", "", "No documents were gathered.", ""]
    lines = ["## Sources", ""]
    for number, doc_id in enumerate(excerpts, 1):
        doc = corpus.get(doc_id)
        lines.append(f"{number}. [{doc_id}] {doc.title if doc else doc_id}")
    lines += ["", "## Evidence", ""]
    for doc_id, excerpt in excerpts.items():
        text = " ".join(excerpt.split())[:_EXCERPT]
        lines.append(f"- [{doc_id}] “{text}”")
    return [*lines, ""]
