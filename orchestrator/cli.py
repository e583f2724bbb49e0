"""The `paor` command line: `paor research` and `paor batch`.

With no endpoint configured (no `--base-url`, `OPENAI_BASE_URL` or `OPENAI_API_KEY`), paor starts
the embedded local model for the duration of the command. Errors a user can fix (a missing folder,
a malformed task line, an unreachable endpoint) end with a one-line message and exit status 2.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import IO

import anyio
import structlog

import agents
from agents import (
    Budget,
    ChatModel,
    ConfigurationError,
    Executor,
    LocalModel,
    OpenAIChatModel,
    PaorError,
)
from agents.toolkits import Corpus, research_tools
from orchestrator._batch import load_tasks, run_batch
from orchestrator._limits import Limits
from orchestrator._progress import Progress
from orchestrator._research import RESEARCH_AGENT, research

__all__ = ["main"]

EXIT_USAGE = 2


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    args = _parser().parse_args(argv)
    try:
        log_file = _configure_logging(args.log_json)
    except OSError as exc:
        print(f"paor: error: cannot open the log file: {exc}", file=sys.stderr)
        return EXIT_USAGE
    try:
        status: int = anyio.run(args.handler, args)
    except KeyboardInterrupt:
        print("paor: interrupted", file=sys.stderr)
        return 130
    except BaseException as exc:
        error = _unwrap(exc)
        if isinstance(error, PaorError):
            print(f"paor: error: {error}", file=sys.stderr)
            return EXIT_USAGE
        raise
    finally:
        if log_file is not None:
            log_file.close()
    return status


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="paor", description="Plan, act, observe, reflect.")
    commands = parser.add_subparsers(dest="command", required=True)

    rs = commands.add_parser("research", help="write a research report on a topic")
    rs.add_argument("topic")
    rs.add_argument("--docs", type=Path, help="corpus folder (default: the Python reference)")
    rs.add_argument("--out", type=Path, default=Path("report.md"))
    rs.add_argument("--max-subtasks", type=_positive(int), default=3)
    rs.set_defaults(handler=_research)

    bt = commands.add_parser("batch", help="run many independent goals concurrently")
    bt.add_argument("tasks", type=Path, help='JSON Lines file of {"id": ..., "goal": ...}')
    bt.add_argument("--out", type=Path, required=True)
    bt.add_argument("--concurrency", type=_positive(int), default=4)
    bt.add_argument("--docs", type=Path, help="corpus folder for the agents' search tools")
    bt.set_defaults(handler=_batch)

    for sub in (rs, bt):
        sub.add_argument("--model", help="model name (default: $PAOR_MODEL or the embedded model)")
        sub.add_argument(
            "--base-url", help="OpenAI-compatible endpoint (default: $OPENAI_BASE_URL)"
        )
        sub.add_argument("--protocol", choices=["auto", "tools", "json"], default="auto")
        sub.add_argument(
            "--deadline", type=_positive(float), help="wall-clock seconds for the whole command"
        )
        sub.add_argument(
            "--max-tokens", type=_positive(int), help="token budget for the whole command"
        )
        sub.add_argument("--max-steps", type=_positive(int), default=6, help="steps per sub-agent")
        sub.add_argument("--log-json", type=Path, help="write the trace as JSON lines here")
    return parser


def _positive(kind: type[int] | type[float]) -> Callable[[str], float]:
    """An argparse type for a number above zero: a bad value is a usage error, not a traceback
    (and a concurrency of 0 would wait forever)."""

    def parse(text: str) -> float:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
        if not value > 0:
            raise argparse.ArgumentTypeError(f"must be above 0, not {text}")
        return value

    return parse


async def _research(args: argparse.Namespace) -> int:
    _check_writable(args.out)
    corpus = Corpus.from_folder(args.docs) if args.docs else Corpus.python_docs()
    limits = Limits(
        max_subtasks=args.max_subtasks,
        deadline_s=args.deadline,
        max_tokens=args.max_tokens,
        agent=agents.Limits(max_steps=args.max_steps),
    )
    progress = Progress(out=sys.stderr, live=sys.stderr.isatty())
    async with _open_model(args) as model:
        report = await research(
            args.topic, model=model, corpus=corpus, limits=limits, on_event=progress.update
        )
    _write_atomically(args.out, report.markdown)
    result = report.result
    print(f"wrote {args.out}: {result.status}" + (f" ({result.reason})" if result.reason else ""))
    return 0


async def _batch(args: argparse.Namespace) -> int:
    tasks = load_tasks(args.tasks)
    _check_writable(args.out)
    corpus = Corpus.from_folder(args.docs) if args.docs else Corpus.python_docs()
    # One ledger for the whole command: its deadline bounds the batch, not each task.
    deadline = None if args.deadline is None else time.time() + args.deadline
    budget = Budget(max_tokens=args.max_tokens, deadline=deadline)
    limits = agents.Limits(max_steps=args.max_steps)
    async with _open_model(args) as model:
        executor = Executor(
            model, research_tools(corpus), instructions=RESEARCH_AGENT, limits=limits
        )
        summary = await run_batch(
            tasks,
            executor=executor,
            out=args.out,
            concurrency=args.concurrency,
            budget=budget,
            on_result=lambda key, report: print(f"{key}: {report.status}", file=sys.stderr),
        )
    print(summary.line())
    return 0


@asynccontextmanager
async def _open_model(args: argparse.Namespace) -> AsyncIterator[ChatModel]:
    """The configured endpoint (checked to be reachable), or the embedded model."""
    base_url = args.base_url or os.environ.get("OPENAI_BASE_URL")
    if base_url or os.environ.get("OPENAI_API_KEY"):
        remote = OpenAIChatModel(args.model, base_url=base_url, protocol=args.protocol)
        try:
            await remote.ping()
            yield remote
        finally:
            await remote.aclose()
        return
    async with LocalModel() as local:
        yield local


def _check_writable(path: Path) -> None:
    """Fail before any work if `path` cannot be written: a run's result must have somewhere to go."""
    if path.is_dir():
        raise ConfigurationError(f"--out {path} is a directory")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigurationError(f"cannot create the folder for --out {path}: {exc}") from None


def _write_atomically(path: Path, text: str) -> None:
    """Write `text` to `path` so that a crash leaves either the old file or the new one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)
    Path(tmp).replace(path)


def _configure_logging(log_json: Path | None) -> IO[str] | None:
    """JSON lines to `log_json` if given; otherwise only warnings, on stderr."""
    if log_json is None:
        structlog.configure(
            wrapper_class=structlog.make_filtering_bound_logger(30),
            logger_factory=structlog.PrintLoggerFactory(sys.stderr),
        )
        return None
    sink = log_json.open("a", encoding="utf-8")
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info,
            structlog.processors.JSONRenderer(),
        ],
        logger_factory=structlog.WriteLoggerFactory(sink),
    )
    return sink


def _unwrap(exc: BaseException) -> BaseException:
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    return exc


if __name__ == "__main__":
    sys.exit(main())
