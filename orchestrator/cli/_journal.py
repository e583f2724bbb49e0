"""The command line's journal side: `runs` (and `runs --prune`), `show`, the report `report`
writes again, and the journals the other commands open (`--journal`, by default
`$PAOR_HOME/journal.db`).

The commands that only read a journal (`runs`, `show`, `replay`, `approvals`, `report`) open it
read-only: one on a read-only mount is read, never written, and never called damaged.
"""

from __future__ import annotations

import argparse
import importlib.util
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from pydantic import ValidationError

from agents import ConfigurationError
from agents.errors import ModelRequestError
from agents.models import ModelRequest, ModelResponse
from memory import Journal
from memory.journal import JournalError, RunInfo
from orchestrator._files import write_atomically
from orchestrator._research import ResearchReport, render_report
from orchestrator._state import RunResult
from orchestrator.cli._console import say
from orchestrator.cli._html import render_html
from orchestrator.cli._inspect import render_run, render_runs
from orchestrator.cli._options import mcp_tools
from orchestrator.cli._spec import ResearchSpec

__all__ = [
    "Offline",
    "find",
    "maybe_journal",
    "open_journal",
    "prune",
    "rebuilt_report",
    "require_temporal",
    "runs",
    "show",
]

_READING = frozenset({"runs", "show", "replay", "approvals", "report"})
"""The commands that only read the journal: they open it read-only."""


async def runs(args: argparse.Namespace) -> int:
    """`paor runs`: list the journal's runs (or, with `--prune`, delete the old finished ones)."""
    path = args.journal or Journal.default_path()
    if not path.exists():
        say(f"no runs (no journal at {path})")
        return 0
    async with Journal(path, readonly=not args.prune) as journal:
        if args.prune:
            return await prune(journal, args)
        if args.keep is not None or args.older_than is not None:
            raise ConfigurationError("--keep and --older-than go with --prune")
        say(render_runs(await journal.runs()))
    return 0


async def prune(journal: Journal, args: argparse.Namespace) -> int:
    """`runs --prune`: finished runs beyond the newest `--keep` (100) or `--older-than` go."""
    if args.keep is not None and args.keep < 0:
        raise ConfigurationError(f"--keep must be 0 or more, not {args.keep}")
    keep = 100 if args.keep is None and args.older_than is None else args.keep
    older_than_s = None if args.older_than is None else args.older_than * 86400
    removed = await journal.prune(older_than_s=older_than_s, keep=keep)
    say(f"pruned {removed} finished runs from {journal.path}")
    return 0


async def show(args: argparse.Namespace) -> int:
    """`paor show RUN_ID`: a run's plan versions and step trace (with `--html FILE`: the page
    that draws them, written atomically)."""
    async with open_journal(args) as journal:
        info = await find(journal, args.run_id)
        records = await journal.load(info.run_id)
    if args.html is None:
        say(render_run(info, records))
        return 0
    write_atomically(args.html, render_html(info, records))
    say(f"wrote {args.html}")
    return 0


async def find(journal: Journal, run_id: str) -> RunInfo:
    """The run `run_id` of `journal`; a one-line `JournalError` if there is none."""
    info = await journal.run(run_id)
    if info is None:
        raise JournalError(f"no run {run_id} in the journal {journal.path}")
    return info


@asynccontextmanager
async def open_journal(args: argparse.Namespace) -> AsyncIterator[Journal]:
    """The journal named by `--journal` (default $PAOR_HOME/journal.db), which must exist;
    read-only for a command that only reads it."""
    path = args.journal or Journal.default_path()
    if not path.exists():
        raise JournalError(f"no journal at {path}")
    async with Journal(path, readonly=getattr(args, "command", None) in _READING) as journal:
        yield journal


async def rebuilt_report(args: argparse.Namespace) -> tuple[Path, ResearchReport]:
    """`paor report RUN_ID`: where the finished research run's report goes (`--out`, else where
    it was recorded to go) and the report, rebuilt from the journal: its recorded result over the
    corpus and tools of its `ResearchSpec`. No model is reached.

    Raises:
        JournalError: The run is unknown, has not ended, or its result cannot be read.
        ConfigurationError: The run was not started by `paor research`.
    """
    async with open_journal(args) as journal:
        info = await find(journal, args.run_id)
    result = _ended_result(info)
    spec = ResearchSpec.from_meta(info.run_id, info.meta)
    async with mcp_tools(spec.mcp) as tools:  # their descriptions are kept out of the report
        markdown = render_report(result.goal, result, spec.corpus(), tools=tools)
    out = args.out or Path(spec.out)
    return out, ResearchReport(topic=result.goal, markdown=markdown, result=result)


def _ended_result(info: RunInfo) -> RunResult:
    """The result a finished run recorded."""
    if not info.finished:
        raise JournalError(
            f"run {info.run_id} has not ended ({info.status}): `paor resume {info.run_id}` "
            "continues it, and writes its report"
        )
    try:
        return RunResult.model_validate(info.result)
    except ValidationError:
        raise JournalError(
            f"run {info.run_id}'s recorded result cannot be read by this version of paor"
        ) from None


@asynccontextmanager
async def maybe_journal(path: Path | None) -> AsyncIterator[Journal | None]:
    """The journal at `path`, created if need be; None when there is no path (no journaling)."""
    if path is None:
        yield None
        return
    async with Journal(path) as journal:
        yield journal


class Offline:
    """The model of a replay: never asked (a replay performs no effect)."""

    name = "offline"

    async def complete(self, request: ModelRequest) -> ModelResponse:
        """Refuse: a replay must not reach a model."""
        raise ModelRequestError("a replay never calls the model")


def require_temporal() -> None:
    """Fail with a one-line error without the `temporal` extra. `orchestrator.temporal._cli` is
    imported only when a command names a Temporal server, after this check."""
    if importlib.util.find_spec("temporalio") is None:
        raise ConfigurationError("--temporal needs the temporal extra: paor[temporal]")
