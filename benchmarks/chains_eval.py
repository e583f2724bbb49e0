"""The longest chains first, on a real model: does a planner asked to write first the subtasks
that begin the longest chains (`orchestrator._prompts.CHAINS_FIRST`, sent when the first plan
streams) do so, and do its plans stay valid?

Four goals, each naming a one-step question before a chain of dependent ones ("Find the capital
of France. Also find which company makes the iPhone, then its CEO, then where the CEO was born.").
Each goal is planned twice: with the plan streamed (the planner is asked) and not (it is not).
The run stops once the plan is made. Order is a choice only in a plan whose subtasks that depend
on none (roots) begin chains of different lengths, through the plan's own `depends_on`; such a
plan writes its longest chain first when its first root begins a chain as long as any other's.

    python -m benchmarks.chains_eval [--gguf PATH] --out FILE

Without `--gguf` the embedded SmolLM2 plans.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import anyio

from agents import open_model, tool
from benchmarks._model_eval import run_eval
from benchmarks._scenarios import longest_chains
from orchestrator import Orchestrator, RunConfig

GOALS = [
    "Find the capital of France. Also find which company makes the iPhone, then who is that "
    "company's CEO, then where that CEO was born.",
    "Look up today's weather in Oslo. Separately, find the author of 'War and Peace', then the "
    "city where the author was born, then that city's population.",
    "Find the population of Japan. Also find the tallest mountain in Africa, then the country it "
    "is in, then that country's capital, then the capital's population.",
    "Tell me the boiling point of water at sea level. And find the director of the film Titanic, "
    "then his next film after it, then that film's box office.",
]


@tool
async def search(query: str) -> str:
    """Search the web for `query`; returns the best snippets."""
    return "nothing found"


def root_chains(subtasks: Sequence[Mapping[str, Any]]) -> list[int]:
    """The length of the longest chain each root (a subtask with no dependencies) begins, through
    the plan's own `depends_on`, in the planner's order; `subtasks` are {"id", "depends_on"}."""
    chain = longest_chains(
        {s["id"]: s["depends_on"] for s in subtasks}, {s["id"]: 1 for s in subtasks}
    )
    return [chain[s["id"]] for s in subtasks if not s["depends_on"]]


def longest_first(subtasks: Sequence[Mapping[str, Any]]) -> bool:
    """Whether the plan's first root begins a chain as long as any other root's."""
    chains = root_chains(subtasks)
    return bool(chains) and chains[0] == max(chains)


def summary(rows: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, int]]:
    """Per variant: plans asked for, plans made, plans whose roots begin chains of different
    lengths (where the order is a choice), and of those the ones whose longest chain came
    first."""
    out: dict[str, dict[str, int]] = {}
    for row in rows:
        zero = {"plans": 0, "valid": 0, "roots_to_order": 0, "longest_first": 0}
        counts = out.setdefault(row["variant"], zero)
        subtasks = row["subtasks"]
        ordered = len(set(root_chains(subtasks))) >= 2
        counts["plans"] += 1
        counts["valid"] += bool(subtasks)
        counts["roots_to_order"] += ordered
        counts["longest_first"] += ordered and longest_first(subtasks)
    return out


async def plan_of(orch: Orchestrator, goal: str) -> list[dict[str, Any]]:
    """The subtasks of the run's first plan ([] if it made none); the run stops there."""
    async with orch.stream(goal) as events:
        async for event in events:
            if event.type == "plan_created":
                events.cancel("the plan is made")
                return [{"id": s.id, "depends_on": list(s.depends_on)} for s in event.plan.subtasks]
    return []


async def evaluate(gguf: Path | None, deadline: float) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    async with open_model(gguf=gguf) as model:
        for variant, streamed in (("asked", True), ("not asked", False)):
            for goal in GOALS:
                orch = Orchestrator(model, [search], config=RunConfig(stream_plans=streamed))
                subtasks: list[dict[str, Any]] = []
                with anyio.move_on_after(deadline):
                    subtasks = await plan_of(orch, goal)
                rows.append({"variant": variant, "goal": goal, "subtasks": subtasks})
                first = bool(subtasks) and longest_first(subtasks)
                print(f"  {variant}: {len(subtasks)} subtasks, longest first: {first}", flush=True)
    return rows


if __name__ == "__main__":
    run_eval(__doc__ or "", evaluate, summary, per="plan")
