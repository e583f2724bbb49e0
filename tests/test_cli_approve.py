"""Approvals on the command line: `research --approve` pauses without a terminal (exit status 3,
the last stdout line naming the run and what waits); `paor approvals` lists it; `paor approve`
decides (an edit with problems is shown them, a bad file or a wrong id is one line and exit 2) and
continues the run to its report, asking the endpoint only what was left. The terminal prompt
approves, edits in the editor, rejects with a reason and survives odd answers."""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from agents.approvals import ApprovalRequest, Decision
from agents.testing import FakeOpenAIServer, ServerAction
from memory import Journal
from orchestrator.cli._approve import EXIT_PAUSED, TerminalPrompt
from tests.test_cli import (
    GEN,
    PARALLEL,
    USAGE,
    _endpoint,
    batch_args,
    docs,
    paor,
    research_args,
    result_lines,
    role_of,
    write_tasks,
)
from tests.test_mcp import SERVER

pytestmark = pytest.mark.anyio

__all__ = ["_endpoint", "docs"]


def _last_line(out: str) -> str:
    return out.strip().splitlines()[-1]


def _run_id(line: str) -> str:
    assert line.startswith("paused: run "), line
    return line.split()[2]


async def test_a_paused_research_run_is_approved_from_the_command_line(
    docs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Pause on the plan, list it, refuse a wrong id, an unreadable edit and an edit with
    problems (shown them, paused again), then approve: the report is written, the planner
    having been asked once in all, and the run no longer waits."""
    journal, out = tmp_path / "journal.db", tmp_path / "report.md"
    jr = ("--journal", str(journal))
    async with FakeOpenAIServer(PARALLEL) as server:
        status = await paor(*research_args(server, docs, out, *jr, "--approve", "plan"))
        assert status == EXIT_PAUSED
        captured = capsys.readouterr()
        run_id = _run_id(_last_line(captured.out))
        assert "waits for a decision on run#4" in _last_line(captured.out)
        assert "- [gen] How does a generator pause?" in captured.err
        assert not out.exists()

        assert await paor("approvals", *jr) == 0
        listed = capsys.readouterr().out
        assert listed.startswith(f"{run_id}  run#4: plan v1  (asked ")
        assert "    - [stop] What ends an iteration?" in listed

        assert await paor("approve", run_id, "--id", "run#9", *jr) == 2
        assert "does not wait for run#9; it waits for: run#4" in capsys.readouterr().err
        (tmp_path / "bad.json").write_text("{not json", encoding="utf-8")
        assert await paor("approve", run_id, "--edit", str(tmp_path / "bad.json"), *jr) == 2
        assert "not a readable JSON file" in capsys.readouterr().err

        edited = {"subtasks": [{"id": "gen", "goal": "How does a generator pause?",
                                "depends_on": ["nowhere"]}]}  # fmt: skip
        (tmp_path / "plan.json").write_text(json.dumps(edited), encoding="utf-8")
        status = await paor("approve", run_id, "--edit", str(tmp_path / "plan.json"), *jr)
        assert status == EXIT_PAUSED
        captured = capsys.readouterr()
        assert "Your edit had problems:" in captured.err
        assert "nowhere" in captured.err
        assert "waits for a decision on run#5" in _last_line(captured.out)

        assert await paor("approve", run_id, *jr) == 0
        assert _last_line(capsys.readouterr().out).startswith(f"wrote {out}: complete")
        assert out.exists()
        asked = Counter(role_of(body) for body in server.requests)
    assert asked["plan"] == 1
    assert asked["writer"] == 1

    assert await paor("approve", run_id, *jr) == 2
    assert "is not waiting for a decision (it is complete)" in capsys.readouterr().err
    assert await paor("approvals", *jr) == 0
    assert capsys.readouterr().out == "nothing waits for a decision\n"


async def test_a_decision_someone_took_first_wins(
    docs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The second person to decide the same pause is told it was decided."""
    journal, out = tmp_path / "journal.db", tmp_path / "report.md"
    jr = ("--journal", str(journal))
    async with FakeOpenAIServer(PARALLEL) as server:
        status = await paor(*research_args(server, docs, out, *jr, "--approve", "all"))
    assert status == EXIT_PAUSED
    run_id = _run_id(_last_line(capsys.readouterr().out))
    async with Journal(journal) as opened:
        await opened.decide(run_id, "run#4", Decision.approve().model_dump(mode="json"))
    # The first decision stands; the run is still paused until someone continues it.
    assert await paor("approve", run_id, "--reject", "no", *jr) == 2
    assert "run#4 of run" in capsys.readouterr().err


async def test_approve_without_a_terminal_or_a_journal_is_refused(
    docs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """No terminal to ask on and no journal to pause in: one line, exit 2, nothing asked."""
    async with FakeOpenAIServer(PARALLEL) as server:
        args = research_args(server, docs, tmp_path / "r.md", "--no-journal", "--approve", "plan")
        assert await paor(*args) == 2
        assert not server.requests
    assert "drop --no-journal" in capsys.readouterr().err


def _plan_request(**extra: Any) -> ApprovalRequest:
    plan = {"version": 1, "subtasks": [{"id": "a", "goal": "Find a."}], "rationale": ""}
    return ApprovalRequest(
        approval_id="run#4", run_id="r", agent_id="run", kind="plan",
        description="Plan v1: 1 subtask(s)\n- [a] Find a.", plan=plan, **extra,
    )  # fmt: skip


def _prompt(tmp_path: Path, *lines: str, editor: str | None = None) -> TerminalPrompt:
    answers = [line + "\n" for line in lines]
    shown = (tmp_path / "shown.txt").open("w", encoding="utf-8")
    return TerminalPrompt(read=lambda: answers.pop(0) if answers else "", out=shown, editor=editor)


async def _decide(prompt: TerminalPrompt, request: ApprovalRequest) -> Decision:
    decision = await prompt(request)
    prompt.out.close()
    return decision


async def test_the_terminal_prompt_approves_rejects_and_survives_odd_answers(
    tmp_path: Path,
) -> None:
    """Unknown answers are asked again; a rejection asks for the reason; input that ends denies."""
    request = _plan_request(problems=("subtask a depends on unknown ids: x",))
    decision = await _decide(_prompt(tmp_path, "maybe", "r", "too broad"), request)
    assert (decision.action, decision.message) == ("deny", "too broad")
    shown = (tmp_path / "shown.txt").read_text(encoding="utf-8")
    assert "- [a] Find a." in shown
    assert "Your edit had problems:\n    - subtask a depends on unknown ids: x" in shown
    assert "not an answer: 'maybe'" in shown

    assert (await _decide(_prompt(tmp_path, "a"), request)).action == "approve"
    ended = await _decide(_prompt(tmp_path), request)
    assert (ended.action, ended.message) == ("deny", "no decision came: the terminal's input ended")

    call = ApprovalRequest(
        approval_id="b#3", run_id="r", agent_id="b", tool="transfer", args={"amount": 5}
    )
    always = await _decide(_prompt(tmp_path, "l"), call)
    assert (always.action, always.always) == ("approve", True)


async def test_the_terminal_prompt_edits_in_the_editor(tmp_path: Path) -> None:
    """The editor gets the plan (or the call's arguments) as JSON; what it leaves is the edit;
    an edit that is not JSON is said so and asked again."""
    script = tmp_path / "edit.py"
    script.write_text(
        "import json, sys\n"
        "path = sys.argv[1]\n"
        "data = json.load(open(path))\n"
        "data['subtasks'][0]['goal'] = 'Find b.'\n"
        "json.dump(data, open(path, 'w'))\n",
        encoding="utf-8",
    )
    editor = f"{sys.executable} {script}"
    decision = await _decide(_prompt(tmp_path, "e", editor=editor), _plan_request())
    assert decision.plan is not None
    assert decision.plan["subtasks"][0]["goal"] == "Find b."

    breaking = tmp_path / "break.py"
    breaking.write_text("import sys\nopen(sys.argv[1], 'w').write('{oops')\n", encoding="utf-8")
    prompt = _prompt(tmp_path, "e", "a", editor=f"{sys.executable} {breaking}")
    assert (await _decide(prompt, _plan_request())).action == "approve"
    assert "the edit is not JSON" in (tmp_path / "shown.txt").read_text(encoding="utf-8")


async def test_a_batch_pauses_on_a_destructive_call_and_goes_on_when_run_again(
    docs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`batch --approve tools`: the goal whose agent calls the MCP server's destructive
    `write_note` pauses (exit 3) while the other finishes; `paor approve` takes the decision;
    the batch run again finishes it, the note written once and the finished goal not re-run."""
    notes = tmp_path / "notes.txt"
    server_entry = {
        "command": sys.executable,
        "args": [SERVER],
        "env": {"PAOR_TEST_NOTES": str(notes)},
    }
    mcp_file = tmp_path / "mcp.json"
    mcp_file.write_text(json.dumps({"mcpServers": {"test": server_entry}}), encoding="utf-8")

    def noting(body: dict[str, Any]) -> ServerAction:
        asked = sum(m["role"] == "assistant" for m in body["messages"])
        if role_of(body) == "Goal a" and asked == 0:
            return ServerAction.tool_calls([("write_note", {"text": "paid"})], usage=USAGE)
        return ServerAction.text(f"Done: {role_of(body)}", usage=USAGE)

    tasks, out = write_tasks(tmp_path / "tasks.jsonl", "a", "b"), tmp_path / "out.jsonl"
    extra = ("--mcp", str(mcp_file), "--journal", str(tmp_path / "journal.db"))
    jr = ("--journal", str(tmp_path / "journal.db"))
    async with FakeOpenAIServer(noting) as server:
        argv = [*batch_args(server, docs, tasks, out), *extra, "--approve", "tools"]
        assert await paor(*argv) == EXIT_PAUSED
        last = _last_line(capsys.readouterr().out)
        assert last.startswith(f"paused: batch {out} waits for decisions in runs batch-")
        assert [r["id"] for r in result_lines(out)] == ["b"]
        assert not notes.exists()
        run_id = last.split("in runs ")[1].split()[0]

        assert await paor("approve", run_id, *jr) == 0
        assert "run the batch again" in _last_line(capsys.readouterr().out)
        assert await paor(*argv) == 0
        asked_b = [b for b in server.requests if role_of(b) == "Goal b"]
    assert sorted(r["id"] for r in result_lines(out)) == ["a", "b"]
    assert notes.read_text().splitlines() == ["paid"]
    assert len(asked_b) == 1


async def test_batch_approve_plan_is_refused(
    docs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Batch goals have no plan: --approve plan is one line, exit 2."""
    tasks, out = write_tasks(tmp_path / "tasks.jsonl", "a"), tmp_path / "out.jsonl"
    async with FakeOpenAIServer(PARALLEL) as server:
        assert await paor(*batch_args(server, docs, tasks, out), "--approve", "plan") == 2
    assert "no plan to approve" in capsys.readouterr().err


async def test_a_question_pauses_the_run_and_paor_answer_goes_on(
    docs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`research --questions 1`: an agent's question with no terminal pauses the run (exit 3,
    the last line saying how to answer); `paor approve` on it is told to answer instead; `paor
    answer` continues the run, the agent reading the answer."""
    journal, out = tmp_path / "journal.db", tmp_path / "report.md"
    jr = ("--journal", str(journal))

    def asking(body: dict[str, Any]) -> ServerAction:
        if role_of(body) != GEN:
            return PARALLEL(body)
        if not any(m["role"] == "tool" for m in body["messages"]):
            return ServerAction.tool_calls(
                [("ask_user", {"question": "Which Python version?"})], usage=USAGE
            )
        return ServerAction.text("A generator pauses at each yield [generators].", usage=USAGE)

    async with FakeOpenAIServer(asking) as server:
        argv = research_args(server, docs, out, *jr, "--questions", "1")
        assert await paor(*argv) == EXIT_PAUSED
        last = _last_line(capsys.readouterr().out)
        run_id = _run_id(last)
        assert "waits for an answer on gen#" in last
        assert f'(paor answer {run_id} "...")' in last
        assert await paor("approve", run_id, *jr) == 2
        assert "is a question: answer it with paor answer" in capsys.readouterr().err
        assert await paor("answer", run_id, "Python 3.12.", *jr) == 0
        assert _last_line(capsys.readouterr().out).startswith(f"wrote {out}: ")
        answered = [
            m for b in server.requests for m in b["messages"]
            if m["role"] == "tool" and "The user answered: Python 3.12." in str(m["content"])
        ]  # fmt: skip
    assert answered
