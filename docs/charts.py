"""Draw the benchmark figures as small SVG charts from the suite's `benchmarks/results.json`.

    .venv/bin/python docs/charts.py     # rewrite docs/benchmarks/*.svg

Plain SVG written by hand (no plotting library): grouped bars, one group per scenario, one bar
per framework, and a dashed line at the ratio the figure is measured against.
`tests/test_docs.py` checks that the SVGs in docs/ are what this draws from the results file, so
the charts cannot disagree with the tables of the same run.
"""

from __future__ import annotations

import json
from html import escape
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results.json"
OUT = ROOT / "docs" / "benchmarks"
FRAMEWORKS = {  # name in the results: bar colour
    "paor": "#3f51b5",
    "paor (defaults)": "#9fa8da",
    "parallel-tools": "#757575",
    "langgraph-tasks": "#2e7d32",
    "langgraph-plan": "#a5d6a7",
    "openai-agents-plan": "#ef6c00",
}
WIDTH, HEIGHT, LEFT, TOP, BOTTOM = 760, 330, 48, 64, 40


def _bars(groups: list[str], series: dict[str, list[float | None]], top: float) -> list[str]:
    """The bars of every group, each with a tooltip giving its value."""
    plot_w, plot_h = WIDTH - LEFT - 10, HEIGHT - TOP - BOTTOM
    group_w = plot_w / len(groups)
    bar_w = group_w * 0.8 / len(series)
    parts = []
    for g, group in enumerate(groups):
        x0 = LEFT + g * group_w + group_w * 0.1
        for s, (name, values) in enumerate(series.items()):
            value = values[g]
            if value is None:
                continue
            h = plot_h * min(value, top) / top
            x, y = x0 + s * bar_w, TOP + plot_h - h
            parts.append(
                f'<rect x="{x:.1f}" y="{y:.1f}" width="{bar_w - 1:.1f}" height="{h:.1f}" '
                f'fill="{FRAMEWORKS[name]}"><title>{escape(name)}, {escape(group)}: '
                f"{value:.3f}</title></rect>"
            )
        label_x = LEFT + g * group_w + group_w / 2
        parts.append(
            f'<text x="{label_x:.1f}" y="{HEIGHT - BOTTOM + 16}" text-anchor="middle">'
            f"{escape(group)}</text>"
        )
    return parts


def _axis(top: float, reference: float) -> list[str]:
    """The y axis with four ticks, and the dashed reference line."""
    plot_h = HEIGHT - TOP - BOTTOM
    parts = []
    for i in range(5):
        value = top * i / 4
        y = TOP + plot_h - plot_h * i / 4
        parts.append(
            f'<line x1="{LEFT}" x2="{WIDTH - 10}" y1="{y:.1f}" y2="{y:.1f}" stroke="#eee"/>'
        )
        parts.append(f'<text x="{LEFT - 6}" y="{y + 4:.1f}" text-anchor="end">{value:g}</text>')
    y = TOP + plot_h - plot_h * reference / top
    parts.append(
        f'<line x1="{LEFT}" x2="{WIDTH - 10}" y1="{y:.1f}" y2="{y:.1f}" stroke="#000" '
        'stroke-dasharray="4 3"/>'
    )
    return parts


def _legend(names: list[str]) -> list[str]:
    """One swatch and name per framework, in a row under the title."""
    parts, x = [], LEFT
    for name in names:
        parts.append(f'<rect x="{x}" y="30" width="10" height="10" fill="{FRAMEWORKS[name]}"/>')
        parts.append(f'<text x="{x + 14}" y="39">{escape(name)}</text>')
        x += 24 + 7 * len(name)
    return parts


def chart(title: str, groups: list[str], series: dict[str, list[float | None]]) -> str:
    """A grouped bar chart as an SVG document; the dashed line is at 1."""
    highest = max(v for values in series.values() for v in values if v is not None)
    top = max(1.0, float(int(highest * 2) + 1) / 2)  # the next half above the highest bar
    body = [
        f'<text x="{LEFT}" y="18" font-weight="bold">{escape(title)}</text>',
        *_legend(list(series)),
        *_axis(top, 1.0),
        *_bars(groups, series, top),
    ]
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT}" '
        f'font-family="sans-serif" font-size="12" role="img" aria-label="{escape(title)}">\n'
        + "\n".join(body)
        + "\n</svg>\n"
    )


def charts(results: dict[str, Any]) -> dict[str, str]:
    """Every chart of the results, by file name."""
    scenarios: dict[str, Any] = results["scenarios"]
    names = [n for n in FRAMEWORKS if any(n in s["runs"] for s in scenarios.values())]

    def figure(key: str) -> dict[str, list[float | None]]:
        return {n: [s["runs"].get(n, {}).get(key) for s in scenarios.values()] for n in names}

    groups = list(scenarios)
    return {
        "wall.svg": chart(
            "Wall time over the critical path (lower is faster; dashed: the critical path)",
            groups,
            figure("wall_over_cp"),
        ),
        "cost.svg": chart(
            "Dollars per task over the parallel-tool-call agent's (dashed: the same cost)",
            groups,
            figure("dollars_vs_parallel"),
        ),
    }


def main() -> None:
    """Rewrite the charts from the results file."""
    for name, svg in charts(json.loads(RESULTS.read_text())).items():
        (OUT / name).write_text(svg)
        print(OUT / name)


if __name__ == "__main__":
    main()
