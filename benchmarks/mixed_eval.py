"""Goals of mixed parts, on a real model: is a run `complete` only when its answer is right?

Five goals with known answers over one lookup tool (`lookup`, a dozen facts), each a one-step
question beside a chain of dependent ones ("Tell me the boiling point of water at sea level. And
find the director of the film Titanic, then his next film after it."). A planner given such a
goal writes steps that name no tools as often as steps that do, and a small model answers a
step with no tools from memory ("212.15°C"). A bare `Orchestrator` with its defaults answers
each goal `--runs` times. A complete run is right when its answer holds every fact the goal
asks for (as the tool gives it); the figure that matters is how many complete runs are wrong.

    python -m benchmarks.mixed_eval [--gguf PATH] [--stream-plans] --out FILE

Without `--gguf` the embedded SmolLM2 answers. Each run has `--deadline` seconds.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import anyio

from agents import open_model, tool
from benchmarks._model_eval import known_answers, run_eval
from orchestrator import Orchestrator, RunConfig

FACTS = {
    "capital of france": "Paris", "maker of the iphone": "Apple", "ceo of apple": "Tim Cook",
    "birthplace of tim cook": "Mobile, Alabama", "author of war and peace": "Leo Tolstoy",
    "birthplace of leo tolstoy": "Yasnaya Polyana", "weather in oslo": "light rain, 7 C",
    "boiling point of water": "100 C at sea level", "director of titanic": "James Cameron",
    "next film of james cameron": "Avatar (2009)",
}  # fmt: skip
GOALS = [
    (
        "Tell me the boiling point of water at sea level. And find the director of the film "
        "Titanic, then his next film after it.",
        ["100", "Avatar"],
    ),
    (
        "Find the capital of France. Also find which company makes the iPhone, then who is that "
        "company's CEO, then where that CEO was born.",
        ["Paris", "Mobile"],
    ),
    (
        "Find the capital of France. Also find which company makes the iPhone, then who is that "
        "company's CEO.",
        ["Paris", "Tim Cook"],
    ),
    (
        "Look up the weather in Oslo. Separately, find the author of 'War and Peace', then the "
        "place where the author was born.",
        ["rain", "Yasnaya Polyana"],
    ),
    ("What is the boiling point of water at sea level, and who directed Titanic?",
     ["100", "James Cameron"]),
]  # fmt: skip
WRONG = ["212", "fahrenheit", "°f"]  # water's boiling point as it is not at sea level in C
RUNS = 2  # each goal's runs: a small model's plan differs from one run to the next


@tool
async def lookup(key: str) -> str:
    """Look up one fact, such as "ceo of apple" or "capital of france".

    Args:
        key: What to look up, in a few words.
    """
    asked = " ".join(key.lower().replace("'", "").split())
    for name, value in FACTS.items():
        if all(word in asked for word in name.split() if word not in ("of", "the")):
            return f"{name}: {value}"
    return f"no fact found for {key!r}"


def right(answer: str, wanted: list[str]) -> bool:
    """Whether `answer` holds every fact wanted, and no boiling point in Fahrenheit (`WRONG`)."""
    said = answer.lower()
    return all(f.lower() in said for f in wanted) and not any(w in said for w in WRONG)


def summary(rows: list[dict[str, Any]]) -> dict[str, int]:
    """The counts: complete runs, complete and right, complete and wrong."""
    return known_answers(rows, right, per="runs")


async def evaluate(
    gguf: Path | None, deadline: float, *, stream_plans: bool = False
) -> list[dict[str, Any]]:
    """Each run's row: its goal, status, answer, reason, reports and seconds, by an `Orchestrator`
    with its defaults (`stream_plans` forces `RunConfig.stream_plans` on, as a hosted endpoint
    has it)."""
    config = RunConfig(stream_plans=True) if stream_plans else None
    rows: list[dict[str, Any]] = []
    async with open_model(gguf=gguf) as model:
        for goal, wanted in GOALS:
            for _ in range(RUNS):
                started = time.monotonic()
                row: dict[str, Any] = {"goal": goal, "wanted": wanted}
                with anyio.move_on_after(deadline):
                    result = await Orchestrator(model, [lookup], config=config).run(goal)
                    row |= {"status": result.status, "answer": result.answer}
                    row["reason"] = result.reason
                    row["reports"] = [  # what made the answer, to trace a wrong one
                        {"id": r.agent_id, "status": r.status, "task": r.task, "answer": r.answer,
                         "notes": list(r.notes), "sources": [e.source for e in r.evidence]}
                        for r in result.reports
                    ]  # fmt: skip
                row.setdefault("status", "timeout")
                row.setdefault("answer", "")
                row["seconds"] = round(time.monotonic() - started, 1)
                rows.append(row)
                verdict = "right" if right(row["answer"], wanted) else "wrong"
                print(
                    f"  {goal[:60]}... {row['status']}, {verdict} ({row['seconds']} s)", flush=True
                )
    return rows


if __name__ == "__main__":
    switches = {"stream_plans": "stream the plan (RunConfig.stream_plans), as hosted endpoints do"}
    run_eval(__doc__ or "", evaluate, summary, per="run", switches=switches)
