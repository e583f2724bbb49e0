"""The extraction evaluation: typed outputs on real small models, scored field by field.

    python -m benchmarks.extraction_eval [--gguf PATH] [--protocols json,tools]
        [--outputs schema,tool,text] [--items N] [--out FILE.json]

Each item of `extraction/items.jsonl` is a short payment notice with four known fields (who owes,
their city, the amount in EUR, the due date). A lone `Executor(output_type=Notice)` is given the
notice as its context and asked for the four fields; its report's `output` is the object (or None
when no valid one was written). The model is the embedded SmolLM2 unless `--gguf` serves another
GGUF file with paor's llama.cpp server, once per decision protocol and output mode (how the
object is asked for: a JSON-schema `response_format`, a final tool's arguments, or JSON in text;
see `OpenAIChatModel(output_mode=...)`).

Reported per protocol and output mode: valid objects (the share of items whose `output` is a `Notice`: with the
JSON protocol the endpoint's grammar shapes every reply, so anything short of all of them is
paor's fault), and field accuracy (the share of the fields right, over every item: an item
without an object scores none).
"""

from __future__ import annotations

import argparse
import datetime
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anyio
from pydantic import BaseModel

from agents import AgentLimits, Executor, LocalModel
from agents.models import DecisionProtocol
from agents.models._wire import OutputMode

__all__ = ["Notice", "evaluate", "main", "score"]

HERE = Path(__file__).resolve().parent
ITEMS = HERE / "extraction" / "items.jsonl"
TASK = "Who owes the money, in which city, how many EUR, and by which date must it be paid?"
FIELDS = ("name", "city", "amount_eur", "due")


class Notice(BaseModel):
    """What a payment notice says."""

    name: str
    city: str
    amount_eur: int
    due: datetime.date


def score(expected: dict[str, Any], got: Notice | None) -> int:
    """How many of the four fields `got` has right (case and spaces aside for text)."""
    if got is None:
        return 0
    found = got.model_dump(mode="json")
    right = 0
    for field in FIELDS:
        want, have = expected[field], found[field]
        if isinstance(want, str) and isinstance(have, str):
            right += " ".join(want.lower().split()) == " ".join(have.lower().split())
        else:
            right += want == have
    return right


async def evaluate(
    gguf: Path | None,
    protocol: DecisionProtocol,
    items: Sequence[dict[str, Any]],
    mode: OutputMode = "schema",
) -> dict[str, Any]:
    """Every item through one model, protocol and output mode; the figures and each item's
    outcome."""
    served = (
        LocalModel(model_path=gguf, protocol=protocol, output_mode=mode)
        if gguf
        else LocalModel(protocol=protocol, output_mode=mode)
    )
    outcomes = []
    start = time.perf_counter()
    async with served as model:
        executor = Executor(
            model, output_type=Notice, limits=AgentLimits(max_steps=2, deadline_s=240)
        )
        for item in items:
            began = time.perf_counter()
            report = await executor.run(TASK, context=item["text"])
            output = report.output if isinstance(report.output, Notice) else None
            right = score(item["expected"], output)
            outcomes.append(
                {
                    "id": item["id"],
                    "status": report.status,
                    "valid": output is not None,
                    "right": right,
                    "output": None if output is None else output.model_dump(mode="json"),
                    "notes": list(report.notes),
                    "seconds": round(time.perf_counter() - began, 1),
                }
            )
            print(
                f"  {protocol}/{mode} {item['id']}: {right}/4, valid={output is not None}",
                flush=True,
            )
    n = len(outcomes)
    valid = sum(o["valid"] for o in outcomes)
    fields = sum(o["right"] for o in outcomes)
    return {
        "protocol": protocol,
        "output_mode": mode,
        "items": n,
        "valid": valid,
        "valid_share": round(valid / n, 3) if n else 0.0,
        "field_accuracy": round(fields / (4 * n), 3) if n else 0.0,
        "seconds": round(time.perf_counter() - start, 1),
        "outcomes": outcomes,
    }


def main(argv: Sequence[str] | None = None) -> int:
    """Run the evaluation and print its table (and write it with --out)."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.extraction_eval")
    parser.add_argument("--gguf", type=Path, help="serve this GGUF file (default: SmolLM2)")
    parser.add_argument("--protocols", default="json,tools", help="json, tools or both")
    parser.add_argument("--outputs", default="schema", help="schema, tool, text: any of them")
    parser.add_argument("--items", type=int, default=0, help="the first N items (0: all)")
    parser.add_argument("--out", type=Path, help="write the figures here as JSON")
    args = parser.parse_args(argv)
    protocols: list[DecisionProtocol] = []
    for name in args.protocols.split(","):
        if name not in ("json", "tools", "auto"):
            parser.error(f"--protocols takes json, tools or auto, not {name!r}")
        protocols.append(name)
    modes: list[OutputMode] = []
    for name in args.outputs.split(","):
        if name not in ("schema", "tool", "text"):
            parser.error(f"--outputs takes schema, tool or text, not {name!r}")
        modes.append(name)
    lines = ITEMS.read_text(encoding="utf-8").splitlines()
    items = [json.loads(line) for line in lines if line.strip()]
    items = items[: args.items] if args.items else items
    model = args.gguf.stem if args.gguf else "smollm2 (embedded)"
    results = [anyio.run(evaluate, args.gguf, p, items, m) for p in protocols for m in modes]
    print(f"\n{model}, {len(items)} notices")
    print("| protocol | output | valid objects | field accuracy | s |\n|---|---|---|---|---|")
    for r in results:
        print(
            f"| {r['protocol']} | {r['output_mode']} | {r['valid']}/{r['items']} ({r['valid_share']:.0%}) "
            f"| {r['field_accuracy']:.0%} | {r['seconds']} |"
        )
    if args.out:
        about = {
            "command": "python -m benchmarks.extraction_eval " + " ".join(argv or sys.argv[1:])
        }
        data = {**about, "model": model, "results": results}
        args.out.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
