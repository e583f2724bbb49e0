"""`open_model`: the configured endpoint when there is one, else the embedded model.

An endpoint on this machine (a loopback address, or the embedded server) is opened as a local
one (`OpenAIChatModel(local=True)`): its replies are streamed and the request timeout bounds the
silence between their bytes, since a model on a busy CPU may take minutes over a reply and every
second of it is progress. A hosted endpoint keeps a total timeout per attempt. Either comes in the
usual wrappers (`_wrappers.stack`): retries, and admission within the endpoint's limits.
"""

from __future__ import annotations

import ipaddress
import math
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TypedDict
from urllib.parse import urlsplit

from agents._errors import ConfigurationError
from agents.models._admission import Admission
from agents.models._local import LocalModel
from agents.models._model import ChatModel
from agents.models._openai import DecisionProtocol, OpenAIChatModel
from agents.models._wire import OutputMode
from agents.models._wrappers import stack

__all__ = ["TIMEOUT_ENV", "on_this_machine", "open_model"]

TIMEOUT_ENV = "PAOR_REQUEST_TIMEOUT"


class _Timeout(TypedDict, total=False):
    """A model's `timeout` when one is given (else each model keeps its own default)."""

    timeout: float


@asynccontextmanager
async def open_model(
    name: str | None = None,
    *,
    base_url: str | None = None,
    protocol: DecisionProtocol = "auto",
    output_mode: OutputMode = "auto",
    gguf: str | Path | None = None,
    request_timeout: float | None = None,
) -> AsyncIterator[ChatModel]:
    """The configured endpoint, checked to be reachable; with none configured, the embedded model.

    An endpoint is configured by `base_url`, `$OPENAI_BASE_URL` or `$OPENAI_API_KEY`; `name`
    defaults to `$PAOR_MODEL`. The model is closed (the embedded server stopped) on exit.

    Args:
        name: The model's name at the endpoint.
        base_url: The endpoint.
        protocol: The decision protocol (the embedded SmolLM2 always uses "json").
        output_mode: How a typed answer is asked for: "auto", "schema", "tool" or "text" (see
            `OpenAIChatModel`).
        gguf: Serve this GGUF file with the embedded llama.cpp server instead of SmolLM2 (with
            `protocol`); it wins over an endpoint configured in the environment.
        request_timeout: Seconds a model request may take; against a server on this machine,
            the most seconds without a byte of its reply. Defaults to `$PAOR_REQUEST_TIMEOUT`,
            then the model's own default (60 s, 120 s for the embedded server).

    Raises:
        ModelRetryableError: The configured endpoint does not answer.
        ConfigurationError: `gguf` and `base_url` are both given, the timeout is not a number
            of seconds above 0, or no endpoint is configured and the embedded model is not
            installed.
    """
    if gguf and base_url:
        raise ConfigurationError(
            "gguf and base_url exclude each other: gguf is served by the embedded llama.cpp "
            "server, base_url names another endpoint"
        )
    timeout = request_timeout if request_timeout is not None else _timeout_from_env()
    url = base_url or os.environ.get("OPENAI_BASE_URL")
    if not gguf and (url or os.environ.get("OPENAI_API_KEY")):
        async with _endpoint(name, url, protocol, output_mode, _timeout(timeout)) as remote:
            yield remote
        return
    options = _timeout(timeout)
    local = (
        LocalModel(model_path=gguf, protocol=protocol, output_mode=output_mode, **options)
        if gguf
        else LocalModel(output_mode=output_mode, **options)
    )
    async with local as model:
        yield model


@asynccontextmanager
async def _endpoint(
    name: str | None,
    url: str | None,
    protocol: DecisionProtocol,
    output_mode: OutputMode,
    options: _Timeout,
) -> AsyncIterator[ChatModel]:
    """The endpoint at `url`, checked to answer; a local one sends no more requests at once
    than its server has slots (`OpenAIChatModel.fit_slots`); retried and admitted (`stack`)."""
    local = on_this_machine(url)
    admission = Admission()
    model = OpenAIChatModel(
        name,
        base_url=url,
        protocol=protocol,
        output_mode=output_mode,
        local=local,
        rate_limits=admission,
        **options,
    )
    try:
        await model.ping()
        if local:
            await model.fit_slots()
        yield stack(model, admission=admission)
    finally:
        await model.aclose()


def on_this_machine(url: str | None) -> bool:
    """Whether `url` names a server on this machine: localhost, or a loopback address
    (127.0.0.0/8, ::1)."""
    try:
        host = urlsplit(url or "").hostname or ""
        return host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:  # no URL at all (the model refuses it with a clear error), or no IP address
        return False


def _timeout(seconds: float | None) -> _Timeout:
    return {} if seconds is None else {"timeout": seconds}


def _timeout_from_env() -> float | None:
    """`$PAOR_REQUEST_TIMEOUT` in seconds, if it is set.

    Raises:
        ConfigurationError: It is set to anything but a number of seconds above 0.
    """
    text = os.environ.get(TIMEOUT_ENV, "").strip()
    return seconds_of(text, f"${TIMEOUT_ENV}") if text else None


def seconds_of(text: str, name: str) -> float:
    """A timeout given as text (a flag's value, a variable's), in seconds.

    Raises:
        ConfigurationError: It is not a number of seconds above 0 (`name` says what was given).
    """
    try:
        seconds = float(text)
    except ValueError:
        seconds = math.nan
    if not (math.isfinite(seconds) and seconds > 0):
        raise ConfigurationError(f"{name} wants seconds above 0, not {text[:40]!r}")
    return seconds
