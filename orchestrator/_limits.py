"""The limits of a whole run: one budget for the planner and every sub-agent."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

import agents
from agents.models import Price

__all__ = ["Limits"]


class Limits(BaseModel):
    """The exits of a run. None means no cap of that kind.

    Attributes:
        deadline_s: Wall-clock seconds for the whole run, synthesis included.
        max_tokens: Tokens for the whole run (planner and sub-agents together).
        max_cost: Dollars of model calls for the whole run, priced by `prices`; the run stops
            into its partial answer once they are spent (a call under way finishes, so the
            last one can pass the cap by its own price). `RunResult.usage.cost` says what it
            cost. A run with this cap needs a price for its models: one that has none fails at
            the start with `ConfigurationError`.
        prices: Prices per model (dollars per million tokens) over the public table
            (`agents.models.PRICES`): a local model's, or a rate of your own.
        max_requests: Model requests for the whole run.
        max_tool_calls: Tool calls for the whole run.
        max_concurrency: Sub-agents running at once.
        max_subtasks: The largest plan accepted.
        max_replans: Replans before the run settles for what it has.
        max_plan_repairs: Chances the planner gets to fix an invalid plan.
        synthesis_reserve: Share of the deadline kept for the final synthesis (sub-agents stop
            before it).
        agent: Each sub-agent's own limits (clamped to what the run has left).
    """

    model_config = ConfigDict(frozen=True)

    deadline_s: float | None = Field(default=None, gt=0)
    max_tokens: int | None = Field(default=None, ge=1)
    max_cost: float | None = Field(default=None, gt=0)
    prices: dict[str, Price] | None = None
    max_requests: int | None = Field(default=None, ge=1)
    max_tool_calls: int | None = Field(default=None, ge=0)
    max_concurrency: int = Field(default=4, ge=1)
    max_subtasks: int = Field(default=8, ge=1)
    max_replans: int = Field(default=2, ge=0)
    max_plan_repairs: int = Field(default=2, ge=0)
    synthesis_reserve: float = Field(default=0.15, ge=0, lt=1)
    agent: agents.AgentLimits = agents.AgentLimits(max_steps=8)

    def check_priced(self, *models: str) -> None:
        """Check that a run with a dollar cap (its own or its sub-agents') can price `models`.

        Raises:
            ConfigurationError: The price table has none for one of them.
        """
        cap = self.max_cost or self.agent.max_cost
        if cap is None:
            return
        ledger = agents.Budget(max_cost=cap, prices=self.prices)
        for model in models:
            ledger.check_priced(model)
