"""What the journal costs per effect: `python -m benchmarks.journal_cost [--runs N] [--subtasks K]
[--steps S] [--latency-ms L] [--dir PATH] [--out PATH]`.

Method. One deterministic in-process run: an `Orchestrator` over a scripted `FunctionModel` plans
K independent subtasks; each sub-agent makes S calls of a trivial async tool, then answers; a
synthesis ends the run. It runs without a journal and with a `Journal` on a fresh file in a fresh
temporary folder (the default temp dir unless `--dir`; its file system is reported, since fsync
on tmpfs costs nothing), the two alternating run by run after the same warm-up, N runs each, with
a garbage collection before every run. Only `Orchestrator.run` is timed: opening and closing the
journal (once per command in the CLI) is reported apart.

The effects are counted by reading the run back (`Journal.load`). Reported, each way: the median
wall time per run; and from the N pairs (the i-th run of each way): the added wall and CPU time
(`time.process_time`, which counts the journal's worker threads) per effect, as the median of
the paired differences over the effects; the journal's bytes per effect (the file and its -wal
right after the run, which is what was written; and, after closing, the checkpointed file less an
empty journal's, which is what is kept); and the ratio of the median walls. The whole is done
twice: with a model that answers at once (the journal against the framework alone), and with one
that sleeps L ms on every call (what share of a realistic run the journal takes). Per-run costs
(registering the run, its lease, its result) are spread over the effects. For scale, the median
time to append and fsync a short line in the same folder is reported too.

Prints a table and writes `benchmarks/journal_cost.json`. Every figure is a ratio or a difference
within one run of this command: the machine is shared, so only those compare.
"""

from __future__ import annotations

import argparse
import gc
import json
import logging
import os
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel
import structlog

import agents
from agents.models import ModelRequest
from agents.testing import FunctionModel, Turn, call, reply
from benchmarks._paor import lookup_tool
from memory import AssistantMessage, Journal
from orchestrator import Limits, Orchestrator, RunConfig

__all__ = ["Config", "Sample", "main", "measure"]

HERE = Path(__file__).resolve().parent
GOAL = "Collect the facts."
RUN_ID = "bench"


@dataclass(frozen=True, kw_only=True, slots=True)
class Config:
    """One workload: K subtasks of S tool calls each, every model call `latency_s` long."""

    subtasks: int
    steps: int
    latency_s: float = 0.0


@dataclass(kw_only=True, slots=True)
class Sample:
    """One timed run: wall and CPU seconds; with a journal, its effects and sizes."""

    wall_s: float
    cpu_s: float
    effects: int = 0
    kinds: dict[str, int] | None = None
    written_bytes: int = 0
    kept_bytes: int = 0
    open_close_s: float = 0.0


def _decide(config: Config) -> Callable[[ModelRequest], Awaitable[Turn]]:
    """The scripted model: a plan of K subtasks, S lookups per sub-agent, then a synthesis."""
    plan = {
        "subtasks": [
            {"id": f"s{i}", "goal": f"Find fact s{i}.", "depends_on": []}
            for i in range(config.subtasks)
        ],
        "rationale": "independent lookups",
    }

    async def decide(request: ModelRequest) -> Turn:
        if config.latency_s:
            await anyio.sleep(config.latency_s)
        if request.output is not None:
            return reply(json.dumps(plan))
        if not request.tools:
            return "The facts, all found."
        step = sum(isinstance(m, AssistantMessage) for m in request.messages)
        return call("lookup", key=f"k.{step}") if step < config.steps else "Found it."

    return decide


async def _lookup(key: str) -> str:
    await anyio.lowlevel.checkpoint()
    return f"{key}: the fact"


def _orchestrator(config: Config, journal: Journal | None) -> Orchestrator:
    limits = Limits(
        max_concurrency=config.subtasks,
        max_subtasks=config.subtasks,
        agent=agents.AgentLimits(max_steps=config.steps + 2),
    )
    model = FunctionModel(_decide(config), name="bench")
    return Orchestrator(
        model, [lookup_tool(_lookup)], journal=journal, config=RunConfig(limits=limits)
    )


async def _timed(orch: Orchestrator) -> tuple[float, float]:
    """Wall and CPU seconds of one run, after a collection (so neither way pays for the other)."""
    gc.collect()
    wall, cpu = time.perf_counter(), time.process_time()
    result = await orch.run(GOAL, run_id=RUN_ID)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    if result.status != "complete":
        raise RuntimeError(f"run {result.status}: {result.reason}")
    return wall, cpu


async def _plain(config: Config, _base: Path, _empty: int) -> Sample:
    wall, cpu = await _timed(_orchestrator(config, None))
    return Sample(wall_s=wall, cpu_s=cpu)


async def _journaled(config: Config, base: Path, empty: int) -> Sample:
    with tempfile.TemporaryDirectory(dir=base, prefix="paor-journal-cost-") as folder:
        path = Path(folder) / "journal.db"
        start = time.perf_counter()
        journal = await Journal(path).open()
        open_s = time.perf_counter() - start
        try:
            wall, cpu = await _timed(_orchestrator(config, journal))
            written = _size(path) + _size(path.with_name(path.name + "-wal"))
            kinds = Counter(r.kind for r in await journal.load(RUN_ID))
        finally:
            start = time.perf_counter()
            await journal.aclose()  # the last connection checkpoints the -wal into the file
            open_s += time.perf_counter() - start
        effects = sum(kinds.values())
        return Sample(
            wall_s=wall,
            cpu_s=cpu,
            effects=effects,
            kinds=dict(sorted(kinds.items())),
            written_bytes=written,
            kept_bytes=_size(path) - empty,
            open_close_s=open_s,
        )


def _size(path: Path) -> int:
    return path.stat().st_size if path.exists() else 0


async def _empty_size(base: Path) -> int:
    """The size of a journal with no run in it: its schema's pages."""
    with tempfile.TemporaryDirectory(dir=base, prefix="paor-journal-cost-") as folder:
        path = Path(folder) / "journal.db"
        await (await Journal(path).open()).aclose()
        return _size(path)


Way = Callable[[Config, Path, int], Awaitable[Sample]]


async def measure(config: Config, *, runs: int, warmup: int, base: Path) -> dict[str, Any]:
    """Both ways, alternating (which goes first alternates too); returns the figures."""
    empty = await _empty_size(base)
    found: dict[bool, list[Sample]] = {False: [], True: []}
    for i in range(warmup + runs):
        for journaled in (False, True) if i % 2 == 0 else (True, False):
            way: Way = _journaled if journaled else _plain
            sample = await way(config, base, empty)
            if i >= warmup:
                found[journaled].append(sample)
    return _figures(config, found[False], found[True])


def _figures(config: Config, plain: list[Sample], journaled: list[Sample]) -> dict[str, Any]:
    effects = statistics.median(s.effects for s in journaled)
    pairs = list(zip(plain, journaled, strict=True))
    wall_plain = statistics.median(s.wall_s for s in plain)
    wall_journal = statistics.median(s.wall_s for s in journaled)

    def per_effect(diff: Callable[[Sample, Sample], float]) -> float:
        return statistics.median(diff(p, j) / j.effects for p, j in pairs)

    return {
        "subtasks": config.subtasks,
        "steps": config.steps,
        "model_latency_ms": config.latency_s * 1000,
        "runs": len(pairs),
        "effects_per_run": effects,
        "effects_by_kind": journaled[0].kinds,
        "wall_ms_without": round(wall_plain * 1000, 3),
        "wall_ms_with": round(wall_journal * 1000, 3),
        "ratio": round(wall_journal / wall_plain, 4),
        "added_wall_us_per_effect": round(per_effect(lambda p, j: j.wall_s - p.wall_s) * 1e6, 1),
        "added_cpu_us_per_effect": round(per_effect(lambda p, j: j.cpu_s - p.cpu_s) * 1e6, 1),
        "written_bytes_per_effect": round(
            statistics.median(j.written_bytes / j.effects for j in journaled)
        ),
        "kept_bytes_per_effect": round(
            statistics.median(j.kept_bytes / j.effects for j in journaled)
        ),
        "open_close_ms": round(statistics.median(j.open_close_s for j in journaled) * 1000, 3),
    }


def filesystem(path: Path) -> str:
    """The type of the file system `path` is on (the longest matching mount), from /proc/mounts."""
    try:
        mounts = Path("/proc/mounts").read_text().splitlines()
    except OSError:
        return "unknown"
    resolved, best, kind = str(path.resolve()), "", "unknown"
    for line in mounts:
        _dev, point, fstype, *_ = line.split()
        inside = resolved == point or resolved.startswith(point.rstrip("/") + "/")
        if inside and len(point) >= len(best):
            best, kind = point, fstype
    return kind


def fsync_ms(base: Path, *, times: int = 50) -> float:
    """The median time to append a short line to a file in `base` and fsync it: the floor
    under every durable append on this file system."""
    spent = []
    with tempfile.TemporaryFile(dir=base) as file:
        for _ in range(times):
            start = time.perf_counter()
            file.write(b"x" * 100)
            file.flush()
            os.fsync(file.fileno())
            spent.append(time.perf_counter() - start)
    return round(statistics.median(spent) * 1000, 3)


ROWS = (
    ("effects per run", "effects_per_run"),
    ("median wall per run without journal, ms", "wall_ms_without"),
    ("median wall per run with journal, ms", "wall_ms_with"),
    ("with / without, whole run", "ratio"),
    ("added wall per effect, us", "added_wall_us_per_effect"),
    ("added CPU per effect, us", "added_cpu_us_per_effect"),
    ("bytes written per effect (file + -wal)", "written_bytes_per_effect"),
    ("bytes kept per effect (checkpointed)", "kept_bytes_per_effect"),
    ("open + close of the journal, ms", "open_close_ms"),
)


def render(results: dict[str, Any]) -> str:
    """A markdown table: one column per workload."""
    sections = results["workloads"]
    names = list(sections)
    lines = [
        f"Command: `{results['command']}` ({results['runtime_s']:.1f} s on {results['cpus']} "
        f"CPUs); journal in {results['dir']} ({results['filesystem']}, one fsync "
        f"{results['fsync_ms']} ms); {next(iter(sections.values()))['runs']} runs each way",
        "",
        "| figure | " + " | ".join(names) + " |",
        "|---|" + "---|" * len(names),
    ]
    for label, key in ROWS:
        lines.append(f"| {label} | " + " | ".join(str(sections[n][key]) for n in names) + " |")
    return "\n".join(lines)


def _parse(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.journal_cost", description=__doc__)
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.add_argument("--runs", type=int, default=40, help="timed runs each way (default 40)")
    parser.add_argument("--warmup", type=int, default=4, help="untimed runs each way first")
    parser.add_argument("--subtasks", type=int, default=4, help="subtasks per run (default 4)")
    parser.add_argument("--steps", type=int, default=3, help="tool calls per sub-agent")
    parser.add_argument("--latency-ms", type=float, default=20.0, help="the realistic model's")
    parser.add_argument("--dir", type=Path, default=Path(tempfile.gettempdir()))
    parser.add_argument("--out", type=Path, default=HERE / "journal_cost.json")
    return parser.parse_args(argv)


async def _all(args: argparse.Namespace) -> dict[str, dict[str, Any]]:
    workloads = {
        "zero-latency model": Config(subtasks=args.subtasks, steps=args.steps),
        f"model {args.latency_ms:g} ms per call": Config(
            subtasks=args.subtasks, steps=args.steps, latency_s=args.latency_ms / 1000
        ),
    }
    return {
        name: await measure(config, runs=args.runs, warmup=args.warmup, base=args.dir)
        for name, config in workloads.items()
    }


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    """Parse the command line, measure both workloads, print the table and write the JSON."""
    argv = sys.argv[1:] if argv is None else list(argv)
    args = _parse(argv)
    structlog.configure(  # noqa: TID251 - the benchmark is an application: it configures logging
        wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING),
        cache_logger_on_first_use=True,
    )
    start = time.perf_counter()
    workloads = anyio.run(_all, args)
    results = {
        "command": " ".join(["python -m benchmarks.journal_cost", *argv]),
        "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "cpus": os.cpu_count(),
        "dir": str(args.dir),
        "filesystem": filesystem(args.dir),
        "fsync_ms": fsync_ms(args.dir),
        "synchronous": Journal.synchronous,
        "workloads": workloads,
        "runtime_s": round(time.perf_counter() - start, 1),
    }
    print(render(results))
    args.out.write_text(json.dumps(results, indent=2) + "\n")
    print(f"results: {args.out}")
    return results


if __name__ == "__main__":
    main()
