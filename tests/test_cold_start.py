"""Cold start: importing paor, or asking its command line for help, does not load the `openai` SDK.

`import openai` builds every type of the whole API (about half a second); paor loads it on first
use (`agents._lazy`). Each check runs in a fresh interpreter, so nothing this test session imported
counts.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

# Present once `openai`'s body has run: its client module and its types.
LOADED = (
    "import sys; print(sorted(m for m in ('openai._client', 'openai.types') if m in sys.modules))"
)


def _fresh(code: str, *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()[-1]


@pytest.mark.parametrize(
    "code",
    [
        "import agents, orchestrator, memory",
        "from agents import OpenAIChatModel, Executor, tool; from orchestrator import Orchestrator",
        "import agents.models, agents.testing",
    ],
)
def test_importing_paor_does_not_load_the_openai_sdk(code: str) -> None:
    assert _fresh(f"{code}; {LOADED}") == "[]"


def test_paor_help_does_not_load_the_openai_sdk() -> None:
    code = (
        "import atexit, sys\n"
        f"atexit.register(lambda: exec({LOADED!r}))\n"
        "from orchestrator.cli import entry\n"
        "entry()\n"
    )
    assert _fresh(code, "--help") == "[]"


def test_a_model_built_after_a_lazy_import_is_the_real_sdk() -> None:
    """The lazily loaded module is the real one: its client and error classes work as imported."""
    code = (
        "import agents, openai\n"
        "from agents import OpenAIChatModel\n"
        "m = OpenAIChatModel('m', base_url='http://127.0.0.1:9/v1', api_key='k')\n"
        "print(isinstance(m._transport.client, openai.AsyncOpenAI), issubclass(openai.APIStatusError, Exception))"
    )
    assert _fresh(code) == "True True"
