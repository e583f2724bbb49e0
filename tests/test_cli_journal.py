"""The journal's command line: `research --journal`, `runs`, `show`, `resume` and `replay`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

import agents
from agents import OpenAIChatModel
from agents.testing import FakeOpenAIServer, ServerAction
from agents.toolkits import Corpus
from memory import Journal
from orchestrator import Limits
from orchestrator._research import research
from tests.test_cli import (  # the fixtures are shared with the rest of the CLI's tests
    GEN,
    PARALLEL,
    STOP,
    TOPIC,
    USAGE,
    _endpoint,
    batch_args,
    batch_team,
    docs,
    paor,
    research_args,
    result_lines,
    role_of,
    write_tasks,
)

pytestmark = pytest.mark.anyio

__all__ = ["_endpoint", "docs"]

GUARD_S = 20  # a guard against a hang, not a timing claim


async def test_a_journaled_research_run_is_listed_shown_and_replayed_offline(
    docs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`research --journal` records the run; `runs` lists it as complete, `show` prints its plan
    and step trace, and `replay` re-runs it with no server at all, without drift."""
    journal, out = tmp_path / "journal.db", tmp_path / "report.md"
    async with FakeOpenAIServer(PARALLEL) as server:
        assert await paor(*research_args(server, docs, out, "--journal", str(journal))) == 0
    capsys.readouterr()

    assert await paor("runs", "--journal", str(journal)) == 0
    header, line = capsys.readouterr().out.splitlines()
    assert header.split() == ["RUN", "STATUS", "UPDATED", "GOAL"]
    run_id, status = line.split()[:2]
    assert status == "complete"
    assert line.endswith(TOPIC)

    assert await paor("show", run_id, "--journal", str(journal)) == 0
    shown = capsys.readouterr().out
    assert shown.startswith(f"run {run_id}: complete\ngoal: {TOPIC}\n")
    assert "plan v1: goal, gen, stop\n" in shown
    assert "command: paor research\n" in shown
    assert 'starts search_docs({"query": "How does a generator pause?", "top_k": 5})' in shown
    assert "starts search_docs(" in shown
    assert "search_docs: " in shown

    assert await paor("replay", run_id, "--journal", str(journal)) == 0  # the server is gone
    assert capsys.readouterr().out == f"replayed {run_id}: complete, no drift\n"


async def test_resume_finishes_a_crashed_research_run_asking_only_what_was_left(
    docs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A research run cut off while its writer was being asked reads as crashed; `paor resume`
    against a new endpoint asks that endpoint only the writer's request and writes the report."""
    journal, out = tmp_path / "journal.db", tmp_path / "report.md"
    writing = anyio.Event()

    def crashing(body: dict[str, Any]) -> ServerAction:
        if role_of(body) == "writer":
            writing.set()
            return ServerAction.hang()
        return PARALLEL(body)

    meta = {
        "command": "research", "topic": TOPIC, "docs": str(docs), "out": str(out),
        "max_subtasks": 3, "deadline": None, "max_tokens": None, "max_steps": 6, "model": None,
        "base_url": "unused", "protocol": "tools", "gguf": None,
    }  # fmt: skip
    async with FakeOpenAIServer(crashing) as first, Journal(journal) as opened:
        model = OpenAIChatModel(base_url=first.base_url, api_key="sk-test", protocol="tools")
        with anyio.fail_after(GUARD_S):
            async with anyio.create_task_group() as tg:
                tg.start_soon(_research, model, docs, opened, meta)
                await writing.wait()
                tg.cancel_scope.cancel()
        await model.aclose()
        (info,) = await opened.runs()
    assert info.status == "crashed"
    capsys.readouterr()  # the API run's own log lines

    writer = ServerAction.text("Generators pause at yield [generators].", usage=USAGE)
    async with FakeOpenAIServer([writer]) as second:
        resumed = await paor(
            "resume", info.run_id, "--journal", str(journal), "--base-url", second.base_url
        )
    second.assert_complete()

    assert resumed == 0
    assert [role_of(body) for body in second.requests] == ["writer"]
    assert capsys.readouterr().out == f"wrote {out}: complete\n"
    markdown = out.read_text(encoding="utf-8")
    assert "Generators pause at yield [generators]." in markdown
    assert f"## {GEN}" in markdown
    assert f"## {STOP}" in markdown
    assert await paor("resume", info.run_id, "--journal", str(journal)) == 2
    assert "already ended (complete)" in capsys.readouterr().err


async def _research(model: OpenAIChatModel, docs: Path, journal: Journal, meta: Any) -> None:
    """`paor research` as the meta says, through the API (its limits must match for a resume)."""
    limits = Limits(max_subtasks=3, agent=agents.AgentLimits(max_steps=6))
    corpus = Corpus.from_folder(docs)
    await research(TOPIC, model=model, corpus=corpus, limits=limits, journal=journal, meta=meta)


async def test_a_journaled_batch_rerun_takes_finished_tasks_from_the_journal(
    docs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """With `--journal`, every batch task is a run; a task that finished but whose output line
    was lost is written again from the journal on a re-run, without asking the model."""
    journal, out = tmp_path / "journal.db", tmp_path / "results.jsonl"
    tasks = write_tasks(tmp_path / "tasks.jsonl", "a", "b")
    async with FakeOpenAIServer(batch_team) as server:
        assert await paor(*batch_args(server, docs, tasks, out), "--journal", str(journal)) == 0
    kept = [line for line in out.read_text(encoding="utf-8").splitlines() if '"id": "a"' in line]
    out.write_text(kept[0] + "\n", encoding="utf-8")  # b's line never made it to the disk
    capsys.readouterr()

    async with FakeOpenAIServer(batch_team) as server:
        assert await paor(*batch_args(server, docs, tasks, out), "--journal", str(journal)) == 0

    assert server.requests == []
    assert sorted((r["id"], r["answer"]) for r in result_lines(out)) == [
        ("a", "Answer to Goal a"), ("b", "Answer to Goal b")
    ]  # fmt: skip
    assert capsys.readouterr().out == "batch: 1 done, 1 skipped (already done); 15 tokens\n"
    assert await paor("runs", "--journal", str(journal)) == 0
    listed = capsys.readouterr().out.splitlines()[1:]
    assert sorted((line.split()[1], line.split()[-1]) for line in listed) == [
        ("complete", "a"), ("complete", "b")
    ]  # fmt: skip
    run_id = listed[0].split()[0]
    assert await paor("replay", run_id, "--journal", str(journal)) == 2
    assert "is a task of `paor batch`, which resumes its own tasks" in capsys.readouterr().err


def test_journal_commands_give_one_line_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A missing journal, an unknown run, and a run not made by `paor research` are one-line
    errors with exit status 2; `runs` without a journal says there are none."""
    missing = tmp_path / "none.db"
    assert main_status("show", "abc", "--journal", str(missing)) == 2
    assert capsys.readouterr().err == f"paor: error: no journal at {missing}\n"
    assert main_status("runs", "--journal", str(missing)) == 0
    assert capsys.readouterr().out == f"no runs (no journal at {missing})\n"

    journal = tmp_path / "journal.db"

    async def api_run() -> None:
        async with Journal(journal) as opened:
            await opened.begin("api-run", "a goal from the API")

    anyio.run(api_run)
    assert main_status("replay", "nope", "--journal", str(journal)) == 2
    assert "no run nope in the journal" in capsys.readouterr().err
    assert main_status("resume", "api-run", "--journal", str(journal)) == 2
    assert "was not started by `paor research`" in capsys.readouterr().err


def main_status(*argv: str) -> int:
    """Run the command line in this thread (no event loop is running in a sync test)."""
    from orchestrator.cli import main

    return main(list(argv))
