"""A user's files, written: atomically, through a symlink to its target, keeping the existing
file's mode. A user's file that cannot be written (a report, a page, the log, a batch output: a
full disk, a read-only folder) raises `WriteFailed`, which the command line says in one line.
"""

from __future__ import annotations

import errno
import os
import stat
import tempfile
from pathlib import Path

__all__ = ["WriteFailed", "write_atomically"]

_DEFAULT_MODE = 0o666


class WriteFailed(OSError):
    """A user's file could not be written; its message is one line naming the file and errno.

    An `OSError` (its `errno`, `strerror` and `filename` are the failure's), so a caller of the
    library that catches `OSError` still catches it.
    """

    def __init__(self, path: str | os.PathLike[str], cause: OSError, hint: str = "") -> None:
        super().__init__(cause.errno or errno.EIO, cause.strerror or str(cause), os.fspath(path))
        self.hint = hint

    def __str__(self) -> str:
        text = f"cannot write {self.filename}: [Errno {self.errno}] {self.strerror}"
        return f"{text} ({self.hint})" if self.hint else text


def write_atomically(path: Path, text: str) -> None:
    """Write `text` to `path` so that a crash leaves either the old file or the new one.

    A symlink is written through (its target is replaced, the link stays), and an existing file
    keeps its mode; a new one gets the usual mode for the umask, not the temporary file's 0600.

    Raises:
        WriteFailed: The file could not be written (the old one, if any, is left as it was).
    """
    target = Path(os.path.realpath(path))
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    except OSError as exc:
        raise WriteFailed(path, exc) from exc
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            os.fchmod(handle.fileno(), _mode_for(target))
        Path(tmp).replace(target)
    except BaseException as exc:
        Path(tmp).unlink(missing_ok=True)
        if isinstance(exc, OSError) and not isinstance(exc, WriteFailed):
            raise WriteFailed(path, exc) from exc
        raise


def _mode_for(target: Path) -> int:
    try:
        return stat.S_IMODE(target.stat().st_mode)
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        return _DEFAULT_MODE & ~umask
