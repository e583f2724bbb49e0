"""Run the Python code blocks of one Markdown page, in order, against a scripted model.

    python tests/_docs_examples.py docs/getting-started.md

The blocks of a page share one module namespace, as a reader who runs them one after another
would (Sybil does the same), and may `await` at the top level. `agents.open_model` is replaced by
one that yields `docs_model()`: a `FunctionModel` that answers each request by its purpose, calls
the page's `weather` tool for Lyon and Turin (or its `flights` tool) when it is offered, and fills a typed answer from the
objects below. Model requests to anything but 127.0.0.1 are blocked. The `test_*` functions a
page defines (the testing guide's) are called after its blocks. A block preceded by a line
`<!-- docs-test: skip (why) -->` is only compiled and has its imports run, so a renamed name
still fails (tests/test_docs.py keeps those blocks rare). Exit status 1 names the page, the
block's line and the traceback.
"""

from __future__ import annotations

import ast
import inspect
import json
import re
import sys
import textwrap
import traceback
import types
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio

import agents
from agents import ChatModel
from agents.models import ModelRequest
from agents.testing import FunctionModel, Turn, block_model_requests, by_purpose, call, reply
from orchestrator.testing import plan_reply, replan_reply, subtask, synthesis_reply

FENCE = re.compile(r"^(?P<indent>[ \t]*)```(?P<lang>[\w+-]*)[^\n]*$")
SKIP = "<!-- docs-test: skip"
CITIES = ("Lyon", "Turin")
# Typed answers, by the fields their schema asks for; their numbers appear in the step answers
# (a typed answer with numbers no result shows is sent back).
OBJECTS: dict[frozenset[str], dict[str, Any]] = {
    frozenset({"city", "forecast"}): {"city": "Turin", "forecast": "dry and sunny"},
    frozenset({"number", "price_eur"}): {"number": "LX101", "price_eur": 89},
}
WEATHER = "Turin is drier: dry and sunny, while Lyon has rain all weekend."
FLIGHT = "The cheapest flight is LX101 at 89 EUR."
TRIP = {"origin": "Lyon", "destination": "Lisbon", "date": "2027-05-03"}


def _answer(request: ModelRequest) -> str:
    asks = " ".join(str(message.content) for message in request.messages)
    return FLIGHT if "flight" in asks.lower() else WEATHER


@dataclass(frozen=True, slots=True)
class Block:
    """One fenced code block of a page; `line` is its opening fence's (1-based)."""

    line: int
    lang: str
    code: str
    skipped: bool


def blocks(text: str) -> Iterator[Block]:
    """The fenced blocks of a Markdown text, indented ones (in list items) included."""
    lines = text.splitlines()
    index = 0
    while index < len(lines):
        opening = FENCE.match(lines[index])
        index += 1
        if opening is None:
            continue
        start, indent = index, opening["indent"]
        while index < len(lines) and lines[index].strip() != "```":
            index += 1
        previous = lines[start - 2].strip() if start >= 2 else ""
        body = "\n".join(line.removeprefix(indent) for line in lines[start:index])
        index += 1
        yield Block(start, opening["lang"], textwrap.dedent(body), previous.startswith(SKIP))


def _typed(request: ModelRequest) -> Turn:
    assert request.output is not None
    fields = frozenset(request.output.schema_.get("properties", {}))
    return reply(json.dumps(OBJECTS[fields]))


def _step(request: ModelRequest) -> Turn:
    if request.output is not None:
        return _typed(request)
    offered = {spec.name for spec in request.tools}
    asked = sum(message.role == "tool" for message in request.messages)
    if "weather" in offered and asked < len(CITIES):
        return call("weather", city=CITIES[asked])
    if "flights" in offered and not asked:
        return call("flights", **TRIP)
    if not asked:
        return reply(_answer(request))
    args = {"city": "Turin"} if "weather" in offered else TRIP
    cited = (
        f"{'weather' if 'weather' in offered else 'flights'}({json.dumps(args, sort_keys=True)})"
    )
    return reply(f"{_answer(request)} [{cited}]")


def _synthesis(request: ModelRequest) -> Turn:
    return _typed(request) if request.output is not None else synthesis_reply(_answer(request))


def docs_model() -> FunctionModel:
    """The model every page's `open_model()` yields."""
    plan = plan_reply(subtask("a", "Look up the weekend forecast for Lyon and for Turin."))
    routes = by_purpose(
        plan=plan,
        replan=replan_reply(),
        step=_step,
        wrap_up=_step,
        synthesis=_synthesis,
        summary="A summary of the earlier turns.",
    )
    return FunctionModel(routes, tokens="estimated")


@asynccontextmanager
async def _open_model(*_args: Any, **_options: Any) -> AsyncIterator[ChatModel]:
    yield docs_model()


def run_block(block: Block, namespace: dict[str, Any], page: str) -> None:
    """Run one block in the page's namespace; top-level `await` runs in a fresh event loop.

    The code is compiled as if at its place in the page, so a traceback names the page's lines.
    """
    source = "\n" * block.line + block.code
    code = compile(source, page, "exec", ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    if not code.co_flags & inspect.CO_COROUTINE:
        exec(code, namespace)
        return

    async def main() -> None:
        await eval(code, namespace)

    anyio.run(main)


def imports_of(block: Block) -> Block:
    """The block cut down to its top-level imports (what a skipped block still runs)."""
    flags = ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
    tree = compile(block.code, "<block>", "exec", flags)
    kept: list[ast.stmt] = [n for n in tree.body if isinstance(n, ast.Import | ast.ImportFrom)]
    return Block(block.line, block.lang, ast.unparse(ast.Module(kept, [])), skipped=False)


def run_tests(namespace: dict[str, Any]) -> int:
    """Call the `test_*` functions the page defined (async ones in an event loop)."""
    tests = [fn for name, fn in namespace.items() if name.startswith("test_") and callable(fn)]
    for test in tests:
        if inspect.iscoroutinefunction(test):
            anyio.run(test)
        else:
            test()
    return len(tests)


def run_page(path: Path) -> str:
    """Run the page's Python blocks in order, then its tests; say how many of each ran."""
    module = types.ModuleType("docs_example")
    sys.modules[module.__name__] = module
    ran = skipped = 0
    for block in blocks(path.read_text()):
        if block.lang not in ("python", "py"):
            continue
        try:
            run_block(imports_of(block) if block.skipped else block, module.__dict__, str(path))
        except BaseException:
            traceback.print_exc()
            print(f"{path}:{block.line}: this block failed", file=sys.stderr)
            raise SystemExit(1) from None
        ran, skipped = ran + (not block.skipped), skipped + block.skipped
    return f"{ran} blocks ran, {skipped} skipped, {run_tests(module.__dict__)} tests passed"


if __name__ == "__main__":
    agents.open_model = _open_model
    with block_model_requests():
        print(run_page(Path(sys.argv[1])))
