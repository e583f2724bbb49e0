"""What the paor workflows are given: plain data, since only data crosses into Temporal's history.

Models, tools and checks are functions and objects, so a workflow input names them and the worker
resolves the names (`Registry`, `ACCEPTANCE_CHECKS`). A run's sub-agents are child workflows: each
is given its run's input (to build the same executor) and its own call.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from agents import AcceptanceCheck, Budget, cites_evidence
from agents.effects import AgentCall
from agents.guards import Stop
from agents.models import PRICES, OutputSchema, Price
from memory import ToolCall
from memory.journal import EffectRecord
from orchestrator._config import RunConfig

__all__ = ["ACCEPTANCE_CHECKS", "Acceptance", "AgentInput", "Allowance", "RunInput"]

Acceptance = Literal["none", "cites_evidence"]
"""The acceptance check a run on Temporal carries, by name (functions do not travel)."""
ACCEPTANCE_CHECKS: dict[Acceptance, AcceptanceCheck | None] = {
    "none": None,
    "cites_evidence": cites_evidence,
}
"""The acceptance checks a run on Temporal can name."""


class RunInput(BaseModel):
    """What a run on Temporal is given.

    Attributes:
        goal: The goal.
        run_id: The run's id (also what its agents' ids derive from: fixed, so replays agree).
        model: The model's name in the workers' registry.
        tools: The tools' names in the workers' registry.
        config: What the run is, as a run in process would be given it; its `review` is
            `approve`'s, and its questions are asked only with an approver.
        heartbeat_timeout: Seconds without a heartbeat before a tool's worker is taken for dead.
        acceptance: The sub-agents' acceptance check, by name.
        meta: JSON data kept with the run (how the CLI renders and resumes it).
        payload_limit: The largest model request, in bytes, the run may send without a blob store
            (None: the client has one, and so must every worker). Set by `start` from the client.
        agent_history_limit: Events in a sub-agent's history before it continues as new (None:
            when Temporal suggests it).
        output: The run's output type, as its name and JSON schema (`OutputSchema`): the
            workflow asks for and validates that schema, and the caller turns the data into
            its type (`TemporalBackend.run(output_type=...)`).
        approve: What waits for a person's decision (`orchestrator._research.Approve`): every
            plan version, calls of tools that change something, or both (see
            `orchestrator.temporal._approvals`).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    goal: str
    run_id: str
    model: str = "default"
    tools: tuple[str, ...] = ()
    config: RunConfig = RunConfig()
    heartbeat_timeout: float = 30.0
    acceptance: Acceptance = "none"
    meta: dict[str, Any] = Field(default_factory=dict)
    payload_limit: int | None = None
    agent_history_limit: int | None = Field(default=None, ge=10)
    approve: Literal["plan", "tools", "all"] | None = None
    output: OutputSchema | None = None


class Allowance(BaseModel):
    """What a sub-agent in a child workflow may spend: its run's budget as left when it started.

    A child cannot charge its parent's ledger as it goes, so it gets a ledger of its own capped
    at what the run had left, and the parent charges what the child reports it spent. Sub-agents
    running side by side each see the whole remainder: together they can overshoot it by at most
    what the others spend meanwhile, and the run's checks stop new work once it is spent.

    Attributes:
        max_tokens: Tokens left, or None.
        max_cost: Dollars left, or None.
        prices: The run's own prices (over `agents.models.PRICES`), or None.
        max_requests: Model requests left, or None.
        max_tool_calls: Tool calls left, or None.
        deadline: The run's deadline for sub-agents (absolute clock time), or None.
    """

    model_config = ConfigDict(frozen=True)

    max_tokens: int | None = None
    max_cost: float | None = None
    prices: dict[str, Price] | None = None
    max_requests: int | None = None
    max_tool_calls: int | None = None
    deadline: float | None = None

    @classmethod
    def of(cls, budget: Budget | None) -> Allowance:
        """What `budget`'s chain has left now (no caps without a budget)."""
        if budget is None:
            return cls()
        return cls(
            max_tokens=budget.tokens_left(),
            max_cost=budget.cost_left(),
            prices=_own_prices(budget),
            max_requests=budget.requests_left(),
            max_tool_calls=budget.tool_calls_left(),
            deadline=budget.nearest_deadline(),
        )

    def budget(self) -> Budget:
        """A fresh ledger with these caps."""
        return Budget(
            max_tokens=self.max_tokens,
            max_cost=self.max_cost,
            prices=self.prices,
            max_requests=self.max_requests,
            max_tool_calls=self.max_tool_calls,
            deadline=self.deadline,
        )


def _own_prices(budget: Budget) -> dict[str, Price] | None:
    """The run's own prices, as the nearest ledger in `budget`'s chain holds them."""
    table = budget.price_table()
    return dict(table) if table is not PRICES else None


class AgentInput(BaseModel):
    """What a sub-agent's child workflow is given.

    Attributes:
        run: Its run's input (the child builds the executor its run would have).
        task: What to do.
        context: What the run already knows for it (the compressed results of its dependencies).
        shared: What every agent of its run is told alike (the run's known facts).
        agent_id: The sub-agent's id in its run.
        allowed_tools: Restrict its menu further, or None.
        tool_call: The one tool call its subtask is, made without a model, or None.
        first_call: The tool call its first turn is, made without a model, or None.
        require_evidence: Whether its answer must rest on a tool result (see `Executor.run`).
        output_schema: The JSON Schema its answer is also written as, or None.
        pass_results: It may end with its tool results as its answer, up to this many characters
            (0: it writes its answer); whether the run still reads them is not asked here.
        signals: Whether `report_issue` is on its menu (see `Executor.run`).
        allowance: What it may spend.
        carried: Its effect records so far, when it continued as new (served before going live).
    """

    model_config = ConfigDict(frozen=True)

    run: RunInput
    task: str
    context: str = ""
    shared: str = ""
    agent_id: str
    allowed_tools: tuple[str, ...] | None = None
    tool_call: ToolCall | None = None
    first_call: ToolCall | None = None
    require_evidence: bool | Literal["facts"] | None = None
    output_schema: dict[str, Any] | None = None
    pass_results: int = 0
    signals: bool = True
    allowance: Allowance = Allowance()
    carried: tuple[EffectRecord, ...] = ()

    @classmethod
    def of(cls, run: RunInput, call: AgentCall) -> AgentInput:
        """The input of `call`'s child workflow in `run`."""
        allowed = None if call.allowed_tools is None else tuple(call.allowed_tools)
        return cls(
            run=run,
            task=call.task,
            context=call.context,
            shared=call.shared,
            agent_id=call.agent_id,
            allowed_tools=allowed,
            tool_call=call.call,
            first_call=call.first_call,
            require_evidence=call.require_evidence,
            output_schema=call.output_schema,
            pass_results=call.pass_results,
            signals=call.signals,
            allowance=Allowance.of(call.budget),
        )

    def call(self, stop: Stop) -> AgentCall:
        """The sub-agent's call, with a ledger of its allowance, stopped by `stop`."""
        return AgentCall(
            task=self.task,
            context=self.context,
            shared=self.shared,
            run_id=self.run.run_id,
            agent_id=self.agent_id,
            budget=self.allowance.budget(),
            stop=stop,
            allowed_tools=self.allowed_tools,
            call=self.tool_call,
            first_call=self.first_call,
            require_evidence=self.require_evidence,
            output_schema=self.output_schema,
            pass_results=self.pass_results,
            signals=self.signals,
        )
