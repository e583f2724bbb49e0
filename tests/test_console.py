"""The command line's output: terminal-safe text, one-line errors, whole files written in place."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from orchestrator._files import write_atomically
from orchestrator.cli._console import clean, fail


@pytest.mark.parametrize(
    "hostile",
    [
        "\x1b]0;pwned\x07",  # OSC: set the window title
        "\x1b]8;;http://evil.example\x1b\\",  # OSC 8 hyperlink, ended by ST
        "\x1b[2J\x1b[H",  # clear the screen, cursor home
        "\x1b[31m",  # colour
        "\x1bPqpayload\x1b\\",  # DCS string
        "\x1bc",  # full reset
        "\x9b2J",  # C1 CSI
        "\r",  # overwrite the line
        "\x07\x08\x00\x7f",  # bell, backspace, NUL, DEL
        "\u202e",  # right-to-left override
    ],
)
def test_clean_removes_terminal_control_sequences(hostile: str) -> None:
    """Escapes a model could write to change what the terminal shows are removed."""
    cleaned = clean(f"before {hostile} after")
    assert "\x1b" not in cleaned
    assert not any(ord(c) < 32 and c not in "\t\n" for c in cleaned)
    assert cleaned.startswith("before ")
    assert cleaned.endswith(" after")


@pytest.mark.parametrize("cut_short", ["\x1b[", "\x1b]0;unterminated", "\x1bP", "\x1b"])
def test_clean_removes_sequences_cut_short(cut_short: str) -> None:
    """A sequence left open takes what a terminal would take with it, and nothing escapes."""
    cleaned = clean(f"before {cut_short} after")
    assert cleaned.startswith("before ")
    assert "\x1b" not in cleaned


def test_clean_keeps_ordinary_text() -> None:
    """Tabs, newlines, Unicode and Markdown pass through unchanged."""
    text = "# Título\n\n- a\tb [python/yield] — ✓ 日本語\n"
    assert clean(text) == text


def test_clean_is_linear_on_long_hostile_input() -> None:
    """A megabyte of escape prefixes is cleaned without backtracking (a ReDoS guard)."""
    assert clean("\x1b[" * 500_000 + "\nx") == "\nx"
    assert clean("\x1b]" * 500_000) == ""


def test_fail_prints_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    """An error message with line breaks and escapes becomes one clean stderr line; status 2."""
    assert fail("first\n  second\x1b[2J\n\n") == 2
    assert capsys.readouterr().err == "paor: error: first; second\n"


def test_fail_masks_credentials(capsys: pytest.CaptureFixture[str]) -> None:
    """Credentials inside a URL in an error are masked."""
    fail("cannot reach http://user:hunter2@127.0.0.1:9/v1")
    assert "hunter2" not in capsys.readouterr().err


def test_a_rewritten_file_keeps_its_mode(tmp_path: Path) -> None:
    """Rewriting an existing report keeps its permissions (not the temporary file's 0600)."""
    out = tmp_path / "report.md"
    out.write_text("old", encoding="utf-8")
    out.chmod(0o640)
    write_atomically(out, "new")
    assert out.read_text(encoding="utf-8") == "new"
    assert stat.S_IMODE(out.stat().st_mode) == 0o640


def test_a_new_file_gets_the_umask_mode(tmp_path: Path) -> None:
    """A new report is readable as any file the user creates is (0666 less the umask)."""
    old = os.umask(0o022)
    try:
        write_atomically(tmp_path / "new.md", "text")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "new.md").stat().st_mode) == 0o644


def test_a_symlinked_out_is_written_through(tmp_path: Path) -> None:
    """A symlink stays a symlink: its target gets the new text, and nothing is left beside it."""
    target = tmp_path / "real" / "report.md"
    target.parent.mkdir()
    target.write_text("old", encoding="utf-8")
    link = tmp_path / "report.md"
    link.symlink_to(target)
    write_atomically(link, "new")
    assert link.is_symlink()
    assert target.read_text(encoding="utf-8") == "new"
    assert sorted(p.name for p in target.parent.iterdir()) == ["report.md"]
