"""The documentation cannot drift: the site builds with --strict, and every Python block runs.

Each page's blocks run in a subprocess of their own (`tests/_docs_examples.py`), in order, against
a scripted model: a page may set global state (a tracer provider, logging), and a renamed API, a
changed default or a stale assertion fails here with the page and line.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests._docs_examples import SKIP, blocks

ROOT = Path(__file__).resolve().parent.parent
RUNNER = ROOT / "tests" / "_docs_examples.py"
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
# Blocks that only have their imports run (a Temporal server, the reader's own mcp.json).
MOST_SKIPPED = 3
# A code span that opens with a dotted name of paor's (`agents.guards.LoopDetector`).
DOTTED = re.compile(r"`((?:agents|orchestrator|memory)(?:\.[A-Za-z_]\w*)+)")


def _python_pages() -> list[Path]:
    return [page for page in PAGES if any(b.lang == "python" for b in blocks(page.read_text()))]


def _run(*command: str | Path, cwd: Path, timeout: float) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    # The MCP guide starts `mcp-server-time`, installed beside this interpreter.
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    return subprocess.run(
        [str(c) for c in command], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout
    )


@pytest.mark.parametrize("page", _python_pages(), ids=lambda page: str(page.relative_to(ROOT)))
def test_page_examples_run(page: Path, tmp_path: Path) -> None:
    """Every Python block of the page runs, in order, against the scripted docs model."""
    done = _run(sys.executable, RUNNER, page, cwd=tmp_path, timeout=50)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]
    assert " blocks ran" in done.stdout


def test_site_builds_strict(tmp_path: Path) -> None:
    """`mkdocs build --strict` succeeds, and the API reference is rendered from the docstrings."""
    site = tmp_path / "site"
    done = _run(
        sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", site,
        cwd=ROOT, timeout=55,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-4000:]
    reference = (site / "reference" / "orchestrator" / "index.html").read_text()
    assert 'id="orchestrator.Orchestrator.run"' in reference
    assert 'id="orchestrator.RunConfig"' in reference


def test_charts_are_drawn_from_the_results() -> None:
    """The benchmark charts in docs/ are what docs/charts.py draws from benchmarks/results.json."""
    spec = importlib.util.spec_from_file_location("charts", ROOT / "docs" / "charts.py")
    assert spec is not None
    assert spec.loader is not None
    charts = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(charts)
    drawn = charts.charts(json.loads(charts.RESULTS.read_text()))
    assert drawn, "no chart drawn"
    for name, svg in drawn.items():
        assert (charts.OUT / name).read_text() == svg, (
            f"run: .venv/bin/python docs/charts.py ({name})"
        )


def _resolves(dotted: str) -> bool:
    """Whether `dotted` is a module of paor, or a name inside one."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            found: object = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for name in parts[cut:]:
            if not hasattr(found, name):
                return False
            found = getattr(found, name)
        return True
    return False


def test_dotted_names_in_prose_exist() -> None:
    """Every `agents.…`, `orchestrator.…` or `memory.…` name the prose mentions exists."""
    mentioned = {
        (page.relative_to(ROOT), match[1])
        for page in PAGES
        for match in DOTTED.finditer(page.read_text())
    }
    assert mentioned, "no dotted name found"
    assert [(str(page), name) for page, name in sorted(mentioned) if not _resolves(name)] == []


def test_skipped_blocks_are_rare_and_say_why() -> None:
    """At most a few blocks are marked as not runnable, each with its reason."""
    markers = [
        line.strip()
        for page in PAGES
        for line in page.read_text().splitlines()
        if line.strip().startswith(SKIP)
    ]
    assert len(markers) <= MOST_SKIPPED, markers
    assert all(marker.startswith(f"{SKIP} (") for marker in markers), markers


def test_a_broken_example_fails(tmp_path: Path) -> None:
    """A block using a name paor does not export fails, naming the page and the block's line."""
    page = tmp_path / "page.md"
    page.write_text("# A page\n\n```python\nfrom agents import LoopDetector\n```\n")
    done = _run(sys.executable, RUNNER, page, cwd=tmp_path, timeout=50)
    assert done.returncode == 1
    assert f"{page}:3: this block failed" in done.stderr
    assert f'File "{page}", line 4' in done.stderr
    assert "ImportError" in done.stderr


def test_a_skipped_block_still_has_its_imports_checked(tmp_path: Path) -> None:
    """A block marked skip is not run, but an import of a name that is gone still fails it."""
    page = tmp_path / "page.md"
    body = "```python\nfrom agents import open_model\nraise SystemExit(3)\n```\n"
    page.write_text(f"{SKIP} (needs a server) -->\n{body}")
    assert _run(sys.executable, RUNNER, page, cwd=tmp_path, timeout=50).returncode == 0
    page.write_text(f"{SKIP} (needs a server) -->\n{body.replace('open_model', 'Effects')}")
    assert _run(sys.executable, RUNNER, page, cwd=tmp_path, timeout=50).returncode == 1


def test_indented_blocks_in_list_items_are_collected() -> None:
    """A block indented under a list item is found, dedented, with its line number."""
    text = "- an item:\n\n  ```python\n  x = 1\n  ```\n\n```sh\nls\n```\n"
    found = list(blocks(text))
    assert [(b.line, b.lang, b.code) for b in found] == [(3, "python", "x = 1"), (7, "sh", "ls")]
