"""The command line of a small evaluation on a real model (`parts_eval`, `chains_eval`): which
model, how long each item may take, where the results go; the results file holds the model's
name, the summary and every row, so that a test can score the rows again."""

from __future__ import annotations

import argparse
import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio

__all__ = ["run_eval"]

Rows = list[dict[str, Any]]


def run_eval(
    doc: str,
    evaluate: Callable[[Path | None, float], Awaitable[Rows]],
    summary: Callable[[Rows], Any],
    *,
    per: str,
) -> None:
    """Parse `--gguf`, `--deadline` (seconds per `per`) and `--out`, run `evaluate` on the model
    (the embedded SmolLM2 without `--gguf`), and write and print what it found."""
    parser = argparse.ArgumentParser(description=doc.split("\n", 1)[0])
    parser.add_argument("--gguf", type=Path, help="serve this GGUF file with the embedded server")
    parser.add_argument("--deadline", type=float, default=240.0, help=f"seconds per {per}")
    parser.add_argument("--out", type=Path, required=True, help="where to write the results")
    args = parser.parse_args()
    rows = anyio.run(evaluate, args.gguf, args.deadline)
    model = args.gguf.stem if args.gguf else "smollm2"
    report = {"model": model, "summary": summary(rows), "rows": rows}
    args.out.write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(json.dumps(report["summary"]))
