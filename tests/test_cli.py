"""The `paor` command line, in-process, against `FakeOpenAIServer` over real HTTP.

`main` runs its own event loop, so it is called from a worker thread while the fake server runs in
the test's loop.
"""

from __future__ import annotations

import contextlib
import json
import re
import socket
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import pytest

from agents.testing import FakeOpenAIServer, ServerAction, TokenUsage
from agents.toolkits import Corpus
from orchestrator._research import RESEARCH_SYNTHESIS
from orchestrator.cli import main

pytestmark = pytest.mark.anyio

API_KEY = "sk-test-0123456789abcdef"
USAGE = TokenUsage(prompt_tokens=10, completion_tokens=5)  # 15 tokens a request
TOPIC = "How do generators work?"
GEN = "How does a generator pause?"
STOP = "What ends an iteration?"
CITATION = re.compile(r"\[([^\[\]\n]+)\](?!\()")


@pytest.fixture(autouse=True)
def _endpoint(monkeypatch: pytest.MonkeyPatch) -> None:
    """An API key is set, so the CLI never starts the embedded model; no other endpoint leaks in."""
    monkeypatch.setenv("OPENAI_API_KEY", API_KEY)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("PAOR_MODEL", raising=False)


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    """A corpus folder of three documents: generators, iterators, guide/coroutines."""
    folder = tmp_path / "docs"
    (folder / "guide").mkdir(parents=True)
    (folder / "generators.md").write_text(
        "# Generators\n\nA generator function pauses at each yield expression and resumes on "
        "next().\n",
        encoding="utf-8",
    )
    (folder / "iterators.md").write_text(
        "# Iterators\n\nAn iterator has a __next__ method; StopIteration ends the iteration.\n",
        encoding="utf-8",
    )
    (folder / "guide" / "coroutines.md").write_text(
        "# Coroutines\n\nA coroutine is defined with async def and suspends at each await.\n",
        encoding="utf-8",
    )
    return folder


async def paor(*argv: str) -> int:
    """Run the command line in a worker thread (it starts an event loop of its own)."""
    return await anyio.to_thread.run_sync(main, list(argv))


def role_of(body: dict[str, Any]) -> str:
    """Who sent a request: "plan", "writer", or the sub-agent's goal (its batch goal, too)."""
    if "response_format" in body:
        return str(body["response_format"]["json_schema"]["name"])
    messages = body["messages"]
    if messages[0]["content"] == RESEARCH_SYNTHESIS:
        return "writer"
    return str(messages[1]["content"]).removeprefix("Task: ").split("\n")[0]


def researcher(goal: str, step: int) -> ServerAction:
    """Each sub-agent answers from its first look (a search for its question), citing it."""
    turns = {
        TOPIC: ServerAction.text(
            "Generators pause at yield until next() [generators].", usage=USAGE
        ),
        GEN: ServerAction.text("A generator pauses at each yield [generators].", usage=USAGE),
        STOP: ServerAction.text("StopIteration ends the iteration [iterators].", usage=USAGE),
    }
    assert step == 0, "each agent answers from its first look"
    return turns[goal]


def research_team(*subtasks: dict[str, Any]) -> Callable[[dict[str, Any]], ServerAction]:
    """The fake server's answers for `paor research`: this plan, the researchers, the writer."""

    def decide(body: dict[str, Any]) -> ServerAction:
        who = role_of(body)
        if who == "plan":
            return ServerAction.json_content({"subtasks": list(subtasks)}, usage=USAGE)
        if who == "writer":
            return ServerAction.text(
                "Generators pause at yield [generators]; StopIteration ends loops "
                "[iterators] [made/up].",
                usage=USAGE,
            )
        return researcher(who, sum(m["role"] == "assistant" for m in body["messages"]))

    return decide


PARALLEL = research_team({"id": "gen", "goal": GEN}, {"id": "stop", "goal": STOP})


def research_args(server: FakeOpenAIServer, docs: Path, out: Path, *extra: str) -> list[str]:
    """`paor research TOPIC` over `docs` against the fake server, with native tool calls."""
    return [
        "research", TOPIC, "--docs", str(docs), "--out", str(out),
        "--base-url", server.base_url, "--protocol", "tools", "--max-subtasks", "3", *extra,
    ]  # fmt: skip


def citations(markdown: str) -> set[str]:
    """Every id cited in [brackets] anywhere in the report (Markdown links aside)."""
    found: set[str] = set()
    for match in CITATION.finditer(markdown):
        found.update(part.strip() for part in re.split(r"[,;]", match.group(1)))
    return found


async def test_research_writes_a_cited_markdown_report(docs: Path, tmp_path: Path) -> None:
    """`paor research` writes a report with a title, the summary, a section per sub-question,
    sources and evidence; every citation in it names a document of the corpus."""
    out = tmp_path / "report.md"

    async with FakeOpenAIServer(PARALLEL) as server:
        status = await paor(*research_args(server, docs, out))
    server.assert_complete()

    assert status == 0
    markdown = out.read_text(encoding="utf-8")
    headings = [line for line in markdown.splitlines() if line.startswith("#")]
    assert headings == [
        f"# {TOPIC}", "## Summary", "## Answer", f"## {GEN}", f"## {STOP}", "## Sources",
        "## Evidence",
    ]  # fmt: skip
    assert "Generators pause at yield [generators]; StopIteration ends loops [iterators].\n" in (
        markdown
    )
    assert "1. [generators] Generators\n2. [iterators] Iterators\n" in markdown
    assert "- [generators] “# Generators A generator function pauses at each yield" in markdown
    ids = {doc.id for doc in Corpus.from_folder(docs).documents}
    assert citations(markdown) == {"generators", "iterators"}
    assert citations(markdown) <= ids
    roles = [role_of(body) for body in server.requests]
    assert roles[0] == "plan"
    assert roles[-1] == "writer"
    # The topic itself is asked too; each agent answers from its first look (a search).
    assert sorted(roles[1:-1]) == sorted([TOPIC, GEN, STOP])
    offered = {t["function"]["name"] for t in server.requests[1]["tools"]}
    assert offered >= {"search_docs", "read_doc"}


async def test_research_says_incomplete_when_the_budget_runs_out(
    docs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """With a tiny token budget the run stops after the first sub-question, and the report opens
    with an "Incomplete" banner giving the reason."""
    chained = research_team(
        {"id": "gen", "goal": GEN}, {"id": "stop", "goal": STOP, "depends_on": ["gen"]}
    )
    out = tmp_path / "report.md"

    async with FakeOpenAIServer(chained) as server:
        # The planner's request, the topic's and gen's leave 45 tokens spent, past the cap of 40.
        status = await paor(*research_args(server, docs, out, "--max-tokens", "40"))
    server.assert_complete()

    assert status == 0
    reason = "the tokens budget ran out; dropped: stop"
    assert capsys.readouterr().out == f"wrote {out}: incomplete ({reason})\n"
    markdown = out.read_text(encoding="utf-8")
    banner = f"the tokens budget ran out; not started: “{STOP}”"  # questions, not subtask ids
    assert markdown.startswith(f"# {TOPIC}\n\n> **Incomplete.** {banner}\n\n## Summary\n")
    assert f"## {GEN}\n" in markdown
    assert f"## {STOP}" not in markdown
    roles = [role_of(body) for body in server.requests]
    assert (roles[0], sorted(roles[1:3]), roles[3:]) == ("plan", sorted([TOPIC, GEN]), ["writer"])


async def test_log_json_writes_the_trace_as_json_lines(docs: Path, tmp_path: Path) -> None:
    """`--log-json` writes one JSON object per line, with constant event names and no API key."""
    log = tmp_path / "trace.jsonl"

    async with FakeOpenAIServer(PARALLEL) as server:
        status = await paor(*research_args(server, docs, tmp_path / "r.md", "--log-json", str(log)))

    assert status == 0
    raw = log.read_text(encoding="utf-8")
    assert API_KEY not in raw
    lines = [json.loads(line) for line in raw.splitlines()]
    names = {line["event"] for line in lines}
    assert {"plan_created", "model_called", "tool_called", "run_finished"} <= names
    tool_called = [line for line in lines if line["event"] == "tool_called"]
    assert {(line["tool"], line["agent_id"]) for line in tool_called} == {
        ("search_docs", "goal"),
        ("search_docs", "gen"),
        ("search_docs", "stop"),
    }
    assert all(line["ok"] and line["level"] == "info" and line["timestamp"] for line in tool_called)


async def test_progress_goes_to_stderr_as_plain_lines(
    docs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Off a terminal, progress is one timestamped line per event on stderr, with no escapes."""
    async with FakeOpenAIServer(PARALLEL) as server:
        await paor(*research_args(server, docs, tmp_path / "r.md"))

    captured = capsys.readouterr()
    assert "\x1b" not in captured.err
    announced, *lines = captured.err.splitlines()
    assert re.fullmatch(r"paor: run \w+ is journaled in .+journal\.db", announced)
    assert all(re.match(r"\[ *\d+\.\ds\] ", line) for line in lines), lines
    events = [line.split("] ", 1)[1] for line in lines]
    assert events[0] == "plan: 3 subtasks: goal; gen; stop"
    assert events[-1] == "run complete"
    assert sorted(events[1:-1]) == [
        "gen done in 1 steps",
        f"gen started: {GEN}",
        "goal done in 1 steps",
        f"goal started: {TOPIC}",
        "stop done in 1 steps",
        f"stop started: {STOP}",
    ]
    assert captured.out.startswith("wrote ")


def closed_port() -> int:
    """A loopback port nothing listens on (it was free a moment ago)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


def bad_research_input(case: str, tmp_path: Path, docs: Path) -> tuple[list[str], str]:
    """The options for one kind of bad input, and the error it must give."""
    if case == "missing-docs":
        missing = tmp_path / "missing"
        return ["--docs", str(missing)], f"corpus folder not found: {missing}"
    if case == "empty-docs":
        empty = tmp_path / "empty"
        empty.mkdir()
        return ["--docs", str(empty)], f"corpus folder has no usable documents: {empty}"
    url = f"http://127.0.0.1:{closed_port()}/v1"
    return ["--docs", str(docs), "--base-url", url], f"cannot reach the model endpoint at {url}/"


@pytest.mark.parametrize("case", ["missing-docs", "empty-docs", "unreachable-endpoint"])
def test_bad_research_input_is_a_one_line_error(
    case: str, docs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A missing or empty corpus folder or an unreachable endpoint ends with one `paor: error:`
    line on stderr and exit status 2, and no report is written."""
    options, problem = bad_research_input(case, tmp_path, docs)
    out = tmp_path / "report.md"

    status = main(["research", TOPIC, "--out", str(out), "--protocol", "tools", *options])

    assert status == 2
    captured = capsys.readouterr()
    assert captured.err == f"paor: error: {problem}\n"
    assert captured.out == ""
    assert not out.exists()


def test_an_existing_report_survives_an_error(
    docs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A failed command leaves the previous report as it was, and no temporary file beside it."""
    out = tmp_path / "reports" / "report.md"
    out.parent.mkdir()
    out.write_text("# The old report\n", encoding="utf-8")
    url = f"http://127.0.0.1:{closed_port()}/v1"

    status = main(["research", TOPIC, "--docs", str(docs), "--out", str(out), "--base-url", url])

    assert status == 2
    assert capsys.readouterr().err.startswith("paor: error: cannot reach the model endpoint")
    assert out.read_text(encoding="utf-8") == "# The old report\n"
    assert [p.name for p in out.parent.iterdir()] == ["report.md"]


def test_an_unwritable_log_file_is_a_one_line_error(
    docs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A `--log-json` path that cannot be opened is a usage error, not a traceback."""
    log = tmp_path / "no-such-folder" / "trace.jsonl"

    status = main(["research", TOPIC, "--docs", str(docs), "--log-json", str(log)])

    assert status == 2
    assert capsys.readouterr().err.startswith("paor: error: cannot open the log file: ")


@pytest.mark.parametrize(
    ("option", "value"),
    [("--concurrency", "0"), ("--max-steps", "-1"), ("--deadline", "0"), ("--max-tokens", "x")],
)
def test_numbers_must_be_positive(
    option: str, value: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A count or a limit that is not above zero is rejected by the parser with status 2."""
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text('{"id": "a", "goal": "Goal a"}\n', encoding="utf-8")

    with pytest.raises(SystemExit) as exited:
        main(["batch", str(tasks), "--out", str(tmp_path / "out.jsonl"), option, value])

    assert exited.value.code == 2
    assert f"paor batch: error: argument {option}: " in capsys.readouterr().err


def batch_team(body: dict[str, Any]) -> ServerAction:
    """Each batch task is answered at once: "Answer to <goal>"."""
    return ServerAction.text(f"Answer to {role_of(body)}", usage=USAGE)


def write_tasks(path: Path, *ids: str) -> Path:
    """A batch file of tasks whose goals are "Goal <id>"."""
    lines = [json.dumps({"id": i, "goal": f"Goal {i}"}) for i in ids]
    path.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    return path


def batch_args(server: FakeOpenAIServer, docs: Path, tasks: Path, out: Path) -> list[str]:
    """`paor batch TASKS --out OUT --concurrency 2` against the fake server; `--ungrounded`, as
    these tests pin the batch's bookkeeping (grounding has tests of its own)."""
    return [
        "batch", str(tasks), "--out", str(out), "--concurrency", "2", "--docs", str(docs),
        "--base-url", server.base_url, "--protocol", "tools", "--ungrounded",
    ]  # fmt: skip


def result_lines(out: Path) -> list[dict[str, Any]]:
    """The complete records of an output file (torn lines left out)."""
    found = []
    for line in out.read_bytes().decode("utf-8", errors="replace").splitlines():
        try:
            found.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return found


async def test_batch_appends_one_result_per_task_and_prints_a_summary(
    docs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`paor batch` writes one JSON line per task and prints each outcome and a summary line."""
    tasks = write_tasks(tmp_path / "tasks.jsonl", "a", "b", "c")
    out = tmp_path / "results.jsonl"

    async with FakeOpenAIServer(batch_team) as server:
        status = await paor(*batch_args(server, docs, tasks, out))
    server.assert_complete()

    assert status == 0
    results = result_lines(out)
    assert len(out.read_text(encoding="utf-8").splitlines()) == 3
    assert sorted((r["id"], r["status"], r["answer"]) for r in results) == [
        ("a", "done", "Answer to Goal a"),
        ("b", "done", "Answer to Goal b"),
        ("c", "done", "Answer to Goal c"),
    ]
    captured = capsys.readouterr()
    assert captured.out == "batch: 3 done, 0 skipped (already done); 45 tokens\n"
    assert sorted(captured.err.splitlines()) == ["a: done", "b: done", "c: done"]


async def test_batch_rerun_skips_ids_already_in_the_output(
    docs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A re-run sends no request for a task already in the output and appends only the new one."""
    out = tmp_path / "results.jsonl"
    async with FakeOpenAIServer(batch_team) as server:
        await paor(*batch_args(server, docs, write_tasks(tmp_path / "t1.jsonl", "a", "b"), out))
    capsys.readouterr()

    async with FakeOpenAIServer(batch_team) as server:
        status = await paor(
            *batch_args(server, docs, write_tasks(tmp_path / "t2.jsonl", "a", "b", "c"), out)
        )

    assert status == 0
    assert [role_of(body) for body in server.requests] == ["Goal c"]
    assert sorted(r["id"] for r in result_lines(out)) == ["a", "b", "c"]
    assert capsys.readouterr().out == "batch: 1 done, 2 skipped (already done); 15 tokens\n"


async def test_batch_reruns_a_task_whose_line_was_torn_by_a_crash(
    docs: Path, tmp_path: Path
) -> None:
    """Half a JSON line at the end of the output (a crash mid-write) is moved aside to OUT.torn:
    that task runs again, and the output holds whole records only."""
    out = tmp_path / "results.jsonl"
    done = json.dumps({"id": "a", "goal": "Goal a", "status": "done", "answer": "Answer to Goal a"})
    torn = b'{"id": "b", "goal": "Goal b", "status": "done", "answer": "Caf' + b"\xc3"
    out.write_bytes(done.encode() + b"\n" + torn)

    async with FakeOpenAIServer(batch_team) as server:
        status = await paor(
            *batch_args(server, docs, write_tasks(tmp_path / "t.jsonl", "a", "b", "c"), out)
        )

    assert status == 0
    assert sorted(role_of(body) for body in server.requests) == ["Goal b", "Goal c"]
    lines = out.read_bytes().splitlines()
    assert lines[0] == done.encode()
    assert sorted(json.loads(line)["id"] for line in lines) == ["a", "b", "c"]
    assert out.with_name("results.jsonl.torn").read_bytes() == torn + b"\n"


async def test_a_malformed_task_line_is_an_error_and_loses_no_results(
    docs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A bad line in the batch file gives `paor: error: FILE:LINE: ...` and status 2 before any
    request, and the results already in the output are kept byte for byte."""
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text('{"id": "a", "goal": "Goal a"}\n{"id": "b", "goal": \n', encoding="utf-8")
    out = tmp_path / "results.jsonl"
    before = b'{"id": "z", "status": "done"}\n'
    out.write_bytes(before)

    async with FakeOpenAIServer(batch_team) as server:
        status = await paor(*batch_args(server, docs, tasks, out))

    assert status == 2
    err = capsys.readouterr().err
    assert err.startswith(f"paor: error: {tasks}:2: not a valid task line (")
    assert err.count("\n") == 1
    assert server.requests == []
    assert out.read_bytes() == before


async def test_batch_deadline_bounds_the_whole_command(
    docs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--deadline` is for the whole batch: once it has passed, no task starts and none is
    recorded, so a later run does them all."""
    tasks = write_tasks(tmp_path / "tasks.jsonl", "a", "b")
    out = tmp_path / "results.jsonl"

    async with FakeOpenAIServer(batch_team) as server:
        # A nanosecond: gone before the first task can start (the endpoint check alone is longer).
        status = await paor(*batch_args(server, docs, tasks, out), "--deadline", "1e-9")

    assert status == 0
    assert server.requests == []
    assert result_lines(out) == []
    assert capsys.readouterr().out == (
        "batch: 0 skipped (already done), 2 not started (budget spent); 0 tokens\n"
    )


def test_research_out_that_is_a_directory_fails_before_any_work(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--out naming a folder is a one-line usage error raised before any model is started."""
    url = f"http://127.0.0.1:{closed_port()}/v1"
    status = main(["research", TOPIC, "--out", str(tmp_path), "--base-url", url])
    assert status == 2
    assert capsys.readouterr().err == f"paor: error: --out {tmp_path} is a directory\n"


def test_batch_tasks_file_that_is_not_utf8_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A tasks file that is not UTF-8 is reported in one line, not with a traceback."""
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_bytes(b'{"id": "a", "goal": "caf\xe9"}\n')
    url = f"http://127.0.0.1:{closed_port()}/v1"
    status = main(["batch", str(tasks), "--out", str(tmp_path / "out.jsonl"), "--base-url", url])
    assert status == 2
    assert capsys.readouterr().err.startswith(f"paor: error: cannot read batch file {tasks}")


def grounded_team(body: dict[str, Any]) -> ServerAction:
    """A batch task "How do generators pause?" is answered citing its first look; any other
    answers without citing anything, every time."""
    if role_of(body) == "How do generators pause?":
        return ServerAction.text("A generator pauses at each yield [generators].", usage=USAGE)
    return ServerAction.text("StopIteration ends the iteration.", usage=USAGE)


async def test_a_grounded_batch_cites_its_first_look_and_an_uncited_answer_is_not_done(
    docs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """By default each batch agent starts from a search for its goal; a row's sources are what
    its answer cites; an answer citing nothing is sent back once, then partial with the reason."""
    tasks = tmp_path / "tasks.jsonl"
    goals = {"g": "How do generators pause?", "x": "How do iterators end?"}
    tasks.write_text("".join(json.dumps({"id": i, "goal": g}) + "\n" for i, g in goals.items()))
    out = tmp_path / "results.jsonl"
    async with FakeOpenAIServer(grounded_team) as server:
        command = [a for a in batch_args(server, docs, tasks, out) if a != "--ungrounded"]
        status = await paor(*command)
    assert status == 0
    rows = {r["id"]: r for r in result_lines(out)}
    assert (rows["g"]["status"], rows["g"]["sources"]) == ("done", ["generators"])
    assert rows["x"]["status"] == "partial"
    assert rows["x"]["sources"] == []
    assert rows["x"]["searched"]  # its first look found documents; the answer cited none
    assert "cite the evidence you used" in rows["x"]["reason"]
    first = next(b for b in server.requests if role_of(b) == "How do generators pause?")
    told = "\n".join(str(m.get("content")) for m in first["messages"])
    assert "What a first search for the task found:" in told


async def test_a_failed_research_run_writes_its_report_and_exits_1(
    docs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A run that gathers nothing usable (every request refused, no document found) ends
    "failed": its report says so, and the command's exit status is 1, not 0."""
    out = tmp_path / "report.md"
    async with FakeOpenAIServer(lambda body: ServerAction.status(400)) as server:
        args = research_args(server, docs, out)
        args[1] = "Zebra quagga husbandry"  # a topic no document of the corpus mentions
        code = await paor(*args)
    assert code == 1
    assert "Incomplete" in out.read_text(encoding="utf-8")
    assert capsys.readouterr().out.startswith(f"wrote {out}: failed")


ANSWER_SCHEMA = {
    "title": "Answer",
    "type": "object",
    "properties": {"ok": {"type": "boolean"}, "goal_id": {"type": "string", "maxLength": 8}},
    "required": ["ok", "goal_id"],
}


async def test_batch_with_a_schema_writes_each_answer_as_an_object_too(
    docs: Path, tmp_path: Path
) -> None:
    """`--schema FILE`: each row gets `output`, the answer as an object of the schema, asked for
    under it and validated; an object that never validates leaves the row partial, saying why."""
    schema = tmp_path / "answer.json"
    schema.write_text(json.dumps(ANSWER_SCHEMA), encoding="utf-8")
    tasks = write_tasks(tmp_path / "tasks.jsonl", "a", "b")
    out = tmp_path / "results.jsonl"

    def team(body: dict[str, Any]) -> ServerAction:
        if role_of(body) != "Answer":
            return batch_team(body)
        task = body["messages"][1]["content"]
        return ServerAction.text(
            '{"ok": true, "goal_id": "a"}' if "Goal a" in task else '{"ok": "yes"}'
        )

    async with FakeOpenAIServer(team) as server:
        status = await paor(*batch_args(server, docs, tasks, out), "--schema", str(schema))
    rows = {r["id"]: r for r in result_lines(out)}
    assert rows["a"]["status"] == "done", rows["a"].get("reason")
    assert rows["a"]["output"] == {"ok": True, "goal_id": "a"}
    assert rows["a"]["answer"] == "Answer to Goal a"
    assert rows["b"]["status"] == "partial"
    assert "output" not in rows["b"]
    assert rows["b"]["reason"].startswith("no valid Answer:")
    assert status == 0  # partial is not failed
    asked = [b for b in server.requests if role_of(b) == "Answer"]
    assert len(asked) == 1 + 3  # a's object at once; b's first reply and two more


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ('{"type": "objekt"}', "not a valid JSON Schema"),
        ("[1, 2", "is not JSON"),
        ('"a string"', "a JSON Schema is a JSON object"),
    ],
)
async def test_a_schema_file_that_is_no_json_schema_is_one_line_and_exit_2(
    docs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, problem: str
) -> None:
    schema = tmp_path / "bad.json"
    schema.write_text(content, encoding="utf-8")
    tasks = write_tasks(tmp_path / "tasks.jsonl", "a")
    async with FakeOpenAIServer(batch_team) as server:
        argv = batch_args(server, docs, tasks, tmp_path / "out.jsonl")
        status = await paor(*argv, "--schema", str(schema))
    assert status == 2
    err = capsys.readouterr().err.strip()
    assert problem in err
    assert len(err.splitlines()) == 1
    assert server.requests == []


FINDINGS_SCHEMA = {
    "title": "Findings",
    "type": "object",
    "properties": {"pauses_at": {"type": "string"}, "ended_by": {"type": "string"}},
    "required": ["pauses_at", "ended_by"],
}


async def test_research_with_a_schema_writes_the_object_beside_the_report(
    docs: Path, tmp_path: Path
) -> None:
    """`paor research --schema FILE`: the writer is asked for an object of the schema, and the
    validated object is written beside the report; a replay of the run meets no drift."""
    schema = tmp_path / "findings.json"
    schema.write_text(json.dumps(FINDINGS_SCHEMA), encoding="utf-8")
    out = tmp_path / "report.md"
    journal = tmp_path / "runs.db"

    def team(body: dict[str, Any]) -> ServerAction:
        if role_of(body) == "Findings":
            return ServerAction.json_content(
                {"pauses_at": "yield", "ended_by": "StopIteration"}, usage=USAGE
            )
        return PARALLEL(body)

    async with FakeOpenAIServer(team) as server:
        argv = research_args(server, docs, out, "--schema", str(schema), "--journal", str(journal))
        status = await paor(*argv)
    assert status == 0
    written = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    assert written == {"pauses_at": "yield", "ended_by": "StopIteration"}
    assert "StopIteration" in out.read_text(encoding="utf-8")
    roles = [role_of(body) for body in server.requests]
    assert roles[-1] == "Findings"
    assert "writer" not in roles
    run_id = _only_run(journal)
    assert await paor("replay", run_id, "--journal", str(journal)) == 0


def _only_run(path: Path) -> str:
    """The id of the one run a journal holds."""
    with contextlib.closing(sqlite3.connect(path)) as conn:
        (run_id,) = conn.execute("SELECT run_id FROM runs").fetchone()
    return str(run_id)


async def test_a_dollar_budget_on_a_model_without_a_price_is_refused_before_any_request(
    docs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--max-cost` needs a price for the model: without one the command says so in one line,
    sends no model request and writes no result."""
    tasks = write_tasks(tmp_path / "tasks.jsonl", "a")
    out = tmp_path / "results.jsonl"
    async with FakeOpenAIServer(batch_team) as server:
        argv = [*batch_args(server, docs, tasks, out), "--max-cost", "0.5", "--model", "house"]
        status = await paor(*argv)
    assert status != 0
    assert not server.requests
    assert not out.exists() or not result_lines(out)
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert "max_cost needs a price for model 'house'" in line


async def test_a_dollar_budget_on_a_priced_model_runs_the_batch(
    docs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tasks = write_tasks(tmp_path / "tasks.jsonl", "a", "b")
    out = tmp_path / "results.jsonl"
    async with FakeOpenAIServer(batch_team) as server:
        argv = [*batch_args(server, docs, tasks, out), "--max-cost", "1", "--model", "gpt-4.1"]
        status = await paor(*argv)
    assert status == 0
    costs = [r["usage"]["cost"] for r in result_lines(out)]
    assert len(costs) == 2
    assert all(cost > 0 for cost in costs)  # priced as gpt-4.1: $2 in, $8 out per million
