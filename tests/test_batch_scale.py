"""Batches of any size: goals read only as workers come free, a fixed pool of tasks, memory flat
in the number of goals, and every goal accounted for when the budget runs out or the batch pauses.

Each of these fails on a batch that starts one task per goal up front."""

from __future__ import annotations

import gc
import json
import tracemalloc
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from agents import Budget, ConfigurationError, Executor, tool
from agents.approvals import PAUSE
from agents.effects import EffectSite, LiveEffects
from agents.models import ModelRequest, ModelResponse
from agents.testing import FunctionModel, Turn, call, reply
from memory import Journal, UserMessage
from orchestrator import BatchTask, Limits, run_batch
from orchestrator._batch_files import check_tasks, read_tasks

pytestmark = pytest.mark.anyio

GUARD_S = 30  # a deadlock guard, not a timing claim


class Goals:
    """The goals "Goal 0" to "Goal n-1" (ids g0...), made one at a time as they are read."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.read = 0

    def __iter__(self) -> Iterator[BatchTask]:
        for i in range(self.n):
            self.read += 1
            yield BatchTask(id=f"g{i}", goal=f"Goal {i}")


class Forgetful:
    """A `FunctionModel` that keeps no requests, so they do not count in the batch's memory."""

    name = "forgetful"

    def __init__(self, decide: Callable[[ModelRequest], Any]) -> None:
        self.inner = FunctionModel(decide)

    async def complete(self, request: ModelRequest) -> ModelResponse:
        """Answer as the function says, then forget the request."""
        try:
            return await self.inner.complete(request)
        finally:
            self.inner.requests.clear()


class _Clock(LiveEffects):
    """Live effects whose clock reads `time()`, counting the batch's own reads (before a goal)."""

    def __init__(self, time: Callable[[], float]) -> None:
        self.time = time
        self.batch_reads = 0

    async def now(self, site: EffectSite) -> float:
        """The scripted time."""
        self.batch_reads += site.run_id == "batch"
        return self.time()


def ids(path: Path) -> list[str]:
    """The ids of an output file's records, in order."""
    return [json.loads(line)["id"] for line in path.read_text(encoding="utf-8").splitlines()]


def goal_of(request: ModelRequest) -> str:
    """The goal a request's agent works on."""
    message = request.messages[1]
    assert isinstance(message, UserMessage)
    return message.content.removeprefix("Task: ")


async def test_the_first_result_is_written_before_the_last_goal_is_read(tmp_path: Path) -> None:
    """With 4 workers, the first result is on disk when no more than 5 goals (4 running, 1 on
    its way) of 300 have been read; every goal is run and written in the end."""
    goals = Goals(300)
    out = tmp_path / "results.jsonl"
    at_first: list[tuple[int, int]] = []  # (goals read, lines written) at the first result

    def first(key: str, _report: object) -> None:
        if not at_first:
            at_first.append((goals.read, len(ids(out))))

    summary = await run_batch(
        goals, executor=Executor(Forgetful(lambda r: "ok")), out=out, concurrency=4,
        budget=Budget(), on_result=first,
    )  # fmt: skip

    assert at_first[0][0] <= 5
    assert at_first[0][1] == 1
    assert summary.statuses == {"done": 300}
    assert sorted(ids(out)) == sorted(f"g{i}" for i in range(300))


class Waves:
    """Holds each model call until `size` calls are in, then lets them go together; counts the
    tasks alive each time a wave is full."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.gate = anyio.Event()
        self.waiting = 0
        self.tasks: set[int] = set()  # how many tasks were alive, at each full wave

    async def decide(self, request: ModelRequest) -> Turn:
        """Wait for the wave to fill."""
        gate = self.gate
        self.waiting += 1
        if self.waiting == self.size:
            self.tasks.add(len(anyio.get_running_tasks()))
            self.gate, self.waiting = anyio.Event(), 0
            gate.set()
        await gate.wait()
        return "ok"


async def test_the_tasks_of_a_batch_do_not_grow_with_its_goals(tmp_path: Path) -> None:
    """4 agents run at once (each wave of model calls waits until 4 are in), and the tasks
    alive then are as many for 400 goals as for 8: a fixed pool of workers, not a task a goal."""

    async def tasks_alive(n: int) -> set[int]:
        waves = Waves(4)
        summary = await run_batch(
            Goals(n), executor=Executor(Forgetful(waves.decide)), out=tmp_path / f"{n}.jsonl",
            concurrency=4, budget=Budget(),
        )  # fmt: skip
        assert summary.statuses == {"done": n}
        return waves.tasks

    with anyio.fail_after(GUARD_S):
        few, many = await tasks_alive(8), await tasks_alive(400)

    assert len(few) == 1
    assert many == few


async def test_a_batch_s_memory_does_not_grow_with_its_goals(tmp_path: Path) -> None:
    """The peak memory traced while 4,000 goals run is less than four times that of 200 goals
    (it varies with when the garbage collector runs): only the goals in flight are held, where a
    task per goal would take twenty times as much."""

    async def peak(n: int) -> int:
        executor = Executor(Forgetful(lambda r: "ok"))
        gc.collect()  # the garbage of earlier runs is not this one's
        tracemalloc.start()
        try:
            summary = await run_batch(
                Goals(n), executor=executor, out=tmp_path / f"{n}.jsonl", concurrency=4,
                budget=Budget(),
            )  # fmt: skip
            _, most = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert summary.statuses == {"done": n}
        return most

    with anyio.fail_after(GUARD_S * 2):
        await peak(20)  # first uses (imports, caches) are not the batch's
        few, many = await peak(200), await peak(4_000)

    assert many < 4 * few


async def test_goals_left_when_the_budget_is_spent_are_counted_and_done_ones_skipped(
    tmp_path: Path,
) -> None:
    """On a re-run whose budget runs out, every goal is one of: skipped (in the output), run and
    written, or not started (neither asked nor written); the next run does exactly those."""
    out = tmp_path / "results.jsonl"
    out.write_text("".join(json.dumps({"id": f"g{i}"}) + "\n" for i in range(0, 300, 3)))
    asked: list[str] = []

    def answer(request: ModelRequest) -> Turn:
        asked.append(goal_of(request))
        return "ok"

    model = Forgetful(answer)

    first = await run_batch(
        Goals(300), executor=Executor(model), out=out, concurrency=3,
        budget=Budget(max_requests=10),
    )  # fmt: skip

    written = ids(out)[100:]
    assert first.skipped == 100
    assert 0 < sum(first.statuses.values()) == len(written) < 200
    assert first.not_started == 200 - len(written)
    assert sorted(asked) == sorted(f"Goal {key.removeprefix('g')}" for key in written)

    second = await run_batch(
        Goals(300), executor=Executor(model), out=out, concurrency=3, budget=Budget()
    )

    assert (second.skipped, second.not_started) == (100 + len(written), 0)
    assert sum(second.statuses.values()) == first.not_started
    assert sorted(ids(out)) == sorted(f"g{i}" for i in range(300))


async def test_once_the_deadline_passes_the_rest_are_counted_without_being_started(
    tmp_path: Path,
) -> None:
    """With a deadline of 60 s on a clock that moves a second a request, 60 goals run and the
    other 940 are not started: counted so, without being handed out (no clock read each)."""
    requests = 0

    def answer(request: ModelRequest) -> Turn:
        nonlocal requests
        requests += 1
        return "ok"

    clock = _Clock(lambda: 1000.0 + requests)

    summary = await run_batch(
        Goals(1000), executor=Executor(Forgetful(answer), effects=clock),
        out=tmp_path / "r.jsonl", concurrency=2, limits=Limits(deadline_s=60),
    )  # fmt: skip

    ran = sum(summary.statuses.values())
    assert 60 <= ran <= 61  # both workers may start a goal in the last second
    assert summary.not_started == 1000 - ran
    # The deadline's start, one a goal run, and one a worker that found the budget spent.
    assert clock.batch_reads <= 1 + ran + 2


async def test_a_paused_batch_reads_no_further_goals_yet_counts_the_skipped_ones(
    tmp_path: Path,
) -> None:
    """When the only goal running waits for a decision the batch pauses: the goals after it are
    not asked, and those already in the output are still counted as skipped."""
    out = tmp_path / "results.jsonl"
    out.write_text(json.dumps({"id": "g99"}) + "\n")
    transfer = tool(name="transfer", needs_approval=True)(_transfer)

    def decide(request: ModelRequest) -> Turn:
        return call("transfer", amount=5) if goal_of(request) == "Goal 0" else reply("ok")

    model = FunctionModel(decide)
    async with Journal(tmp_path / "journal.db") as journal:
        with anyio.fail_after(GUARD_S):
            summary = await run_batch(
                Goals(100), executor=Executor(model, [transfer], approver=PAUSE), out=out,
                concurrency=1, budget=Budget(), journal=journal,
            )  # fmt: skip

    assert [goal_of(r) for r in model.requests] == ["Goal 0"]
    assert [w.tool for w in summary.waiting] == ["transfer"]
    assert (summary.skipped, summary.not_started, summary.statuses) == (1, 0, {})
    assert ids(out) == ["g99"]


async def _transfer(amount: int) -> str:
    """Send money.

    Args:
        amount: How much.
    """
    return f"sent {amount}"


def test_read_tasks_hands_out_lines_as_they_are_asked_for(tmp_path: Path) -> None:
    """`read_tasks` gives the good lines before it reaches a bad one, which it names then;
    `check_tasks` finds it (and duplicate ids) before anything is handed out."""
    path = tmp_path / "tasks.jsonl"
    lines = [json.dumps({"id": i, "goal": f"Goal {i}"}) for i in ("a", "b")]
    path.write_text("\n".join([*lines, '{"id": "c"}', lines[0]]) + "\n", encoding="utf-8")
    got: list[str] = []

    bad_line = r":3: not a valid task line \(Field required"
    with pytest.raises(ConfigurationError, match=bad_line), read_tasks(path) as tasks:
        got.extend(task.key() for task in tasks)
    with pytest.raises(ConfigurationError, match=r":3: not a valid task line"):
        check_tasks(path)
    path.write_text("\n".join([*lines, lines[0]]) + "\n", encoding="utf-8")
    with pytest.raises(ConfigurationError, match=r": duplicate task ids: a$"):
        check_tasks(path)

    assert got == ["a", "b"]
    with (
        pytest.raises(ConfigurationError, match="batch file not found"),
        read_tasks(tmp_path / "missing.jsonl"),
    ):
        pass
