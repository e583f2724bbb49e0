"""The command line's Temporal backend: a command given `--temporal HOST:PORT` (`on_temporal`),
and `paor worker`, which serves the runs such commands submit (`worker_command`). The Temporal
client code itself is `orchestrator.temporal._cli`, imported only when a command needs it."""

from __future__ import annotations

import argparse
from functools import partial
from pathlib import Path
from typing import Any

import agents
from agents import ConfigurationError
from orchestrator.cli._approve import decision_from, report_or_pause
from orchestrator.cli._batch import batch_tasks
from orchestrator.cli._console import say
from orchestrator.cli._journal import require_temporal
from orchestrator.cli._options import blobs_option, mcp_option, model_of, model_options, otel_option
from orchestrator.cli._output import EXIT_FAILED, check_writable
from orchestrator.cli._research import checked_goal, write_report
from orchestrator.cli._spec import ResearchSpec

__all__ = ["on_temporal", "on_temporal_server", "worker_command"]


def on_temporal_server(args: argparse.Namespace) -> bool:
    """Whether the command runs on a Temporal server (`worker` serves one instead)."""
    return bool(getattr(args, "temporal", None)) and args.command != "worker"


def worker_command(commands: Any) -> None:
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


async def on_temporal(args: argparse.Namespace) -> int:
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
            args.topic = checked_goal(args.topic)
            check_writable(args.out)
            spec = ResearchSpec.from_args(args)
            report = await temporal.research(args, spec.corpus(), spec.limits, spec.meta())
            return report_or_pause(report, lambda written: write_report(args.out, written))
        case "batch":
            if args.approve is not None:
                raise ConfigurationError("--approve is not available for batch on Temporal yet")
            if args.schema is not None:
                raise ConfigurationError("--schema is not available for batch on Temporal yet")
            steps = agents.AgentLimits(max_steps=args.max_steps)
            summary = await temporal.batch(args, batch_tasks(args), steps)
            say(summary.line())
            return EXIT_FAILED if summary.statuses["failed"] else 0
        case "resume":
            return await temporal.resume(args, write_report)
        case "runs":
            return await temporal.runs(args)
        case "approvals":
            return await temporal.approvals(args)
        case "approve" | "answer":
            return await temporal.approve(args, partial(decision_from, args), write_report)
        case _:
            return await temporal.show(args)
    return 0


async def _worker(args: argparse.Namespace) -> int:
    """Serve the research tools and the model (as "default") until interrupted."""
    require_temporal()
    from orchestrator.temporal import _cli as temporal

    await temporal.worker(args, lambda: model_of(args))
    return 0
