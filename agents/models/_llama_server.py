"""The embedded model's server process: `python -m agents.models._llama_server serve --model
PATH ...`.

`LocalModel` starts it as a child. It serves a GGUF file over an OpenAI-compatible API on
127.0.0.1 with llama.cpp (`xllamacpp`), prints its base URL on stdout once ready, sends
everything llama.cpp prints to stderr, and exits when its stdin closes (with
`--until-stdin-closes`), so it cannot outlive a parent that was killed outright. The API key comes
through the environment (`PAOR_LOCAL_API_KEY`), never the command line.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import threading
from collections.abc import Sequence
from contextlib import suppress
from pathlib import Path
from typing import Any

from agents.models._local import GGUF_NAME, KEY_ENV, default_model_path

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m agents.models._llama_server",
        description="Serve a GGUF model over an OpenAI-compatible API on 127.0.0.1 (llama.cpp).",
    )
    parser.add_argument("command", choices=["serve"])
    parser.add_argument("--model", type=Path, help="the GGUF file (default: SmolLM2-135M-Instruct)")
    parser.add_argument("--port", type=int, default=0, help="0 lets the OS pick a free port")
    parser.add_argument("--context", type=int, default=4096, help="tokens of context per slot")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--slots", type=int, default=1, help="requests decoded concurrently")
    parser.add_argument("--until-stdin-closes", action="store_true", help="exit when stdin closes")
    return parser


def _params(xllamacpp: Any, args: argparse.Namespace) -> Any:
    params = xllamacpp.CommonParams()
    params.model.path = str(args.model or default_model_path())
    params.model_alias = {args.model.stem if args.model else Path(GGUF_NAME).stem}
    params.hostnames = ["127.0.0.1"]
    params.port = args.port
    params.n_parallel = args.slots
    params.n_ctx = args.context * args.slots  # llama.cpp splits n_ctx between the slots
    params.cpuparams.n_threads = args.threads
    params.cpuparams_batch.n_threads = args.threads
    params.ui = False
    params.offline = True
    params.cache_ram_mib = 256  # the prompt cache defaults to 8 GiB of RAM
    # A streamed request at work, its prompt still being read, shows it by a ping (8 bytes) every
    # second or two (llama.cpp checks once a second): the client's idle timeout then only ends a
    # request the server stopped serving.
    params.sse_ping_interval = 1
    # llama.cpp drops a request whose client hung up between two batches of prompt tokens: at
    # 256 a batch (2,048 by default), a slot is free again within seconds on a busy CPU.
    params.n_batch = params.n_ubatch = 256
    params.api_keys = [key] if (key := os.environ.pop(KEY_ENV, "")) else []
    return params


def main(argv: Sequence[str] | None = None) -> None:
    """Serve until interrupted (or until stdin closes); print the base URL once ready."""
    args = _parser().parse_args(argv)
    xllamacpp = importlib.import_module("xllamacpp")
    params = _params(xllamacpp, args)
    # Only our URL goes to stdout: llama.cpp's own output joins stderr, so a parent that stops
    # reading the pipe after the first line can never block the server.
    report = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    server = xllamacpp.Server(params)
    report.write(f"{server.listening_address}\n")
    report.close()
    if args.until_stdin_closes:
        sys.stdin.buffer.read()
    else:
        threading.Event().wait()


if __name__ == "__main__":
    with suppress(KeyboardInterrupt):
        main()
