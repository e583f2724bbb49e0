"""A journal that is only read is opened read-only: on a read-only mount `runs`, `show`,
`replay`, `approvals` and `report` read it, and a command that must write it is told it cannot
be written, not that it is damaged.

The read-only mount is real: a read-only bind mount of the journal's folder (skipped where
mounting is not permitted). Permission bits would not do: root, which these tests may run as,
ignores them. That a read-only opening never writes is also pinned without a mount, on the
file's bytes.
"""

from __future__ import annotations

import hashlib
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from agents.testing import FakeOpenAIServer
from memory import Journal
from memory.journal import JournalError
from tests.test_cli import (  # the fixtures are shared with the rest of the CLI's tests
    PARALLEL,
    TOPIC,
    _endpoint,
    docs,
    paor,
    research_args,
)

pytestmark = pytest.mark.anyio

__all__ = ["_endpoint", "docs"]


@pytest.fixture
def read_only(tmp_path: Path) -> Iterator[tuple[Path, Path]]:
    """A folder, and a read-only view of it (a bind mount, unmounted afterwards)."""
    source, view = tmp_path / "source", tmp_path / "view"
    source.mkdir()
    view.mkdir()
    steps = (
        ["mount", "--bind", str(source), str(view)],
        ["mount", "-o", "remount,bind,ro", str(view)],
    )
    for step in steps:
        done = subprocess.run(step, capture_output=True, check=False)
        if done.returncode != 0:
            subprocess.run(["umount", str(view)], capture_output=True, check=False)
            pytest.skip(f"cannot make a read-only mount here: {done.stderr.decode().strip()}")
    try:
        yield source, view
    finally:
        subprocess.run(["umount", "-l", str(view)], check=False)


def digest(path: Path) -> str:
    """The file's bytes, hashed."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


async def journal_with_a_run(folder: Path, docs: Path) -> tuple[Path, str]:
    """A journal in `folder` holding one finished `paor research` run, closed; and its id."""
    journal = folder / "journal.db"
    async with FakeOpenAIServer(PARALLEL) as server:
        argv = research_args(server, docs, folder.parent / "report.md", "--journal", str(journal))
        assert await paor(*argv) == 0
    async with Journal(journal) as opened:
        (info,) = await opened.runs()
    return journal, info.run_id


async def test_a_read_only_opening_never_writes_the_file(tmp_path: Path) -> None:
    """`Journal(readonly=True)` reads a journal without changing a byte of it, and refuses to
    write it, saying it cannot be written."""
    path = tmp_path / "journal.db"
    async with Journal(path) as journal:
        await journal.begin("r1", "a goal")
    before = digest(path)

    async with Journal(path, readonly=True) as journal:
        assert [r.run_id for r in await journal.runs()] == ["r1"]
        with pytest.raises(JournalError, match="cannot be written: it is read-only"):
            await journal.begin("r2", "another goal")

    assert digest(path) == before


async def test_a_read_only_opening_of_a_file_that_is_no_journal_says_damaged(
    tmp_path: Path,
) -> None:
    """Damage is still told as damage, and a missing file is not created."""
    path = tmp_path / "journal.db"
    path.write_bytes(b"not a database" * 512)
    with pytest.raises(JournalError, match="is damaged or not a paor journal: file is not a"):
        await Journal(path, readonly=True).open()
    with pytest.raises(JournalError, match="there is no such file"):
        await Journal(tmp_path / "missing.db", readonly=True).open()
    assert not (tmp_path / "missing.db").exists()


async def test_the_reading_commands_read_a_journal_on_a_read_only_mount(
    docs: Path,
    read_only: tuple[Path, Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """`runs`, `show`, `replay`, `approvals` and `report` read a journal on a read-only mount,
    which is left as it was."""
    source, view = read_only
    _, run_id = await journal_with_a_run(source, docs)
    journal = view / "journal.db"
    before = digest(journal)
    capsys.readouterr()

    assert await paor("runs", "--journal", str(journal)) == 0
    assert TOPIC in capsys.readouterr().out
    assert await paor("show", run_id, "--journal", str(journal)) == 0
    assert await paor("replay", run_id, "--journal", str(journal)) == 0
    assert await paor("approvals", "--journal", str(journal)) == 0
    again = tmp_path / "again.md"
    assert await paor("report", run_id, "--journal", str(journal), "--out", str(again)) == 0
    assert "error" not in capsys.readouterr().err

    assert again.read_text(encoding="utf-8").startswith("# ")
    assert digest(journal) == before


async def test_a_command_that_writes_a_read_only_journal_is_told_so(
    docs: Path,
    read_only: tuple[Path, Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """`research --journal` on a read-only mount: one line saying the journal cannot be written
    (read-only), never that it is damaged."""
    source, view = read_only
    await journal_with_a_run(source, docs)
    capsys.readouterr()
    journal = view / "journal.db"

    async with FakeOpenAIServer(PARALLEL) as server:
        argv = research_args(server, docs, tmp_path / "r.md", "--journal", str(journal))
        assert await paor(*argv) == 2

    err = capsys.readouterr().err
    assert f"paor: error: journal: {journal} cannot be written: it is read-only" in err
    assert "damaged" not in err
