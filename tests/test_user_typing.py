"""The installed package is typed for its users: a user's program type-checks against it.

A copy of tests/_user_program.py (front doors only: an Executor and an Orchestrator run on
scripted models) is checked with `mypy --strict`, and with pyright in strict mode when it is
installed, from a folder outside the repository: only the installed paor can be found there,
through the editable install's path entry and the packages' `py.typed` markers. A variant passing
an `int` as the task proves the checkers see paor's signatures, not `Any`.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

PROGRAM = Path(__file__).resolve().parent / "_user_program.py"
GOOD_TASK = 'TASK = "Will it rain in Lyon on Saturday?"'
# Cold, mypy analyses paor and its dependencies (openai, pydantic, anyio) in about 20 seconds.
pytestmark = pytest.mark.timeout(300)


@pytest.fixture(scope="module")
def outside(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder outside the repository with the program, its wrong-typed variant, and configs."""
    folder = tmp_path_factory.mktemp("user-typing")
    good = PROGRAM.read_text(encoding="utf-8")
    assert good.count(GOOD_TASK) == 1
    (folder / "good.py").write_text(good, encoding="utf-8")
    (folder / "bad.py").write_text(good.replace(GOOD_TASK, "TASK = 42"), encoding="utf-8")
    (folder / "mypy.ini").write_text("[mypy]\n", encoding="utf-8")  # none of paor's settings
    (folder / "pyrightconfig.json").write_text('{"typeCheckingMode": "strict"}\n')
    return folder


def check(folder: Path, *command: str) -> subprocess.CompletedProcess[str]:
    """Run a checker in `folder` with no search path of the suite's (PYTHONPATH, MYPYPATH)."""
    env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "MYPYPATH"}}
    env["PYRIGHT_PYTHON_IGNORE_WARNINGS"] = "1"  # no look-up of newer versions on the network
    return subprocess.run(
        [sys.executable, "-m", *command],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=280,
        check=False,
    )


def mypy(folder: Path, script: str) -> subprocess.CompletedProcess[str]:
    """`mypy --strict script` in `folder`."""
    return check(folder, "mypy", "--config-file", "mypy.ini", "--strict", script)


def test_mypy_strict_accepts_the_users_program(outside: Path) -> None:
    """The program passes `mypy --strict` with paor found only as installed."""
    done = mypy(outside, "good.py")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Success: no issues found in 1 source file" in done.stdout


def test_mypy_strict_rejects_a_wrong_type_for_the_task(outside: Path) -> None:
    """An `int` task fails with paor's own signature in the message, and nothing else fails."""
    done = mypy(outside, "bad.py")
    assert done.returncode == 1, done.stdout + done.stderr
    errors = [line for line in done.stdout.splitlines() if ": error: " in line]
    lines = PROGRAM.read_text(encoding="utf-8").splitlines()
    runs = [n for n, line in enumerate(lines, 1) if ".run(TASK)" in line]
    message = 'Argument 1 to "run" of "{}" has incompatible type "int"; expected "str"  [arg-type]'
    assert errors == [
        f"bad.py:{runs[0]}: error: {message.format('Executor')}",
        f"bad.py:{runs[1]}: error: {message.format('Orchestrator')}",
    ]


@pytest.mark.skipif(
    importlib.util.find_spec("pyright") is None or shutil.which("node") is None,
    reason="pyright (the dev extra) and node are needed",
)
def test_pyright_strict_sees_the_installed_types(outside: Path) -> None:
    """Pyright, strict: the program is clean; the variant fails on the task's type only."""
    done = check(outside, "pyright", "--outputjson", "--pythonpath", sys.executable, ".")
    found = json.loads(done.stdout)["generalDiagnostics"]
    errors = [(Path(d["file"]).name, d["rule"]) for d in found if d["severity"] == "error"]
    assert errors == [("bad.py", "reportArgumentType"), ("bad.py", "reportArgumentType")]
