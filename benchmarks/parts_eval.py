"""Questions in parts, on a real model: is a run `complete` only when its answer is right?

Eight questions with known answers over one lookup tool (`capital`): six ask for two or three
capitals at once ("What are the capitals of France and Japan?"), two for one. A bare
`Orchestrator` with its defaults answers each. A complete run is right when its answer names
every capital asked for and no other city (the tool's own or a well-known wrong one: "Sydney",
"Mumbai"); the figure that matters is how many complete runs are wrong.

    python -m benchmarks.parts_eval [--gguf PATH] [--direct-calls] --out FILE

Without `--gguf` the embedded SmolLM2 answers. Each question has `--deadline` seconds.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import anyio

from agents import open_model, tool
from benchmarks._model_eval import known_answers, run_eval
from orchestrator import Orchestrator, RunConfig

CAPITALS = {
    "france": "Paris", "japan": "Tokyo", "italy": "Rome", "spain": "Madrid", "germany": "Berlin",
    "canada": "Ottawa", "kenya": "Nairobi", "peru": "Lima", "egypt": "Cairo", "norway": "Oslo",
    "chile": "Santiago", "australia": "Canberra", "brazil": "Brasilia", "india": "New Delhi",
}  # fmt: skip
WRONG = [
    *CAPITALS.values(), "Sydney", "Melbourne", "Mumbai", "Sao Paulo", "São Paulo", "Rio",
    "Montreal", "Toronto", "Kyoto", "Osaka", "Milan", "Barcelona", "Istanbul",
]  # fmt: skip
QUESTIONS = [
    ("What are the capitals of France and Japan?", ["Paris", "Tokyo"]),
    ("What are the capitals of Italy and Spain?", ["Rome", "Madrid"]),
    ("What are the capitals of Germany and Canada?", ["Berlin", "Ottawa"]),
    ("What are the capitals of Kenya and Peru?", ["Nairobi", "Lima"]),
    ("What are the capitals of Egypt, Norway and Chile?", ["Cairo", "Oslo", "Santiago"]),
    ("What are the capitals of Brazil and India?", ["Brasilia", "New Delhi"]),
    ("What is the capital of Japan?", ["Tokyo"]),
    ("What is the capital of Australia?", ["Canberra"]),
]


@tool
async def capital(country: str) -> str:
    """The capital city of a country.

    Args:
        country: The country's name, such as "France".
    """
    return CAPITALS.get(country.strip().lower(), f"no country named {country!r}")


def right(answer: str, wanted: list[str]) -> bool:
    """Whether `answer` names every capital wanted and no other city of `WRONG`."""
    said = answer.lower()
    others = [city for city in WRONG if city not in wanted]
    return all(c.lower() in said for c in wanted) and not any(c.lower() in said for c in others)


def summary(rows: list[dict[str, Any]]) -> dict[str, int]:
    """The counts: complete runs, complete and right, complete and wrong."""
    return known_answers(rows, right, per="questions")


async def evaluate(
    gguf: Path | None,
    deadline: float,
    config: RunConfig | None = None,
    *,
    direct_calls: bool = False,
) -> list[dict[str, Any]]:
    """Each question's row: its status, answer and seconds, by an `Orchestrator` with its
    defaults (or `config`; `direct_calls` turns `RunConfig.direct_calls` on); with how many
    sub-agents passed their results on as their answer (`RunConfig.pass_results`) and how many
    were refused and wrote one, and how many subtasks the planner wrote out as one tool call or
    started with one (`Subtask.call`, `Subtask.first_call`)."""
    rows: list[dict[str, Any]] = []
    if direct_calls:
        config = (config or RunConfig()).model_copy(update={"direct_calls": True})
    async with open_model(gguf=gguf) as model:
        for question, wanted in QUESTIONS:
            started = time.monotonic()
            row: dict[str, Any] = {"question": question, "wanted": wanted}
            with anyio.move_on_after(deadline):
                result = await Orchestrator(model, [capital], config=config).run(question)
                row |= {"status": result.status, "answer": result.answer, "reason": result.reason}
                notes = [n for r in result.reports for n in r.notes]
                row["passed"] = sum(n.startswith("passed its tool results on") for n in notes)
                row["refused"] = sum(n.startswith("results not passed on") for n in notes)
                planned = {sub.id: sub for plan in result.plans for sub in plan.subtasks}.values()
                row["calls"] = sum(sub.call is not None for sub in planned)
                row["first_calls"] = sum(sub.first_call is not None for sub in planned)
            row.setdefault("status", "timeout")
            row.setdefault("answer", "")
            row["seconds"] = round(time.monotonic() - started, 1)
            rows.append(row)
            verdict = "right" if right(row["answer"], wanted) else "wrong"
            print(f"  {question} {row['status']}, {verdict} ({row['seconds']} s)", flush=True)
    return rows


if __name__ == "__main__":
    switches = {"direct_calls": "the planner may write tool calls out (RunConfig.direct_calls)"}
    run_eval(__doc__ or "", evaluate, summary, per="question", switches=switches)
