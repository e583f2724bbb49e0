"""Tool approval in process: a call waits for a person's decision while the rest of the run goes
on; approve, approve with edited arguments, approve always, deny, time out; decisions are
recorded, so a replay meets them without asking anyone."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from agents import ConfigurationError, Executor, tool
from agents.approvals import PAUSE, ApprovalRequest, Approver, Decision
from agents.events import ApprovalDecided, ApprovalRequested
from agents.mcp import MCPServer
from agents.testing import ScriptedModel, call, observation, reply
from memory import Journal
from orchestrator import Event, Orchestrator
from orchestrator.events import SubtaskFinished
from tests._team import Team, plan, script, sub
from tests.test_mcp import SERVER

pytestmark = pytest.mark.anyio

GUARD_S = 20  # a deadlock guard, not a timing claim


class Bank:
    """A tool with a side effect, counted: what ran, with which amounts."""

    def __init__(self) -> None:
        self.sent: list[int] = []
        self.transfer = tool(name="transfer", needs_approval=True)(self._transfer)
        self.small = tool(name="transfer", needs_approval=lambda args: args["amount"] > 100)(
            self._transfer
        )

    async def _transfer(self, amount: int) -> str:
        """Send money.

        Args:
            amount: How much.
        """
        self.sent.append(amount)
        return f"sent {amount}"


def tool_texts(model: ScriptedModel) -> list[str]:
    return [observation(str(m.content)) for m in model.requests[-1].messages if m.role == "tool"]


async def run_one(bank: Bank, decide: Any, *, amount: int = 500, **options: Any) -> ScriptedModel:
    model = ScriptedModel([call("transfer", amount=amount), reply("done [transfer]")])
    with anyio.fail_after(GUARD_S):
        tools = [options.pop("with_tool", bank.transfer)]
        # A refused or cut payment backs no answer: these tests pin the approvals, not the rule.
        await Executor(model, tools, approver=decide, require_evidence=False).run("pay")
    return model


async def test_an_approved_call_runs_as_asked() -> None:
    bank, asked = Bank(), []

    async def decide(request: ApprovalRequest) -> Decision:
        asked.append(request)
        return Decision.approve()

    model = await run_one(bank, decide)
    assert bank.sent == [500]
    assert tool_texts(model) == ["sent 500"]
    (request,) = asked
    assert (request.tool, request.args) == ("transfer", {"amount": 500})
    assert request.approval_id.startswith(request.agent_id + "#")


async def test_a_denied_call_never_runs_and_the_model_reads_why() -> None:
    bank = Bank()

    async def decide(request: ApprovalRequest) -> Decision:
        return Decision.deny("over the daily limit")

    model = await run_one(bank, decide)
    assert bank.sent == []
    assert tool_texts(model) == ["Error: transfer Denied by a person: over the daily limit."]


async def test_edited_arguments_run_and_bad_edits_are_refused() -> None:
    bank = Bank()

    async def smaller(request: ApprovalRequest) -> Decision:
        return Decision.approve({"amount": 50})

    await run_one(bank, smaller)
    assert bank.sent == [50]

    async def broken(request: ApprovalRequest) -> Decision:
        return Decision.approve({"amount": "lots"})

    model = await run_one(bank, broken)
    assert bank.sent == [50]
    assert "The arguments a person gave for this call are invalid" in tool_texts(model)[0]


async def test_no_approver_means_the_call_is_refused() -> None:
    bank = Bank()
    model = await run_one(bank, None)
    assert bank.sent == []
    assert "needs a person's approval: none can be asked" in tool_texts(model)[0]


async def test_a_predicate_asks_only_when_it_says_so() -> None:
    bank, asked = Bank(), []

    async def decide(request: ApprovalRequest) -> Decision:
        asked.append(request.args["amount"])
        return Decision.approve()

    await run_one(bank, decide, amount=20, with_tool=bank.small)
    await run_one(bank, decide, amount=2000, with_tool=bank.small)
    assert (bank.sent, asked) == ([20, 2000], [2000])


async def test_no_decision_in_time_is_the_default() -> None:
    bank = Bank()

    async def never(request: ApprovalRequest) -> Decision:
        await anyio.sleep_forever()
        raise AssertionError("unreachable")

    model = await run_one(bank, Approver(decide=never, timeout=0.05))
    assert bank.sent == []
    assert tool_texts(model) == ["Error: transfer Denied by a person: no decision came in time."]


def two_payers() -> Team:
    return Team(
        [plan(sub("a"), sub("b"))],
        {
            "a": script(call("transfer", amount=1), reply("A paid [transfer]")),
            "b": script(call("transfer", amount=2), reply("B paid [transfer]")),
        },
    )


async def test_while_one_call_waits_the_rest_of_the_run_goes_on() -> None:
    """b's call waits for a decision that comes only once a has finished."""
    bank = Bank()
    a_done = anyio.Event()
    team = Team(
        [plan(sub("a"), sub("b"))],
        {"a": script(reply("A: nothing to pay")), "b": script(call("transfer", amount=2), "B")},
    )

    async def decide(request: ApprovalRequest) -> Decision:
        await a_done.wait()
        return Decision.approve()

    events: list[Event] = []
    orch = Orchestrator(team.model, [bank.transfer])
    with anyio.fail_after(GUARD_S):
        async with orch.stream("pay", approver=decide) as stream:
            async for event in stream:
                events.append(event)
                if isinstance(event, SubtaskFinished) and event.subtask_id == "a":
                    a_done.set()
    assert stream.result.status == "complete"
    kinds = [type(e).__name__ for e in events]
    assert kinds.index("ApprovalRequested") < kinds.index("ApprovalDecided")
    finished_a = next(i for i, e in enumerate(events) if isinstance(e, SubtaskFinished))
    assert finished_a < kinds.index("ApprovalDecided")
    assert bank.sent == [2]


async def test_approve_always_covers_the_tool_for_the_rest_of_the_run() -> None:
    bank, asked = Bank(), []
    turn = anyio.Lock()

    async def decide(request: ApprovalRequest) -> Decision:
        async with turn:
            asked.append(request.agent_id)
            return Decision.approve(always=True)

    events: list[Event] = []
    orch = Orchestrator(two_payers().model, [bank.transfer])
    limits = orch.config.limits.model_copy(update={"max_concurrency": 1})
    orch = orch.clone(config=orch.config.model_copy(update={"limits": limits}))
    with anyio.fail_after(GUARD_S):
        async with orch.stream("pay", approver=decide) as stream:
            async for event in stream:
                events.append(event)
    decided = [e for e in events if isinstance(e, ApprovalDecided)]
    assert [d.by for d in decided] == ["person", "always"]
    assert len(asked) == 1
    assert sorted(bank.sent) == [1, 2]


async def test_a_replay_meets_the_recorded_decisions_without_asking(tmp_path: Path) -> None:
    bank = Bank()

    async def decide(request: ApprovalRequest) -> Decision:
        return Decision.approve() if request.args["amount"] == 1 else Decision.deny("not b")

    async def nobody(request: ApprovalRequest) -> Decision:
        raise AssertionError("a replay asked a person")

    async with Journal(tmp_path / "journal.db") as journal:
        live = await Orchestrator(two_payers().model, [bank.transfer], journal=journal).run(
            "pay", run_id="r1", approver=decide
        )
        offline = Orchestrator(ScriptedModel([]), [bank.transfer], journal=journal)
        report = await offline.replay("r1", approver=nobody)
    assert report.ok, report.drift
    assert report.result is not None
    assert report.result.answer == live.answer
    assert bank.sent == [1]  # nothing ran again, and b's denial stood


async def test_events_say_what_waited_and_how_it_was_decided() -> None:
    bank, seen = Bank(), []

    async def collect(event: Any) -> None:
        seen.append(event)

    model = ScriptedModel([call("transfer", amount=7), reply("done [transfer]")])
    executor = Executor(model, [bank.transfer], approver=lambda r: _approved())
    await executor.run("pay", events=collect)
    requested = next(e for e in seen if isinstance(e, ApprovalRequested))
    decided = next(e for e in seen if isinstance(e, ApprovalDecided))
    assert (requested.tool, requested.args) == ("transfer", {"amount": 7})
    assert (decided.approval_id, decided.action, decided.by) == (
        requested.approval_id,
        "approve",
        "person",
    )


async def _approved() -> Decision:
    return Decision.approve()


async def test_destructive_mcp_tools_can_require_approval() -> None:
    """`needs_approval="destructive"`: the server's destructive tools wait; read-only ones run."""
    server = MCPServer.stdio(
        "t", sys.executable, [SERVER], allow=["echo", "write_note"], needs_approval="destructive"
    )
    async with server:
        needs = {t.name: t.wants_approval({}) for t in server.tools}
    assert needs == {"echo": False, "write_note": True}


async def test_a_lone_executor_cannot_leave_decisions_to_nobody() -> None:
    """PAUSE outside a run is refused when the executor starts, before any model call."""
    model = ScriptedModel([reply("never asked")])
    with pytest.raises(ConfigurationError, match="approver=PAUSE leaves decisions to a run"):
        await Executor(model, [Bank().transfer], approver=PAUSE).run("pay")
    assert model.requests == []


async def test_an_edit_that_leaves_a_masked_value_keeps_the_real_one() -> None:
    """The person saw the PIN masked; editing only the amount must not send the mask."""
    sent: list[tuple[int, str]] = []

    @tool(needs_approval=True, sensitive=["pin"])
    async def pay(amount: int, pin: str) -> str:
        """Pay.

        Args:
            amount: How much.
            pin: The card's PIN.
        """
        sent.append((amount, pin))
        return "paid"

    seen: list[dict[str, Any]] = []

    async def smaller(request: ApprovalRequest) -> Decision:
        seen.append(request.args)
        return Decision.approve({**request.args, "amount": 5})

    model = ScriptedModel([call("pay", amount=500, pin="4321"), reply("done [pay]")])
    await Executor(model, [pay], approver=smaller).run("pay")
    assert seen == [{"amount": 500, "pin": "***"}]
    assert sent == [(5, "4321")]


async def test_the_decision_given_through_the_stream_ends_the_quiet_at_once() -> None:
    """A run that is about to pause sees an answer given meanwhile: it is no longer quiet."""
    from agents._waits import RunWaits

    waits = RunWaits()
    request = ApprovalRequest(approval_id="a#1", run_id="r", agent_id="a", tool="t")

    async def wait_for_it() -> None:
        await waits.decision(request, PAUSE)

    async with anyio.create_task_group() as tg:
        tg.start_soon(wait_for_it)
        with anyio.fail_after(GUARD_S):
            while not waits.quiet:
                await anyio.lowlevel.checkpoint()
        assert waits.answer("a#1", Decision.approve())
        assert not waits.quiet
