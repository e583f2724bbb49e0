"""The research evaluation: `paor research` on questions about the Python reference, scored.

    python -m benchmarks.research_eval [--base-url URL | --gguf PATH] [--model NAME]
        [--protocol auto|tools|json|all] [--questions N | --only ID,...] [--deadline S]
        [--out FILE.json] [--reports DIR]

Each question of `research_questions.json` is researched in turn by `orchestrator.research` over
`Corpus.python_docs()`, with the limits `paor research` uses, against one model for the whole run:
the embedded SmolLM2 unless `--base-url` names an endpoint. Each report is scored by
`benchmarks._research_scoring` (relevant citation, key-fact recall, leaks, duplicate headings),
and recorded with the run's status, seconds, model requests and tokens; the models' own final
answers are checked for leaks too, before paor chose what to put in the report.

A share of the questions is held out: written with the rest, then never looked at while prompts
are tuned. The file interleaves them (every third question), so any `--questions N` holds some,
and their figures are reported apart from the tuned ones'. `--protocol all` runs the evaluation
once per decision protocol (`tools`, `json`, `auto`; a GGUF file or an endpoint, since SmolLM2
speaks only JSON) and reports each.
"""

from __future__ import annotations

import argparse
import logging
import os
import platform
import sys
import time
from collections import Counter
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Literal

import anyio
import structlog
from pydantic import Field

import agents
from agents import ChatModel, LocalModel, open_model
from agents.toolkits import Corpus
from benchmarks._report import _table, write_json
from benchmarks._research_scoring import (
    Leak,
    Question,
    Score,
    _Frozen,
    find_leaks,
    library_prompts,
    load_questions,
    research_tool_names,
    score_report,
    select,
)
from orchestrator import Limits, research
from orchestrator._state import RunResult

__all__ = [
    "Outcome",
    "Settings",
    "Totals",
    "evaluate",
    "main",
    "render",
    "render_protocols",
    "results_json",
    "run_for_suite",
    "totals",
    "written_answers",
]

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "research_results.json"
QUICK = 3
_PAOR_ANSWERS = ("Incomplete: stopped early", "Results gathered by the agents:", "Incomplete (")
PROTOCOLS = ("tools", "json", "auto")

Status = Literal["complete", "incomplete", "failed", "error"]


class Outcome(_Frozen):
    """One question's run and its score (no score if the run raised); `raw_leaks` are those in
    the final answers the models wrote, before paor chose what to put in the report."""

    id: str
    question: str
    expected: tuple[str, ...]
    held_out: bool = False
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
            agent=agents.AgentLimits(max_steps=self.max_steps),
        )


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
    base = {
        "id": question.id,
        "question": question.question,
        "expected": question.expected,
        "held_out": question.held_out,
    }
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
            for leak in find_leaks(answer, library_prompts(), research_tool_names())
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
    command...), the machine, the settings, each question's outcome, and the totals, over every
    question and split into the tuned and the held-out ones."""
    split = {
        "tuned": [o for o in outcomes if not o.held_out],
        "held_out": [o for o in outcomes if o.held_out],
    }
    return {
        **about,
        "finished": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count()},
        "settings": settings.model_dump(),
        "questions": [o.model_dump(mode="json") for o in outcomes],
        "totals": totals(outcomes).model_dump(mode="json"),
        "split": {name: totals(part).model_dump(mode="json") for name, part in split.items()},
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
            "",
            _table(list(_SPLIT_HEADER), _split_rows(results)),
        ]
    )


_SPLIT_HEADER = (
    "protocol", "questions", "cites expected", "mean recall", "leaks", "complete", "s",
)  # fmt: skip


def _split_rows(results: Mapping[str, Any]) -> list[list[str]]:
    """The totals of one evaluation over every question, the tuned and the held-out ones."""
    parts = [("all", results["totals"]), *results.get("split", {}).items()]
    return [
        [
            results["protocol"] if name == "all" else f"  {name.replace('_', '-')}",
            str(t["questions"]),
            f"{t['relevant_citation_rate']:.0%}",
            f"{t['mean_recall']:.0%}",
            str(t["leaks"]),
            str(t["statuses"].get("complete", 0)),
            f"{t['seconds']:.0f}",
        ]
        for name, t in parts
        if t["questions"]
    ]


def render_protocols(runs: Sequence[Mapping[str, Any]]) -> str:
    """Each protocol's evaluation, then one table comparing them (tuned and held out apart)."""
    compared = [row for results in runs for row in _split_rows(results)]
    return "\n\n".join([*map(render, runs), "By protocol:", _table(list(_SPLIT_HEADER), compared)])


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
        about = {"model": local.name, "base_url": None, "protocol": served.protocol}
        yield local, {**about, "gguf": str(args.gguf) if args.gguf else None}


async def _evaluate(
    args: argparse.Namespace, questions: Sequence[Question], settings: Settings
) -> dict[str, Any]:
    if args.protocol == "all":
        runs = []
        for protocol in PROTOCOLS:
            print(f"protocol {protocol}:", flush=True)
            one = argparse.Namespace(**{**vars(args), "protocol": protocol})
            runs.append(await _evaluate(one, questions, settings))
        return {"command": args.command, "runs": runs}
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
    if not LocalModel.available():
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
    parser.add_argument(
        "--protocol",
        choices=["auto", "tools", "json", "all"],
        default="auto",
        help="the decision protocol, or all three in turn",
    )
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
    print(render_protocols(results["runs"]) if "runs" in results else render(results))
    write_json(results, args.out)
    print(f"results: {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
