"""The figures, computed from run records and the simulator's logs, and the targets they are held to."""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from benchmarks._facts import Reading
from benchmarks._run import RunRecord
from benchmarks._scenarios import Scenario

__all__ = [
    "Target",
    "dispatch_gaps",
    "percentile",
    "prefix_share",
    "prompt_tokens",
    "reading",
    "targets",
]


def prompt_tokens(record: RunRecord) -> int:
    """Every prompt token the run sent."""
    return sum(e.prompt_tokens for e in record.log)


def reading(record: RunRecord, scenario: Scenario) -> dict[str, Any]:
    """How much the run read (`benchmarks._facts`): the mean share of each needed lookup's result
    that reached a prompt, and, where the scenario checks facts, how many of the needed facts
    reached the final answer's prompt (the last request answered)."""
    keys = scenario.mono_keys
    share = Reading(read=record.read).share({k: scenario.result_text(k) for k in keys})
    out: dict[str, Any] = {"read_share": None if share is None else round(share, 4)}
    answered = [e for e in record.log if e.fault is None]
    if scenario.facts and answered:
        last = max(answered, key=lambda e: e.answered)
        out["facts_reached"] = len(set(keys) & (last.facts or frozenset()))
        out["facts_needed"] = len(keys)
    return out


def prefix_share(record: RunRecord) -> float:
    """The share of executor prompt tokens (sub-agent or single agent) inside a shared prefix."""
    mine = [e for e in record.log if e.who.kind in ("agent", "mono", "par")]
    total = sum(e.prompt_tokens for e in mine)
    return sum(e.shared_tokens for e in mine) / total if total else 0.0


def dispatch_gaps(record: RunRecord, scenario: Scenario) -> list[float]:
    """Seconds from a subtask's last dependency answering to the subtask's first model request
    (or, for a subtask that is one tool call, the call's start).

    Only subtasks whose start was bound by a dependency count: one made ready by a plan or replan
    arriving later than its dependencies measures the planner, not the dispatch. A request sent
    more than once (a retry, a hedge) was answered when its first copy was: a copy that lost
    the race is answered by the simulator after the caller stopped waiting for it, or not at all.
    """
    first: dict[str, float] = {}
    answered: dict[tuple[str, str], float] = {}
    planned: list[float] = []
    spans = [
        (e.who.name, e.who.key, e.received, e.answered) for e in record.log if e.who.kind == "agent"
    ]
    if any(e.who.kind == "agent" for e in record.log):  # a planner's run: subtasks' own lookups
        # too, since a subtask that is one tool call (paor's direct calls) makes no model call
        spans += [(t.key.rsplit(".", 1)[0], t.key, t.started, t.finished) for t in record.tools]
    for name, key, start, end in spans:
        first[name] = min(first.get(name, start), start)
        if end > 0.0:  # 0: a copy the caller cancelled before the simulator answered it
            answered[name, key] = min(answered.get((name, key), end), end)
    last: dict[str, float] = {}
    for (name, _), end in answered.items():
        last[name] = max(last.get(name, end), end)
    for e in record.log:
        if e.who.kind in ("plan", "replan"):
            planned.append(e.answered)
    gaps = []
    for sub in scenario.subs.values():
        if not sub.deps or sub.id not in first or any(d not in last for d in sub.deps):
            continue
        ready = max(last[d] for d in sub.deps)
        created = max((t for t in planned if t <= first[sub.id]), default=0.0)
        if ready >= created:
            gaps.append(first[sub.id] - ready)
    return gaps


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile (0 to 100), interpolated; NaN for no values."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    rank = (len(ordered) - 1) * q / 100
    low = int(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def median(values: Iterable[float]) -> float:
    """The median (NaN for no values)."""
    found = list(values)
    return statistics.median(found) if found else float("nan")


@dataclass(frozen=True, slots=True, kw_only=True)
class Target:
    """One target of the issue, with the measured value and whether it is met."""

    text: str
    value: str
    met: bool | None  # None: not measured in this run

    def as_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {"target": self.text, "value": self.value, "met": self.met}


def targets(results: dict[str, Any]) -> list[Target]:
    """The issue's targets, judged on paor's figures in `results` (see `benchmarks.__main__`)."""
    runs = results["scenarios"]
    timed = [n for n in runs if not n.startswith(("S0", "S7", "S8", "S9", "S13"))]
    ratios = {n: runs[n]["runs"].get("paor", {}).get("wall_over_cp") for n in timed}
    worst = max(((r, n) for n, r in ratios.items() if r is not None), default=None)
    s2 = runs.get("S2", {}).get("runs", {})
    cpu = results["s0"]
    paor_cpu = cpu.get("paor", {}).get("cpu_us_per_step")
    lg_cpu = cpu.get("langgraph-react", {}).get("cpu_us_per_step")
    memory = results["memory"].get("paor", {}).get("10000", {})
    share = results["s8"].get("paor", {}).get("prefix_share")
    found = [
        _at_most(
            "wall over critical path at most 1.05 on S1 to S6 (HTTP, worst scenario)", worst, 1.05
        ),
        _target(
            "S2 speedup over sequential ReAct at least 3.5x",
            s2.get("paor", {}).get("speedup"),
            lambda v: v >= 3.5,
            "{:.2f}x",
        ),
        _target(
            "framework CPU at most 150 us per executor step on S0",
            paor_cpu,
            lambda v: v <= 150,
            "{:.0f} us",
        ),
        _target(
            "framework CPU at most a third of LangGraph's on S0",
            paor_cpu / lg_cpu if paor_cpu and lg_cpu else None,
            lambda v: v <= 1 / 3,
            "{:.2f} of LangGraph's",
        ),
        _target(
            "10,000 concurrent sub-agents in one process at no more than 50 KiB peak RSS each",
            memory.get("kib_per_agent") if memory.get("arrived") == 10_000 else None,
            lambda v: v <= 50,
            "{:.1f} KiB each",
        ),
        _target(
            "prompt tokens on S2 at most a quarter of the ReAct baseline",
            s2.get("paor", {}).get("tokens_vs_react"),
            lambda v: v <= 0.25,
            "{:.3f} of ReAct's",
        ),
        _target(
            "at least 90% of executor prompt tokens inside a stable prefix on S8",
            share,
            lambda v: v >= 0.9,
            "{:.1%}",
        ),
    ]
    return found + _against_the_peers(results) + _structured(results)


def _against_the_peers(results: dict[str, Any]) -> list[Target]:
    """The targets against what users would pick instead (the parallel-tool-call agent, LangGraph)."""
    runs = results["scenarios"]
    paor = {n: sc["runs"].get("paor", {}) for n, sc in runs.items()}

    def worst(key: str, names: list[str]) -> tuple[float, str] | None:
        found = [(paor[n][key], n) for n in names if n in paor and key in paor[n]]
        return max(found) if found else None

    timed = [n for n in runs if not n.startswith(("S0", "S7", "S8", "S13"))]
    uneven = [n for n in timed if n.startswith(("S3", "S6"))]
    wall, wall_uneven = worst("wall_vs_parallel", timed), worst("wall_vs_parallel", uneven)
    http = results.get("overhead", {}).get("http_cpu", {})
    paor_cpu = http.get("paor", {}).get("cpu_us_per_step")
    lg_cpu = http.get("langgraph-react", {}).get("cpu_us_per_step")
    cold = results.get("overhead", {}).get("cold_start_s", {})
    starts = [cold.get("paor"), cold.get("paor --help")]
    lg_start = cold.get("langgraph")
    cold_ratio = (
        max(starts) / lg_start
        if all(isinstance(v, float) for v in [*starts, lg_start]) and lg_start
        else None
    )
    memory = results["memory"].get("paor", {}).get("10000", {})
    kib = memory.get("kib_per_agent") if memory.get("arrived") == 10_000 else None
    http = results["memory"].get("paor (HTTP)", {})
    big = results["memory"].get("paor (HTTP, 100 in flight)", {}).get("10000", {})
    http_kib = big.get("kib_per_agent") if big.get("arrived") == 10_000 else None
    small = http.get("1000", {}).get("kib_per_agent")
    return [
        _at_most(
            "wall at most 1.20 of the parallel-tool-call agent's on S1 to S9 (worst)", wall, 1.2
        ),
        _at_most(
            "wall at most 0.80 of the parallel-tool-call agent's where branches are uneven (S3, S6)",
            wall_uneven,
            0.8,
        ),
        *(
            _at_most(
                f"dollars at most {limit} of the parallel-tool-call agent's on {label}",
                worst("dollars_vs_parallel", [n for n in timed if n.startswith(prefix)]),
                limit,
                digits=2,
            )
            for label, prefix, limit in (("S2", "S2", 2.3), ("S3", "S3", 1.4), ("S6", "S6", 1.4))
        ),
        _limited_target(results.get("limited", {})),
        _target(
            "framework CPU per executor step over HTTP at most 0.50 of LangGraph's",
            paor_cpu / lg_cpu if paor_cpu and lg_cpu else None,
            lambda v: v <= 0.5,
            f"{{:.2f}} ({paor_cpu or 0:.0f} us against {lg_cpu or 0:.0f} us)",
        ),
        _target(
            "10,000 concurrent sub-agents at most 32 KiB each with the real HTTP client",
            http_kib,
            lambda v: v <= 32,
            "{:.1f} KiB each (`max_in_flight=100`)"
            + (f"; {kib:.1f} on the in-process model" if kib is not None else ""),
        )
        if http_kib is not None or small is None
        else Target(
            text="10,000 concurrent sub-agents at most 32 KiB each with the real HTTP client",
            value=f"not run at 10,000; {small:.1f} KiB each at 1,000"
            + (f" ({kib:.1f} at 10,000 on the in-process model)" if kib is not None else ""),
            met=None,
        ),
        _target(
            "cold start (import, `paor --help`) at most half of LangGraph's import",
            cold_ratio,
            lambda v: v <= 0.5,
            "{:.2f} of LangGraph's",
        ),
    ]


PEER_FRAMEWORKS = ("langgraph-plan", "langgraph-tasks", "openai-agents-plan")
"""The framework peers paor is held to on every timed scenario: their plan-and-execute and
parallel shapes."""


def _structured(results: dict[str, Any]) -> list[Target]:
    """Issue 35's targets: S13 against the parallel-tool-call agent, and every scenario against
    each framework peer, in wall and in dollars."""
    runs = results["scenarios"]
    paor = {n: sc["runs"].get("paor", {}) for n, sc in runs.items()}
    s13 = [n for n in runs if n.startswith("S13")]
    out = [
        _at_most(
            f"S13: {what} at most 0.75 of the parallel-tool-call agent's (worst of S13, S13b)",
            max(((paor[n][key], n) for n in s13 if key in paor[n]), default=None),
            0.75,
            digits=2,
        )
        for what, key in (("wall", "wall_vs_parallel"), ("dollars", "dollars_vs_parallel"))
    ]
    for key, what in (("wall_s", "wall"), ("dollars", "dollars")):
        ratios = [
            (paor[n][key] / peer[key], f"{n} against {name}")
            for n, sc in runs.items()
            for name in PEER_FRAMEWORKS
            if key in paor[n] and (peer := sc["runs"].get(name, {})).get(key)
        ]
        out.append(
            _at_most(
                f"{what} at most 1.00 of every framework peer's on every scenario (worst)",
                max(ratios, default=None),
                1.0,
                digits=2,
            )
        )
    return out


def _limited_target(limited: dict[str, Any]) -> Target:
    text = (
        "under a tokens-per-minute limit: wall at most 1.15 of the limit's minimum, no failed "
        "subtask, no 429 after the first answer"
    )
    runs = {name: found.get("paor") for name, found in limited.items()}
    if not runs or any(r is None for r in runs.values()):
        return Target(text=text, value="not measured", met=None)
    shown, met = [], True
    for name, r in runs.items():
        ratio = r.get("wall_over_floor")
        ok = (
            ratio is not None
            and ratio <= 1.15
            and r["failed_subtasks"] == 0
            and r["refused_after_first"] == 0
        )
        met = met and ok
        wall = f"{ratio:.3f}" if ratio is not None else f"error: {r.get('error')}"
        shown.append(
            f"{name.split(',')[0]}: {wall}, {r['failed_subtasks']} failed, {r['refused_after_first']} refused"
        )
    return Target(text=text, value="; ".join(shown), met=met)


def _at_most(
    text: str, worst: tuple[float, str] | None, limit: float, *, digits: int = 3
) -> Target:
    """A target on the worst scenario's figure, shown with the scenario's name."""
    name = worst[1] if worst else ""
    return _target(
        text, worst[0] if worst else None, lambda v: v <= limit, f"{{:.{digits}f}} ({name})"
    )


def _target(text: str, value: float | None, ok: Any, fmt: str) -> Target:
    if value is None or value != value:  # missing or NaN
        return Target(text=text, value="not measured", met=None)
    return Target(text=text, value=fmt.format(value), met=bool(ok(value)))
