"""Approvals on Temporal: a run's plan and its sub-agent's tool call wait in their workflows for a
client's decision (an update of the run); of two deciders one wins; a decision for what does not
wait is refused; every tool runs once, and every history replays deterministically."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from agents import tool
from agents.approvals import Decision
from agents.errors import RunError
from agents.events import ApprovalDecided, ApprovalRequested
from agents.models import ModelRequest
from agents.testing import FunctionModel, Turn, call, observation, reply
from agents.toolkits import Corpus, research_tools
from orchestrator import RunConfig
from orchestrator.cli import main
from orchestrator.temporal import Registry, RunInput, connect
from orchestrator.temporal._approvals import decide_on_temporal, waiting_on_temporal
from orchestrator.temporal._client import start
from tests.test_research import team
from tests.test_temporal import TOPIC, anyio_backend, corpus_folder, server

SYNTHESIS = RunConfig().synthesis_instructions

pytestmark = [pytest.mark.slow, pytest.mark.anyio]
__all__ = ["anyio_backend", "server"]  # the module's Temporal dev server, started once

PLAN = {"subtasks": [{"id": "pay", "goal": "Pay the invoice."}, {"id": "look", "goal": "Look."}]}
GUARD_S = 60  # a guard against a hang, not a timing claim


def _registry(ledger: Path, plan: dict[str, Any] = PLAN) -> Registry:
    @tool(side_effects=True)
    async def transfer(amount: int) -> str:
        """Send money.

        Args:
            amount: How much.
        """
        with ledger.open("a") as f:
            f.write(f"transfer {amount}\n")
        return f"sent {amount}"

    @tool
    async def lookup(key: str) -> str:
        """Look a fact up.

        Args:
            key: Which.
        """
        return f"{key} is 1"

    def decide(request: ModelRequest) -> Turn:
        if request.output is not None:
            return reply(json.dumps(plan))
        if request.messages[0].content == SYNTHESIS:
            return reply("Paid and looked.")
        task = (request.messages[1].content or "").removeprefix("Task: ").split("\n")[0]
        told = [observation(str(m.content)) for m in request.messages if m.role == "tool"]
        if task.startswith("Pay"):
            return reply(f"Done: {task}") if told else call("transfer", amount=40)
        if not told:
            return call("ask_user", question="Which key?")
        return (
            call("lookup", key=told[0].split(": ")[-1])
            if len(told) == 1
            else reply(f"It says: {told[-1]}")
        )

    return Registry.of({"team": FunctionModel(decide, name="team")}, [transfer, lookup])


async def test_a_plan_and_a_call_are_decided_from_a_client(server: str, tmp_path: Path) -> None:
    """The plan waits (listed by the query), is approved by an update; pay's transfer waits in
    its child workflow, and look's question too (answered the same way); a second decision on
    one and one on an unknown id are refused."""
    ledger = tmp_path / "ledger"
    ledger.touch()
    client = await connect(server)
    given = RunInput(
        goal="Pay what is owed.", run_id="ap1", model="team", tools=("transfer", "lookup"),
        approve="all", config=RunConfig(questions=1),
    )  # fmt: skip
    seen: list[str] = []
    with anyio.fail_after(GUARD_S):
        async with (
            _registry(ledger).worker(client, task_queue="approvals", sticky_timeout=1.0),
            await start(client, given, task_queue="approvals") as run,
        ):
            async for event in run:
                if isinstance(event, ApprovalRequested):
                    seen.append(event.approval_id)
                    waiting = await waiting_on_temporal(client, "ap1")
                    assert event.approval_id in [w.approval_id for w in waiting]
                    with pytest.raises(RunError, match="does not wait for nope"):
                        await decide_on_temporal(client, "ap1", "nope", Decision.approve())
                    decision = (
                        Decision.answer("k7") if event.kind == "question" else Decision.approve()
                    )
                    await decide_on_temporal(client, "ap1", event.approval_id, decision)
                    with pytest.raises(RunError, match="was already decided"):
                        await decide_on_temporal(
                            client, "ap1", event.approval_id, Decision.deny("no")
                        )
                elif isinstance(event, ApprovalDecided):
                    seen.append(f"decided {event.approval_id}")
            assert await waiting_on_temporal(client, "ap1") == []
    assert run.result.status == "complete"
    plan_id, *rest = seen
    assert plan_id.startswith("run#")
    assert any(s.startswith("pay#") for s in rest)
    assert any(s.startswith("look#") for s in rest)  # the question, answered through the run
    assert ledger.read_text().splitlines() == ["transfer 40"]
    assert [(a.agent_id, a.question, a.answer) for a in run.result.answered] == [
        ("look", "Which key?", "k7")
    ]
    looked = [r for r in run.result.reports if r.agent_id == "look"]
    assert looked[0].answer == "It says: k7 is 1"
    replayer = _registry(ledger).replayer(passthrough=["tests"])
    for workflow_id in ("ap1", "ap1.pay", "ap1.look"):
        history = await client.get_workflow_handle(workflow_id).fetch_history()
        await replayer.replay_workflow(history)  # raises if a workflow is not deterministic


async def test_cli_research_on_temporal_waits_then_paor_approve_finishes_it(
    server: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`research --temporal --approve plan` with no terminal ends with exit 3 naming what waits
    (the run waits on Temporal); `approvals --temporal` lists it; `approve --temporal` with a
    wrong id is one line, exit 2; approving follows the run to its report."""
    docs = corpus_folder(tmp_path / "docs")
    corpus = Corpus.from_folder(docs)
    out = tmp_path / "report.md"
    target = ("--temporal", server)
    argv = ["research", TOPIC, "--docs", str(docs), "--out", str(out), "--max-subtasks", "3"]
    argv += [*target, "--task-queue", "cli-approve", "--approve", "plan"]
    client = await connect(server)
    served = Registry.of({"default": FunctionModel(team)}, research_tools(corpus))
    with anyio.fail_after(GUARD_S):
        async with served.worker(client, task_queue="cli-approve", sticky_timeout=1.0):
            assert await anyio.to_thread.run_sync(main, argv) == 3
            last = capsys.readouterr().out.strip().splitlines()[-1]
            assert last.startswith("paused: run ")
            run_id = last.split()[2]
            assert "waits for a decision on run#" in last

            assert await anyio.to_thread.run_sync(main, ["approvals", *target]) == 0
            assert f"{run_id}  run#" in capsys.readouterr().out
            wrong = ["approve", run_id, "--id", "nope", *target]
            assert await anyio.to_thread.run_sync(main, wrong) == 2
            assert "does not wait for nope" in capsys.readouterr().err
            approving = ["approve", run_id, *target, "--out", str(out)]
            assert await anyio.to_thread.run_sync(main, approving) == 0
    assert out.read_text(encoding="utf-8").startswith("# ")
    assert capsys.readouterr().out.strip().splitlines()[-1].startswith(f"wrote {out}: ")


async def test_a_run_on_temporal_asks_at_most_its_limit_over_all_its_sub_agents(
    server: str, tmp_path: Path
) -> None:
    """Two sub-agents (two child workflows) ask with questions=1: the run answers one through
    its update and refuses the other itself, so the limit holds for the run, not per child."""
    ledger = tmp_path / "ledger"
    ledger.touch()
    two = {"subtasks": [{"id": "look1", "goal": "Look one."}, {"id": "look2", "goal": "Look two."}]}
    client = await connect(server)
    given = RunInput(
        goal="Look twice.", run_id="ap2", model="team", tools=("lookup",),
        config=RunConfig(questions=1),
    )  # fmt: skip
    asked: list[str] = []
    served = _registry(ledger, two)
    with anyio.fail_after(GUARD_S):
        async with (
            served.worker(client, task_queue="asking", sticky_timeout=1.0),
            await start(client, given, task_queue="asking") as run,
        ):
            async for event in run:
                if isinstance(event, ApprovalRequested) and event.kind == "question":
                    asked.append(event.agent_id)
                    await decide_on_temporal(
                        client, "ap2", event.approval_id, Decision.answer("k1")
                    )
    assert run.result.status == "complete"
    assert len(asked) == 1  # the other question never waited: the run refused it
    assert [a.answer for a in run.result.answered] == ["k1"]
    (refused,) = {"Look one.", "Look two."} - {
        f"Look {'one' if a == 'look1' else 'two'}." for a in asked
    }
    model = served.model("team")
    assert isinstance(model, FunctionModel)
    told = [
        observation(str(m.content))
        for r in model.requests
        if refused in str(r.messages[1].content)
        for m in r.messages
        if m.role == "tool"
    ]
    assert any(
        "You may not ask: the run has asked the user all the questions it may (1)" in t
        for t in told
    )
