"""The command line of a small evaluation on a real model (`parts_eval`, `chains_eval`): which
model, how long each item may take, where the results go; the results file holds the model's
name, the summary and every row, so that a test can score the rows again."""

from __future__ import annotations

import argparse
import json
from collections.abc import Awaitable, Callable, Mapping
from functools import partial
from pathlib import Path
from typing import Any

import anyio

__all__ = ["run_eval"]

Rows = list[dict[str, Any]]


def run_eval(
    doc: str,
    evaluate: Callable[..., Awaitable[Rows]],
    summary: Callable[[Rows], Any],
    *,
    per: str,
    switches: Mapping[str, str] | None = None,
) -> None:
    """Parse `--gguf`, `--deadline` (seconds per `per`), `--out` and the evaluation's own
    `switches` (each a keyword argument of `evaluate`, off unless given: name and help), run
    `evaluate(gguf, deadline, **switches)` on the model (the embedded SmolLM2 without `--gguf`),
    and write and print what it found, with the switches it ran under."""
    parser = argparse.ArgumentParser(description=doc.split("\n", 1)[0])
    parser.add_argument("--gguf", type=Path, help="serve this GGUF file with the embedded server")
    parser.add_argument("--deadline", type=float, default=240.0, help=f"seconds per {per}")
    parser.add_argument("--out", type=Path, required=True, help="where to write the results")
    for name, text in (switches or {}).items():
        parser.add_argument(f"--{name.replace('_', '-')}", action="store_true", help=text)
    args = parser.parse_args()
    on = {name: getattr(args, name) for name in switches or {}}
    rows = anyio.run(partial(evaluate, args.gguf, args.deadline, **on))
    model = args.gguf.stem if args.gguf else "smollm2"
    report = {"model": model, "switches": on, "summary": summary(rows), "rows": rows}
    args.out.write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(json.dumps(report["summary"]))
