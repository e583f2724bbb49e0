"""`ResearchSpec`: a research run's set-up as the journal keeps it, and as resume rebuilds it."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from agents import ConfigurationError
from orchestrator.cli._spec import ResearchSpec


def _args(tmp_path: Path, **given: object) -> argparse.Namespace:
    values: dict[str, object] = {
        "topic": "How do generators work?", "docs": None, "out": tmp_path / "r.md",
        "max_subtasks": 3, "deadline": 60.0, "max_tokens": None, "max_cost": None, "max_steps": 6,
        "model": None, "base_url": None, "protocol": "auto", "gguf": None,
    }  # fmt: skip
    values.update(given)
    return argparse.Namespace(**values)


def test_a_spec_round_trips_through_the_journals_metadata(tmp_path: Path) -> None:
    """What is stored reads back as the same spec, limits included."""
    spec = ResearchSpec.from_args(_args(tmp_path, max_steps=4, protocol="json"))
    again = ResearchSpec.from_meta("r1", spec.meta())
    assert again == spec
    assert (again.limits.deadline_s, again.limits.agent.max_steps) == (60.0, 4)


def test_credentials_are_masked_before_the_spec_is_stored(tmp_path: Path) -> None:
    """A base URL's password and secret query values never reach the journal."""
    url = "http://alice:hunter2@127.0.0.1:9/v1?api_key=s3cr3t"
    stored = str(ResearchSpec.from_args(_args(tmp_path, base_url=url)).meta())
    assert "hunter2" not in stored
    assert "s3cr3t" not in stored


def test_a_masked_base_url_comes_from_the_command_line_or_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On resume a masked URL must be given again: `--base-url`, or `$OPENAI_BASE_URL`; with
    neither, one line says so."""
    url = "http://alice:hunter2@127.0.0.1:9/v1"
    spec = ResearchSpec.from_args(_args(tmp_path, base_url=url))
    now = argparse.Namespace(model=None, base_url=None, protocol=None, out=None)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(ConfigurationError, match="pass --base-url again"):
        spec.given(now)
    monkeypatch.setenv("OPENAI_BASE_URL", url)
    assert spec.given(now).base_url == url
    now.base_url, now.model = "http://127.0.0.1:8/v1", "other"
    assert (spec.given(now).base_url, spec.given(now).model) == ("http://127.0.0.1:8/v1", "other")


def test_a_journal_written_before_specs_were_typed_still_resumes(tmp_path: Path) -> None:
    """The flat metadata of older journals is read as a spec."""
    flat = {
        "command": "research", "topic": "t", "docs": None, "out": str(tmp_path / "r.md"),
        "max_subtasks": 2, "deadline": None, "max_tokens": 500, "max_steps": 3,
        "model": "m", "base_url": None, "protocol": "tools", "gguf": None,
    }  # fmt: skip
    spec = ResearchSpec.from_meta("r1", flat)
    assert (spec.limits.max_subtasks, spec.limits.max_tokens, spec.limits.agent.max_steps) == (
        2,
        500,
        3,
    )
    assert (spec.model, spec.protocol) == ("m", "tools")


@pytest.mark.parametrize(
    ("meta", "problem"),
    [
        ({"command": "batch"}, "a task of `paor batch`"),
        ({}, "was not started by `paor research`"),
        ({"command": "research", "spec": {"topic": 3}}, "set-up cannot be read"),
    ],
)
def test_a_run_that_is_not_a_research_run_is_a_one_line_error(
    meta: dict[str, object], problem: str
) -> None:
    """Batch tasks, API runs and unreadable records are refused, each in one line."""
    with pytest.raises(ConfigurationError, match=problem) as caught:
        ResearchSpec.from_meta("r1", meta)
    assert "\n" not in str(caught.value)
