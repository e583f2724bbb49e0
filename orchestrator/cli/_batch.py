"""The command line's `batch`: many independent goals from a JSON Lines file, run concurrently,
their results appended to `--out`. The task file and the output are checked before any work;
`batch_tasks` hands the same checked goals to Temporal (`_temporal.on_temporal`).
"""

from __future__ import annotations

import argparse
import sys
import time

import agents
from agents import ConfigurationError
from agents.toolkits import Corpus
from orchestrator._batch import BatchTask, run_batch
from orchestrator._batch_files import check_output, check_tasks, read_tasks
from orchestrator._limits import Limits
from orchestrator._research import research_executor
from orchestrator.batch import load_tasks
from orchestrator.cli._approve import batch_paused, cli_approver
from orchestrator.cli._console import say
from orchestrator.cli._journal import maybe_journal
from orchestrator.cli._mcp import left_of
from orchestrator.cli._options import mcp_tools, model_of
from orchestrator.cli._output import EXIT_FAILED, check_writable, journal_path, schema_of

__all__ = ["batch", "batch_tasks"]


def batch_tasks(args: argparse.Namespace) -> list[BatchTask]:
    """The task file's goals as a list (Temporal cuts it into chunks), checked before any work."""
    _check_batch(args)
    return load_tasks(args.tasks)


def _check_batch(args: argparse.Namespace) -> None:
    """Before any work: every line of the task file, and that the output is another file."""
    check_tasks(args.tasks)
    check_output(args.tasks, args.out)
    check_writable(args.out)


async def batch(args: argparse.Namespace) -> int:
    """`paor batch TASKS --out FILE`: run the goals, a line at a time as workers come free; the
    exit status is `EXIT_FAILED` if any goal failed, or the paused status if any waits."""
    started = time.monotonic()
    _check_batch(args)
    corpus = Corpus.from_folder(args.docs) if args.docs else Corpus.python_docs()
    # One set of limits for the whole command: its deadline bounds the batch, not each task.
    limits = Limits(
        deadline_s=args.deadline,
        max_tokens=args.max_tokens,
        max_cost=args.max_cost,
        agent=agents.AgentLimits(max_steps=args.max_steps),
    )
    if args.approve == "plan":
        raise ConfigurationError("batch goals have no plan to approve: use --approve tools")
    output = schema_of(args.schema) if getattr(args, "schema", None) else None
    approver = cli_approver(args.approve, journaled=journal_path(args) is not None)
    async with (
        maybe_journal(journal_path(args)) as journal,
        mcp_tools(args.mcp, limits.deadline_s) as tools,
        model_of(args) as model,
    ):
        executor = research_executor(
            model, corpus, limits=limits.agent, tools=tools, approve=args.approve,
            approver=approver, grounded=not args.ungrounded,
        )  # fmt: skip
        if output is not None:
            executor = executor.clone(output_type=output)
        with read_tasks(args.tasks) as tasks:  # a line at a time, as workers come free
            summary = await run_batch(
                tasks,
                executor=executor,
                out=args.out,
                concurrency=args.concurrency,
                limits=left_of(limits, started),
                on_result=lambda key, report: say(f"{key}: {report.status}", file=sys.stderr),
                journal=journal,
            )
    say(summary.line())
    if summary.waiting:
        return batch_paused(summary.waiting, args)
    return EXIT_FAILED if summary.statuses["failed"] else 0
