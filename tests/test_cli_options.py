"""The command line's model options: `--request-timeout` (and `$PAOR_REQUEST_TIMEOUT`), and
`--gguf` against `--base-url`."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from agents import ConfigurationError, OpenAIChatModel, open_model
from agents.models import RetryingModel, unwrapped
from agents.testing import FakeOpenAIServer
from orchestrator._limits import Limits
from orchestrator.cli import main
from orchestrator.cli._options import model_of
from orchestrator.cli._spec import ResearchSpec

pytestmark = pytest.mark.anyio

TOPIC = "How do generators work?"


@pytest.fixture(autouse=True)
def _endpoint(monkeypatch: pytest.MonkeyPatch) -> None:
    """An API key is set and no timeout or endpoint leaks in from the environment."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    for name in ("OPENAI_BASE_URL", "PAOR_MODEL", "PAOR_REQUEST_TIMEOUT"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    """A corpus folder of one document."""
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "generators.md").write_text("# Generators\n\nThey pause at yield.\n", "utf-8")
    return folder


def given(url: str, **options: object) -> argparse.Namespace:
    """The model options of a command line naming `url`."""
    settings = {"model": None, "base_url": url, "protocol": "auto", "gguf": None}
    return argparse.Namespace(**{**settings, "request_timeout": None, **options})


@pytest.mark.parametrize(
    "command", ["research", "batch", "worker", "mcp", "resume", "approve", "answer"]
)
def test_every_command_with_a_base_url_takes_a_request_timeout(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each command that opens a model lists --request-timeout beside --base-url and --gguf."""
    with pytest.raises(SystemExit):
        main([command, "--help"])
    shown = capsys.readouterr().out
    assert "--base-url" in shown
    assert "--request-timeout SECONDS" in shown


@pytest.mark.parametrize(
    ("flag", "env", "seconds"),
    [(None, None, 60.0), ("7", None, 7.0), (None, "3.5", 3.5), ("7", "3.5", 7.0)],
)
async def test_the_flag_wins_over_the_environment(
    flag: str | None, env: str | None, seconds: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--request-timeout sets the model's timeout, else $PAOR_REQUEST_TIMEOUT, else the default;
    an endpoint on the loopback is opened as a local one."""
    if env is not None:
        monkeypatch.setenv("PAOR_REQUEST_TIMEOUT", env)
    async with (
        FakeOpenAIServer([]) as server,
        model_of(given(server.base_url, request_timeout=flag)) as stacked,
    ):
        model = unwrapped(stacked)
        assert isinstance(model, OpenAIChatModel)
        assert (model.timeout, model.local) == (seconds, True)
        assert isinstance(stacked, RetryingModel)  # the usual wrappers around it


async def test_a_recorded_run_takes_the_timeout_given_now() -> None:
    """A resumed run's set-up carries no timeout: the one given with the command is used, and a
    base URL given now wins over the GGUF file it was recorded with."""
    async with FakeOpenAIServer([]) as server:
        spec = ResearchSpec(
            topic=TOPIC, out="r.md", limits=Limits(), base_url=server.base_url, gguf="/x.gguf"
        )
        async with model_of(spec, request_timeout="9") as stacked:
            model = unwrapped(stacked)
            assert isinstance(model, OpenAIChatModel)
            assert model.timeout == 9.0


@pytest.mark.parametrize("value", ["abc", "0", "-1", "nan", "inf", ""])
def test_a_bad_request_timeout_is_a_one_line_error(
    value: str, docs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A --request-timeout that is not seconds above 0 ends with one `paor: error:` line, exit 2."""
    url = "http://127.0.0.1:9/v1"
    argv = ["research", TOPIC, "--docs", str(docs), "--out", str(tmp_path / "r.md")]
    status = main([*argv, "--base-url", url, "--request-timeout", value])
    err = capsys.readouterr().err
    assert status == 2
    assert err == f"paor: error: --request-timeout wants seconds above 0, not {value!r}\n"


def test_a_bad_environment_timeout_is_a_one_line_error(
    docs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A $PAOR_REQUEST_TIMEOUT that is not seconds above 0 is one line and exit 2 as well."""
    monkeypatch.setenv("PAOR_REQUEST_TIMEOUT", "soon")
    argv = ["research", TOPIC, "--docs", str(docs), "--out", str(tmp_path / "r.md")]
    status = main([*argv, "--base-url", "http://127.0.0.1:9/v1"])
    assert status == 2
    assert capsys.readouterr().err == (
        "paor: error: $PAOR_REQUEST_TIMEOUT wants seconds above 0, not 'soon'\n"
    )


@pytest.mark.parametrize("command", ["research", "batch"])
def test_gguf_with_a_base_url_is_a_one_line_error(
    command: str, docs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--gguf and --base-url together are refused in one line (exit 2), not silently resolved."""
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text('{"id": "a", "goal": "What is a generator?"}\n', "utf-8")
    first = [TOPIC] if command == "research" else [str(tasks)]
    argv = [command, *first, "--docs", str(docs), "--out", str(tmp_path / "out.md")]
    status = main([*argv, "--gguf", str(tmp_path / "m.gguf"), "--base-url", "http://h:1/v1"])
    err = capsys.readouterr().err
    assert status == 2
    assert err.startswith("paor: error: --gguf and --base-url exclude each other")
    assert len(err.splitlines()) == 1


async def test_open_model_refuses_gguf_with_a_base_url() -> None:
    """Through the API, a GGUF file and a base URL together are a configuration error."""
    with pytest.raises(ConfigurationError, match="exclude each other"):
        async with open_model(gguf="m.gguf", base_url="http://127.0.0.1:1/v1"):
            pass


async def test_a_gguf_file_wins_over_an_endpoint_in_the_environment(tmp_path: Path) -> None:
    """With $OPENAI_API_KEY set, --gguf still serves its file (here: a missing one, refused)
    rather than being ignored for the environment's endpoint."""
    with pytest.raises(ConfigurationError, match="no GGUF model file"):
        async with open_model(gguf=tmp_path / "missing.gguf"):
            pass
