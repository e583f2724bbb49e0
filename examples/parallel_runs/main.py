"""Parallel runs: independent goals under one concurrency limit and one shared budget, resumable.

Each line of `tasks.jsonl` is a question about the Python language; each is answered by its own
executor sub-agent searching the language reference that ships with CPython. At most
`CONCURRENCY` agents run at once, all of them charge one token budget, and every result is appended
to `results.jsonl` the moment it is ready. Run it again and the ids already there are skipped, so
a batch that was interrupted, or whose budget ran out before every goal started, picks up where it
stopped (delete the file to start over).

    python examples/parallel_runs/main.py

The model is the endpoint in OPENAI_BASE_URL / OPENAI_API_KEY / PAOR_MODEL if one is set, else the
embedded local model.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import anyio

import agents
from agents import (
    AgentReport,
    Budget,
    ChatModel,
    Executor,
    PaorError,
    cites_evidence,
    open_model,
)
from agents.toolkits import Corpus, research_tools
from orchestrator import BatchSummary, run_batch
from orchestrator.batch import load_tasks

HERE = Path(__file__).resolve().parent
TASKS = HERE / "tasks.jsonl"
OUT = HERE / "results.jsonl"
CONCURRENCY = 3
MAX_TOKENS = 150_000  # for the whole batch: every agent charges this one ledger
AGENT_LIMITS = agents.AgentLimits(max_steps=4, deadline_s=300)
INSTRUCTIONS = (
    "You answer one question about the Python language from its reference documentation. Use "
    "search_docs to find passages and read_doc to read more, then answer in two or three "
    "sentences, citing the doc ids you used in square brackets, like [python/assignment]."
)


async def run(
    model: ChatModel,
    *,
    tasks: Path = TASKS,
    out: Path = OUT,
    concurrency: int = CONCURRENCY,
    max_tokens: int = MAX_TOKENS,
) -> BatchSummary:
    """Run every goal in `tasks` not yet in `out`, appending each result to `out` as it ends."""
    goals = load_tasks(tasks)  # validated whole before anything runs
    executor = Executor(
        model,
        research_tools(Corpus.python_docs()),
        instructions=INSTRUCTIONS,
        limits=AGENT_LIMITS,
        acceptance=cites_evidence,
    )
    return await run_batch(
        goals,
        executor=executor,
        out=out,
        concurrency=concurrency,
        budget=Budget(max_tokens=max_tokens),
        on_result=_show,
    )


def _show(task_id: str, report: AgentReport) -> None:
    stopped = f" (stopped: {report.stop_reason})" if report.stop_reason else ""
    print(f"{task_id}: {report.status}{stopped}, {report.steps} steps", flush=True)


def main() -> None:
    """Pick the model, run the batch, and print the summary."""
    logging.basicConfig(format="%(levelname)s %(name)s: %(message)s")  # warnings, on stderr
    try:
        summary = anyio.run(_run_with_configured_model)
    except PaorError as exc:  # a bad task line, or no model to talk to: say so in one line
        sys.exit(f"parallel_runs: {exc}")
    print(summary.line())
    print(f"results: {OUT} (run again to resume; delete it to start over)")


async def _run_with_configured_model() -> BatchSummary:
    async with open_model() as model:
        return await run(model)


if __name__ == "__main__":
    main()
