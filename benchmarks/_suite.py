"""The suite: every scenario for paor and each peer, in one run, gathered into one results dict."""

from __future__ import annotations

import gc
import importlib.util
import json
import os
import platform
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio

from benchmarks import _openai_agents as oa
from benchmarks._brief import s12
from benchmarks._catalogue import SCENARIOS, s0, s8
from benchmarks._figures import (
    dispatch_gaps,
    median,
    percentile,
    prefix_share,
    prompt_tokens,
    reading,
    targets,
)
from benchmarks._hostile import hang_figures, large_figures, s10, s11
from benchmarks._limits import (
    LIMITED,
    dollars,
    limited_figures,
    limited_scenario,
    limited_title,
)
from benchmarks._load import concurrent_runs
from benchmarks._overhead import COLD_STARTS, cold_start, http_cpu
from benchmarks._paor import run_executor, run_orchestrator, s0_cpu
from benchmarks._react import REACT_INSTRUCTIONS, run_parallel, run_react, s0_cpu_react
from benchmarks._run import RunRecord
from benchmarks._scenarios import Scenario

__all__ = ["FRAMEWORKS", "Suite"]

FRAMEWORKS = (
    "paor",
    "parallel-tools",
    "react",
    "langgraph-react",
    "langgraph-plan",
    "langgraph-tasks",
    "openai-agents",
    "openai-agents-plan",
)
# Single sequential agents inside a framework: dominated by the parallel-tool-call agent and the
# frameworks' own parallel shapes, they are measured on S0, S7 and S8 but not timed on the DAGs
# (a round of them would take as long as all the others together).
SEQUENTIAL = ("langgraph-react", "openai-agents")
# Peers whose every run is a fresh process: each warms up in that process (`_openai_agents`).
IN_SUBPROCESS = ("openai-agents", "openai-agents-plan")
ROUNDS = 3  # every framework's DAG figures are the median of this many runs
# Scenarios run by paor (over HTTP, eager), the parallel agent and the framework peers only.
LEAN = ("S13", "S13b")
ROOT = Path(__file__).resolve().parent.parent
Runner = Callable[[Scenario], Awaitable[RunRecord]]


async def _paor_http(scenario: Scenario) -> RunRecord:
    return await run_orchestrator(scenario, http=True)


async def _paor_inproc(scenario: Scenario) -> RunRecord:
    return await run_orchestrator(scenario, http=False)


async def _paor_defaults(scenario: Scenario) -> RunRecord:
    return await run_orchestrator(scenario, http=True, eager=False)


async def _paor_warm_cache(scenario: Scenario) -> RunRecord:
    return await run_orchestrator(scenario, http=True, warm_cache=True)


@dataclass(kw_only=True)
class Suite:
    """One run of the benchmark suite.

    Args:
        quick: Run a fast subset (S0, S2, S3, S8, S7 up to 1,000 sub-agents, and a smaller
            Temporal section; no repeats).
        progress: Receives one line per finished measurement.
    """

    quick: bool = False
    progress: Callable[[str], None] = print
    unavailable: dict[str, str] = field(default_factory=dict)
    runners: dict[str, Runner] = field(default_factory=dict)
    s0_samples: list[tuple[float, int]] = field(default_factory=list)

    async def run(self) -> dict[str, Any]:
        """Run everything; return the results (see `benchmarks/README.md` for the fields)."""
        results: dict[str, Any] = {
            "command": "python -m benchmarks" + (" --quick" if self.quick else ""),
            "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "machine": {
                "python": platform.python_version(),
                "cpus": os.cpu_count(),
                "platform": platform.platform(),
            },
            "frameworks": list(FRAMEWORKS),
            "unavailable": self.unavailable,
            "scenarios": {},
            "s0": {},
            "dispatch_gap_ms": {},
            "memory": {},
            "s8": {},
        }
        ticks = _cpu_ticks()
        await self._peers()
        await self._warm_up()
        results["scenarios"], results["dispatch_gap_ms"] = await self._scenarios()
        results["rounds"] = 1 if self.quick else ROUNDS
        results["limited"] = await self._limited()
        results["large"] = await self._large()
        results["hangs"] = await self._hangs()
        results["brief"] = await self._brief()
        results["s0"] = await self._s0()
        results["overhead"] = await self._overhead()
        results["load"] = await self._load()
        results["s8"] = await self._s8()
        results["memory"] = await self._s7()
        results["temporal"] = await self._temporal()
        results["targets"] = [t.as_dict() for t in targets(results)]
        results["machine"]["steal_share"] = _steal_share(ticks, _cpu_ticks())
        return results

    async def run_brief(self) -> dict[str, Any]:
        """S12 alone, as `run` measures it (`python -m benchmarks._brief`): the same peers and
        warm-up, then one run of each."""
        await self._peers()
        await self._warm_up()
        return await self._brief()

    async def _peers(self) -> None:
        self.runners = {"paor": _paor_http, "parallel-tools": run_parallel, "react": run_react}
        try:
            from benchmarks import _langgraph as lg
        except ImportError as exc:
            reason = f"unavailable: {exc} (install the bench extra)"
            self.unavailable.update({"langgraph-react": reason, "langgraph-plan": reason})
        else:

            async def lg_react(scenario: Scenario) -> RunRecord:
                return await lg.run_langgraph(scenario, shape="react")

            async def lg_plan(scenario: Scenario) -> RunRecord:
                return await lg.run_langgraph(scenario, shape="plan")

            async def lg_tasks(scenario: Scenario) -> RunRecord:
                return await lg.run_langgraph(scenario, shape="tasks")

            self.runners.update(
                {
                    "langgraph-react": lg_react,
                    "langgraph-plan": lg_plan,
                    "langgraph-tasks": lg_tasks,
                }
            )
        self.progress(
            f"preparing {oa.PIN} in benchmarks/{oa.VENV.name} (the first run installs it)"
        )
        try:
            await oa.ensure_peer()
        except (oa.PeerUnavailable, OSError) as exc:
            for name in IN_SUBPROCESS:
                self.unavailable[name] = f"unavailable: {exc}"
        else:

            async def sdk_react(scenario: Scenario) -> RunRecord:
                return await oa.run_openai_agents(scenario, warmup=1)

            async def sdk_plan(scenario: Scenario) -> RunRecord:
                return await oa.run_openai_agents_plan(scenario, warmup=1)

            self.runners.update({"openai-agents": sdk_react, "openai-agents-plan": sdk_plan})

    async def _warm_up(self) -> None:
        """One untimed run each: lazy imports, first connections and caches are not the figures.

        A peer in a subprocess gets the same warm-up inside each run's process instead."""
        scenario = SCENARIOS["S1"]
        for name, runner in self.runners.items():
            if name not in IN_SUBPROCESS:
                await self._attempt(name, runner, scenario)
        await self._attempt("paor", _paor_inproc, scenario)

    async def _attempt(self, name: str, runner: Runner, scenario: Scenario) -> RunRecord:
        try:
            return await runner(scenario)
        except Exception as exc:  # a peer failing must not end the suite: it is reported
            return RunRecord(
                framework=name,
                scenario=scenario.name,
                transport="http",
                error=f"{type(exc).__name__}: {exc}"[:300],
            )

    async def _load(self) -> dict[str, Any]:
        """100 concurrent runs of S3 in this process (20 with `quick`), in process and over HTTP."""
        n = 20 if self.quick else 100
        found: dict[str, Any] = {}
        for transport, http in (("in-process", False), ("HTTP", True)):
            _freeze_the_heap()
            found[transport] = await concurrent_runs(SCENARIOS["S3"], n, http=http)
            self.progress(f"{n} concurrent runs of S3, {transport}: {found[transport]}")
        return found

    async def _overhead(self) -> dict[str, Any]:
        """CPU per executor step with each framework's real HTTP client, and cold starts."""
        runs = 200 if self.quick else 400
        cpu: dict[str, Any] = {}
        for name in ("paor", "react", "langgraph-react"):
            if name in self.runners:
                _freeze_the_heap()
                try:
                    # The least of three samples, as on S0: noise only ever adds CPU time.
                    samples = [await http_cpu(name, runs) for _ in range(3)]
                except Exception as exc:  # reported, not fatal
                    cpu[name] = {"error": f"{type(exc).__name__}: {exc}"[:300]}
                else:
                    cpu[name] = _cpu(min(samples, key=lambda s: s[0] / max(s[1], 1)))
                self.progress(f"CPU over HTTP {name}: {cpu[name]}")
        cold: dict[str, Any] = {}
        for name, command in COLD_STARTS.items():
            try:
                cold[name] = round(await cold_start(command, 3 if self.quick else 7), 4)
            except RuntimeError as exc:  # e.g. LangGraph not installed
                cold[name] = {"error": str(exc)[:300]}
            self.progress(f"cold start {name}: {cold[name]}")
        return {"http_cpu": cpu, "cold_start_s": cold}

    async def _limited(self) -> dict[str, Any]:
        """S2 and S6.1 behind a tight tokens-per-minute limit: one run of each framework, and of
        paor with its admission control off (what any client does without one)."""

        async def no_admission(scenario: Scenario) -> RunRecord:
            return await run_orchestrator(scenario, http=True, admission=False)

        runners = self._one_run_peers()
        runners["paor (no admission)"] = no_admission
        found: dict[str, Any] = {}
        for name in LIMITED[:1] if self.quick else LIMITED:
            scenario = limited_scenario(name)
            found[limited_title(scenario)] = await self._one_run_each(
                scenario, runners, limited_figures, limited_title(scenario)
            )
        return found

    async def _large(self) -> dict[str, Any]:
        """S10, tool results of 10,000 to 100,000 tokens behind a 128,000-token window: one run
        of each framework, and of paor with its defaults (no direct calls, no plan streaming)."""
        runners = self._one_run_peers()
        runners["paor (defaults)"] = _paor_defaults
        return await self._one_run_each(s10(), runners, large_figures, "S10")

    async def _hangs(self) -> dict[str, Any]:
        """S11, S2 with one model request in ten hung behind a 2 s client timeout: one run each."""
        runners = self._one_run_peers()
        runners["paor (defaults)"] = _paor_defaults
        return await self._one_run_each(s11(), runners, hang_figures, "S11")

    async def _brief(self) -> dict[str, Any]:
        """S12, S2 with a 2,166-token brief in every worker's instructions, under prompt caching:
        one run of each framework, and of paor warming the cache (`warm_cache=True`)."""
        runners = self._one_run_peers()
        runners["paor (warm cache)"] = _paor_warm_cache
        return await self._one_run_each(s12(), runners, large_figures, "S12")

    def _one_run_peers(self) -> dict[str, Runner]:
        """The frameworks the one-run sections time: every parallel shape, paor, and the
        parallel-tool-call agent (not the sequential agents, nor LangGraph's superstep shape)."""
        return {
            name: runner
            for name, runner in self.runners.items()
            if name not in (*SEQUENTIAL, "react", "langgraph-plan")
        }

    async def _one_run_each(
        self,
        scenario: Scenario,
        runners: dict[str, Runner],
        figures: Callable[[RunRecord, Scenario], dict[str, Any]],
        title: str,
    ) -> dict[str, Any]:
        runs: dict[str, Any] = {}
        for framework, runner in runners.items():
            _freeze_the_heap()
            record = await self._attempt(framework, runner, scenario)
            runs[framework] = figures(record, scenario)
            self.progress(f"{title} {framework}: {runs[framework]}")
        return runs

    @property
    def _s0_runs(self) -> int:
        return 1000 if self.quick else 2000

    async def _s0(self) -> dict[str, Any]:
        runs = self._s0_runs
        scenario = s0()
        found: dict[str, Any] = {}
        # The least of several samples, taken one per round of the scenarios and one now: the
        # machine is shared, noise only ever adds time, and its slow spells last seconds.
        _freeze_the_heap()
        samples = [*self.s0_samples, await s0_cpu(scenario, runs // 5)]
        found["paor"] = _cpu(min(samples, key=lambda s: s[0] / max(s[1], 1)))
        found["react"] = _cpu(await s0_cpu_react(scenario, runs))
        if "langgraph-react" in self.runners:
            from benchmarks._langgraph import s0_cpu_langgraph

            found["langgraph-react"] = _cpu(await s0_cpu_langgraph(scenario, runs // 4))
        if "openai-agents" in self.runners:
            job = {
                "mode": "s0",
                "runs": runs // 4,
                "task": f"Task: {scenario.plan[0].goal}",
                "instructions": REACT_INSTRUCTIONS,
            }
            try:
                done = await oa.run_peer(job)
                found["openai-agents"] = _cpu((done["cpu_s"], done["steps"]))
            except oa.PeerUnavailable as exc:
                found["openai-agents"] = {"error": str(exc)}
        for name, figures in found.items():
            self.progress(f"S0 {name}: {figures.get('cpu_us_per_step', 'error')} us per step")
        return found

    async def _scenarios(self) -> tuple[dict[str, Any], dict[str, Any]]:
        names = ["S2", "S3"] if self.quick else list(SCENARIOS)
        rounds = 1 if self.quick else ROUNDS
        records: dict[str, dict[str, list[RunRecord]]] = {name: {} for name in names}
        # Rounds over every scenario rather than repeats of one: a slow spell of this shared
        # machine (seconds to a minute) then falls on one run of several scenarios, and the
        # median of each scenario's runs leaves it out.
        for n in range(rounds):
            _freeze_the_heap()
            self.s0_samples.append(await s0_cpu(s0(), self._s0_runs // 5))
            for name in names:
                await self._round(SCENARIOS[name], records[name])
            self.progress(f"round {n + 1} of {rounds} done")
        gaps: dict[str, list[float]] = {
            "paor (HTTP)": [],
            "paor (in-process)": [],
            "langgraph-plan (HTTP)": [],
            "langgraph-tasks (HTTP)": [],
        }
        out = {name: self._scenario(SCENARIOS[name], records[name], gaps) for name in names}
        summary = {
            key: {
                "p50": percentile(v, 50) * 1000,
                "p99": percentile(v, 99) * 1000,
                "samples": len(v),
            }
            for key, v in gaps.items()
            if v
        }
        return out, summary

    async def _round(self, scenario: Scenario, records: dict[str, list[RunRecord]]) -> None:
        """One run of `scenario` by every framework (but the sequential ones), paor in process
        and with its defaults too; on S13 the frameworks the targets name only (its runs are
        long, and the suite keeps within 15 minutes)."""
        lean = scenario.name in LEAN
        for name, runner in self.runners.items():
            if name not in SEQUENTIAL and not (lean and name == "react"):
                records.setdefault(name, []).append(await self._attempt(name, runner, scenario))
        if lean:
            return
        found = await self._attempt("paor", _paor_inproc, scenario)
        records.setdefault("paor (in-process)", []).append(found)
        found = await self._attempt("paor", _paor_defaults, scenario)
        records.setdefault("paor (defaults)", []).append(found)

    def _scenario(
        self,
        scenario: Scenario,
        records: dict[str, list[RunRecord]],
        gaps: dict[str, list[float]],
    ) -> dict[str, Any]:
        cp = scenario.critical_path()
        for key, name in (
            ("paor (HTTP)", "paor"),
            ("paor (in-process)", "paor (in-process)"),
            ("langgraph-plan (HTTP)", "langgraph-plan"),
            ("langgraph-tasks (HTTP)", "langgraph-tasks"),
        ):
            for record in records.get(name, []):
                if record.error is None:
                    gaps[key] += dispatch_gaps(record, scenario)
        runs = {name: _figures(found, cp, scenario) for name, found in records.items()}
        for key, base in (
            ("vs_react", runs.get("react", {})),
            ("vs_parallel", runs.get("parallel-tools", {})),
        ):
            for figures in runs.values():
                if "wall_s" in figures and "wall_s" in base:
                    figures[f"wall_{key}"] = round(figures["wall_s"] / base["wall_s"], 4)
                    figures[f"tokens_{key}"] = round(
                        figures["prompt_tokens"] / base["prompt_tokens"], 4
                    )
                    figures[f"dollars_{key}"] = round(figures["dollars"] / base["dollars"], 4)
                    figures[f"dollars_uncached_{key}"] = round(
                        figures["dollars_uncached"] / base["dollars_uncached"], 4
                    )
        for figures in runs.values():
            if "wall_vs_react" in figures:
                figures["speedup"] = round(1 / figures["wall_vs_react"], 3)
        line = "  ".join(f"{n}={r.get('wall_over_cp', float('nan')):.3f}" for n, r in runs.items())
        self.progress(f"{scenario.name} wall/cp: {line}")
        return {
            "title": scenario.title,
            "subtasks": len(scenario.subs),
            "critical_path_s": cp,
            "sequential_s": scenario.sequential_path(),
            "ideal_speedup": scenario.sequential_path() / cp,
            "runs": runs,
        }

    async def _s8(self) -> dict[str, Any]:
        scenario = s8()

        async def paor(scenario: Scenario) -> RunRecord:
            return await run_executor(scenario, http=True)

        runners: dict[str, Runner] = {**self.runners, "paor": paor}
        for shape in ("langgraph-plan", "langgraph-tasks", "openai-agents-plan"):
            runners.pop(shape, None)
        found: dict[str, Any] = {}
        for name, runner in runners.items():
            record = await self._attempt(name, runner, scenario)
            found[name] = {
                "prefix_share": prefix_share(record) if record.error is None else None,
                "prompt_tokens": prompt_tokens(record),
                "requests": len(record.log),
                "error": record.error,
            }
            self.progress(f"S8 {name}: prefix share {found[name]['prefix_share']}")
        return found

    async def _s7(self) -> dict[str, Any]:
        jobs = [("paor", 100), ("paor", 1000), ("paor (HTTP)", 1000)]
        if not self.quick:
            # With the HTTP client at 10,000, 100 requests in flight: the lean server answers the
            # 20,000 requests in about 45 s that way; with 1,000 in flight, flooded, much slower.
            jobs += [
                ("paor", 10_000),
                ("paor (HTTP, 100 in flight)", 10_000),
                ("langgraph-plan", 1000),
                ("openai-agents", 1000),
            ]
        found: dict[str, Any] = {}
        for name, n in jobs:
            if not name.startswith("paor") and name not in self.runners:
                continue
            figures = await self._memory(name, n)
            found.setdefault(name, {})[str(n)] = figures
            self.progress(
                f"S7 {name} x{n}: {figures.get('kib_per_agent', figures.get('error'))} KiB per sub-agent"
            )
        return found

    async def _temporal(self) -> dict[str, Any]:
        """The Temporal backend beside the in-process one (`benchmarks._temporal`), if installed."""
        if importlib.util.find_spec("temporalio") is None:
            note = "skipped: temporalio is not installed (install the temporal extra)"
            self.progress(f"Temporal backend {note}")
            return {"skipped": note}
        try:
            from benchmarks import _temporal

            sizes = _temporal.QUICK if self.quick else _temporal.FULL
            return await _temporal.measure(sizes, progress=self.progress)
        except Exception as exc:  # reported, not fatal
            self.progress(f"Temporal backend error: {exc}")
            return {"error": f"{type(exc).__name__}: {exc}"[:300]}

    async def _memory(self, name: str, n: int) -> dict[str, Any]:
        try:
            if name == "openai-agents":
                job = {
                    "mode": "memory",
                    "n": n,
                    "task": f"Task: {s0().plan[0].goal}",
                    "instructions": REACT_INSTRUCTIONS,
                }
                raw = await oa.run_peer(job)
            else:
                raw = await _child(name, n)
        except Exception as exc:  # reported, not fatal
            return {"error": f"{type(exc).__name__}: {exc}"[:300]}
        kib = (raw["hwm_kib"] - raw["rss_before_kib"]) / n
        return {**raw, "kib_per_agent": round(kib, 2), "mib_per_1000": round(kib * 1000 / 1024, 2)}


async def _child(name: str, n: int) -> dict[str, Any]:
    """S7 in a fresh interpreter, so one size's memory does not count against the next."""
    with anyio.fail_after(480):
        done = await anyio.run_process(
            [sys.executable, "-m", "benchmarks._memory", name, str(n)], cwd=ROOT, check=False
        )
    if done.returncode:
        raise RuntimeError(done.stderr.decode(errors="replace").strip().splitlines()[-1:])
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def _cpu_ticks() -> tuple[int, int] | None:
    """(stolen, all) CPU ticks of the machine so far, from /proc/stat; None off Linux."""
    try:
        first = Path("/proc/stat").read_text().split("\n", 1)[0].split()
    except OSError:
        return None
    ticks = [int(t) for t in first[1:9]]  # user nice system idle iowait irq softirq steal
    return (ticks[7] if len(ticks) == 8 else 0), sum(ticks)


def _steal_share(before: tuple[int, int] | None, after: tuple[int, int] | None) -> float | None:
    """The share of CPU time the host gave to others while the suite ran (a noisy neighbour)."""
    if before is None or after is None or after[1] <= before[1]:
        return None
    return round((after[0] - before[0]) / (after[1] - before[1]), 4)


def _freeze_the_heap() -> None:
    """Move every live object out of the collector's way, so that a full collection during a
    measurement scans what the measured code made: not the frameworks' modules (one full
    collection took 90 ms with the peers loaded) nor the suite's own records of earlier runs."""
    gc.collect()
    gc.freeze()


def _cpu(sample: tuple[float, int]) -> dict[str, Any]:
    cpu, steps = sample
    return {"cpu_us_per_step": round(cpu / steps * 1e6, 1) if steps else None, "steps": steps}


def _wall(records: list[RunRecord]) -> float | None:
    ok = [r.wall_s for r in records if r.error is None]
    return median(ok) if ok else None


def _figures(records: list[RunRecord], cp: float, scenario: Scenario) -> dict[str, Any]:
    wall = _wall(records)
    errors = [r.error for r in records if r.error]
    if wall is None:
        return {"error": errors[0] if errors else "no run"}
    ok = next(r for r in records if r.error is None)
    return {
        "wall_s": round(wall, 4),
        "walls_s": [round(r.wall_s, 4) for r in records if r.error is None],
        "wall_over_cp": round(wall / cp, 4),
        "prompt_tokens": prompt_tokens(ok),
        "cached_tokens": sum(e.cached_tokens for e in ok.log),
        "dollars": round(dollars(ok), 6),
        "dollars_uncached": round(dollars(ok, cached=False), 6),
        "requests": len(ok.log),
        "errors": len(errors),
        **reading(ok, scenario),
    }
