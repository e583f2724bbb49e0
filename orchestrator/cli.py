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
With `--temporal HOST:PORT` the backend is chosen once (`_on_temporal`): `research` runs on the
`paor worker`s of that server and writes the same report, `batch` spreads its goals over workflows
there and writes the same output file, and `runs`, `show` and `resume` list, inspect and continue
the runs there (`orchestrator.temporal._cli`, imported only then). Everything printed is cleaned
of terminal escapes and masked of credentials (`orchestrator._console`).

`--approve plan|tools|all` makes plans and calls of tools that change something wait for a
person: asked on the terminal, or, with none, the run pauses and the command exits with status 3
(`EXIT_PAUSED`); `approvals` lists what waits, `approve RUN_ID` decides and continues the run
(`orchestrator._cli_approve`).
"""

from __future__ import annotations

import argparse
import errno
import os
import sys
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import anyio

import agents
from agents import (
    ConfigurationError,
    PaorError,
)
from agents.approvals import PAUSE, Decision
from agents.toolkits import Corpus
from memory.journal import JournalError, default_journal_path
from orchestrator._batch import BatchTask, run_batch
from orchestrator._cli_approve import (
    answer_arguments,
    approvals,
    approve_arguments,
    approve_option,
    batch_paused,
    cli_approver,
    decide_only,
    decision_from,
    decision_of,
    report_or_pause,
)
from orchestrator._cli_journal import (
    Offline,
    find,
    maybe_journal,
    open_journal,
    rebuilt_report,
    require_temporal,
    runs,
    show,
)
from orchestrator._cli_mcp import mcp_command, mcp_tools_within
from orchestrator._cli_options import (
    blobs_option,
    count,
    mcp_option,
    mcp_tools,
    model_of,
    model_options,
    otel_option,
    positive,
    request_timeout_option,
    traced,
)
from orchestrator._cli_spec import ResearchSpec
from orchestrator._console import (
    EXIT_INTERRUPTED,
    WriteFailed,
    clean,
    configure_logging,
    fail,
    in_main_thread,
    interrupts,
    reader_gone,
    say,
    write_atomically,
)
from orchestrator._events import Event
from orchestrator._limits import Limits
from orchestrator._progress import Progress
from orchestrator._research import (
    ResearchReport,
    research,
    research_executor,
    research_orchestrator,
)
from orchestrator.batch import check_output, check_tasks, load_tasks, read_tasks

__all__ = ["main"]

EXIT_DRIFT = 1
EXIT_FAILED = 1  # the run ended "failed": nothing usable was gathered, or no plan could be made


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
    graceful = args.handler in (_research, _resume, _approve, _answer) and not _temporal(args)
    status = None
    async with anyio.create_task_group() as tg:
        await tg.start(interrupts, args.stop if graceful else None, tg.cancel_scope)
        status = await _handler(args)
        tg.cancel_scope.cancel()
    if status is None:  # aborted by a signal
        say("paor: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    return status


def _temporal(args: argparse.Namespace) -> bool:
    """Whether the command runs on a Temporal server (`worker` serves one instead)."""
    return bool(getattr(args, "temporal", None)) and args.command != "worker"


async def _handler(args: argparse.Namespace) -> int:
    """The command's exit status: its handler's, or on Temporal `_on_temporal`'s."""
    if _temporal(args):
        return await _on_temporal(args)
    return int(await args.handler(args))


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="paor", description="Plan, act, observe, reflect.")
    commands = parser.add_subparsers(dest="command", required=True)

    rs = commands.add_parser("research", help="write a research report on a topic")
    rs.add_argument("topic")
    rs.add_argument("--docs", type=Path, help="corpus folder (default: the Python reference)")
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
    rs.set_defaults(handler=_research)

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
    bt.add_argument(
        "--temporal",
        metavar="HOST:PORT",
        help="run on the `paor worker`s of this Temporal server, in workflows of up to 100 goals "
        "(--concurrency is then per workflow; the workers hold the model and corpus)",
    )
    bt.set_defaults(handler=_batch)

    _journal_commands(commands)
    _report_command(commands)
    _worker_command(commands)
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
        (listing, runs), (showing, show), (resume, _resume), (replay, _replay),
        (waits, approvals), (decide, _approve), (reply, _answer),
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
    rp.set_defaults(handler=_report, log_json=None)


def _worker_command(commands: Any) -> None:
    """`worker`: serve paor runs from a Temporal task queue (the `temporal` extra)."""
    wk = commands.add_parser("worker", help="run paor runs submitted to a Temporal server")
    wk.add_argument("--temporal", required=True, metavar="HOST:PORT", help="the Temporal server")
    wk.add_argument("--task-queue", default="paor", help="the queue to serve (default: paor)")
    wk.add_argument("--docs", type=Path, help="corpus folder (default: the Python reference)")
    model_options(wk)
    mcp_option(wk)
    otel_option(wk)
    wk.add_argument("--log-json", type=Path, help="write the trace as JSON lines here")
    blobs_option(wk)
    wk.set_defaults(handler=_worker)


async def _research(args: argparse.Namespace) -> int:
    args.topic = _checked_goal(args.topic)
    _check_writable(args.out)
    spec = ResearchSpec.from_args(args)
    corpus = spec.corpus()
    progress = Progress(out=sys.stderr, live=sys.stderr.isatty())
    path = _journal_path(args)
    approver = cli_approver(spec.approve, journaled=path is not None, questions=spec.questions)
    async with (
        maybe_journal(path) as journal,
        mcp_tools_within(spec.mcp, spec.limits.deadline_s) as tools,
        model_of(args) as model,
    ):
        report = await research(
            args.topic,
            model=model,
            corpus=corpus,
            limits=spec.limits,
            on_event=_announcing(progress.update, path),
            journal=journal,
            meta=spec.meta(),
            stop=getattr(args, "stop", None),
            tools=tools,
            approve=spec.approve,
            approver=approver,
            questions=spec.questions,
        )
    return report_or_pause(
        report, lambda written: _write_report(args.out, written, journaled=path is not None)
    )


def _checked_goal(text: str, what: str = "topic") -> str:
    """A goal from the command line, refused when it cannot be sent or says nothing."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise ConfigurationError(f"the {what} is not valid UTF-8 text") from None
    if not clean(text).strip():
        raise ConfigurationError(f"the {what} is empty")
    return text.strip()


def _journal_path(args: argparse.Namespace) -> Path | None:
    """Where `research` and `batch` record their runs: `--journal`, else the default journal,
    unless `--no-journal` (with `--temporal`, Temporal records them instead)."""
    if args.no_journal:
        return None
    return args.journal or default_journal_path()


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


async def _on_temporal(args: argparse.Namespace) -> int:
    """A command given `--temporal HOST:PORT`: the backend is chosen here, once. Runs go to the
    `paor worker`s of `--task-queue` (they hold the model and corpus); reports are rendered with
    our own corpus, and batch results appended per workflow."""
    require_temporal()
    from orchestrator.temporal import _cli as temporal

    if args.command in ("research", "batch") and args.journal is not None:
        raise ConfigurationError(
            "--journal is not available with --temporal (Temporal records the runs)"
        )
    if getattr(args, "html", None) is not None:
        raise ConfigurationError(
            "--html reads a local journal: it is not available with --temporal"
        )
    match args.command:
        case "research":
            args.topic = _checked_goal(args.topic)
            _check_writable(args.out)
            spec = ResearchSpec.from_args(args)
            report = await temporal.research(args, spec.corpus(), spec.limits, spec.meta())
            return report_or_pause(report, lambda written: _write_report(args.out, written))
        case "batch":
            if args.approve is not None:
                raise ConfigurationError("--approve is not available for batch on Temporal yet")
            steps = agents.AgentLimits(max_steps=args.max_steps)
            summary = await temporal.batch(args, _batch_tasks(args), steps)
            say(summary.line())
            return EXIT_FAILED if summary.statuses["failed"] else 0
        case "resume":
            return await temporal.resume(args, _write_report)
        case "runs":
            return await temporal.runs(args)
        case "approvals":
            return await temporal.approvals(args)
        case "approve" | "answer":
            return await temporal.approve(args, partial(decision_from, args), _write_report)
        case _:
            return await temporal.show(args)
    return 0


def _write_report(out: Path, report: ResearchReport, *, journaled: bool = False) -> int:
    """Write the report; the exit status: 0, or `EXIT_FAILED` for a failed run (its report,
    which says why, is written all the same).

    Raises:
        WriteFailed: The report could not be written; for a `journaled` run, the message says
            how to write it again (the run is recorded as ended).
    """
    result = report.result
    try:
        write_atomically(out, clean(report.markdown))
    except WriteFailed as exc:
        if not journaled:
            raise
        hint = f"the run is journaled: `paor report {result.run_id} --out PATH` writes it again"
        raise WriteFailed(out, exc, hint) from None
    say(f"wrote {out}: {result.status}" + (f" ({result.reason})" if result.reason else ""))
    return EXIT_FAILED if result.status == "failed" else 0


async def _report(args: argparse.Namespace) -> int:
    """`paor report RUN_ID`: write a finished research run's report again (see
    `rebuilt_report`); the exit status as the run's own."""
    out, report = await rebuilt_report(args)
    _check_writable(out)
    return _write_report(out, report, journaled=True)


async def _approve(args: argparse.Namespace) -> int:
    """`paor approve RUN_ID`: take the decision (checked first), then go on as `resume` (a
    batch's task goes on when the batch is run again)."""
    spec, approval_id, decision = await decision_of(args)
    if spec is None:
        return await decide_only(args, approval_id, decision)
    return await _resume(args, {approval_id: decision})


async def _answer(args: argparse.Namespace) -> int:
    """`paor answer RUN_ID TEXT`: `approve`, with the answer to a question as the decision."""
    return await _approve(args)


async def _resume(args: argparse.Namespace, decisions: dict[str, Decision] | None = None) -> int:
    async with open_journal(args) as journal:
        info = await find(journal, args.run_id)
        if info.finished:  # before the model is reached: nothing is left to do
            raise JournalError(
                f"run {info.run_id} already ended ({info.status}): "
                f"`paor report {info.run_id}` writes its report again"
            )
        spec = ResearchSpec.from_meta(info.run_id, info.meta).given(args)
        out = Path(spec.out)
        _check_writable(out)
        corpus = spec.corpus()
        progress = Progress(out=sys.stderr, live=sys.stderr.isatty())
        timeout = getattr(args, "request_timeout", None)
        async with (
            mcp_tools_within(spec.mcp, spec.limits.deadline_s) as tools,
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
            )
    return report_or_pause(report, lambda written: _write_report(out, written, journaled=True))


async def _replay(args: argparse.Namespace) -> int:
    async with open_journal(args) as journal:
        info = await find(journal, args.run_id)
        spec = ResearchSpec.from_meta(info.run_id, info.meta)
        async with mcp_tools(spec.mcp) as tools:  # their menus are part of what is replayed
            orch = research_orchestrator(
                Offline(), spec.corpus(), limits=spec.limits, journal=journal, tools=tools,
                approve=spec.approve, questions=spec.questions,
            )  # fmt: skip
            asks = PAUSE if spec.approve or spec.questions else None
            report = await orch.replay(info.run_id, approver=asks)
    for drift in report.drift:
        say(f"drift: {drift.describe()}")
    if report.ok and report.result is not None:
        say(f"replayed {info.run_id}: {report.result.status}, no drift")
        return 0
    say(f"replayed {info.run_id}: drifted from the recording")
    return EXIT_DRIFT


def _batch_tasks(args: argparse.Namespace) -> list[BatchTask]:
    """The task file's goals as a list (Temporal cuts it into chunks), checked before any work."""
    _check_batch(args)
    return load_tasks(args.tasks)


def _check_batch(args: argparse.Namespace) -> None:
    """Before any work: every line of the task file, and that the output is another file."""
    check_tasks(args.tasks)
    check_output(args.tasks, args.out)
    _check_writable(args.out)


async def _batch(args: argparse.Namespace) -> int:
    _check_batch(args)
    corpus = Corpus.from_folder(args.docs) if args.docs else Corpus.python_docs()
    # One set of limits for the whole command: its deadline bounds the batch, not each task.
    limits = Limits(
        deadline_s=args.deadline,
        max_tokens=args.max_tokens,
        agent=agents.AgentLimits(max_steps=args.max_steps),
    )
    if args.approve == "plan":
        raise ConfigurationError("batch goals have no plan to approve: use --approve tools")
    approver = cli_approver(args.approve, journaled=_journal_path(args) is not None)
    async with (
        maybe_journal(_journal_path(args)) as journal,
        mcp_tools_within(args.mcp, limits.deadline_s) as tools,
        model_of(args) as model,
    ):
        executor = research_executor(
            model, corpus, limits=limits.agent, tools=tools, approve=args.approve,
            approver=approver, grounded=not args.ungrounded,
        )  # fmt: skip
        with read_tasks(args.tasks) as tasks:  # a line at a time, as workers come free
            summary = await run_batch(
                tasks,
                executor=executor,
                out=args.out,
                concurrency=args.concurrency,
                limits=limits,
                on_result=lambda key, report: say(f"{key}: {report.status}", file=sys.stderr),
                journal=journal,
            )
    say(summary.line())
    if summary.waiting:
        return batch_paused(summary.waiting, args)
    return EXIT_FAILED if summary.statuses["failed"] else 0


async def _worker(args: argparse.Namespace) -> int:
    """Serve the research tools and the model (as "default") until interrupted."""
    require_temporal()
    from orchestrator.temporal import _cli as temporal

    await temporal.worker(args, lambda: model_of(args))
    return 0


def _check_writable(path: Path) -> None:
    """Fail before any work if `path` cannot be written: a run's result must have somewhere to go."""
    if path.is_dir():
        raise ConfigurationError(f"--out {path} is a directory")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigurationError(f"cannot create the folder for --out {path}: {exc}") from None
    if not os.access(path.parent, os.W_OK):
        read_only = os.statvfs(path.parent).f_flag & os.ST_RDONLY
        code = errno.EROFS if read_only else errno.EACCES
        raise WriteFailed(path, OSError(code, os.strerror(code)))


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
