"""`paor show` and `paor resume` with `--temporal`: inspecting and continuing runs on the server."""

from __future__ import annotations

import contextlib
from pathlib import Path

import anyio
import pytest

from agents.errors import RunError
from orchestrator.cli import main
from orchestrator.temporal import RunInput, TemporalBackend, connect
from orchestrator.temporal._client import start
from orchestrator.temporal._remote import run_result
from orchestrator.temporal._workflows import RunWorkflow
from tests._temporal_team import registry
from tests.test_temporal import _lines, anyio_backend, calls, server  # noqa: F401  (fixtures)

pytestmark = [pytest.mark.slow, pytest.mark.anyio]


async def test_show_prints_a_finished_runs_plan_reports_and_answer(
    server: str,  # noqa: F811
    calls: Path,  # noqa: F811
    capsys: pytest.CaptureFixture[str],
) -> None:
    """`paor show RUN --temporal`: status, goal, plan, each sub-agent's report and the answer."""
    client = await connect(server)
    async with registry().worker(client, task_queue="show", sticky_timeout=1.0):
        result = await TemporalBackend(client=client, task_queue="show").run(
            "g", model="parallel", tools=["search"], run_id="s1"
        )
    assert await anyio.to_thread.run_sync(main, ["show", "s1", "--temporal", server]) == 0
    printed = capsys.readouterr().out.splitlines()
    shown = printed[printed.index(f"run s1: completed on {server}") :]  # after the test's logs
    assert shown[:3] == [
        f"run s1: completed on {server}",
        "goal: g",
        "plan v1: a, b, c (after a, b)",
    ]
    assert [line.split(":")[0] for line in shown[3:6]] == ["  a", "  b", "  c"]
    assert shown[-1].startswith("answer: " + " ".join(result.answer.split())[:40])


@pytest.mark.parametrize(
    ("command", "error"),
    [
        (["show", "nope"], "no run nope on {server}"),
        (["resume", "nope"], "no run nope on {server}"),
        (["resume", "done1"], "run done1 already ended (completed)"),
    ],
)
async def test_unknown_or_finished_runs_are_one_line_errors(
    server: str,  # noqa: F811
    calls: Path,  # noqa: F811
    capsys: pytest.CaptureFixture[str],
    command: list[str],
    error: str,
) -> None:
    """`show` or `resume` of a run the server lacks, or `resume` of a completed one: one line,
    exit status 2."""
    client = await connect(server)
    async with registry().worker(client, task_queue="ended", sticky_timeout=1.0):
        handle = client.get_workflow_handle("done1")
        if not [w async for w in client.list_workflows("WorkflowId = 'done1'")]:
            await TemporalBackend(client=client, task_queue="ended").run(
                "g", model="parallel", tools=["search"], run_id="done1"
            )
        await handle.result()
    argv = [*command, "--temporal", server]
    assert await anyio.to_thread.run_sync(main, argv) == 2
    stderr = capsys.readouterr().err
    assert stderr.startswith(f"paor: error: {error.format(server=server)}")
    assert stderr.count("\n") == 1


async def test_resume_restarts_a_terminated_run_without_repeating_finished_work(
    server: str,  # noqa: F811
    calls: Path,  # noqa: F811
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A run terminated while its second sub-agent works: `show` says so, `paor resume --temporal`
    restarts it from its last completed step, it completes, and the first sub-agent's tool never
    runs again."""
    client = await connect(server)
    given = RunInput(goal="g", run_id="t1", model="chain", tools=("search", "slow"))
    async with registry().worker(client, task_queue="restart", sticky_timeout=1.0):
        # The stream may hear of the termination before the loop leaves it (a race the test
        # itself starts): then it ends with the run's one-line RunError, which is right.
        with contextlib.suppress(RunError):
            async with await start(client, given, task_queue="restart") as run:
                async for event in run:
                    if event.type == "subtask_started" and event.subtask_id == "b":
                        await run.handle.terminate("the machine died")
                        break
        assert await anyio.to_thread.run_sync(main, ["show", "t1", "--temporal", server]) == 0
        shown = capsys.readouterr().out
        assert f"run t1: terminated on {server}" in shown
        assert "ended: run t1 was terminated; `paor resume t1 --temporal ...` continues it" in shown
        argv = ["resume", "t1", "--temporal", server]
        assert await anyio.to_thread.run_sync(main, argv) == 0
        result = await run_result(client.get_workflow_handle_for(RunWorkflow.run, "t1"))
    assert "paor: restarted run t1 from its last completed step" in capsys.readouterr().err
    assert result.status == "complete", result.reason
    lines = _lines(calls)
    assert len([line for line in lines if line.startswith("search t1.a/")]) == 1
    assert len(set(lines)) == len(lines)
