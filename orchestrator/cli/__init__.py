"""The `paor` command line: `research` and `batch`, the journal's `runs`, `show`, `resume`,
`replay` and `report` (writes a finished run's report again), and `worker` (serves runs from a
Temporal server).

With no endpoint configured (no `--base-url`, `OPENAI_BASE_URL` or `OPENAI_API_KEY`), paor starts
the embedded local model for the duration of the command. Errors a user can fix (a missing folder,
a malformed task line, an unreachable endpoint or one that answers something other than the API,
an unknown or locked run, an address `paor mcp --http` cannot listen on) end with a one-line
message and exit status 2; so does a file of the user's that cannot be written (the report, the
log, a batch output, a page: a full disk), named with its errno. A run that ends "failed" (no
plan could be made, nothing usable was gathered) writes its report all the same and exits with
status 1; so does a batch any of whose goals failed, and a replay that drifts.

The exit statuses are those and no others: 0 done, 1 failed, 2 a user's error, 3 paused,
130 interrupted (`main`). A library's `sys.exit` inside a command (uvicorn's, when its app cannot
start) is one line and status 1, not its own status; a bug is a traceback and status 1, as
Python exits; a reader of stdout that left early (`paor runs | head`) ends the command with 0.

`research` and `batch` journal their runs (`$PAOR_HOME/journal.db`, or `--journal PATH`; not with
`--no-journal`): a research run is stored with its `ResearchSpec`, so that `paor resume RUN_ID` can
rebuild the same corpus, tools and limits (the API key comes from the environment again). The
first Ctrl-C or SIGTERM stops a research run and writes the report from what exists; the second
of either aborts it, as the first aborts any other command (status 130).
With `--temporal HOST:PORT` the backend is chosen once (`_temporal.on_temporal`): `research` runs on the
`paor worker`s of that server and writes the same report, `batch` spreads its goals over workflows
there and writes the same output file, and `runs`, `show` and `resume` list, inspect and continue
the runs there (`orchestrator.temporal._cli`, imported only then). Everything printed is cleaned
of terminal escapes and masked of credentials (`orchestrator.cli._console`).

`--approve plan|tools|all` makes plans and calls of tools that change something wait for a
person: asked on the terminal, or, with none, the run pauses and the command exits with status 3
(`EXIT_PAUSED`); `approvals` lists what waits, `approve RUN_ID` decides and continues the run
(`orchestrator.cli._approve`).

This module parses the command line, runs the command and turns its outcome into the exit
status; the commands live beside it: the research runs (`research`, `resume`, `replay`, `report`,
`approve`, `answer`) in `orchestrator.cli._research`, `batch` in `orchestrator.cli._batch`, `runs`
and `show` in `orchestrator.cli._journal`, `mcp` in `orchestrator.cli._mcp`.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anyio

from agents import PaorError
from orchestrator._files import WriteFailed
from orchestrator.cli._approve import (
    answer_arguments,
    approvals,
    approve_arguments,
    approve_option,
)
from orchestrator.cli._batch import batch
from orchestrator.cli._console import (
    EXIT_INTERRUPTED,
    configure_logging,
    fail,
    in_main_thread,
    interrupts,
    reader_gone,
    say,
)
from orchestrator.cli._journal import runs, show
from orchestrator.cli._mcp import mcp_command
from orchestrator.cli._options import (
    blobs_option,
    count,
    mcp_option,
    model_options,
    otel_option,
    positive,
    request_timeout_option,
    traced,
)
from orchestrator.cli._output import EXIT_FAILED
from orchestrator.cli._research import (
    answer_run,
    approve_run,
    replay_run,
    report_again,
    resume_run,
    run_research,
)
from orchestrator.cli._temporal import on_temporal, on_temporal_server, worker_command

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    args = _parser().parse_args(argv)
    try:
        logs = configure_logging(args.log_json)
    except WriteFailed as exc:
        return fail(f"cannot open the log file: {exc.filename}: [Errno {exc.errno}] {exc.strerror}")
    try:
        status = _outcome(args)
    finally:
        logs.close()
    if logs.error is not None:  # the run went on; its log did not
        return fail(str(logs.error))
    return status


def _outcome(args: argparse.Namespace) -> int:
    """The command's exit status; what a user can fix is one line (a file that cannot be
    written among them), not a traceback."""
    try:
        with traced(args):
            status: int = anyio.run(_command, args)
    except BaseException as exc:
        error = _unwrap(exc)
        if isinstance(error, KeyboardInterrupt):
            say("paor: interrupted", file=sys.stderr)
            return EXIT_INTERRUPTED
        if isinstance(error, BrokenPipeError):
            return reader_gone()
        if isinstance(error, PaorError | WriteFailed):
            return fail(str(error))
        if isinstance(error, SystemExit):
            return _exited(error)
        raise
    return status


def _exited(exc: SystemExit) -> int:
    """A `sys.exit` inside the command, a library's: its status means nothing in paor's table
    (uvicorn's 3, when its app cannot start, would read as "paused"), so it is `EXIT_FAILED`."""
    if exc.code is None or exc.code == 0:
        return 0
    say(
        f"paor: error: the command was ended by a library (sys.exit({exc.code!r}))", file=sys.stderr
    )
    return EXIT_FAILED


async def _command(args: argparse.Namespace) -> int:
    """The command's handler, under `interrupts`: `research`, `resume`, `approve` and `answer`
    stop gracefully on the first Ctrl-C or SIGTERM and abort on the second; the others abort on
    the first. Either way the blocks holding child processes (MCP servers, the local model) are
    left, which stops them. `paor mcp --http` is left to uvicorn, which stops on both itself (a
    cancel beside its own shutdown would cut its lifespan short)."""
    args.stop = anyio.Event()
    # No signal handlers outside the main thread (tests call `main` from worker threads).
    if not in_main_thread() or (args.command == "mcp" and args.http):
        return await _handler(args)
    graceful = args.handler in (
        run_research,
        resume_run,
        approve_run,
        answer_run,
    ) and not on_temporal_server(args)
    status = None
    async with anyio.create_task_group() as tg:
        await tg.start(interrupts, args.stop if graceful else None, tg.cancel_scope)
        status = await _handler(args)
        tg.cancel_scope.cancel()
    if status is None:  # aborted by a signal
        say("paor: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    return status


async def _handler(args: argparse.Namespace) -> int:
    """The command's exit status: its handler's, or on Temporal `on_temporal`'s."""
    if on_temporal_server(args):
        return await on_temporal(args)
    return int(await args.handler(args))


_SCHEMA_HELP = "a JSON Schema file: each answer is also written as an object of it, validated"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="paor", description="Plan, act, observe, reflect.")
    commands = parser.add_subparsers(dest="command", required=True)

    rs = commands.add_parser("research", help="write a research report on a topic")
    rs.add_argument("topic")
    rs.add_argument("--docs", type=Path, help="corpus folder (default: the Python reference)")
    rs.add_argument("--schema", type=Path, metavar="FILE", help=_SCHEMA_HELP + " (report.json)")
    rs.add_argument("--out", type=Path, default=Path("report.md"))
    rs.add_argument("--max-subtasks", type=positive(int), default=3)
    rs.add_argument(
        "--questions",
        type=count,
        default=0,
        metavar="N",
        help="let the planner and the agents ask you up to N clarifying questions (asked on the "
        'terminal, else the run pauses, exit status 3, until `paor answer RUN_ID "..."`)',
    )
    rs.add_argument(
        "--temporal",
        metavar="HOST:PORT",
        help="run on the `paor worker`s of this Temporal server (they hold the model and corpus: "
        "pass the same --docs)",
    )
    rs.set_defaults(handler=run_research)

    bt = commands.add_parser("batch", help="run many independent goals concurrently")
    bt.add_argument("tasks", type=Path, help='JSON Lines file of {"id": ..., "goal": ...}')
    bt.add_argument("--out", type=Path, required=True)
    bt.add_argument("--concurrency", type=positive(int), default=4)
    bt.add_argument("--docs", type=Path, help="corpus folder for the agents' search tools")
    bt.add_argument(
        "--ungrounded",
        action="store_true",
        help="let agents answer without searching or citing the corpus (by default each starts "
        "from a search for its goal, and an answer that cites nothing it found is not done)",
    )
    bt.add_argument("--schema", type=Path, metavar="FILE", help=_SCHEMA_HELP + " (`output`)")
    bt.add_argument(
        "--temporal",
        metavar="HOST:PORT",
        help="run on the `paor worker`s of this Temporal server, in workflows of up to 100 goals "
        "(--concurrency is then per workflow; the workers hold the model and corpus)",
    )
    bt.set_defaults(handler=batch)

    _journal_commands(commands)
    _report_command(commands)
    worker_command(commands)
    mcp_command(commands)

    for sub in (rs, bt):
        sub.add_argument("--task-queue", default="paor", help="the workers' queue (default: paor)")
        blobs_option(sub)
        sub.add_argument(
            "--journal",
            type=Path,
            help="record the runs in this journal, for `paor resume`, `paor replay` and a re-run "
            "of a batch (default: $PAOR_HOME/journal.db)",
        )
        sub.add_argument(
            "--no-journal", action="store_true", help="record nothing (no resume after a crash)"
        )
        model_options(sub)
        mcp_option(sub)
        otel_option(sub)
        approve_option(sub)
        sub.add_argument(
            "--deadline", type=positive(float), help="wall-clock seconds for the whole command"
        )
        sub.add_argument(
            "--max-tokens", type=positive(int), help="token budget for the whole command"
        )
        sub.add_argument(
            "--max-cost",
            type=positive(float),
            metavar="DOLLARS",
            help="dollar budget for the whole command, priced by the public price table "
            "(a model it has no price for is refused)",
        )
        sub.add_argument("--max-steps", type=positive(int), default=6, help="steps per sub-agent")
        sub.add_argument("--log-json", type=Path, help="write the trace as JSON lines here")
    return parser


def _journal_commands(commands: Any) -> None:
    """`runs`, `show`, `resume` and `replay`: they read `--journal` ($PAOR_HOME/journal.db)."""
    listing = commands.add_parser("runs", help="list the journal's runs and their status")
    showing = commands.add_parser("show", help="print a run's plan versions and step trace")
    resume = commands.add_parser("resume", help="continue a crashed or paused `paor research` run")
    replay = commands.add_parser("replay", help="re-run a recorded run offline; report drift")
    waits = commands.add_parser("approvals", help="list what paused runs wait for")
    decide = commands.add_parser(
        "approve", help="decide what a paused `paor research` run waits for, and continue it"
    )
    reply = commands.add_parser(
        "answer", help="answer the question a paused `paor research` run asks, and continue it"
    )
    handlers = (
        (listing, runs), (showing, show), (resume, resume_run), (replay, replay_run),
        (waits, approvals), (decide, approve_run), (reply, answer_run),
    )  # fmt: skip
    for sub, handler in handlers:
        if sub not in (listing, waits):
            sub.add_argument("run_id")
        sub.add_argument(
            "--journal", type=Path, help="the journal (default: $PAOR_HOME/journal.db)"
        )
        sub.set_defaults(handler=handler, log_json=None)
    listing.add_argument(
        "--prune",
        action="store_true",
        help="delete finished runs and shrink the journal (default: keep the newest 100)",
    )
    listing.add_argument("--keep", type=int, metavar="N", help="with --prune: keep the newest N")
    listing.add_argument(
        "--older-than", type=positive(float), metavar="DAYS", help="with --prune: by age"
    )
    showing.add_argument("--html", type=Path, metavar="FILE", help="write the run as an HTML page")
    for sub, what in ((listing, "list its recent paor runs"), (showing, "show a run there")):
        sub.add_argument("--temporal", metavar="HOST:PORT", help=f"the Temporal server: {what}")
    waits.add_argument("--temporal", metavar="HOST:PORT", help="the Temporal server: list there")
    for deciding in (decide, reply):
        deciding.add_argument(
            "--temporal",
            metavar="HOST:PORT",
            help="the Temporal server: decide there (the run waits in its workflow), then follow it",
        )
    resume.add_argument(
        "--temporal",
        metavar="HOST:PORT",
        help="the Temporal server: follow the run there to its end, restarting it from its last "
        "completed step if it was terminated, timed out or failed",
    )
    for sub in (listing, showing, resume, waits, decide, reply):
        blobs_option(sub)
    approve_arguments(decide)
    answer_arguments(reply)
    for going_on in (resume, decide, reply):
        going_on.add_argument("--docs", type=Path, help="corpus folder (default: as submitted)")
        going_on.add_argument(
            "--out", type=Path, help="where the report goes (default: as recorded)"
        )
        going_on.add_argument("--model", help="model name (default: as recorded)")
        going_on.add_argument("--base-url", help="endpoint (default: as recorded)")
        going_on.add_argument("--protocol", choices=["auto", "tools", "json"])
        request_timeout_option(going_on)
        going_on.add_argument("--log-json", type=Path, help="write the trace as JSON lines here")
        otel_option(going_on)


def _report_command(commands: Any) -> None:
    """`report`: write a finished research run's report again, from the journal."""
    rp = commands.add_parser(
        "report", help="write a finished `paor research` run's report again, from the journal"
    )
    rp.add_argument("run_id")
    rp.add_argument("--out", type=Path, help="where the report goes (default: as recorded)")
    rp.add_argument("--journal", type=Path, help="the journal (default: $PAOR_HOME/journal.db)")
    rp.set_defaults(handler=report_again, log_json=None)


def _unwrap(exc: BaseException) -> BaseException:
    """The error to report: the exception inside nested groups; of several at once (concurrent
    tasks that met trouble together), the first when they are all a user's to fix, so that
    error is still one line. A group holding anything else is a bug, and stays whole."""
    leaves = _leaves(exc)
    if len(leaves) == 1 or all(isinstance(e, PaorError) for e in leaves):
        return leaves[0]
    return exc


def _leaves(exc: BaseException) -> list[BaseException]:
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for inner in exc.exceptions for leaf in _leaves(inner)]
    return [exc]


def entry() -> None:
    """The `paor` command: `main`, then exit.

    A process that used Temporal skips the interpreter's finalization: the SDK's Rust threads can
    abort it (SIGABRT, "PyGILState_Release ... finalizing": temporalio sdk-python issue 300), which
    would turn a finished command's exit status into a crash. Output is flushed first.
    """
    status = main()
    if "temporalio.bridge" in sys.modules:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(status)
    sys.exit(status)


if __name__ == "__main__":
    entry()
