"""Finished work survives a full disk: the user's files that cannot be written (a report, a
batch output, a page, a log) are one line naming the file and its errno, exit status 2, never a
traceback; a batch record is never torn; and `paor report` writes a finished run's report again
from the journal.

The full disk is real: a 64 KiB tmpfs, mounted for the test and filled (skipped where mounting
is not permitted). `append_line`'s cut-back is also pinned without a mount, by a write that
fails halfway.
"""

from __future__ import annotations

import errno
import json
import os
import subprocess
from collections.abc import Iterator
from contextlib import suppress
from pathlib import Path

import pytest

from agents.testing import FakeOpenAIServer
from memory import Journal
from orchestrator._batch import append_line
from orchestrator._files import WriteFailed
from tests.test_cli import (  # the fixtures are shared with the rest of the CLI's tests
    PARALLEL,
    _endpoint,
    batch_args,
    batch_team,
    docs,
    paor,
    research_args,
    role_of,
    write_tasks,
)

pytestmark = pytest.mark.anyio

__all__ = ["_endpoint", "docs"]

NO_SPACE = "[Errno 28] No space left on device"


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A folder on a 64 KiB tmpfs of its own (unmounted afterwards)."""
    folder = tmp_path / "small"
    folder.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(folder)],
        capture_output=True,
        check=False,
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here (needs root): {mounted.stderr.decode().strip()}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False)


def fill(folder: Path) -> None:
    """Take every free block of the file system that holds `folder`."""
    with (folder / "filler").open("ab", buffering=0) as filler, suppress(OSError):
        while filler.write(b"\0" * 4096):
            pass


def names(folder: Path) -> list[str]:
    """The names in `folder`, sorted."""
    return sorted(p.name for p in folder.iterdir())


async def run_id_of(journal: Path) -> str:
    """The one run in `journal`."""
    async with Journal(journal, readonly=True) as opened:
        (info,) = await opened.runs()
    return info.run_id


def error_lines(err: str) -> list[str]:
    """paor's error lines on stderr (and no traceback among them)."""
    assert "Traceback" not in err
    return [line for line in err.splitlines() if line.startswith("paor: error:")]


async def test_paor_report_writes_a_finished_runs_report_again_from_the_journal(
    docs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`paor report RUN_ID --out` rebuilds the very report the run wrote, with no model."""
    journal, out, again = tmp_path / "journal.db", tmp_path / "report.md", tmp_path / "again.md"
    async with FakeOpenAIServer(PARALLEL) as server:
        assert await paor(*research_args(server, docs, out, "--journal", str(journal))) == 0
    run_id = await run_id_of(journal)
    capsys.readouterr()

    assert await paor("report", run_id, "--journal", str(journal), "--out", str(again)) == 0

    assert again.read_text(encoding="utf-8") == out.read_text(encoding="utf-8")
    assert capsys.readouterr().out == f"wrote {again}: complete\n"


async def test_paor_report_of_a_run_that_has_not_ended_says_to_resume_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A run still going (or crashed) has no report to write again: `resume` is named."""
    journal = tmp_path / "journal.db"
    async with Journal(journal) as opened:
        await opened.begin("r1", "a goal", meta={"command": "research"})
        await opened.finish("r1")

    assert await paor("report", "r1", "--journal", str(journal)) == 2
    assert error_lines(capsys.readouterr().err) == [
        "paor: error: run r1 has not ended (crashed): `paor resume r1` continues it, and writes "
        "its report"
    ]


async def test_a_report_that_meets_a_full_disk_is_one_line_and_can_be_written_again(
    docs: Path, tmp_path: Path, small_disk: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`research --out` on a full disk: one line naming the file and errno, status 2, no
    half-written file; `resume` then points at `paor report`, which writes it elsewhere."""
    journal, out = tmp_path / "journal.db", small_disk / "report.md"
    fill(small_disk)
    async with FakeOpenAIServer(PARALLEL) as server:
        status = await paor(*research_args(server, docs, out, "--journal", str(journal)))
    run_id = await run_id_of(journal)

    assert status == 2
    assert error_lines(capsys.readouterr().err) == [
        f"paor: error: cannot write {out}: {NO_SPACE} (the run is journaled: `paor report "
        f"{run_id} --out PATH` writes it again)"
    ]
    assert names(small_disk) == ["filler"]

    assert await paor("resume", run_id, "--journal", str(journal)) == 2
    assert error_lines(capsys.readouterr().err) == [
        f"paor: error: run {run_id} already ended (complete): `paor report {run_id}` writes its "
        "report again"
    ]
    again = tmp_path / "report.md"
    assert await paor("report", run_id, "--journal", str(journal), "--out", str(again)) == 0
    assert again.read_text(encoding="utf-8").startswith("# ")


async def test_a_batch_line_that_meets_a_full_disk_is_cut_back_and_its_result_kept(
    docs: Path, tmp_path: Path, small_disk: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A batch record that does not fit: one line naming the output and errno, status 2, the
    file as it was (no torn line); with room again, the re-run takes the journaled result."""
    journal, out = tmp_path / "journal.db", small_disk / "results.jsonl"
    # A record that ends near its page's end: the next one is written in part, then fails.
    before = json.dumps({"id": "z", "status": "done", "answer": "x" * 4040}).encode() + b"\n"
    out.write_bytes(before)
    fill(small_disk)
    tasks = write_tasks(tmp_path / "tasks.jsonl", "a")
    async with FakeOpenAIServer(batch_team) as server:
        status = await paor(*batch_args(server, docs, tasks, out), "--journal", str(journal))
    assert status == 2
    assert error_lines(capsys.readouterr().err) == [f"paor: error: cannot write {out}: {NO_SPACE}"]
    assert out.read_bytes() == before
    assert [role_of(body) for body in server.requests] == ["Goal a"]

    (small_disk / "filler").unlink()
    async with FakeOpenAIServer(batch_team) as server:
        assert await paor(*batch_args(server, docs, tasks, out), "--journal", str(journal)) == 0
    assert server.requests == []  # taken from the journal
    lines = out.read_bytes().split(b"\n")
    assert lines[0] + b"\n" == before
    assert json.loads(lines[1])["answer"] == "Answer to Goal a"
    assert lines[2:] == [b""]


async def test_a_page_that_meets_a_full_disk_is_one_line(
    docs: Path, tmp_path: Path, small_disk: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`show --html` onto a full disk: one line naming the page and errno, status 2."""
    journal = tmp_path / "journal.db"
    async with FakeOpenAIServer(PARALLEL) as server:
        research = research_args(server, docs, tmp_path / "r.md", "--journal", str(journal))
        assert await paor(*research) == 0
    run_id = await run_id_of(journal)
    page = small_disk / "run.html"
    fill(small_disk)
    capsys.readouterr()

    assert await paor("show", run_id, "--journal", str(journal), "--html", str(page)) == 2
    assert error_lines(capsys.readouterr().err) == [f"paor: error: cannot write {page}: {NO_SPACE}"]
    assert names(small_disk) == ["filler"]


async def test_a_log_that_meets_a_full_disk_does_not_end_the_run(
    docs: Path, tmp_path: Path, small_disk: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--log-json` on a full disk: the run goes on and writes its report; the command then says
    the log could not be written, in one line, status 2."""
    log, out = small_disk / "trace.jsonl", tmp_path / "report.md"
    fill(small_disk)
    async with FakeOpenAIServer(PARALLEL) as server:
        status = await paor(*research_args(server, docs, out, "--log-json", str(log)))

    assert status == 2
    assert out.read_text(encoding="utf-8").startswith("# ")
    assert error_lines(capsys.readouterr().err) == [f"paor: error: cannot write {log}: {NO_SPACE}"]


def test_append_line_cuts_a_half_written_line_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A line the system takes in part, then refuses (ENOSPC), leaves the file as it was."""
    out = tmp_path / "results.jsonl"
    out.write_text('{"id": "a"}\n', encoding="utf-8")
    real_write = os.write
    calls: list[int] = []

    def half_then_full(fd: int, data: bytes | memoryview) -> int:
        calls.append(len(data))
        if len(calls) == 1:
            return real_write(fd, bytes(data[:5]))
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "write", half_then_full)
    with out.open("a", encoding="utf-8") as sink, pytest.raises(WriteFailed) as caught:
        append_line(sink, '{"id": "b", "status": "done"}\n')

    assert str(caught.value) == f"cannot write {out}: {NO_SPACE}"
    assert caught.value.errno == errno.ENOSPC
    assert out.read_text(encoding="utf-8") == '{"id": "a"}\n'
    assert len(calls) == 2
