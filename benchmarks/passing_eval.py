"""Results passed on, on a real model: do small models end a lookup on its results, and does a
run that lets them stay right?

The questions in parts (`benchmarks.parts_eval`: eight questions over one `capital` tool),
answered by an `Orchestrator` whose sub-agents may pass their results on as their answer
(`RunConfig(pass_results=True)`: on by default for a hosted endpoint, off for a server on this
machine). Besides that evaluation's counts (complete, complete and right, complete and wrong),
it counts the sub-agents whose results were passed on, and those refused, which then wrote their
answer.

    python -m benchmarks.passing_eval [--gguf PATH] --out FILE

Without `--gguf` the embedded SmolLM2 answers. Each question has `--deadline` seconds.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchmarks import parts_eval
from benchmarks._model_eval import run_eval
from orchestrator import RunConfig


async def evaluate(gguf: Path | None, deadline: float) -> list[dict[str, Any]]:
    """The questions in parts, with results passed on."""
    return await parts_eval.evaluate(gguf, deadline, RunConfig(pass_results=True))


def summary(rows: list[dict[str, Any]]) -> dict[str, int]:
    """The questions-in-parts counts, and the sub-agents that passed their results on or were
    refused."""
    return {
        **parts_eval.summary(rows),
        "passed": sum(r.get("passed", 0) for r in rows),
        "refused": sum(r.get("refused", 0) for r in rows),
    }


if __name__ == "__main__":
    run_eval(__doc__ or "", evaluate, summary, per="question")
