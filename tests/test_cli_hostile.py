"""The command line against hostile input and an impatient user: bad goals, credentials in URLs,
escapes in model text, a reader that leaves, Ctrl-C, and the default journal."""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import pytest

from agents import ConfigurationError
from agents.testing import FakeOpenAIServer, ServerAction
from agents.testing._actions import MalformedBody
from memory import Journal
from memory.journal import JournalError
from orchestrator import cli
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
    research_team,
    result_lines,
    role_of,
    write_tasks,
)

pytestmark = pytest.mark.anyio

__all__ = ["_endpoint", "docs"]

ROOT = Path(__file__).resolve().parent.parent
GUARD_S = 30  # a guard against a hang, not a timing claim
ESCAPES = "\x1b]0;pwned\x07\x1b[2J"


@pytest.mark.parametrize(
    ("topic", "problem"),
    [
        pytest.param("", "the topic is empty", id="empty"),
        pytest.param("  \t ", "the topic is empty", id="blank"),
        pytest.param("\x1b[2J", "the topic is empty", id="only-escapes"),
        pytest.param("caf\udce9", "the topic is not valid UTF-8 text", id="not-utf8"),
    ],
)
async def test_a_goal_that_says_nothing_or_cannot_be_sent_is_a_one_line_error(
    topic: str, problem: str, docs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A blank goal, or one with bytes that are not UTF-8 (argv decodes them as surrogates), is
    refused before any work: one line, exit status 2, no report."""
    out = tmp_path / "report.md"
    async with FakeOpenAIServer(PARALLEL) as server:
        argv = research_args(server, docs, out)
        argv[1] = topic
        assert await paor(*argv) == 2
    assert server.requests == []
    assert capsys.readouterr().err == f"paor: error: {problem}\n"
    assert not out.exists()


async def test_credentials_in_the_base_url_are_never_printed_or_stored(
    docs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A `--base-url` with a user, a password and a key in its query is used as given, but the
    journal's run metadata and everything printed show it masked."""
    journal = tmp_path / "journal.db"
    async with FakeOpenAIServer(PARALLEL) as server:
        secret_url = server.base_url.replace("http://", "http://alice:hunter2@") + "?key=s3cr3t"
        argv = research_args(server, docs, tmp_path / "r.md", "--journal", str(journal))
        argv[argv.index("--base-url") + 1] = secret_url
        assert await paor(*argv) == 0
    async with Journal(journal) as opened:
        (info,) = await opened.runs()
    stored = info.meta["spec"]["base_url"]
    assert "hunter2" not in stored
    assert "s3cr3t" not in stored
    assert "127.0.0.1" in stored
    captured = capsys.readouterr()
    assert "hunter2" not in captured.out + captured.err


async def test_an_unreachable_url_with_credentials_is_reported_masked(
    docs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The one-line error naming an unreachable endpoint masks its password."""
    url = "http://bob:topsecret@127.0.0.1:9/v1"
    status = await paor("research", TOPIC, "--docs", str(docs), "--base-url", url)
    assert status == 2
    err = capsys.readouterr().err
    assert err.startswith("paor: error: cannot reach the model endpoint")
    assert "topsecret" not in err
    assert len(err.splitlines()) == 1


PORTAL = b"<html><head><title>Sign in to Hotel WiFi</title></head><body>...</body></html>"


def portal_page(_body: dict[str, Any]) -> MalformedBody:
    """A captive portal's login page, whatever was asked."""
    return ServerAction.malformed_body(PORTAL, content_type="text/html")


@pytest.mark.parametrize("command", ["research", "batch"])
async def test_an_endpoint_that_answers_html_is_a_one_line_error(
    command: str, docs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A base URL that answers a captive portal's HTML is one line naming it, exit status 2,
    before any work: no traceback, no output file."""
    out = tmp_path / "out"
    async with FakeOpenAIServer(portal_page, models=portal_page({})) as server:
        url = server.base_url
        if command == "research":
            argv = research_args(server, docs, out)
        else:
            argv = batch_args(server, docs, write_tasks(tmp_path / "tasks.jsonl", "a"), out)
        status = await paor(*argv, "--no-journal")
        assert server.requests == []
    assert status == 2
    captured = capsys.readouterr()
    assert captured.err == (
        f"paor: error: {url} answered HTML, not the OpenAI API (status 200, text/html): "
        "'Sign in to Hotel WiFi'\n"
    )
    assert captured.out == ""
    assert not out.exists()


async def test_completions_that_are_html_end_the_run_saying_so(
    docs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An endpoint whose models list is fine but whose completions are HTML: the run ends as
    far as it got, its report and its status line naming what the endpoint answered, with no
    traceback."""
    out = tmp_path / "report.md"
    async with FakeOpenAIServer(portal_page) as server:
        status = await paor(*research_args(server, docs, out), "--no-journal")
    said = "answered HTML, not the OpenAI API (status 200, text/html): 'Sign in to Hotel WiFi'"
    assert status in (0, 1)  # the run's own status: incomplete (0) or failed (1)
    captured = capsys.readouterr()
    (last,) = captured.out.splitlines()
    assert said in last
    assert "Traceback" not in captured.err
    assert said in out.read_text(encoding="utf-8")


async def test_model_written_escapes_reach_neither_the_terminal_nor_the_report(
    docs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A plan whose goal carries terminal escapes is shown and written cleaned."""
    out = tmp_path / "report.md"
    team = research_team({"id": "gen", "goal": GEN + ESCAPES}, {"id": "stop", "goal": STOP})

    def decide(body: dict[str, Any]) -> ServerAction:
        if role_of(body) == GEN + ESCAPES:
            return ServerAction.text("A generator pauses at each yield [generators].", usage=USAGE)
        return team(body)

    async with FakeOpenAIServer(decide) as server:
        assert await paor(*research_args(server, docs, out)) == 0
    captured = capsys.readouterr()
    for shown in (captured.out, captured.err, out.read_text(encoding="utf-8")):
        assert "\x1b" not in shown
        assert "\x07" not in shown


async def test_research_journals_by_default_and_no_journal_turns_it_off(
    docs: Path, tmp_path: Path
) -> None:
    """Without `--journal` a run is recorded in $PAOR_HOME/journal.db, privately (0600), so it
    can be resumed after a crash; `--no-journal` records nothing."""
    default = Path(os.environ["PAOR_HOME"]) / "journal.db"
    async with FakeOpenAIServer(PARALLEL) as server:
        assert await paor(*research_args(server, docs, tmp_path / "a.md", "--no-journal")) == 0
        assert not default.exists()
        assert await paor(*research_args(server, docs, tmp_path / "b.md")) == 0
    async with Journal(default) as opened:
        (info,) = await opened.runs()
    assert (info.goal, info.status) == (TOPIC, "complete")
    assert default.stat().st_mode & 0o077 == 0


async def test_a_reader_that_leaves_early_is_not_a_traceback(tmp_path: Path) -> None:
    """`paor runs | head -c 1`: the listing outlives its reader and ends quietly."""
    journal = tmp_path / "journal.db"
    async with Journal(journal) as opened:
        for n in range(2000):  # a listing far larger than a pipe's buffer
            await opened.begin(f"run-{n:05d}", f"goal number {n} " + "x" * 40)
    command = f"{sys.executable} -m orchestrator.cli runs --journal {journal} | head -c 1"
    with anyio.fail_after(GUARD_S):
        done = await anyio.run_process(["sh", "-c", command], cwd=ROOT, check=False)
    assert done.returncode == 0, done.stderr
    assert b"Traceback" not in done.stderr
    assert b"BrokenPipe" not in done.stderr


def _sigint_team(waiting: anyio.Event) -> Callable[[dict[str, Any]], ServerAction]:
    """Research where STOP's agent waits on the model for ever, once GEN has answered."""
    team = research_team({"id": "gen", "goal": GEN}, {"id": "stop", "goal": STOP})

    def decide(body: dict[str, Any]) -> ServerAction:
        if role_of(body) == STOP:
            waiting.set()
            return ServerAction.hang()
        if role_of(body) == "writer":
            return ServerAction.text("Generators pause at yield [generators].", usage=USAGE)
        return team(body)

    return decide


async def _research_child(server: FakeOpenAIServer, docs: Path, out: Path) -> anyio.abc.Process:
    argv = research_args(server, docs, out, "--no-journal")
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    return await anyio.open_process(
        [sys.executable, "-m", "orchestrator.cli", *argv], cwd=ROOT, env=env
    )


async def test_the_first_ctrl_c_writes_the_report_from_what_exists(
    docs: Path, tmp_path: Path
) -> None:
    """SIGINT while a sub-agent waits on the model: the run stops, keeps the answers it has, and
    writes an incomplete report; exit status 0."""
    out, waiting = tmp_path / "report.md", anyio.Event()
    with anyio.fail_after(GUARD_S):
        async with (
            FakeOpenAIServer(_sigint_team(waiting)) as server,
            await _research_child(server, docs, out) as child,
        ):
            await waiting.wait()
            child.send_signal(signal.SIGINT)
            await child.wait()
            assert child.stdout is not None
            assert child.stderr is not None
            said = (await child.stdout.receive()).decode()
            err = (await child.stderr.receive(65536)).decode()
    assert child.returncode == 0, err
    assert "Ctrl-C again to abort" in err
    assert said.startswith(f"wrote {out}: incomplete (stopped by the user")
    report = out.read_text(encoding="utf-8")
    assert "Generators pause at yield [generators]." in report


async def test_a_second_ctrl_c_aborts(docs: Path, tmp_path: Path) -> None:
    """Two SIGINTs: the second aborts the command at once (status 130), without a traceback."""
    out, waiting = tmp_path / "report.md", anyio.Event()
    stuck = anyio.Event()

    def decide(body: dict[str, Any]) -> ServerAction:
        if role_of(body) == "writer":
            stuck.set()
            return (
                ServerAction.hang()
            )  # the synthesis never comes back: only an abort ends the command
        return _sigint_team(waiting)(body)

    with anyio.fail_after(GUARD_S):
        async with (
            FakeOpenAIServer(decide) as server,
            await _research_child(server, docs, out) as child,
        ):
            await waiting.wait()
            child.send_signal(signal.SIGINT)
            await stuck.wait()
            child.send_signal(signal.SIGINT)
            await child.wait()
            assert child.stderr is not None
            err = (await child.stderr.receive(65536)).decode()
    assert child.returncode == 130, err
    assert "Traceback" not in err, err
    assert err.rstrip().endswith("paor: interrupted")
    assert not out.exists()


@pytest.mark.parametrize("alias", ["same", "symlink", "hardlink"])
async def test_a_batch_that_would_write_into_its_own_tasks_is_refused(
    alias: str, docs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--out` naming the task file, by any path, is a one-line error and the tasks survive."""
    tasks = write_tasks(tmp_path / "tasks.jsonl", "a", "b")
    before = tasks.read_text(encoding="utf-8")
    out = tmp_path / "out.jsonl"
    if alias == "same":
        out = tasks
    elif alias == "symlink":
        out.symlink_to(tasks)
    else:
        os.link(tasks, out)
    async with FakeOpenAIServer(batch_team) as server:
        assert await paor(*batch_args(server, docs, tasks, out)) == 2
    assert server.requests == []
    err = capsys.readouterr().err
    assert err.startswith("paor: error: ")
    assert len(err.splitlines()) == 1
    assert tasks.read_text(encoding="utf-8") == before


async def test_a_blank_batch_goal_is_a_one_line_error(
    docs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A task line whose goal is only spaces is refused with its line number."""
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(
        '{"id": "a", "goal": "Goal a"}\n{"id": "b", "goal": "   "}\n', encoding="utf-8"
    )
    async with FakeOpenAIServer(batch_team) as server:
        assert await paor(*batch_args(server, docs, tasks, tmp_path / "out.jsonl")) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"paor: error: {tasks}:2: not a valid task line")
    assert len(err.splitlines()) == 1


async def test_batch_journals_by_default_and_prune_empties_the_journal(
    docs: Path, tmp_path: Path
) -> None:
    """`paor batch` records its tasks in the default journal; `runs --prune --keep 0` then
    deletes every finished run and says how many."""
    tasks = write_tasks(tmp_path / "tasks.jsonl", "a", "b")
    out = tmp_path / "out.jsonl"
    async with FakeOpenAIServer(batch_team) as server:
        assert await paor(*batch_args(server, docs, tasks, out)) == 0
    assert sorted(r["id"] for r in result_lines(out)) == ["a", "b"]
    default = Path(os.environ["PAOR_HOME"]) / "journal.db"
    async with Journal(default) as opened:
        assert sorted(i.status for i in await opened.runs()) == ["complete", "complete"]
    assert await paor("runs", "--prune", "--keep", "0") == 0
    async with Journal(default) as opened:
        assert await opened.runs() == []


async def test_prune_options_are_checked(capsys: pytest.CaptureFixture[str]) -> None:
    """`--keep` without `--prune`, or a negative one, is a one-line usage error."""
    default = Path(os.environ["PAOR_HOME"]) / "journal.db"
    async with Journal(default) as opened:
        await opened.begin("r1", "a goal")
    assert await paor("runs", "--keep", "3") == 2
    assert capsys.readouterr().err == "paor: error: --keep and --older-than go with --prune\n"
    assert await paor("runs", "--prune", "--keep", "-1") == 2
    assert capsys.readouterr().err == "paor: error: --keep must be 0 or more, not -1\n"


def test_several_user_errors_at_once_are_still_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Concurrent tasks failing together (a group of user errors) give one line, the first."""

    async def two_failures(args: object) -> int:
        raise ExceptionGroup(
            "tasks", [ConfigurationError("first problem"), JournalError("second problem")]
        )

    monkeypatch.setattr(cli, "run_research", two_failures)
    assert cli.main(["research", TOPIC]) == 2
    assert capsys.readouterr().err == "paor: error: first problem\n"
