"""paor's pytest plugin: no real model requests in tests, and fixtures for fake models and journals.

Installed with paor (the `pytest11` entry point "paor"); `-p no:paor` turns it off.

- Every test runs inside `block_model_requests()`: an `OpenAIChatModel` request to a host other
  than the loopback fails before it is sent. Mark a test `@pytest.mark.paor_allow_model_requests`
  to let it reach a real endpoint, or turn the block off for a whole run with
  `--paor-allow-model-requests` or the ini option `paor_block_model_requests = false`. (A block a
  project's own conftest installs still applies: the marker only lifts this plugin's.)
- `paor_scripted_model(turns)`: a `ScriptedModel` that estimates tokens, checked at teardown:
  every scripted turn must have been played.
- `paor_fake_openai(script)`: a running `FakeOpenAIServer` (its own event loop, on a thread, so
  sync tests and subprocesses reach it too), checked at teardown.
- `paor_journal`: a `Journal` in the test's `tmp_path`, also made `$PAOR_HOME`'s default, so the
  CLI journals there; open it with `async with paor_journal:`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

# paor itself is imported by the fixtures, when a test runs: a plugin that imported it on load
# would import it before a coverage plugin starts measuring.
if TYPE_CHECKING:
    from agents.testing import FakeOpenAIServer, ScriptedModel, Turn
    from agents.testing._actions import ServerScript
    from agents.testing._usage import TokenCounting
    from memory import Journal

__all__ = [
    "paor_fake_openai",
    "paor_journal",
    "paor_scripted_model",
    "pytest_addoption",
    "pytest_configure",
]

ALLOW_MARKER = "paor_allow_model_requests"
_INI = "paor_block_model_requests"
_FLAG = "--paor-allow-model-requests"

ScriptedModelFactory = Callable[..., "ScriptedModel"]
FakeOpenAIFactory = Callable[..., "FakeOpenAIServer"]


def pytest_addoption(parser: pytest.Parser) -> None:
    """The switch that turns the block off, on the command line and in the ini file."""
    parser.addini(
        _INI,
        "paor: fail model requests to hosts other than the loopback",
        type="bool",
        default=True,
    )
    parser.getgroup("paor").addoption(
        _FLAG, action="store_true", help="paor: let tests make real model requests"
    )


def pytest_configure(config: pytest.Config) -> None:
    """Register the marker (the project may run with --strict-markers)."""
    config.addinivalue_line(
        "markers", f"{ALLOW_MARKER}: let this test make real model requests (paor)"
    )


@pytest.fixture(autouse=True)
def _paor_block_model_requests(request: pytest.FixtureRequest) -> Iterator[None]:
    """Fail real model requests for the test, unless it or the run allows them."""
    config = request.config
    allowed = (
        config.getoption(_FLAG)
        or not config.getini(_INI)
        or request.node.get_closest_marker(ALLOW_MARKER) is not None
    )
    if allowed:
        yield
        return
    from agents.testing import block_model_requests

    with block_model_requests():
        yield


@pytest.fixture
def paor_scripted_model() -> Iterator[ScriptedModelFactory]:
    """Make `ScriptedModel`s (tokens estimated by default); each must play its whole script."""
    from agents.testing import ScriptedModel

    made: list[ScriptedModel] = []

    def make(
        turns: Iterable[Turn], *, name: str = "scripted", tokens: TokenCounting = "estimated"
    ) -> ScriptedModel:
        model = ScriptedModel(turns, name=name, tokens=tokens)
        made.append(model)
        return model

    yield make
    for model in made:
        model.assert_complete()


@pytest.fixture
def paor_fake_openai() -> Iterator[FakeOpenAIFactory]:
    """Start `FakeOpenAIServer`s for the test; each is stopped and checked (`assert_complete`)
    at teardown unless made with `check=False`."""
    import anyio.from_thread

    from agents.testing import FakeOpenAIServer

    with ExitStack() as stack:
        portal = stack.enter_context(anyio.from_thread.start_blocking_portal())
        checked: list[FakeOpenAIServer] = []

        def make(
            script: ServerScript, *, model: str = "fake-model", check: bool = True
        ) -> FakeOpenAIServer:
            server = FakeOpenAIServer(script, model=model)
            stack.enter_context(portal.wrap_async_context_manager(server))
            if check:
                checked.append(server)
            return server

        yield make
    for server in checked:
        server.assert_complete()


@pytest.fixture
def paor_journal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Journal:
    """A journal of the test's own (not open yet), at `$PAOR_HOME/journal.db` in `tmp_path`."""
    from memory import Journal

    monkeypatch.setenv("PAOR_HOME", str(tmp_path / "paor-home"))
    return Journal()
