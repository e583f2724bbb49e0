"""The provider's side of the figures: dollars under the price table, and runs under a rate limit.

Under a tokens-per-minute limit no framework can finish sooner than its critical path, nor sooner
than the limit lets through the tokens it spends: the bucket starts full, so the floor is
`max(critical path, (tokens spent - bucket) / refill rate)`, each framework's with its own tokens
(a framework that spends fewer tokens has a lower floor, and its wall is held to it).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from benchmarks._catalogue import SCENARIOS
from benchmarks._provider import PRICES, RateLimits
from benchmarks._run import RunRecord
from benchmarks._scenarios import Scenario, Sub
from benchmarks._sim import Who

__all__ = [
    "LIMITED",
    "TIGHT",
    "dollars",
    "failed_subtasks",
    "limited_figures",
    "limited_scenario",
    "limited_title",
]

# Tight for these scenarios: S2 spends about 30,000 tokens, S6.1 about 40,000, so most of either
# run waits on the limit (8,000 tokens a bucket, refilled in 2 s: 240,000 a minute).
TIGHT = RateLimits(tokens=8000, window_s=2.0)
LIMITED = ("S2", "S6.1")


def limited_scenario(name: str, limits: RateLimits = TIGHT) -> Scenario:
    """Scenario `name` behind a provider with `limits` (its name, which the simulator reads in
    the requests, unchanged)."""
    return dataclasses.replace(SCENARIOS[name], limits=limits)


def limited_title(scenario: Scenario) -> str:
    """How the tables name a limited scenario, e.g. "S2, 8,000 tokens per 2 s"."""
    limits = scenario.limits
    tokens = f"{limits.tokens:,} tokens" if limits and limits.tokens else "no tokens limit"
    return f"{scenario.name}, {tokens} per {limits.window_s:g} s" if limits else scenario.name


def dollars(record: RunRecord, *, cached: bool = True) -> float:
    """What the run's answered model calls cost under the price table, with prompt caching (or,
    with `cached=False`, as if no prompt token had been cached)."""
    return sum(
        PRICES.dollars(e.prompt_tokens, e.cached_tokens if cached else 0, e.completion_tokens)
        for e in record.log
        if e.fault is None
    )


def failed_subtasks(record: RunRecord, scenario: Scenario) -> int:
    """Surviving subtasks whose work was not done: for a planner's run, those whose sub-agent never
    got its closing answer (or, made as one tool call, whose lookup did not finish); for a single
    agent, every subtask unless its final answer came."""
    answered = {e.who.key for e in record.log if e.fault is None and e.answered}
    surviving = [s for s in scenario.subs.values() if s.id not in scenario.removed]
    single = [e.who for e in record.log if e.who.kind in ("mono", "par")]
    if single:
        script = scenario.script()
        last = max(single, key=lambda w: w.step)
        done = last.key in answered and not script.reply(last).tool_calls
        return 0 if done else len(surviving)
    looked = {t.key for t in record.tools if t.finished}
    agents = [e.who for e in record.log if e.who.kind == "agent"]
    asked = {who.name for who in agents}

    def passed(s: Sub) -> bool:
        """It ended on its lookups' results (paor's `answer_with_results`), never asked to
        write an answer."""
        steps = [who.step for who in agents if who.name == s.id]
        finished = Who("agent", s.id, s.steps - 1).key in answered
        return finished and max(steps, default=0) < s.steps and set(s.lookups()) <= looked

    return sum(
        Who("agent", s.id, len(s.turns()) - 1).key not in answered
        # a subtask that is one tool call (paor's direct calls) asks no model: its lookup counts
        and not (s.id not in asked and set(s.lookups()) <= looked)
        and not passed(s)
        for s in surviving
    )


def limited_figures(record: RunRecord, scenario: Scenario) -> dict[str, Any]:
    """A run under `scenario.limits`: wall over the floor, refusals, failures, tokens, dollars."""
    limits = scenario.limits
    if limits is None or not limits.tokens:
        raise ValueError(f"{scenario.name} has no tokens limit")
    refused = [e for e in record.log if e.fault == "429"]
    answers = [e.answered for e in record.log if e.fault is None and e.answered]
    first = min(answers, default=float("inf"))
    spent = sum(e.prompt_tokens + e.completion_tokens for e in record.log if e.fault is None)
    floor = max(
        scenario.critical_path(), (spent - limits.tokens) / (limits.tokens / limits.window_s)
    )
    out: dict[str, Any] = {
        "failed_subtasks": failed_subtasks(record, scenario),
        "refused": len(refused),
        "refused_after_first": sum(e.received > first for e in refused),
        "tokens": spent,
        "floor_s": round(floor, 4),
        "dollars": round(dollars(record), 6),
        "error": record.error,
    }
    if record.error is None:
        out |= {
            "wall_s": round(record.wall_s, 4),
            "wall_over_floor": round(record.wall_s / floor, 4),
        }
    return out
