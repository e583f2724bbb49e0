"""Property-based fuzzing of the real paths: hostile model replies, file trees, task lines, argv.

Every property throws random and hostile input at public entry points and checks the promises a
caller relies on: a run ends by its deadline (plus a margin) with a status, whatever the endpoint
sends; errors are the documented ones, on one line; no record is lost or duplicated.

- `test_executor_survives_any_reply`: an `Executor` over real HTTP (`tests._fuzz_server`) against
  random statuses, headers (Retry-After garbage), bodies (random bytes, truncated or deeply nested
  JSON, completions with junk content and tool calls, JSON-protocol decisions), cut or dropped
  connections: it returns a report with a status, never raises, and its notes are one line each.
- `test_stalled_replies_end_by_the_deadline`: replies that never come or never end (hung
  connections, endless bodies) cannot hold an `Executor` past its deadline.
- `test_retry_after_cannot_outlast_the_caller`: any Retry-After or Retry-After-Ms value, on any
  retryable status, leaves `OpenAIChatModel.complete` cancellable by its caller's deadline and
  ends it with a one-line `ModelRetryableError` at worst.
- `test_orchestrator_survives_any_plan`: an `Orchestrator` run whose planner writes random plans
  (cycles, duplicate or reserved ids, unknown dependencies, huge plans, junk) and whose agents get
  random replies: the run returns a result (or the documented one-line `PlanError`) by its
  deadline; every adopted plan is a valid DAG; every started subtask ends once and is reported
  once; no sub-agent crashes; a journaled run is recorded as ended and replays without drift.
- `test_corpus_loads_any_file_tree` / `test_corpus_special_files`: `Corpus.from_folder` on random
  trees (odd names, random bytes, NUL, non-UTF-8, empty, oversize files; symlinks, FIFOs) loads
  every usable file under a unique, citable id, or raises a one-line `ConfigurationError`.
- `test_load_tasks_accepts_exactly_the_valid_lines` / `test_run_batch_writes_each_task_once`:
  random JSON Lines load exactly when every line is a valid task (else a one-line
  `ConfigurationError`); `run_batch` writes each finished task exactly once, and a re-run writes
  the rest without duplicating any.
- `test_cli_survives_hostile_goals_and_urls` / `test_paor_command_never_prints_a_traceback`: the
  `paor` command (in process, and the installed entry point) with hostile goals and base URLs
  exits 0 or 2, prints no traceback and no terminal escape, and an error is one line.
- `test_cli_batch_keeps_its_task_file`: `paor batch` never writes into its own task file, however
  `--out` names it (the same path, a `./` detour, a symlink).

Profiles: "ci" (the default: a few hundred cases in all, derandomized so every CI run checks the
same cases) and "long" (25 times as many, random, for hunting):

    PAOR_FUZZ=long .venv/bin/pytest -q -p no:cacheprovider --timeout 0 tests/test_fuzz.py

A failure prints the falsifying example and a `@reproduce_failure` blob to replay it.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import sys
import tempfile
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import pytest
import structlog
from hypothesis import Phase, example, given, settings
from hypothesis import strategies as st

import agents
from agents import AgentReport, Budget, ConfigurationError, Executor, OpenAIChatModel, tool
from agents._report import cited_ids
from agents.errors import ModelRequestError, ModelRetryableError
from agents.models import ModelRequest, RetryingModel
from agents.testing import FunctionModel, Turn, call, reply
from agents.toolkits import Corpus
from memory import Journal, UserMessage
from orchestrator import Limits, Orchestrator, Plan, RunConfig, RunResult
from orchestrator._batch import BatchTask, load_tasks, run_batch
from orchestrator.cli import main
from orchestrator.events import (
    RunFinished,
    SubtaskCancelled,
    SubtaskFailed,
    SubtaskFinished,
    SubtaskStarted,
)
from tests._fuzz_server import FuzzServer, Shape, Wire

pytestmark = pytest.mark.anyio

LONG = os.environ.get("PAOR_FUZZ") == "long"
settings.register_profile(
    "ci",
    deadline=None,
    derandomize=True,
    database=None,
    print_blob=True,
    # No explain phase: it re-runs a failure many times over, and some examples take seconds.
    phases=(Phase.explicit, Phase.generate, Phase.shrink),
)
settings.register_profile("long", deadline=None, database=None, print_blob=True)
settings.load_profile("long" if LONG else "ci")


def cases(ci: int) -> settings:
    """This test's number of cases: `ci` under the ci profile, 25 times as many under long."""
    return settings(max_examples=ci * 25 if LONG else ci)


MARGIN_S = 5.0  # a bound, not a timing claim: a run past its deadline by this much has hung
AGENT_DEADLINE_S = 1.5
RUN_DEADLINE_S = 2.5
REPORT_STATUSES = {"done", "partial", "failed", "blocked"}
RUN_STATUSES = {"complete", "incomplete", "failed"}
RESERVED_IDS = {"run", "planner"}


@contextlib.contextmanager
def within(seconds: float, what: str) -> Iterator[None]:
    """Fail the test if the body has not ended `seconds` from now: it hangs."""
    try:
        with anyio.fail_after(seconds):
            yield
    except TimeoutError:
        pytest.fail(f"{what} did not end within {seconds:g}s of its start: it hangs")


def one_line(text: str) -> bool:
    """Whether `text` fits on one terminal line (no line break of any kind)."""
    return "\n" not in text and "\r" not in text


# --- Hostile text and JSON ---------------------------------------------------------------------

HOSTILE_TEXTS = (
    "", " ", "\n\n", "\x00", "\r", "line one\nline two", "\x1b[31mred\x1b[0m", "\x1b]0;owned\x07",
    "\x1b[2J\x1b[H", "\u2028", "mid\u2028line", "nel\x85line", "\u202e", "\ufeff", "\udcff", "null",
    "{}", "[]", "lookup", "report_issue", "[planner]", "Task: ",
    '```json\n{"name": "lookup", "arguments": {}}\n```',
    '<tool_call>{"name": "lookup", "arguments": {"city": "x"}}</tool_call>',
)  # fmt: skip
texts = st.one_of(
    st.sampled_from(HOSTILE_TEXTS),
    st.text(max_size=30),
    st.tuples(st.sampled_from(HOSTILE_TEXTS), st.text(max_size=20)).map("".join),
)
huge_texts = st.sampled_from([70_000, 1_000_000]).map(lambda n: "x" * n)
numbers = st.one_of(
    st.integers(-10, 10**6), st.sampled_from([10**30, -(2**63)]), st.floats(), texts
)
json_values = st.recursive(
    st.none() | st.booleans() | numbers | texts,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(texts, inner, max_size=3),
    max_leaves=6,
)


def encode(value: Any, ascii_only: bool) -> bytes:
    """JSON bytes as a server might send them: escaped, or raw UTF-8 (lone surrogates too)."""
    return json.dumps(value, ensure_ascii=ascii_only).encode("utf-8", "surrogatepass")


def deep(depth: int) -> bytes:
    """A JSON body nested `depth` levels deep."""
    return b'{"choices": ' + b"[" * depth + b"]" * depth + b"}"


# --- Chat completions --------------------------------------------------------------------------

tool_names = st.one_of(
    st.sampled_from(["lookup", "lookup", "report_issue", "", "LOOKUP", "functions.lookup"]), texts
)
arguments = st.one_of(
    st.fixed_dictionaries({"city": texts}).map(json.dumps),
    st.dictionaries(texts, json_values, max_size=3).map(json.dumps),
    st.fixed_dictionaries({"kind": texts, "reason": texts}).map(json.dumps),
    st.sampled_from(["[1, 2]", "null", "3", '"city"', "{", '{"city": ', "NaN", '{"city": 1}']),
    huge_texts.map(lambda s: json.dumps({"city": s})),
    texts,
    json_values,  # not a string at all: a list, null, a number, an object
)
tool_calls = st.one_of(
    st.fixed_dictionaries(
        {
            "id": st.sampled_from(["call_1", "call_1", "call_2", ""]) | st.none() | texts,
            "type": st.just("function"),
            "function": st.fixed_dictionaries({"name": tool_names, "arguments": arguments}),
        }
    ),
    json_values,
)
decisions = st.one_of(
    st.fixed_dictionaries({"kind": st.just("final"), "answer": texts | json_values}),
    st.fixed_dictionaries(
        {
            "kind": st.just("tool_calls"),
            "calls": st.lists(
                st.fixed_dictionaries({"tool": tool_names, "arguments": json_values}), max_size=3
            ),
        }
    ),
    st.dictionaries(st.sampled_from(["kind", "tool", "calls", "answer", "arguments"]), json_values),
)
contents = st.one_of(
    st.none(), texts, decisions.map(json.dumps), huge_texts, st.just("Sunny in Paris.")
)
usages = st.fixed_dictionaries(
    {},
    optional={
        "prompt_tokens": numbers,
        "completion_tokens": numbers,
        "prompt_tokens_details": st.none() | st.fixed_dictionaries({"cached_tokens": numbers}),
    },
)


@st.composite
def completions(draw: st.DrawFn, content: st.SearchStrategy[Any] = contents) -> dict[str, Any]:
    """A chat.completion object, most fields hostile."""
    message: dict[str, Any] = {"role": "assistant", "content": draw(content)}
    calls = draw(st.none() | st.lists(tool_calls, max_size=3))
    if calls is not None:
        message["tool_calls"] = calls
    finish = draw(st.sampled_from(["stop", "tool_calls", "length", None]))
    body: dict[str, Any] = {
        "id": "chatcmpl-fuzz",
        "object": "chat.completion",
        "model": draw(st.just("fuzz") | json_values),
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
    }
    if (usage := draw(st.none() | usages)) is not None:
        body["usage"] = usage
    return body


error_objects = st.one_of(
    st.fixed_dictionaries(
        {"error": st.fixed_dictionaries({"message": texts, "code": json_values})}
    ),
    st.fixed_dictionaries({"error": json_values}),
)
documents = st.one_of(
    completions(),
    completions(),
    error_objects,
    st.fixed_dictionaries({"choices": json_values}),
    st.fixed_dictionaries({"choices": st.lists(st.fixed_dictionaries({"message": json_values}))}),
    json_values,
)
ODD_BODIES = (
    b"\x00\x00\x00\x00\x00", b"\xff\xfe{", b"\xfe\xff\x00{", b"null", b"[]", b'"text"', b"1e999",
    b'{"choices": null}', b'{"choices": [null]}', b'{"choices": [{"message": null}]}',
    b'\xef\xbb\xbf{"choices": [{"message": {"content": "Sunny."}}]}',
)  # fmt: skip
bodies = st.one_of(
    st.tuples(documents, st.booleans()).map(lambda d: encode(*d)),
    st.sampled_from(ODD_BODIES),
    st.tuples(documents.map(lambda d: encode(d, True)), st.floats(0, 1)).map(
        lambda b: b[0][: int(len(b[0]) * b[1])]
    ),
    st.binary(max_size=64),
    st.sampled_from([50, 5_000, 200_000]).map(deep),
)

# --- Statuses, headers, shapes -----------------------------------------------------------------

RETRY_VALUES = (
    "nan", "NaN", "inf", "-inf", "Infinity", "-1", "0", "0.05", "1e308", "1e-308", "", " ", "abc",
    "+5", "0x10", "1_0", "5" * 400, "\u0661", "Wed, 21 Oct 2015 07:28:00 GMT",
    "Fri, 31 Dec 9999 23:59:59 GMT", "Mon, 99 Foo 2020 99:99:99 GMT", "Thu, 01 Jan 1970 00:00:00 GMT",
)  # fmt: skip
retry_values = st.one_of(
    st.sampled_from(RETRY_VALUES), st.floats().map(repr), st.integers().map(str), texts
)
headers = st.lists(
    st.tuples(
        st.sampled_from(["Retry-After", "retry-after-ms", "Retry-After", "X-Fuzz", "Content-Type"]),
        retry_values,
    ),
    max_size=3,
).map(tuple)
STATUSES = (
    200, 200, 200, 200, 400, 401, 404, 408, 409, 422, 429, 500, 502, 503, 599, 204, 301, 307,
)  # fmt: skip
FAST_SHAPES: tuple[Shape, ...] = ("whole", "whole", "whole", "whole", "short", "drop")
STALLED_SHAPES: tuple[Shape, ...] = ("hang", "endless")


@st.composite
def wires(draw: st.DrawFn, shapes: tuple[Shape, ...] = FAST_SHAPES) -> Wire:
    """One hostile HTTP answer. Redirects stay on the server (relative Locations only)."""
    status = draw(st.sampled_from(STATUSES))
    extra = draw(headers)
    if 300 <= status < 400:
        extra = (("Location", draw(st.sampled_from(["/v1/chat/completions", "?again=1"]))), *extra)
    return Wire(
        status=status, headers=extra, body=draw(bodies), shape=draw(st.sampled_from(shapes))
    )


def ok_completion(content: str) -> Wire:
    """A well-formed answer with this text."""
    message = {"role": "assistant", "content": content}
    return Wire(body=encode({"choices": [{"index": 0, "message": message}]}, True))


def calling(name: str, arguments: Any) -> Wire:
    """A well-formed answer calling one tool with these (raw) arguments."""
    function = {"name": name, "arguments": arguments}
    message = {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": "c", "function": function}],
    }
    return Wire(body=encode({"choices": [{"index": 0, "message": message}]}, True))


HUGE_ARGUMENTS = json.dumps({"city": "x" * 1_000_000})


def play(script: list[Wire], then: Wire) -> Callable[[Any], Wire]:
    """A responder that plays `script` in order, then answers `then` for ever."""
    queue = list(script)
    return lambda _body: queue.pop(0) if queue else then


@tool(timeout=1.0)
async def lookup(city: str) -> str:
    """Look up the weather in a city.

    Args:
        city: The city.
    """
    return f"sunny in {city[:40]}"


class _Retried(RetryingModel):
    """paor's client retried by the wrapper, closed as the client."""

    inner: OpenAIChatModel

    async def aclose(self) -> None:
        await self.inner.aclose()


def model_for(server: FuzzServer, protocol: Any, **retries: Any) -> _Retried:
    """An `OpenAIChatModel` on `server` with quick retries (`RetryingModel`'s options)."""
    retries = {"max_retries": 1, "backoff": 0.01, "max_backoff": 0.2, **retries}
    client = OpenAIChatModel("fuzz", base_url=server.base_url, api_key="test", protocol=protocol)
    return _Retried(client, **retries)


def check_report(report: AgentReport) -> None:
    """What every report promises: a status, an answer, one-line notes."""
    assert report.status in REPORT_STATUSES
    assert report.answer.strip()
    for note in report.notes:
        assert one_line(note), f"a note spans lines: {note[:300]!r}"


async def run_agent(server: FuzzServer, protocol: Any, **options: Any) -> AgentReport:
    """One executor run against `server`, guarded: past its deadline plus the margin it fails."""
    model = model_for(server, protocol, **options)
    limits = agents.AgentLimits(max_steps=3, max_requests=6, deadline_s=AGENT_DEADLINE_S)
    try:
        with within(AGENT_DEADLINE_S + MARGIN_S, "the executor"):
            return await Executor(model, [lookup], limits=limits).run("Weather in Paris?")
    finally:
        await model.aclose()


PROTOCOLS = st.sampled_from(["tools", "json", "auto"])


@cases(100)
@example(script=[Wire(body=b"\x80")], protocol="tools")  # not UTF-8
@example(script=[Wire(body=b"\x00\x00\x00\x00\x00")], protocol="tools")  # taken for UTF-32
@example(script=[Wire(status=429, headers=(("Retry-After", "nan"),))], protocol="tools")
@example(script=[Wire(status=503, headers=(("retry-after-ms", "-inf"),))], protocol="json")
@example(script=[Wire(body=deep(200_000))], protocol="tools")
@example(script=[calling("lookup", HUGE_ARGUMENTS)], protocol="tools")
@example(
    script=[Wire(status=400, body=b'{"error": {"message": "bad\\nrequest"}}')], protocol="tools"
)
@example(script=[calling("lookup", [1, 2]), calling("lookup", None)], protocol="tools")
@example(script=[calling("nope", "{"), calling("", "{}")], protocol="auto")
@example(script=[ok_completion(json.dumps({"kind": "tool_calls", "calls": [1]}))], protocol="json")
@given(script=st.lists(wires(), min_size=1, max_size=5), protocol=PROTOCOLS)
async def test_executor_survives_any_reply(script: list[Wire], protocol: str) -> None:
    """Whatever the endpoint answers, the executor returns a report by its deadline."""
    async with FuzzServer(play(script, ok_completion("Sunny in Paris."))) as server:
        report = await run_agent(server, protocol)
    check_report(report)


@cases(6)
@given(
    script=st.lists(st.just(calling("lookup", '{"city": "Paris"}')), max_size=2),
    stall=wires(shapes=STALLED_SHAPES),
    protocol=PROTOCOLS,
)
async def test_stalled_replies_end_by_the_deadline(
    script: list[Wire], stall: Wire, protocol: str
) -> None:
    """A reply that never comes, or never ends, cannot hold an executor past its deadline."""
    async with FuzzServer(play(script, stall)) as server:
        report = await run_agent(server, protocol)
    check_report(report)


@cases(20)
@example(status=429, header="Retry-After", value="nan")
@example(status=503, header="retry-after-ms", value="inf")
@example(status=429, header="Retry-After", value="Fri, 31 Dec 9999 23:59:59 GMT")
@given(
    status=st.sampled_from([408, 409, 429, 500, 503]),
    header=st.sampled_from(["Retry-After", "retry-after-ms"]),
    value=retry_values,
)
async def test_retry_after_cannot_outlast_the_caller(status: int, header: str, value: str) -> None:
    """Any Retry-After leaves a model call cancellable by its caller, or ends it with a one-line
    `ModelRetryableError` (the default backoff cap, 30 s, is far past the caller's deadline)."""
    wire = Wire(status=status, headers=((header, value),), body=b"{}")
    async with FuzzServer(lambda _body: wire) as server:
        model = model_for(server, "tools", max_retries=3, max_backoff=30.0)
        request = ModelRequest(messages=(UserMessage(content="hello"),))
        error = None
        try:
            with within(0.5 + MARGIN_S, "the model call"), anyio.move_on_after(0.5):
                await model.complete(request)
        except ModelRetryableError as exc:
            error = str(exc)
        finally:
            await model.aclose()
    assert error is None or one_line(error), error


# --- Plans -------------------------------------------------------------------------------------

subtask_ids = st.one_of(
    st.sampled_from(["a", "b", "c", "a", "run", "planner", "goal", " a ", "a b", "", "x" * 41]),
    st.sampled_from(["a.b", "-", "é", "a\nb", "a,b", "[a]"]),
    st.from_regex(r"[A-Za-z0-9_.\-]{1,6}", fullmatch=True),
)
subtasks = st.fixed_dictionaries(
    {"id": subtask_ids, "goal": texts | st.just("Find the weather in Paris today.")},
    optional={
        "depends_on": st.lists(subtask_ids, max_size=3),
        "tools": st.lists(st.sampled_from(["lookup", "nope", ""]), max_size=2),
        "acceptance": texts,
        "expected_output": texts,
    },
)


def chain(size: int) -> dict[str, Any]:
    """A huge plan: `size` subtasks in a line."""
    subs = [
        {"id": f"s{i}", "goal": f"Find fact {i}.", "depends_on": [f"s{i - 1}"]} for i in range(size)
    ]
    subs[0]["depends_on"] = [f"s{size - 1}"] if size % 2 else []  # odd sizes close a cycle
    return {"subtasks": subs}


plan_documents = st.one_of(
    st.fixed_dictionaries(
        {"subtasks": st.lists(subtasks, max_size=6)}, optional={"rationale": texts}
    ),
    st.fixed_dictionaries(
        {},
        optional={
            "remove": st.lists(subtask_ids, max_size=3),
            "add": st.lists(subtasks, max_size=3),
            "rationale": texts,
        },
    ),
    st.sampled_from([2, 3, 9, 500, 5001]).map(chain),
    json_values,
)
plan_wires = st.one_of(
    plan_documents.map(lambda p: ok_completion(json.dumps(p))),
    plan_documents.map(lambda p: ok_completion(json.dumps(p))),
    wires(),
)
VALID_PLAN = ok_completion(json.dumps({"subtasks": [{"id": "a", "goal": "Find the weather."}]}))


def team(plans: list[Wire], replies: list[Wire]) -> Callable[[Any], Wire]:
    """The planner's answers from `plans`, everyone else's from `replies`; then sane ones."""
    plan, other = play(plans, VALID_PLAN), play(replies, ok_completion("Sunny in Paris."))

    def respond(body: Any) -> Wire:
        schema = (
            body.get("response_format", {}).get("json_schema", {}) if isinstance(body, dict) else {}
        )
        return plan(body) if schema.get("name") in ("plan", "replan") else other(body)

    return respond


def check_plan(plan: Plan, max_subtasks: int) -> None:
    """An adopted plan is a valid DAG of new, well-formed ids."""
    ids = [s.id for s in plan.subtasks]
    assert 1 <= len(ids) <= max_subtasks
    assert len(set(ids)) == len(ids), f"duplicate ids: {ids}"
    assert not set(ids) & RESERVED_IDS, f"reserved ids: {ids}"
    placed: set[str] = set()
    pending = {s.id: set(s.depends_on) for s in plan.subtasks}
    assert all(deps <= set(ids) for deps in pending.values()), "unknown dependencies"
    while ready := {i for i, deps in pending.items() if deps <= placed}:
        placed |= ready
        pending = {i: d for i, d in pending.items() if i not in ready}
    assert not pending, f"a dependency cycle among {sorted(pending)}"


def check_run(result: RunResult, max_subtasks: int) -> None:
    """What every run result promises, and the bookkeeping of its subtasks."""
    assert result.status in RUN_STATUSES
    # Never empty-handed, but for a run that made no plan: it ends failed, saying why.
    assert result.answer.strip() or (result.status == "failed" and not result.plans)
    assert result.status != "failed" or result.reason
    assert result.reason is None or one_line(result.reason), result.reason
    for note in result.notes:
        assert one_line(note), f"a note spans lines: {note[:300]!r}"
    for plan in result.plans:
        check_plan(plan, max_subtasks)
    started = Counter(e.subtask_id for e in result.events if isinstance(e, SubtaskStarted))
    ended = Counter(
        e.subtask_id
        for e in result.events
        if isinstance(e, SubtaskFinished | SubtaskFailed | SubtaskCancelled)
    )
    reported = Counter(r.agent_id for r in result.reports)
    assert max(started.values(), default=1) == 1, f"started twice: {started}"
    assert ended == started, f"started {started}, ended {ended}"
    assert reported == started, f"started {started}, reported {reported}"
    crashed = [r.notes for r in result.reports if r.status == "failed" and not r.answer]
    assert not crashed, f"a sub-agent crashed: {crashed}"
    assert [type(e) for e in result.events].count(RunFinished) == 1


def plan_of(*subs: tuple[str, list[str]]) -> list[Wire]:
    """A planner that answers with these (id, depends_on) subtasks, repairs included."""
    draft = [{"id": i, "goal": f"Find fact {i}.", "depends_on": d} for i, d in subs]
    return [ok_completion(json.dumps({"subtasks": draft}))] * 3


RUN_ID = "fuzz-run"
PLAN_LIMITS = Limits(
    deadline_s=RUN_DEADLINE_S,
    max_requests=12,
    max_concurrency=1,
    max_subtasks=4,
    max_replans=1,
    max_plan_repairs=1,
    agent=agents.AgentLimits(max_steps=2),
)


async def outcome(orch: Orchestrator) -> RunResult:
    """The run's result (it never raises for the run's own failure); past its deadline plus the
    margin it fails."""
    with within(RUN_DEADLINE_S + MARGIN_S, "the run"):
        return await orch.run("What is the weather in Paris?", run_id=RUN_ID)


async def check_journal(orch: Orchestrator, journal: Journal, ended: RunResult) -> None:
    """The journal knows the run ended, and it replays to the same result."""
    info = await journal.run(RUN_ID)
    assert info is not None, "the run is not in the journal"
    assert info.finished, f"the journal says the run is {info.status}"
    with within(MARGIN_S, "the replay"):
        replay = await orch.replay(RUN_ID)
    assert replay.ok, f"the replay drifted: {[d.describe() for d in replay.drift]}"
    assert replay.result is not None
    assert (replay.result.status, replay.result.answer) == (ended.status, ended.answer)


def case(
    plans: list[Wire],
    replies: list[Wire] | None = None,
    protocol: str = "tools",
    fallback: str = "fail",
    journaled: bool = False,
) -> dict[str, Any]:
    """The arguments of one explicit orchestrator case."""
    return {
        "plans": plans,
        "replies": replies or [],
        "protocol": protocol,
        "fallback": fallback,
        "journaled": journaled,
    }


SURROGATE_PLAN = {"subtasks": [{"id": "a", "goal": "Find the weather."}], "rationale": "\udcff"}


@cases(40)
@example(**case(plan_of(("run", []), ("planner", [])), journaled=True))
@example(**case(plan_of(("a", ["b"]), ("b", ["a"]))))
@example(**case(plan_of(("a", []), ("a", [])), protocol="json", fallback="single"))
@example(**case(plan_of(("a", ["zz\nzz"]))))
@example(**case([ok_completion(json.dumps(chain(5001)))]))
@example(**case([], replies=[Wire(body=b"\x00\x00\x00\x00\x00")]))
@example(**case([ok_completion(json.dumps(SURROGATE_PLAN))], journaled=True))
@given(
    plans=st.lists(plan_wires, min_size=1, max_size=3),
    replies=st.lists(wires(), max_size=4),
    protocol=PROTOCOLS,
    fallback=st.sampled_from(["fail", "single"]),
    journaled=st.booleans(),
)
async def test_orchestrator_survives_any_plan(
    plans: list[Wire], replies: list[Wire], protocol: str, fallback: Any, journaled: bool
) -> None:
    """Whatever the planner and the agents answer, the run ends by its deadline with a result
    (failed, with a one-line reason, when no plan could be made), having adopted only valid
    plans and lost no subtask; a journaled run is recorded as ended, and replays to the same
    result."""
    with tempfile.TemporaryDirectory() as folder:
        async with FuzzServer(team(plans, replies)) as server, contextlib.AsyncExitStack() as stack:
            journal = None
            if journaled:
                journal = await stack.enter_async_context(Journal(Path(folder, "runs.db")))
            model = model_for(server, protocol)
            stack.push_async_callback(model.aclose)
            orch = Orchestrator(
                model,
                [lookup],
                journal=journal,
                config=RunConfig(limits=PLAN_LIMITS, on_plan_failure=fallback),
            )
            ended = await outcome(orch)
            if journal is not None:
                await check_journal(orch, journal, ended)
    if not ended.plans:
        assert fallback == "fail", f"no plan despite on_plan_failure='single': {ended.reason}"
    check_run(ended, PLAN_LIMITS.max_subtasks)


# --- Corpus files ------------------------------------------------------------------------------

NAME_PARTS = ("a", "[x]", "_", "é", "日本", " ", ".", "..", "-", ",", ";", "#", "(1)", "'", "A")
EXTENSIONS = (".md", ".txt", ".rst", ".html", ".htm", ".MD", ".pdf", ".py", "", ".md.txt")
stems = st.lists(st.sampled_from(NAME_PARTS), min_size=1, max_size=3).map("".join)
file_names = (
    st.tuples(stems, st.sampled_from(EXTENSIONS))
    .map("".join)
    .filter(lambda n: n not in (".", ".."))
)
PROSE = "Generators pause at each yield and resume on next. "
file_bodies = st.one_of(
    st.just(b""),
    st.binary(max_size=80),
    st.sampled_from([b"\x00", b"# Title\x00\n", b"\xff\xfe\xfd", b"caf\xe9", b"\xef\xbb\xbf# BOM"]),
    texts.map(lambda t: t.encode("utf-8", "surrogatepass")),
    st.integers(1, 400).map(lambda n: (PROSE * n).encode()),
    st.sampled_from([b"<html><head><title>T</title></head><body><p>Hi there</p></body></html>"]),
)
trees = st.dictionaries(
    st.lists(stems, max_size=2).flatmap(lambda dirs: file_names.map(lambda f: (*dirs, f))),
    file_bodies,
    min_size=1,
    max_size=8,
)


def write_tree(root: Path, tree: dict[tuple[str, ...], bytes]) -> dict[Path, bytes]:
    """Write the files (a name taken by a folder, or under a file, is left out)."""
    written = {}
    for parts, body in tree.items():
        path = root.joinpath(*parts)
        with contextlib.suppress(OSError):
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(body)
            written[path] = body
    return written


def surely_usable(path: Path, body: bytes, root: Path, max_bytes: int) -> bool:
    """Whether a plain-text document must be loaded: visible, small enough, text, not blank."""
    if path.suffix.lower() not in (".md", ".txt", ".rst") or len(body) > max_bytes:
        return False
    if any(p.startswith(".") for p in path.relative_to(root).parts) or b"\x00" in body:
        return False
    try:
        text = body.decode("utf-8-sig")
    except UnicodeDecodeError:
        return False
    return bool(text.strip()) and not text.lstrip().startswith("---")


def load_corpus(root: Path, max_bytes: int) -> Corpus | None:
    """The corpus of `root`, or None after a one-line `ConfigurationError`."""
    try:
        return Corpus.from_folder(root, max_bytes=max_bytes)
    except ConfigurationError as exc:
        error = str(exc)
    assert one_line(error), f"a multi-line error: {error}"
    assert "two documents have the id" not in error, f"ids collide: {error}"
    return None


def check_corpus(corpus: Corpus) -> None:
    """Every document has a unique id that an answer can cite, and search works."""
    ids = [d.id for d in corpus.documents]
    assert len(set(ids)) == len(ids)
    for doc_id in ids:
        assert cited_ids(f"[{doc_id}]") == {doc_id}, f"id {doc_id!r} cannot be cited"
        assert corpus.resolve(doc_id) is not None
    corpus.search("generators yield")


TEXT = b"# Title\n\nGenerators pause at yield."


@cases(60)
@example(tree={(",", "a.md"): TEXT}, max_bytes=5_000_000)
@example(tree={(" a .md",): TEXT}, max_bytes=5_000_000)
@example(tree={(n,): TEXT for n in ("[x].md", "[x].txt", "_x_.md", "_x_.txt")}, max_bytes=100)
@example(tree={("big.md",): b"word " * 1_100_000}, max_bytes=5_000_000)
@given(tree=trees, max_bytes=st.sampled_from([5_000_000, 5_000_000, 100]))
def test_corpus_loads_any_file_tree(tree: dict[tuple[str, ...], bytes], max_bytes: int) -> None:
    """Any tree loads every usable file under a unique citable id, or fails on one line."""
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        written = write_tree(root, tree)
        usable = sum(surely_usable(p, b, root, max_bytes) for p, b in written.items())
        corpus = load_corpus(root, max_bytes)
    assert corpus is not None or not usable, f"{usable} usable files, no corpus"
    if corpus is not None:
        assert len(corpus) >= usable
        check_corpus(corpus)


SPECIALS = ("link-in", "link-out", "dangling", "loop", "fifo", "dir-link", "folder.md")


def make_special(root: Path, kind: str, outside: Path, index: int) -> Path | None:
    """One odd entry in `root`: a symlink (to a file inside or outside, dangling, a loop, a
    folder), a FIFO, or a folder named like a document. Returns a FIFO's path."""
    path = root / f"special{index}.md"
    match kind:
        case "link-in":
            path.symlink_to(root / "plain.md")
        case "link-out":
            path.symlink_to(outside)
        case "dangling":
            path.symlink_to(root / "missing.md")
        case "loop":
            path.symlink_to(path)
        case "fifo":
            os.mkfifo(path)
            return path
        case "dir-link":
            (root / f"linked{index}").symlink_to(root, target_is_directory=True)
        case "folder.md":
            path.mkdir()
    return None


def release(fifos: list[Path]) -> None:
    """Unblock a reader stuck opening these FIFOs (a writer opens and closes each)."""
    for fifo in fifos:
        with contextlib.suppress(OSError):
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))


@cases(12)
@example(kinds=["fifo"])
@example(kinds=["link-out"])
@given(kinds=st.lists(st.sampled_from(SPECIALS), min_size=1, max_size=3))
async def test_corpus_special_files(kinds: list[str]) -> None:
    """Links, FIFOs and folders named like documents neither hang the loader nor reach outside
    the folder; the one plain file is loaded."""
    with tempfile.TemporaryDirectory() as folder, tempfile.NamedTemporaryFile(suffix=".md") as out:
        out.write(b"# Secret\n\nThis file is outside the corpus folder.\n")
        out.flush()
        root = Path(folder) / "docs"
        root.mkdir()
        (root / "plain.md").write_text("# Plain\n\nGenerators pause at yield.\n", encoding="utf-8")
        fifos = [f for i, k in enumerate(kinds) if (f := make_special(root, k, Path(out.name), i))]
        try:
            with within(MARGIN_S, "loading the corpus"):
                corpus = await anyio.to_thread.run_sync(
                    lambda: load_corpus(root, 5_000_000), abandon_on_cancel=True
                )
        finally:
            release(fifos)
    assert corpus is not None
    check_corpus(corpus)
    assert corpus.get("plain") is not None
    assert all("outside the corpus" not in d.text for d in corpus.documents), "read outside"


# --- Batch task lines --------------------------------------------------------------------------


def encodable(text: str) -> bool:
    """Whether `text` can be written as UTF-8 (no lone surrogate)."""
    return not any(0xD800 <= ord(c) <= 0xDFFF for c in text)


clean_texts = texts.filter(encodable)
goals = clean_texts.filter(str.strip) | st.just("What is a generator?")
valid_tasks = st.builds(
    lambda task_id, goal, extra: {
        **extra,
        **({"id": task_id} if task_id is not None else {}),
        "goal": goal,
    },
    st.none() | st.sampled_from(["a", "b", "a"]) | clean_texts,
    goals,
    st.dictionaries(st.sampled_from(["priority", "tags"]), st.integers() | clean_texts),
)
invalid_lines = st.one_of(
    st.sampled_from(['{"id": "x"}', '{"goal": ""}', '{"goal": 3}', '{"id": 1, "goal": "g"}']),
    st.sampled_from(['["x", "goal"]', "null", '"goal"', '{"goal": "g"', "{,}", "\x00"]),
    st.just('{"goal": {"nested": true}}'),
)
lines = st.one_of(
    st.tuples(st.just("valid"), valid_tasks, st.booleans()),
    st.tuples(st.just("blank"), st.sampled_from(["", " ", "\t"]), st.just(True)),
    st.tuples(st.just("invalid"), invalid_lines, st.just(True)),
)


def line_text(kind: str, value: Any, ascii_only: bool) -> str:
    """One line of a batch file."""
    return json.dumps(value, ensure_ascii=ascii_only) if kind == "valid" else str(value)


def task_key(task: dict[str, Any]) -> str:
    """The key `run_batch` files a task under."""
    return BatchTask(id=task.get("id", ""), goal=task["goal"]).key()


@cases(60)
@example(file_lines=[("valid", {"goal": "mid\u2028line"}, False)])
@example(file_lines=[("valid", {"id": "a\nb", "goal": "g"}, True)] * 2)
@example(file_lines=[("blank", "\x0c", True)])
@given(file_lines=st.lists(lines, max_size=8))
def test_load_tasks_accepts_exactly_the_valid_lines(
    file_lines: list[tuple[str, Any, bool]],
) -> None:
    """A file of valid, distinct task lines loads in order; any other fails on one line."""
    text = "".join(line_text(*line) + "\n" for line in file_lines)
    tasks = [value for kind, value, _ in file_lines if kind == "valid"]
    bad = any(kind == "invalid" for kind, _, _ in file_lines)
    duplicated = len({task_key(t) for t in tasks}) < len(tasks)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder, "tasks.jsonl")
        path.write_bytes(text.encode("utf-8", "surrogatepass"))
        error: str | None = None
        try:
            loaded = load_tasks(path)
        except ConfigurationError as exc:
            error = str(exc)
    if error is not None:
        assert one_line(error), f"a multi-line error: {error[:300]!r}"
        assert bad or duplicated, f"valid lines refused: {error}"
        return
    assert not bad, "invalid lines accepted"
    assert not duplicated, "duplicate ids accepted"
    assert [(t.key(), t.goal) for t in loaded] == [(task_key(t), t["goal"]) for t in tasks]


BEHAVIOURS = ("answer", "echo", "error", "retryable", "unknown_tool", "empty")


def batch_model(behaviours: list[str]) -> FunctionModel:
    """Answers each goal by one behaviour, picked by the goal (a crash, a junk call, an echo)."""

    def decide(request: ModelRequest) -> Turn:
        opening = request.messages[1]
        assert isinstance(opening, UserMessage)
        pick = behaviours[sum(map(ord, opening.content)) % len(behaviours)]
        match pick:
            case "echo":
                return reply(f"You asked: {opening.content}")
            case "error":
                return ModelRequestError("HTTP 400: refused\nsecond line", status=400)
            case "retryable":
                return ModelRetryableError("HTTP 503: busy")
            case "unknown_tool":
                return call("no_such_tool", _raw="{")
            case "empty":
                return reply("")
        return reply("An answer.")

    return FunctionModel(decide)


def write_file(path: Path, data: bytes) -> Path:
    """`path`, holding `data`."""
    path.write_bytes(data)
    return path


def read_file(path: Path) -> bytes:
    """The bytes of `path`."""
    return path.read_bytes()


def written_ids(out: Path) -> Counter[str]:
    """How many records each id has in an output file."""
    found: Counter[str] = Counter()
    for line in out.read_bytes().split(b"\n"):
        with contextlib.suppress(ValueError):
            record = json.loads(line)
            if isinstance(record, dict) and isinstance(record.get("id"), str):
                found[record["id"]] += 1
    return found


@cases(30)
@example(
    tasks=[{"goal": "mid\u2028line"}],
    ascii_only=True,
    behaviours=["answer"],
    max_requests=None,
    concurrency=1,
    torn=b"",
)
@given(
    tasks=st.lists(valid_tasks, min_size=1, max_size=6, unique_by=task_key),
    ascii_only=st.booleans(),
    behaviours=st.lists(st.sampled_from(BEHAVIOURS), min_size=1, max_size=4),
    max_requests=st.none() | st.integers(1, 6),
    concurrency=st.integers(1, 3),
    torn=st.sampled_from([b"", b'{"id": "zz", "go', "\u2028".encode()]),
)
async def test_run_batch_writes_each_task_once(
    tasks: list[dict[str, Any]],
    ascii_only: bool,
    behaviours: list[str],
    max_requests: int | None,
    concurrency: int,
    torn: bytes,
) -> None:
    """Each finished task is written exactly once, one that did not start never; a re-run with
    a fresh budget writes the rest, and no task twice."""
    executor = Executor(batch_model(behaviours), limits=agents.AgentLimits(max_steps=2))
    with tempfile.TemporaryDirectory() as folder:
        text = "".join(json.dumps(t, ensure_ascii=ascii_only) + "\n" for t in tasks)
        source = write_file(Path(folder, "tasks.jsonl"), text.encode("utf-8", "surrogatepass"))
        out = write_file(Path(folder, "out.jsonl"), torn)
        loaded = load_tasks(source)
        assert len(loaded) == len(tasks)
        finished: list[str] = []
        with within(30, "the batch"):
            await run_batch(
                loaded,
                executor=executor,
                out=out,
                concurrency=concurrency,
                budget=Budget(max_requests=max_requests),
                on_result=lambda key, _report: finished.append(key),
            )
            first = written_ids(out)
            assert sorted(first.elements()) == sorted(finished), "records differ from results"
            await run_batch(
                loaded, executor=executor, out=out, concurrency=concurrency, budget=Budget()
            )
        second = written_ids(out)
    assert second == Counter(t.key() for t in loaded), f"after a re-run: {second}"


# --- The command line --------------------------------------------------------------------------

HOSTILE_GOALS = (
    "", " ", "\t\n", "\x00", "\x1b[2J\x1b[Hcleared", "\x1b]0;owned\x07title", "a\rb", "\u202eevil",
    "\udcff\udcfe", "\ud800", "x" * 100_000, "-h", "--", "-", "What is a generator?",
)  # fmt: skip
cli_goals = st.one_of(st.sampled_from(HOSTILE_GOALS), texts)
URL_FORMS = (
    "{url}", "{url}/", "{url}//", "{url}?x=1", "{url}#frag", "{url}/../v1", "{url}\x1b[31m",
    " {url} ", "{url}\n", "http://localhost:{port}/v1", "http://user:pass@127.0.0.1:{port}/v1",
    "127.0.0.1:{port}", "ftp://127.0.0.1:{port}/", "http://127.0.0.1:1/v1",
    "http://127.0.0.1:99999/v1", "http://[::1", "", "{url}/" + "a" * 5000,
)  # fmt: skip


@pytest.fixture(autouse=True)
def _endpoint(monkeypatch: pytest.MonkeyPatch) -> None:
    """An API key is set, so the CLI never starts the embedded model; no endpoint leaks in."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-fuzz")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("PAOR_MODEL", raising=False)


def write_docs(root: Path) -> Path:
    """A corpus folder of two small documents."""
    docs = root / "docs"
    docs.mkdir()
    (docs / "generators.md").write_text("# Generators\n\nA generator pauses at yield.\n")
    (docs / "iterators.md").write_text("# Iterators\n\nStopIteration ends an iteration.\n")
    return docs


def run_cli(argv: list[str]) -> tuple[int, str, str]:
    """`paor ARGV` in this process: its exit status, stdout and stderr (a raise propagates)."""
    out, err = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                status = main(argv)
            except SystemExit as exc:  # argparse's usage errors
                status = exc.code if isinstance(exc.code, int) else 2
    finally:
        structlog.reset_defaults()
    return status, out.getvalue(), err.getvalue()


def check_cli(status: int, stdout: str, stderr: str) -> None:
    """Exit 0 or 2 (1 for a run that ended failed, and said so), no traceback, no terminal
    escape, and an error on one line."""
    failed = "run failed" in stderr or ": failed" in stdout
    assert status in (0, 2) or (status == 1 and failed), f"exit status {status}: {stderr[-500:]}"
    assert "Traceback" not in stderr, stderr[-2000:]
    assert "\x1b" not in stdout + stderr, f"a terminal escape in the output: {stderr[-300:]!r}"
    if "paor: error:" in stderr:
        assert one_line(stderr.split("paor: error:", 1)[1].strip()), stderr[-500:]


@cases(15)
@example(goal="What is a generator?", url_form="http://[::1", plans=[], replies=[])
@example(goal="What is a generator?", url_form="http://127.0.0.1:99999/v1", plans=[], replies=[])
@example(goal="\x1b[2J\x1b[Hcleared", url_form="{url}", plans=[], replies=[])
@example(goal="\ud800", url_form="{url}", plans=[], replies=[])
@example(goal=" ", url_form="{url}", plans=[], replies=[])
@given(
    goal=cli_goals,
    url_form=st.sampled_from(URL_FORMS),
    plans=st.lists(plan_wires, max_size=2),
    replies=st.lists(wires(), max_size=2),
)
async def test_cli_survives_hostile_goals_and_urls(
    goal: str, url_form: str, plans: list[Wire], replies: list[Wire]
) -> None:
    """`paor research` with a hostile goal and base URL exits 0 or 2 without a traceback."""
    with tempfile.TemporaryDirectory() as folder:
        docs = write_docs(Path(folder))
        async with FuzzServer(team(plans, replies)) as server:
            port = server.base_url.split(":")[2].split("/")[0]
            url = url_form.format(url=server.base_url, port=port)
            argv = ["research", goal, "--docs", str(docs), "--out", f"{folder}/r.md"]
            argv += ["--base-url", url, "--deadline", "2", "--max-steps", "2"]
            with within(2 + MARGIN_S + 5, "paor"):
                found = await anyio.to_thread.run_sync(run_cli, argv, abandon_on_cancel=True)
    check_cli(*found)


OUT_FORMS = ("{folder}/tasks.jsonl", "{folder}/./tasks.jsonl", "{folder}/link.jsonl", "{folder}/o")


def batch_files(folder: Path, tasks: list[dict[str, Any]]) -> tuple[Path, bytes]:
    """A task file for `tasks` (and a symlink to it, link.jsonl): its path and its bytes."""
    text = "".join(json.dumps(t) + "\n" for t in tasks).encode()
    source = write_file(folder / "tasks.jsonl", text)
    (folder / "link.jsonl").symlink_to(source)
    return source, text


@cases(6)
@example(out_form="{folder}/tasks.jsonl", tasks=[{"id": "a", "goal": "What is a generator?"}])
@given(
    out_form=st.sampled_from(OUT_FORMS),
    tasks=st.lists(valid_tasks, min_size=1, max_size=3, unique_by=task_key),
)
async def test_cli_batch_keeps_its_task_file(out_form: str, tasks: list[dict[str, Any]]) -> None:
    """`paor batch` exits 0 or 2 without a traceback, and never writes into its own task file,
    however --out names it."""
    with tempfile.TemporaryDirectory() as folder:
        docs = write_docs(Path(folder))
        source, text = batch_files(Path(folder), tasks)
        async with FuzzServer(team([], [])) as server:
            argv = ["batch", str(source), "--out", out_form.format(folder=folder)]
            argv += ["--docs", str(docs), "--base-url", server.base_url, "--deadline", "2"]
            with within(2 + MARGIN_S + 5, "paor batch"):
                found = await anyio.to_thread.run_sync(run_cli, argv, abandon_on_cancel=True)
        after = read_file(source)
    check_cli(*found)
    assert after == text, "the task file was written into"


ARGV_GOALS = (
    "",
    "  ",
    "\x1b[31mred\x1b[0m",
    "é" * 3,
    b"caf\xe9".decode("utf-8", "surrogateescape"),
)


@cases(4)
@given(goal=st.sampled_from(ARGV_GOALS))
async def test_paor_command_never_prints_a_traceback(goal: str) -> None:
    """The installed `paor` command, given a hostile goal in argv, exits 0 or 2 without a
    traceback or a terminal escape (its real stdout and stderr, not captured streams)."""
    paor = Path(sys.executable).with_name("paor")
    with tempfile.TemporaryDirectory() as folder:
        docs = write_docs(Path(folder))
        async with FuzzServer(team([], [])) as server:
            argv: list[str | bytes] = [str(paor), "research", os.fsencode(goal)]
            argv += ["--docs", str(docs), "--out", f"{folder}/r.md"]
            argv += ["--base-url", server.base_url, "--deadline", "2"]
            env = {**os.environ, "PAOR_HOME": folder, "OPENAI_API_KEY": "sk-fuzz"}
            env.pop("OPENAI_BASE_URL", None)
            with within(2 + MARGIN_S + 10, "paor"):
                done = await anyio.run_process(argv, env=env, check=False)
    stderr = done.stderr.decode("utf-8", "replace")
    check_cli(done.returncode, done.stdout.decode("utf-8", "replace"), stderr)
