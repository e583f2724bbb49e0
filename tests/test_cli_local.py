"""`paor research` end to end with the embedded model: the real command, in a child process."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from agents.models._textcalls import looks_like_call
from agents.toolkits import Corpus

CITATION = re.compile(r"\[([^\[\]\n]+)\](?!\()")
# Evidence excerpts are quoted verbatim from the reference, whose grammar rules hold brackets
# ("[target_list]"): inside the quotes they are the document's text, not citations.
QUOTE = re.compile(r"“[^”]*”")


def cited(markdown: str) -> set[str]:
    """Every id cited in [brackets] outside the quoted evidence excerpts."""
    found: set[str] = set()
    for match in CITATION.finditer(QUOTE.sub("", markdown)):
        found.update(part.strip() for part in re.split(r"[,;]", match.group(1)))
    return found


@pytest.mark.slow
@pytest.mark.timeout(400)
def test_research_with_the_embedded_model_writes_a_report(tmp_path: Path) -> None:
    """With no endpoint configured, `paor research` starts the embedded model and writes a report
    with a title and sections whose citations all name Python reference documents, with no
    heading twice, no placeholder and no tool call written as text (whatever the model wrote)."""
    out = tmp_path / "report.md"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "PAOR_"))}
    command = [
        sys.executable, "-m", "orchestrator.cli", "research", "How do Python generators work?",
        "--out", str(out), "--max-subtasks", "2", "--max-steps", "3", "--deadline", "150",
    ]  # fmt: skip

    done = subprocess.run(
        command, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=390, check=False
    )

    # The report is written whatever the model did; a run that gathered nothing usable (a tiny
    # model on a busy machine) is "failed", and says so with exit status 1.
    assert done.stdout.startswith(f"wrote {out}: "), done.stderr[-3000:]
    failed = done.stdout.startswith(f"wrote {out}: failed")
    assert done.returncode == (1 if failed else 0), done.stderr[-3000:]
    lines = out.read_text(encoding="utf-8").splitlines()
    assert lines[0].startswith("# ")
    sections = [line for line in lines if line.startswith("## ")]
    assert "## Summary" in sections
    assert "## Sources" in sections
    ids = {doc.id for doc in Corpus.python_docs().documents}
    assert cited("\n".join(lines)) <= ids
    headings = [line for line in lines if line.startswith("#")]
    assert len(headings) == len(set(headings)), headings
    own_text = QUOTE.sub("", "\n".join(lines))  # the report's words, not the quoted documents
    assert "<your answer>" not in own_text
    assert not looks_like_call(own_text, {"search_docs", "read_doc", "report_issue"}), own_text
