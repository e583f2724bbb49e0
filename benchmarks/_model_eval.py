"""The command line of a small evaluation on a real model (`parts_eval`, `chains_eval`,
`mixed_eval`): which model, how long each item may take, where the results go; the results file
holds the model's name, the summary and every row, so that a test can score the rows again. And
the counts of an evaluation of known answers (`known_answers`)."""

from __future__ import annotations

import argparse
import json
from collections.abc import Awaitable, Callable, Mapping
from functools import partial
from pathlib import Path
from typing import Any

import anyio

__all__ = ["known_answers", "run_eval"]

Rows = list[dict[str, Any]]


def known_answers(
    rows: Rows, right: Callable[[str, list[str]], bool], *, per: str
) -> dict[str, int]:
    """The counts of rows with a known answer (each with its `status`, `answer` and `wanted`):
    how many (under `per`), complete, complete and right, complete and wrong (the figure that
    matters), and right at any status."""
    complete = [r for r in rows if r["status"] == "complete"]
    good = sum(right(r["answer"], r["wanted"]) for r in complete)
    return {
        per: len(rows),
        "complete": len(complete),
        "complete_right": good,
        "complete_wrong": len(complete) - good,
        "right_any_status": sum(right(r["answer"], r["wanted"]) for r in rows),
    }


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
