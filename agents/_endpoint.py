"""`open_model`: the configured endpoint when there is one, else the embedded model."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from agents._local import LocalModel
from agents._model import ChatModel
from agents._openai import DecisionProtocol, OpenAIChatModel

__all__ = ["open_model"]


@asynccontextmanager
async def open_model(
    name: str | None = None,
    *,
    base_url: str | None = None,
    protocol: DecisionProtocol = "auto",
    gguf: str | Path | None = None,
) -> AsyncIterator[ChatModel]:
    """The configured endpoint, checked to be reachable; with none configured, the embedded model.

    An endpoint is configured by `base_url`, `$OPENAI_BASE_URL` or `$OPENAI_API_KEY`; `name`
    defaults to `$PAOR_MODEL`. The model is closed (the embedded server stopped) on exit.

    Args:
        name: The model's name at the endpoint.
        base_url: The endpoint.
        protocol: The decision protocol (the embedded SmolLM2 always uses "json").
        gguf: Serve this GGUF file with the embedded llama.cpp server instead of SmolLM2 (with
            `protocol`); ignored when an endpoint is configured.

    Raises:
        ModelRetryableError: The configured endpoint does not answer.
        ConfigurationError: No endpoint is configured and the embedded model is not installed.
    """
    url = base_url or os.environ.get("OPENAI_BASE_URL")
    if url or os.environ.get("OPENAI_API_KEY"):
        remote = OpenAIChatModel(name, base_url=url, protocol=protocol)
        try:
            await remote.ping()
            yield remote
        finally:
            await remote.aclose()
        return
    local = LocalModel(model_path=gguf, protocol=protocol) if gguf else LocalModel()
    async with local as model:
        yield model
