"""Shared test setup: asyncio backend, and no model request may leave 127.0.0.1."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import structlog

from agents.testing import block_model_requests


@pytest.fixture
def anyio_backend() -> str:
    """Run async tests on asyncio (the backend paor targets first)."""
    return "asyncio"


@pytest.fixture(autouse=True)
def _no_remote_models() -> Iterator[None]:
    """Fail any model request to a host other than the loopback."""
    with block_model_requests():
        yield


@pytest.fixture(autouse=True)
def _private_paor_home(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each test has its own $PAOR_HOME: the CLI journals to $PAOR_HOME/journal.db by default."""
    monkeypatch.setenv("PAOR_HOME", str(tmp_path_factory.mktemp("paor-home")))


@pytest.fixture(autouse=True)
def _structlog_defaults() -> Iterator[None]:
    """The CLI configures structlog for the process (bound to that test's captured stderr): put
    the defaults back after every test, so no later test logs into a closed stream."""
    yield
    structlog.reset_defaults()
