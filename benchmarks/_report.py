"""The results as Markdown tables (printed, and pasted into `benchmarks/README.md`), and as JSON."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["brief_table", "render", "update_readme", "write_json"]

COLUMNS = (
    "paor",
    "paor (in-process)",
    "paor (defaults)",
    "parallel-tools",
    "react",
    "langgraph-plan",
    "langgraph-tasks",
    "openai-agents-plan",
)
LIMITED = ("paor", "paor (no admission)", "parallel-tools", "langgraph-tasks", "openai-agents-plan")
PEERS = ("paor", "react", "langgraph-react", "langgraph-plan", "openai-agents")
_LARGE_HEADER = [
    "framework", "run", "failed", "refused", "largest prompt", "prompt tokens", "dollars",
    "wall / cp",
]  # fmt: skip
_BRIEF_HEADER = ["framework", "run", "failed", "requests", "prompt tokens", "dollars", "wall / cp"]
BEGIN, END = "<!-- results:begin -->", "<!-- results:end -->"


def _steal(results: dict[str, Any]) -> str:
    share = results["machine"].get("steal_share")
    return "" if share is None else f"; CPU time taken by the host's other guests: {share:.1%}"


def render(results: dict[str, Any]) -> str:
    """Every table, in Markdown."""
    parts = [
        f"Command: `{results['command']}` ({results.get('runtime_s', '?')} s on {results['machine']['cpus']} CPUs, "
        f"Python {results['machine']['python']}, {results['started']}){_steal(results)}",
        "",
        *(f"- {name}: {why}" for name, why in results["unavailable"].items()),
        "",
        f"Wall time over the critical path, the median of {results.get('rounds', '?')} runs of every "
        "framework after the same warm-up (in parentheses: over the parallel-tool-call agent's):",
        "",
        _table(["scenario", "critical path", "ideal speedup", *COLUMNS], list(_walls(results))),
        "",
        "Cost per task in dollars under the price table, with prompt caching (over the parallel-tool-call "
        "agent's):",
        "",
        _table(
            ["scenario", *COLUMNS],
            list(_rows(results, "${dollars:.4f} ({dollars_vs_parallel:.2f})")),
        ),
        "",
        "The same without prompt caching (every prompt token at the input price; over the "
        "parallel-tool-call agent's), for a provider that caches nothing or a prompt too short "
        "to cache:",
        "",
        _table(
            ["scenario", *COLUMNS],
            list(_rows(results, "${dollars_uncached:.4f} ({dollars_uncached_vs_parallel:.2f})")),
        ),
        "",
        "Prompt tokens per task (cached by the provider's rules):",
        "",
        _table(
            ["scenario", *COLUMNS], list(_rows(results, "{prompt_tokens:,} ({cached_tokens:,})"))
        ),
        "",
        "What each framework's model read: the mean share of each needed lookup's result that "
        "reached a prompt, and on S13 the looked-up facts that reached the final answer's prompt "
        "(`benchmarks/_facts.py`):",
        "",
        _table(["scenario", *COLUMNS], list(_rows(results, _read))),
        "",
        "Under a tokens-per-minute limit, one run each: wall in seconds and over the limit's own "
        "minimum; requests refused with a 429 (after the first answer); subtasks that failed; "
        "dollars:",
        "",
        _table(["scenario", *LIMITED], list(_limited(results.get("limited", {})))),
        "",
        "Tool results of 10,000 to 100,000 tokens behind a 128,000-token context window (S10), "
        "one run each: how the run ended, subtasks that failed, prompts refused as over the "
        "window, the largest prompt sent, prompt tokens (the share the provider cached), dollars, "
        "and wall over the critical path (which leaves prefill out):",
        "",
        _table(_LARGE_HEADER, list(_large(results.get("large", {})))),
        "",
        "Hangs (S11: S2 where one model request in ten is never answered; every client with a 2 s "
        "timeout and its retries), one run each: how the run ended, subtasks that failed, the "
        "hangs it met in its requests, dollars, and wall over the critical path (which has no "
        "hang in it):",
        "",
        _table(
            ["framework", "run", "failed", "hung / requests", "dollars", "wall / cp"],
            list(_hangs(results.get("hangs", {}))),
        ),
        "",
        "A long brief (S12: S2 where every framework adds the same 2,166-token brief to its "
        "workers' instructions, under prompt caching; paor also with `warm_cache=True`), one run "
        "each: how the run ended, subtasks that failed, the requests sent, prompt tokens (the share "
        "the provider cached), dollars, and wall over the critical path (which leaves prefill out):",
        "",
        brief_table(results.get("brief", {})),
        "",
        "Per-framework figures:",
        "",
        _table(["figure", *PEERS], list(_figures(results))),
        "",
        *_load(results.get("load")),
        *_temporal(results.get("temporal")),
        "Targets:",
        "",
        _table(
            ["target", "paor", "met"],
            [[t["target"], t["value"], _verdict(t["met"])] for t in results["targets"]],
        ),
    ]
    return "\n".join(parts)


def _verdict(met: bool | None) -> str:
    return "not measured" if met is None else ("met" if met else "**missed**")


def _cell(run: dict[str, Any] | None, fmt: str | Callable[[dict[str, Any]], str]) -> str:
    if run is None:
        return "n/a"
    if run.get("error"):
        return f"error: {run['error'][:60]}"
    if callable(fmt):
        return fmt(run)
    try:
        return fmt.format(**run)
    except KeyError:  # a figure this run's results predate
        return "n/a"


def _walls(results: dict[str, Any]) -> list[list[str]]:
    rows = []
    for name, sc in results["scenarios"].items():
        cells = []
        for column in COLUMNS:
            run = sc["runs"].get(column)
            versus = (
                "" if run is None or "wall_vs_parallel" not in run else " ({wall_vs_parallel:.2f})"
            )
            cells.append(_cell(run, "{wall_over_cp:.3f}" + versus))
        rows.append(
            [
                f"{name} {sc['title']}",
                f"{sc['critical_path_s']:.2f} s",
                f"{sc['ideal_speedup']:.2f}x",
                *cells,
            ]
        )
    return rows


def _rows(results: dict[str, Any], fmt: str | Callable[[dict[str, Any]], str]) -> list[list[str]]:
    rows = []
    for name, sc in results["scenarios"].items():
        rows.append([name, *(_cell(sc["runs"].get(c), fmt) for c in COLUMNS)])
    return rows


def _read(run: dict[str, Any]) -> str:
    share = run.get("read_share")
    text = "n/a" if share is None else f"{share:.0%}"
    if "facts_reached" in run:
        text += f"; {run['facts_reached']}/{run['facts_needed']} facts"
    return text


def _limited(found: dict[str, Any]) -> list[list[str]]:
    fmt = (
        "{wall_s:.2f} s, {wall_over_floor:.3f}; {refused} ({refused_after_first}); "
        "{failed_subtasks}; ${dollars:.4f}"
    )
    rows = []
    for name, runs in found.items():
        cells = []
        for column in LIMITED:
            run = runs.get(column)
            if run is not None and run.get("error"):  # a failed run still shows what it cost
                run = {
                    **run,
                    "error": f"{run['refused']} refused, {run['failed_subtasks']} failed: {run['error']}",
                }
            cells.append(_cell(run, fmt))
        rows.append([name, *cells])
    return rows


def _large(found: dict[str, Any]) -> list[list[str]]:
    return _one_run_rows(
        found,
        lambda run: [
            str(run["refused"]),
            f"{run['largest_prompt']:,}",
            _cached(run),
        ],
    )


def brief_table(found: dict[str, Any]) -> str:
    """The S12 table: one run of each framework with the long brief, keyed by framework."""
    rows = _one_run_rows(found, lambda run: [str(run["requests"]), _cached(run)])
    return _table(_BRIEF_HEADER, rows)


def _cached(run: dict[str, Any]) -> str:
    """A one-run section's prompt tokens, and in parentheses the share the provider cached."""
    return f"{run['prompt_tokens']:,} ({run['cached_share']:.0%})"


def _hangs(found: dict[str, Any]) -> list[list[str]]:
    return _one_run_rows(found, lambda run: [f"{run['hung']} / {run['requests']}"])


def _one_run_rows(
    found: dict[str, Any], middle: Callable[[dict[str, Any]], list[str]]
) -> list[list[str]]:
    """A one-run section's rows: framework, how the run ended, failed subtasks, the section's own
    cells, dollars, wall over the critical path."""
    rows = []
    for name, run in found.items():
        error = run.get("error")
        rows.append(
            [
                name,
                "complete" if error is None else f"error: {error[:70]}",
                str(run["failed_subtasks"]),
                *middle(run),
                f"${run['dollars']:.4f}",
                "n/a" if error is not None else f"{run['wall_over_cp']:.3f}",
            ]
        )
    return rows


def _figures(results: dict[str, Any]) -> list[list[str]]:
    cpu = results["s0"]
    gaps = results["dispatch_gap_ms"]
    memory = results["memory"]
    s8 = results["s8"]

    def gap(key: str) -> str:
        found = gaps.get(key)
        return (
            "n/a" if not found else f"{found['p50']:.2f} / {found['p99']:.2f} ({found['samples']})"
        )

    http = results.get("overhead", {}).get("http_cpu", {})
    cold = results.get("overhead", {}).get("cold_start_s", {})

    def seconds(name: str) -> str:
        found = cold.get(name)
        return f"{found:.2f}" if isinstance(found, float) else "n/a"

    def rss(name: str) -> str:
        sizes = memory.get(name, {})
        shown = [
            f"{figures['mib_per_1000']:.1f} ({int(n):,})"
            if "mib_per_1000" in figures
            else f"error ({int(n):,})"
            for n, figures in sorted(sizes.items(), key=lambda kv: int(kv[0]))
        ]
        return ", ".join(shown) or "n/a"

    return [
        [
            "framework CPU per executor step, S0 (us)",
            *(_cell(cpu.get(p), "{cpu_us_per_step:.0f}") for p in PEERS),
        ],
        [
            "dispatch gap p50 / p99, ms (samples)",
            f"{gap('paor (in-process)')} in-process; {gap('paor (HTTP)')} HTTP",
            "n/a",
            "n/a",
            f"plan: {gap('langgraph-plan (HTTP)')}; tasks: {gap('langgraph-tasks (HTTP)')}",
            "n/a",
        ],
        [
            "framework CPU per executor step over HTTP, S0 (us)",
            *(_cell(http.get(p), "{cpu_us_per_step:.0f}") for p in PEERS),
        ],
        [
            "cold start, s (import; `paor --help`)",
            f"{seconds('paor')}; {seconds('paor --help')}",
            "n/a",
            seconds("langgraph"),
            seconds("langgraph"),
            "n/a",
        ],
        [
            "peak RSS per 1,000 concurrent sub-agents, MiB (sub-agents)",
            f"{rss('paor')}; with the HTTP client {rss('paor (HTTP)')}, "
            f"100 requests in flight {rss('paor (HTTP, 100 in flight)')}",
            *(rss(p) for p in PEERS[1:]),
        ],
        ["S8 executor prompt tokens inside a stable prefix", *(_share(s8.get(p)) for p in PEERS)],
        ["S8 prompt tokens", *(_cell(s8.get(p), "{prompt_tokens:,}") for p in PEERS)],
    ]


def _load(found: dict[str, Any] | None) -> list[str]:
    """The load section: runs at once in one process, a table per transport, a blank line."""
    if not found:
        return []
    fmt = (
        "{runs_per_s:.1f}", "{wall_over_cp_p50:.3f} / {wall_over_cp_p99:.3f}",
        "{lag_ms_p50:.2f} / {lag_ms_p99:.2f} / {lag_ms_max:.1f}",
        "{dispatch_ms_p50:.2f} / {dispatch_ms_p99:.2f}", "{failed}",
    )  # fmt: skip
    rows = [[name, *(f.format(**figures) for f in fmt)] for name, figures in found.items()]
    runs = next(iter(found.values()))["runs"]
    header = ["transport", "runs/s", "wall / critical path p50 / p99",
              "loop lag ms p50 / p99 / max", "dispatch gap ms p50 / p99", "failed runs"]  # fmt: skip
    return [f"{runs} concurrent paor runs of S3 in one process:", "", _table(header, rows), ""]


def _temporal(found: dict[str, Any] | None) -> list[str]:
    """The Temporal section: a heading, the table (or why there is none), a blank line."""
    heading = "Temporal backend (the dev server and one worker, beside the in-process backend):"
    if found is None:
        return []
    reason = found.get("skipped") or found.get("error")
    if reason:
        return [heading, "", f"- {reason}", ""]
    batch, run = found["throughput"], found["run"]
    rows = [
        [
            f"batch throughput, trivial goals per second ({found['goals']:,} goals, "
            f"concurrency {found['concurrency']})",
            f"{batch['in_process']:,.0f}",
            f"{batch['temporal']:,.0f}",
            f"{batch['ratio']:.3f}x",
        ],
        [
            f"wall per plan-and-execute run, ms (median of {found['runs']}; "
            f"{run['calls']} model and tool calls)",
            f"{run['in_process']:.1f}",
            f"{run['temporal']:.1f}",
            f"{run['ratio']:.1f}x",
        ],
        [
            "added latency per model or tool call as an activity, ms",
            "n/a",
            f"{run['added_ms_per_call']:.1f}",
            "n/a",
        ],
    ]
    table = _table(["figure", "in-process", "Temporal", "Temporal / in-process"], rows)
    return [heading, "", table, ""]


def _share(found: dict[str, Any] | None) -> str:
    if found is None:
        return "n/a"
    share = found.get("prefix_share")
    return f"error: {found.get('error')}" if share is None else f"{share:.1%}"


def _table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def write_json(results: dict[str, Any], path: Path) -> None:
    """Save the results (NaN becomes null)."""
    path.write_text(json.dumps(_clean(results), indent=2) + "\n")


def _clean(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_clean(v) for v in value]
    return value


def update_readme(results: dict[str, Any], readme: Path) -> None:
    """Replace the tables between the results markers of `readme`."""
    text = readme.read_text()
    head, _, rest = text.partition(BEGIN)
    _, _, tail = rest.partition(END)
    readme.write_text(f"{head}{BEGIN}\n{render(results)}\n{END}{tail}")
