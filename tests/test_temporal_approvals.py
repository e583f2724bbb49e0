"""Approvals on Temporal: a run's plan and its sub-agent's tool call wait in their workflows for a
client's decision (an update of the run); of two deciders one wins; a decision for what does not
wait is refused; every tool runs once, and every history replays deterministically."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import pytest
from temporalio.testing import WorkflowEnvironment

from agents import tool
from agents.approvals import approve, deny
from agents.errors import RunError
from agents.events import ApprovalDecided, ApprovalRequested
from agents.models import ModelRequest
from agents.testing import FunctionModel, Turn, call, reply
from orchestrator.plans import SYNTHESIS_INSTRUCTIONS
from orchestrator.temporal import Registry, RunInput, build_replayer, build_worker, connect, start
from orchestrator.temporal._approvals import decide_on_temporal, waiting_on_temporal
from tests.test_temporal import TEMPORAL

pytestmark = [pytest.mark.slow, pytest.mark.anyio]

PLAN = {"subtasks": [{"id": "pay", "goal": "Pay the invoice."}, {"id": "look", "goal": "Look."}]}
GUARD_S = 60  # a guard against a hang, not a timing claim


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    """One event loop for the module, so the dev server is started once."""
    return "asyncio"


@pytest.fixture(scope="module")
async def server() -> AsyncIterator[str]:
    """A Temporal dev server on 127.0.0.1 (the installed binary: no download), its address."""
    env = await WorkflowEnvironment.start_local(
        ip="127.0.0.1", ui=False, dev_server_existing_path=str(TEMPORAL)
    )
    async with env:
        yield env.client.service_client.config.target_host


def _registry(ledger: Path) -> Registry:
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
            return reply(json.dumps(PLAN))
        if request.messages[0].content == SYNTHESIS_INSTRUCTIONS:
            return reply("Paid and looked.")
        task = (request.messages[1].content or "").removeprefix("Task: ").split("\n")[0]
        if any(m.role == "tool" for m in request.messages):
            return reply(f"Done: {task}")
        return call("transfer", amount=40) if task.startswith("Pay") else call("lookup", key="k")

    return Registry.of({"team": FunctionModel(decide, name="team")}, [transfer, lookup])


async def test_a_plan_and_a_call_are_decided_from_a_client(server: str, tmp_path: Path) -> None:
    """The plan waits (listed by the query), is approved by an update; pay's transfer waits in
    its child workflow; a second decision on it and one on an unknown id are refused."""
    ledger = tmp_path / "ledger"
    ledger.touch()
    client = await connect(server)
    given = RunInput(
        goal="Pay what is owed.", run_id="ap1", model="team", tools=("transfer", "lookup"),
        approve="all",
    )  # fmt: skip
    seen: list[str] = []
    with anyio.fail_after(GUARD_S):
        async with (
            build_worker(client, _registry(ledger), task_queue="approvals", sticky_timeout=1.0),
            await start(client, given, task_queue="approvals") as run,
        ):
            async for event in run:
                if isinstance(event, ApprovalRequested):
                    seen.append(event.approval_id)
                    waiting = await waiting_on_temporal(client, "ap1")
                    assert event.approval_id in [w.approval_id for w in waiting]
                    with pytest.raises(RunError, match="does not wait for nope"):
                        await decide_on_temporal(client, "ap1", "nope", approve())
                    await decide_on_temporal(client, "ap1", event.approval_id, approve())
                    with pytest.raises(RunError, match="was already decided"):
                        await decide_on_temporal(client, "ap1", event.approval_id, deny("no"))
                elif isinstance(event, ApprovalDecided):
                    seen.append(f"decided {event.approval_id}")
            assert await waiting_on_temporal(client, "ap1") == []
    assert run.result.status == "complete"
    plan_id, *rest = seen
    assert plan_id.startswith("run#")
    assert any(s.startswith("pay#") for s in rest)
    assert ledger.read_text().splitlines() == ["transfer 40"]
    replayer = build_replayer(_registry(ledger), passthrough=["tests"])
    for workflow_id in ("ap1", "ap1.pay", "ap1.look"):
        history = await client.get_workflow_handle(workflow_id).fetch_history()
        await replayer.replay_workflow(history)  # raises if a workflow is not deterministic
