"""Batch runs: task file checks, resumable JSON Lines output, one concurrency limit, one budget."""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import pytest

from agents import AgentReport, Budget, ConfigurationError, Executor, tool
from agents.effects import EffectSite, LiveEffects
from agents.errors import RunError
from agents.models import ModelRequest
from agents.testing import FunctionModel, ScriptedModel, Turn, call, reply
from agents.toolkits import Corpus, Document, research_tools
from memory import Journal, UserMessage
from orchestrator import Limits
from orchestrator._batch import (
    BatchSummary,
    BatchTask,
    OutputLocked,
    check_output,
    finished_ids,
    load_tasks,
    run_batch,
)

pytestmark = pytest.mark.anyio

GUARD_S = 10  # a deadlock guard, not a timing claim
CORPUS = Corpus(
    [Document(id="py/generators", title="Generators", text="A generator pauses at each yield.")]
)


def write_lines(path: Path, *lines: str) -> Path:
    """A file holding `lines`, each ended by a newline."""
    path.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    return path


def task_line(task_id: str) -> str:
    """A task line whose goal is "Goal <id>"."""
    return json.dumps({"id": task_id, "goal": f"Goal {task_id}"})


def tasks(*ids: str) -> list[BatchTask]:
    """Tasks whose goals are "Goal <id>"."""
    return [BatchTask(id=i, goal=f"Goal {i}") for i in ids]


def records(path: Path) -> list[dict[str, Any]]:
    """The complete records of an output file (a torn line is left out)."""
    found = []
    for line in path.read_bytes().decode("utf-8", errors="replace").splitlines():
        try:
            found.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return found


def asked_goals(requests: list[ModelRequest]) -> list[str]:
    """The goal of each request's task message, in order."""
    goals = []
    for request in requests:
        message = request.messages[1]
        assert isinstance(message, UserMessage)
        goals.append(message.content.removeprefix("Task: "))
    return goals


def test_load_tasks_reads_lines_ignores_blank_ones_and_derives_missing_ids(tmp_path: Path) -> None:
    """Blank lines are skipped, unknown fields ignored, a missing id is derived from the goal."""
    path = write_lines(
        tmp_path / "tasks.jsonl",
        task_line("a"),
        "",
        "   ",
        json.dumps({"goal": "Goal without id", "priority": 3}),
    )

    loaded = load_tasks(path)

    assert loaded == [BatchTask(id="a", goal="Goal a"), BatchTask(goal="Goal without id")]
    digest = hashlib.sha1(b"Goal without id").hexdigest()[:12]
    assert [t.key() for t in loaded] == ["a", f"goal-{digest}"]


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ('{"id": "b"}', "Field required"),
        ('{"id": "b", "goal": ""}', "at least 1 character"),
        ('{"id": "b", "goal": ', "Invalid JSON"),
        ('["b", "Goal b"]', "should be an object"),
    ],
    ids=["missing-goal", "empty-goal", "bad-json", "not-an-object"],
)
def test_load_tasks_names_the_first_bad_line(tmp_path: Path, line: str, problem: str) -> None:
    """A line that is not a task raises `ConfigurationError` naming the file, line and problem."""
    path = write_lines(tmp_path / "tasks.jsonl", task_line("a"), "", line, task_line("c"))

    with pytest.raises(ConfigurationError) as caught:
        load_tasks(path)

    message = str(caught.value)
    assert message.startswith(f"{path}:3: not a valid task line (")
    assert problem in message


def test_load_tasks_rejects_duplicate_ids(tmp_path: Path) -> None:
    """Two lines with one id, or two id-less lines with one goal, are duplicates."""
    twice = write_lines(tmp_path / "ids.jsonl", task_line("a"), task_line("b"), task_line("a"))
    same_goal = json.dumps({"goal": "Same"})
    derived = write_lines(tmp_path / "goals.jsonl", same_goal, same_goal)

    with pytest.raises(
        ConfigurationError, match=f"^{re.escape(str(twice))}: duplicate task ids: a$"
    ):
        load_tasks(twice)
    with pytest.raises(ConfigurationError, match="duplicate task ids: goal-"):
        load_tasks(derived)


def test_load_tasks_reports_a_missing_file(tmp_path: Path) -> None:
    """A batch file that does not exist is a `ConfigurationError`, not an OSError."""
    with pytest.raises(ConfigurationError, match="batch file not found"):
        load_tasks(tmp_path / "nope.jsonl")


def test_finished_ids_tolerates_a_torn_last_line_and_foreign_lines(tmp_path: Path) -> None:
    """Only records with a string id count; lines that are not such records, a torn last line
    included (even one cut inside a UTF-8 character), are ignored."""
    out = tmp_path / "results.jsonl"
    write_lines(out, json.dumps({"id": "a"}), "[1, 2]", json.dumps({"id": 3}), '{"goal": "x"}')
    with out.open("ab") as sink:
        sink.write(json.dumps({"id": "b", "answer": "ok"}).encode() + b"\n")
        sink.write(b'{"id": "c", "answer": "caf' + "é".encode()[:1])

    assert finished_ids(out) == {"a", "b"}
    assert finished_ids(tmp_path / "missing.jsonl") == set()


async def test_run_batch_appends_one_record_per_task(tmp_path: Path) -> None:
    """Each finished task is appended as a record of its result, the sources its answer cites
    (the others it gathered under "searched") and usage, and reported; a task answered from
    nothing is partial, with the reason."""
    model = ScriptedModel(
        [
            call("search_docs", query="generator yield"),
            reply("It pauses [py/generators]."),
            "B",
            "B",
        ]
    )
    seen: list[tuple[str, AgentReport]] = []
    out = tmp_path / "results.jsonl"

    summary = await run_batch(
        tasks("a", "b"),
        executor=Executor(model, research_tools(CORPUS)),
        out=out,
        concurrency=1,
        budget=Budget(),
        on_result=lambda key, report: seen.append((key, report)),
    )

    model.assert_complete()
    assert asked_goals(model.requests) == ["Goal a", "Goal a", "Goal b", "Goal b"]
    first, second = out.read_text(encoding="utf-8").splitlines()
    a = json.loads(first)
    assert "py/generators" not in a.pop("searched")
    assert a == {
        "id": "a",
        "goal": "Goal a",
        "status": "done",
        "answer": "It pauses [py/generators].",
        "sources": ["py/generators"],
        "stop_reason": None,
        "steps": 2,
        "usage": {
            "requests": 2,
            "prompt_tokens": 20,
            "completion_tokens": 10,
            "cached_tokens": 0,
            "tool_calls": 1,
            "cost": 0.0,
        },
    }
    b = json.loads(second)
    assert (b["status"], b["answer"], b["sources"]) == ("partial", "B", [])
    assert "no tool result backs your answer" in b["reason"]
    assert [(key, report.status) for key, report in seen] == [("a", "done"), ("b", "partial")]
    assert summary == BatchSummary(statuses=Counter(done=1, partial=1), skipped=0, tokens=60)


async def test_run_batch_skips_ids_already_in_the_output(tmp_path: Path) -> None:
    """A re-run asks the model only about tasks whose ids are not in the output yet."""
    out = write_lines(tmp_path / "results.jsonl", json.dumps({"id": "a", "status": "done"}))
    model = ScriptedModel(["B"])

    summary = await run_batch(
        tasks("a", "b"), executor=Executor(model), out=out, concurrency=2, budget=Budget()
    )

    assert asked_goals(model.requests) == ["Goal b"]
    assert [r["id"] for r in records(out)] == ["a", "b"]
    assert summary.skipped == 1
    assert summary.line() == "batch: 1 done, 1 skipped (already done); 15 tokens"


async def test_run_batch_reruns_a_torn_record_on_a_line_of_its_own(tmp_path: Path) -> None:
    """After a crash mid-write the torn task runs again, its half line moved aside to OUT.torn."""
    out = write_lines(tmp_path / "results.jsonl", json.dumps({"id": "a", "status": "done"}))
    torn = b'{"id": "b", "goal": "Goal b", "answer": "caf' + "é".encode()[:1]
    with out.open("ab") as sink:
        sink.write(torn)
    model = ScriptedModel(["B"])

    await run_batch(
        tasks("a", "b"), executor=Executor(model), out=out, concurrency=1, budget=Budget()
    )

    assert asked_goals(model.requests) == ["Goal b"]
    lines = out.read_bytes().split(b"\n")
    assert json.loads(lines[1])["id"] == "b"
    assert lines[2:] == [b""]
    assert (tmp_path / "results.jsonl.torn").read_bytes() == torn + b"\n"


@dataclass(kw_only=True, slots=True)
class Turnstile:
    """Holds every model call until the test lets that task's call through."""

    gates: dict[str, anyio.Event] = field(default_factory=dict)
    entered: list[str] = field(default_factory=list)
    inside: int = 0
    peak: int = 0

    async def decide(self, request: ModelRequest) -> Turn:
        """Count the call in, wait for its gate, count it out."""
        (goal,) = asked_goals([request])
        self.entered.append(goal)
        self.inside += 1
        self.peak = max(self.peak, self.inside)
        await self.gates.setdefault(goal, anyio.Event()).wait()
        self.inside -= 1
        return f"done {goal}"

    def release(self, goal: str) -> None:
        """Let the call for `goal` answer."""
        self.gates.setdefault(goal, anyio.Event()).set()


async def test_run_batch_never_runs_more_tasks_than_the_concurrency_limit(tmp_path: Path) -> None:
    """With a limit of 2, two tasks are in flight at once; each finishing one lets the next in."""
    turnstile = Turnstile()
    executor = Executor(FunctionModel(turnstile.decide))
    out = tmp_path / "results.jsonl"
    goals = [f"Goal {i}" for i in "abcd"]
    in_flight: list[tuple[int, int]] = []  # (tasks entered, tasks inside) whenever all are blocked

    async def batch() -> None:
        await run_batch(tasks(*"abcd"), executor=executor, out=out, concurrency=2, budget=Budget())

    with anyio.fail_after(GUARD_S):
        async with anyio.create_task_group() as tg:
            tg.start_soon(batch)
            for goal in goals:
                # Everything that could run has run: a task past the limit would be inside.
                await anyio.wait_all_tasks_blocked()
                in_flight.append((len(turnstile.entered), turnstile.inside))
                turnstile.release(goal)

    assert in_flight == [(2, 2), (3, 2), (4, 2), (4, 1)]
    assert turnstile.entered == goals
    assert turnstile.peak == 2
    assert sorted(r["id"] for r in records(out)) == ["a", "b", "c", "d"]


async def test_run_batch_charges_every_task_to_one_budget(tmp_path: Path) -> None:
    """All tasks spend from the one ledger passed in, and the summary adds up their tokens."""
    budget = Budget()
    model = FunctionModel(lambda request: reply("ok", prompt_tokens=7, completion_tokens=3))

    summary = await run_batch(
        tasks("a", "b", "c"),
        executor=Executor(model),
        out=tmp_path / "results.jsonl",
        concurrency=3,
        budget=budget,
    )

    assert budget.used.requests == 3
    assert budget.used.total_tokens == 30
    assert summary.tokens == 30


async def test_tasks_left_when_the_budget_is_spent_are_not_written(tmp_path: Path) -> None:
    """Once the shared budget is spent the remaining tasks do not start and are not recorded, so a
    re-run with a fresh budget does them."""
    out = tmp_path / "results.jsonl"
    spent = ScriptedModel(["A"])

    first = await run_batch(
        tasks("a", "b", "c"),
        executor=Executor(spent),
        out=out,
        concurrency=1,
        budget=Budget(max_tokens=15),
    )

    assert asked_goals(spent.requests) == ["Goal a"]
    assert [r["id"] for r in records(out)] == ["a"]
    assert first.line() == (
        "batch: 1 done, 0 skipped (already done), 2 not started (budget spent); 15 tokens"
    )

    fresh = ScriptedModel(["B", "C"])
    second = await run_batch(
        tasks("a", "b", "c"), executor=Executor(fresh), out=out, concurrency=1, budget=Budget()
    )

    assert asked_goals(fresh.requests) == ["Goal b", "Goal c"]
    assert [r["id"] for r in records(out)] == ["a", "b", "c"]
    assert (second.skipped, second.not_started) == (1, 0)


class _Clock(LiveEffects):
    """Live effects whose clock reads `time()` (the batch's deadline is read on it)."""

    def __init__(self, time: Callable[[], float]) -> None:
        self.time = time

    async def now(self, site: EffectSite) -> float:
        """The scripted time."""
        return self.time()


async def test_run_batch_limits_count_the_deadline_on_the_effect_clock(tmp_path: Path) -> None:
    """With `limits`, the batch's deadline starts at the effect clock's reading: once that clock
    says it has passed, the next task is not started (and not written)."""
    model = ScriptedModel(["A"])
    clock = _Clock(lambda: 1000.0 if not model.requests else 2000.0)  # a minute is 60 s

    summary = await run_batch(
        tasks("a", "b"),
        executor=Executor(model, effects=clock),
        out=tmp_path / "r.jsonl",
        concurrency=1,
        limits=Limits(deadline_s=60),
    )

    assert asked_goals(model.requests) == ["Goal a"]
    assert (summary.statuses["done"], summary.not_started) == (1, 1)


async def test_run_batch_takes_a_budget_or_limits(tmp_path: Path) -> None:
    """Both, or neither, is a `ConfigurationError` before anything runs."""
    executor = Executor(ScriptedModel([]))
    out = tmp_path / "r.jsonl"
    with pytest.raises(ConfigurationError, match="a budget or limits, one of the two"):
        await run_batch(tasks("a"), executor=executor, out=out, concurrency=1)
    with pytest.raises(ConfigurationError, match="a budget or limits, one of the two"):
        await run_batch(
            tasks("a"), executor=executor, out=out, concurrency=1, budget=Budget(), limits=Limits()
        )


async def test_run_batch_rejects_a_concurrency_below_one(tmp_path: Path) -> None:
    """A concurrency of 0 would wait forever: it is a `ConfigurationError`, and nothing runs."""
    model = ScriptedModel([])

    with pytest.raises(ConfigurationError, match="concurrency must be at least 1, not 0"):
        await run_batch(
            tasks("a"),
            executor=Executor(model),
            out=tmp_path / "r.jsonl",
            concurrency=0,
            budget=Budget(),
        )

    assert model.requests == []
    assert not (tmp_path / "r.jsonl").exists()


def test_summary_line_counts_statuses_skips_and_tokens() -> None:
    """The summary line lists statuses alphabetically, then skips, then tokens."""
    summary = BatchSummary(statuses=Counter(partial=1, done=2), skipped=3, tokens=42)

    assert summary.line() == "batch: 2 done, 1 partial, 3 skipped (already done); 42 tokens"


async def test_a_journaled_batch_resumes_an_interrupted_task_from_its_records(
    tmp_path: Path,
) -> None:
    """With a journal, a task cut off mid-way is resumed on the re-run: its finished tool call
    is served from the journal, and only what was left is asked of the model."""
    counts: Counter[str] = Counter()
    asked: list[int] = []
    entered = anyio.Event()
    crash = True

    @tool
    async def lookup(key: str) -> str:
        """Look a fact up.

        Args:
            key: What to look up.
        """
        counts[key] += 1
        return f"the value of {key}"

    async def decide(request: ModelRequest) -> Turn:
        turn = sum(m.role == "assistant" for m in request.messages)
        asked.append(turn)
        if turn == 0:
            return call("lookup", key="a")
        if crash:
            entered.set()
            await anyio.sleep_forever()
        return reply("A is known [lookup]")

    out = tmp_path / "out.jsonl"
    async with Journal(tmp_path / "journal.db") as journal:
        executor = Executor(FunctionModel(decide), [lookup])

        async def batch() -> BatchSummary:
            return await run_batch(
                tasks("a"), executor=executor, out=out, concurrency=1, budget=Budget(),
                journal=journal,
            )  # fmt: skip

        with anyio.fail_after(GUARD_S):
            async with anyio.create_task_group() as tg:
                tg.start_soon(batch)
                await entered.wait()
                tg.cancel_scope.cancel()
            crash = False
            summary = await batch()

    assert counts == {"a": 1}
    assert asked == [0, 1, 1]  # the re-run asked only the interrupted turn
    assert summary.statuses == {"done": 1}
    assert [(r["id"], r["answer"]) for r in records(out)] == [("a", "A is known [lookup]")]


async def test_a_second_batch_on_the_same_output_is_refused(tmp_path: Path) -> None:
    """While one batch writes an output file, another batch on that file (even by another
    path to it) gets a one-line OutputLocked naming it and runs nothing; the first one is
    undisturbed."""
    turnstile = Turnstile()
    out = tmp_path / "results.jsonl"
    second = ScriptedModel([])

    async def first() -> None:
        executor = Executor(FunctionModel(turnstile.decide))
        await run_batch(tasks("a"), executor=executor, out=out, concurrency=1, budget=Budget())

    with anyio.fail_after(GUARD_S):
        async with anyio.create_task_group() as tg:
            tg.start_soon(first)
            await anyio.wait_all_tasks_blocked()  # the first batch is inside its task
            with pytest.raises(OutputLocked) as caught:
                await run_batch(
                    tasks("a", "b"),
                    executor=Executor(second),
                    out=tmp_path / "." / "results.jsonl",
                    concurrency=1,
                    budget=Budget(),
                )
            turnstile.release("Goal a")

    assert isinstance(caught.value, RunError)
    assert str(caught.value) == (
        f"{tmp_path / '.' / 'results.jsonl'} is being written by another batch; "
        "wait for it to end or choose another output file"
    )
    assert second.requests == []
    assert [r["id"] for r in records(out)] == ["a"]


async def test_an_error_inside_a_batch_reaches_the_caller_as_itself(tmp_path: Path) -> None:
    """An exception raised while the batch's tasks run comes out as that exception, not as an
    ExceptionGroup around it."""

    def explode(key: str, report: AgentReport) -> None:
        raise RuntimeError(f"cannot take {key}")

    with pytest.raises(RuntimeError, match=r"^cannot take a$"):
        await run_batch(
            tasks("a"),
            executor=Executor(ScriptedModel(["A"])),
            out=tmp_path / "results.jsonl",
            concurrency=1,
            budget=Budget(),
            on_result=explode,
        )


def test_check_output_refuses_the_input_file_by_any_name(tmp_path: Path) -> None:
    """The output may not be the task file: not by the same path, a relative one, a symlink or
    a hard link. Another file, or one that does not exist yet, is fine."""
    tasks_path = write_lines(tmp_path / "tasks.jsonl", task_line("a"))
    (tmp_path / "link.jsonl").symlink_to(tasks_path)
    os.link(tasks_path, tmp_path / "hard.jsonl")
    other = write_lines(tmp_path / "other.jsonl", task_line("b"))

    for out in (
        tasks_path, tmp_path / "sub" / ".." / "tasks.jsonl", tmp_path / "link.jsonl",
        tmp_path / "hard.jsonl",
    ):  # fmt: skip
        (tmp_path / "sub").mkdir(exist_ok=True)
        with pytest.raises(ConfigurationError) as caught:
            check_output(tasks_path, out)
        assert str(caught.value) == (
            f"the output {out} is the task file {tasks_path}: writing to it would destroy "
            "the tasks; choose another output file"
        )
    check_output(tasks_path, other)
    check_output(tasks_path, tmp_path / "new.jsonl")


async def test_a_pausing_executor_needs_a_journal(tmp_path: Path) -> None:
    """run_batch with approver=PAUSE and no journal to pause in is refused before any work."""
    from agents.approvals import PAUSE

    executor = Executor(ScriptedModel([]), approver=PAUSE)
    with pytest.raises(ConfigurationError, match="approver=PAUSE needs run_batch"):
        await run_batch(
            [BatchTask(id="a", goal="Goal a")], executor=executor, out=tmp_path / "o.jsonl",
            concurrency=1, limits=Limits(),
        )  # fmt: skip
