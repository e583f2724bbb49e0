"""Research report: sub-questions researched in parallel over a small corpus, written as Markdown.

The corpus is `docs/`: six short pages about the water supply of Velmora, a made-up city. The
planner splits the topic into sub-questions, each is researched by its own sub-agent with the
`search_docs` and `read_doc` tools, every answer must cite the documents it read, and the report
(summary, one section per sub-question, sources and evidence excerpts) is written to `report.md`
next to this file.

    python examples/research_report/main.py

The model is the endpoint in OPENAI_BASE_URL / OPENAI_API_KEY / PAOR_MODEL if one is set, else the
embedded local model (tiny: it proves the path, not the prose).
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import anyio

import agents
from agents import (
    ChatModel,
    PaorError,
    open_model,
)
from agents.toolkits import Corpus
from orchestrator import Limits, ResearchReport, research

HERE = Path(__file__).resolve().parent
DOCS = HERE / "docs"
OUT = HERE / "report.md"
TOPIC = (
    "How does Velmora get and treat its drinking water, and how did it cope with the 2022 drought?"
)
# Small on purpose: three sub-questions, a few steps each, and a deadline that ends in a report.
LIMITS = Limits(
    max_subtasks=3,
    max_concurrency=3,
    max_replans=1,
    deadline_s=600,
    agent=agents.AgentLimits(max_steps=5),
)


async def run(model: ChatModel, *, out: Path = OUT, topic: str = TOPIC) -> ResearchReport:
    """Research `topic` over `docs/` with `model` and write the report to `out`."""
    corpus = Corpus.from_folder(DOCS)
    report = await research(topic, model=model, corpus=corpus, limits=LIMITS)
    await anyio.Path(out).write_text(report.markdown, encoding="utf-8")
    return report


def main() -> None:
    """Configure console logging, pick the model, run, and print where the report went."""
    # paor's progress (plan_created, tool_called...) on stderr; other libraries' warnings only.
    logging.basicConfig(format="%(asctime)s %(levelname)s %(message)s", datefmt="%H:%M:%S")
    logging.getLogger("paor").setLevel(logging.INFO)
    try:
        report = anyio.run(_run_with_configured_model)
    except PaorError as exc:  # no model to talk to, or a bad corpus: say so in one line
        sys.exit(f"research_report: {exc}")
    result = report.result
    print(f"wrote {OUT}: {result.status}" + (f" ({result.reason})" if result.reason else ""))


async def _run_with_configured_model() -> ResearchReport:
    async with open_model() as model:
        return await run(model)


if __name__ == "__main__":
    main()
