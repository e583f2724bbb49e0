"""The command line's research runs: `research` starts one, `resume` continues a crashed or
paused one from the journal (`approve` and `answer` first take the decision it waits for),
`replay` runs a recorded one again offline and reports drift, and `report` writes a finished
one's report again. `write_report` writes a report and gives the command's exit status.

A journaled run is stored with its `ResearchSpec`, so that `resume` rebuilds the same corpus,
tools and limits; `--docs`, `--out`, `--model` and the like given to `resume` override them.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

from agents import ConfigurationError
from agents.approvals import PAUSE, Decision
from memory.journal import JournalError
from orchestrator._events import Event
from orchestrator._files import WriteFailed, write_atomically
from orchestrator._research import ResearchReport, research, research_orchestrator
from orchestrator.cli._approve import cli_approver, decide_only, decision_of, report_or_pause
from orchestrator.cli._console import clean, say
from orchestrator.cli._journal import Offline, find, maybe_journal, open_journal, rebuilt_report
from orchestrator.cli._mcp import left_of
from orchestrator.cli._options import mcp_tools, model_of
from orchestrator.cli._output import (
    EXIT_FAILED,
    check_writable,
    journal_path,
    schema_of,
    write_output,
)
from orchestrator.cli._progress import Progress
from orchestrator.cli._spec import ResearchSpec

__all__ = [
    "EXIT_DRIFT",
    "answer_run",
    "approve_run",
    "checked_goal",
    "replay_run",
    "report_again",
    "resume_run",
    "run_research",
    "write_report",
]

EXIT_DRIFT = 1


async def run_research(args: argparse.Namespace) -> int:
    """`paor research TOPIC`: run the research and write its report (or say what it waits for)."""
    started = time.monotonic()
    args.topic = checked_goal(args.topic)
    check_writable(args.out)
    spec = ResearchSpec.from_args(args)
    corpus = spec.corpus()
    output = schema_of(Path(spec.schema_file)) if spec.schema_file else None
    progress = Progress(out=sys.stderr, live=sys.stderr.isatty())
    path = journal_path(args)
    approver = cli_approver(spec.approve, journaled=path is not None, questions=spec.questions)
    async with (
        maybe_journal(path) as journal,
        mcp_tools(spec.mcp, spec.limits.deadline_s) as tools,
        model_of(args) as model,
    ):
        report = await research(
            args.topic,
            model=model,
            corpus=corpus,
            limits=left_of(spec.limits, started),
            on_event=_announcing(progress.update, path),
            journal=journal,
            meta=spec.meta(),
            stop=getattr(args, "stop", None),
            tools=tools,
            approve=spec.approve,
            approver=approver,
            questions=spec.questions,
            output_type=output,
        )
    return report_or_pause(
        report, lambda written: write_report(args.out, written, journaled=path is not None)
    )


def checked_goal(text: str, what: str = "topic") -> str:
    """A goal from the command line, refused when it cannot be sent or says nothing."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise ConfigurationError(f"the {what} is not valid UTF-8 text") from None
    if not clean(text).strip():
        raise ConfigurationError(f"the {what} is empty")
    return text.strip()


def _announcing(on_event: Callable[[Event], None], path: Path | None) -> Callable[[Event], None]:
    """`on_event`, after saying once which run is recorded where (to resume it after a crash)."""
    told = False

    def update(event: Event) -> None:
        nonlocal told
        if path is not None and not told:
            told = True
            say(f"paor: run {event.run_id} is journaled in {path}", file=sys.stderr)
        on_event(event)

    return update


def write_report(out: Path, report: ResearchReport, *, journaled: bool = False) -> int:
    """Write the report; the exit status: 0, or `EXIT_FAILED` for a failed run (its report,
    which says why, is written all the same).

    Raises:
        WriteFailed: The report could not be written; for a `journaled` run, the message says
            how to write it again (the run is recorded as ended).
    """
    result = report.result
    try:
        write_atomically(out, clean(report.markdown))
        if result.output is not None:  # a typed run's object, beside its report
            say(f"wrote {write_output(out, result.output)}")
    except WriteFailed as exc:
        if not journaled:
            raise
        hint = f"the run is journaled: `paor report {result.run_id} --out PATH` writes it again"
        raise WriteFailed(out, exc, hint) from None
    say(f"wrote {out}: {result.status}" + (f" ({result.reason})" if result.reason else ""))
    return EXIT_FAILED if result.status == "failed" else 0


async def report_again(args: argparse.Namespace) -> int:
    """`paor report RUN_ID`: write a finished research run's report again (see
    `rebuilt_report`); the exit status as the run's own."""
    out, report = await rebuilt_report(args)
    check_writable(out)
    return write_report(out, report, journaled=True)


async def approve_run(args: argparse.Namespace) -> int:
    """`paor approve RUN_ID`: take the decision (checked first), then go on as `resume` (a
    batch's task goes on when the batch is run again)."""
    spec, approval_id, decision = await decision_of(args)
    if spec is None:
        return await decide_only(args, approval_id, decision)
    return await resume_run(args, {approval_id: decision})


async def answer_run(args: argparse.Namespace) -> int:
    """`paor answer RUN_ID TEXT`: `approve`, with the answer to a question as the decision."""
    return await approve_run(args)


async def resume_run(args: argparse.Namespace, decisions: dict[str, Decision] | None = None) -> int:
    """`paor resume RUN_ID`: continue a journaled research run that has not ended, with its
    recorded spec (and `decisions` on what it waits for), and write its report."""
    async with open_journal(args) as journal:
        info = await find(journal, args.run_id)
        if info.finished:  # before the model is reached: nothing is left to do
            raise JournalError(
                f"run {info.run_id} already ended ({info.status}): "
                f"`paor report {info.run_id}` writes its report again"
            )
        spec = ResearchSpec.from_meta(info.run_id, info.meta).given(args)
        out = Path(spec.out)
        check_writable(out)
        corpus = spec.corpus()
        progress = Progress(out=sys.stderr, live=sys.stderr.isatty())
        timeout = getattr(args, "request_timeout", None)
        async with (
            mcp_tools(spec.mcp, spec.limits.deadline_s) as tools,
            model_of(spec, request_timeout=timeout) as model,
        ):
            report = await research(
                info.goal,
                model=model,
                corpus=corpus,
                limits=spec.limits,
                on_event=progress.update,
                journal=journal,
                resume=info.run_id,
                stop=args.stop,
                tools=tools,
                approve=spec.approve,
                approver=cli_approver(spec.approve, journaled=True, questions=spec.questions),
                decisions=decisions,
                questions=spec.questions,
                output_type=schema_of(Path(spec.schema_file)) if spec.schema_file else None,
            )
    return report_or_pause(report, lambda written: write_report(out, written, journaled=True))


async def replay_run(args: argparse.Namespace) -> int:
    """`paor replay RUN_ID`: run a recorded run again against its recording, with no model;
    `EXIT_DRIFT` if it did something else."""
    async with open_journal(args) as journal:
        info = await find(journal, args.run_id)
        spec = ResearchSpec.from_meta(info.run_id, info.meta)
        async with mcp_tools(spec.mcp) as tools:  # their menus are part of what is replayed
            orch = research_orchestrator(
                Offline(), spec.corpus(), limits=spec.limits, journal=journal, tools=tools,
                approve=spec.approve, questions=spec.questions,
            )  # fmt: skip
            asks = PAUSE if spec.approve or spec.questions else None
            output = schema_of(Path(spec.schema_file)) if spec.schema_file else None
            report = await orch.replay(info.run_id, approver=asks, output_type=output)
    for drift in report.drift:
        say(f"drift: {drift.describe()}")
    if report.ok and report.result is not None:
        say(f"replayed {info.run_id}: {report.result.status}, no drift")
        return 0
    say(f"replayed {info.run_id}: drifted from the recording")
    return EXIT_DRIFT
