"""Run the benchmark suite: `python -m benchmarks [--quick] [--out PATH] [--no-research]`.

Prints the tables and writes `benchmarks/results.json` (with `--readme`, also the tables and charts
of `docs/benchmarks/`); then runs the research evaluation over the embedded model
(`benchmarks.research_eval`; three questions with `--quick`) and writes
`benchmarks/research_results.json`. See `docs/benchmarks/index.md`.
"""

from __future__ import annotations

import argparse
import json
import logging
import runpy
import time
from pathlib import Path

import anyio
import structlog

from benchmarks._report import render, update_readme, write_json
from benchmarks._suite import Suite
from benchmarks.research_eval import run_for_suite

HERE = Path(__file__).resolve().parent


def _redraw_charts(results: Path) -> None:
    """Rewrite docs/benchmarks/*.svg from the results just written (`docs/charts.py`)."""
    charts = runpy.run_path(str(HERE.parent / "docs" / "charts.py"))
    for name, svg in charts["charts"](json.loads(results.read_text())).items():
        (charts["OUT"] / name).write_text(svg)


def main() -> None:
    """Parse the command line, run the suite, print and save the results."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="a fast subset (smoke runs)")
    parser.add_argument(
        "--out", type=Path, default=HERE / "results.json", help="where to write JSON"
    )
    parser.add_argument(
        "--readme",
        action="store_true",
        help="put the tables in docs/benchmarks/index.md and redraw its charts",
    )
    parser.add_argument(
        "--no-research",
        action="store_true",
        help="skip the research evaluation (the embedded model: minutes per question)",
    )
    args = parser.parse_args()
    structlog.configure(  # noqa: TID251 - the benchmark is an application: it configures logging
        wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING),
        cache_logger_on_first_use=True,
    )
    start = time.perf_counter()
    suite = Suite(quick=args.quick, progress=lambda line: print(f"  {line}", flush=True))
    results = anyio.run(suite.run)
    results["runtime_s"] = round(time.perf_counter() - start, 1)
    print(render(results))
    write_json(results, args.out)
    if args.readme:
        update_readme(results, HERE.parent / "docs" / "benchmarks" / "index.md")
        _redraw_charts(args.out)
    print(f"results: {args.out}  ({results['runtime_s']:.0f} s)")
    if not args.no_research:
        print(run_for_suite(quick=args.quick, out=HERE / "research_results.json"), flush=True)


if __name__ == "__main__":
    main()
