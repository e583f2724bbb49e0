"""Where the results of `paor research` and `paor batch` go, and what their exit status says:
the `--out` file, checked before any work (with `--schema FILE`, the JSON Schema the answers
follow, checked too, and a research run's object written beside its report); the journal that records the runs (`--journal`, by
default `$PAOR_HOME/journal.db`, none with `--no-journal`); and `EXIT_FAILED`, the status of a
run that ended "failed".
"""

from __future__ import annotations

import argparse
import errno
import json
import os
from pathlib import Path
from typing import Any

from agents import ConfigurationError
from agents.models import OutputSpec
from memory import Journal
from orchestrator._files import WriteFailed, write_atomically

__all__ = ["EXIT_FAILED", "check_writable", "journal_path", "schema_of", "write_output"]

EXIT_FAILED = 1  # the run ended "failed": nothing usable was gathered, or no plan could be made


def check_writable(path: Path) -> None:
    """Fail before any work if `path` cannot be written: a run's result must have somewhere to go."""
    if path.is_dir():
        raise ConfigurationError(f"--out {path} is a directory")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigurationError(f"cannot create the folder for --out {path}: {exc}") from None
    if not os.access(path.parent, os.W_OK):
        read_only = os.statvfs(path.parent).f_flag & os.ST_RDONLY
        code = errno.EROFS if read_only else errno.EACCES
        raise WriteFailed(path, OSError(code, os.strerror(code)))


def journal_path(args: argparse.Namespace) -> Path | None:
    """Where `research` and `batch` record their runs: `--journal`, else the default journal,
    unless `--no-journal` (with `--temporal`, Temporal records them instead)."""
    if args.no_journal:
        return None
    return args.journal or Journal.default_path()


def schema_of(path: Path) -> OutputSpec[Any]:
    """The output a `--schema` file describes.

    Raises:
        ConfigurationError: The file cannot be read, is not JSON, or is not a JSON Schema.
    """
    try:
        schema = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigurationError(f"--schema {path}: {exc.strerror or exc}") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ConfigurationError(f"--schema {path} is not JSON: {exc}") from None
    try:
        return OutputSpec.from_json_schema(schema, name=path.stem)
    except ConfigurationError as exc:
        raise ConfigurationError(f"--schema {path}: {exc}") from None


def write_output(out: Path, output: Any) -> Path:
    """Write a typed run's object as JSON beside its report (`report.md`: `report.json`).

    Raises:
        WriteFailed: The file could not be written.
    """
    path = out.with_suffix(".json")
    write_atomically(path, json.dumps(output, ensure_ascii=False, indent=2) + "\n")
    return path
