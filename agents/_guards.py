"""Guards: the limits every loop obeys, the shared budget ledger, and loop detection.

Budgets are data. A `Budget` is a ledger with optional caps on tokens, dollars, model requests and
tool calls, and an absolute deadline; a child ledger (a sub-agent's) charges its parent too, so
one run has one budget however many agents spend it, and a child is never allowed more than its
parent has left.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

from agents.models._model import ModelResponse, Usage
from agents.models._prices import PRICES, Price, require_price

__all__ = ["AgentLimits", "Budget", "LoopDetector", "StopReason"]

StopReason = Literal[
    "steps", "deadline", "tokens", "cost", "requests", "tool_calls", "stuck", "error"
]
"""Why a sub-agent stopped before answering: the limit it reached, a loop, or an error."""


class AgentLimits(BaseModel):
    """The exits of one agent's loop. None means no cap of that kind.

    Attributes:
        max_steps: Model turns (decide, act, observe) before the agent wraps up.
        deadline_s: Wall-clock seconds for the whole agent run.
        max_tokens: Prompt plus completion tokens.
        max_cost: Dollars of model calls (priced as `agents.models.Price` says).
        max_tool_calls: Tool calls.
        max_requests: Model requests.
    """

    model_config = ConfigDict(frozen=True)

    max_steps: int = Field(default=12, ge=1)
    deadline_s: float | None = Field(default=None, gt=0)
    max_tokens: int | None = Field(default=None, ge=1)
    max_cost: float | None = Field(default=None, gt=0)
    max_tool_calls: int | None = Field(default=None, ge=0)
    max_requests: int | None = Field(default=None, ge=1)


class Caps(Protocol):
    """Limits a ledger can be made from (`AgentLimits`, `orchestrator.Limits`)."""

    @property
    def deadline_s(self) -> float | None: ...
    @property
    def max_tokens(self) -> int | None: ...
    @property
    def max_cost(self) -> float | None: ...
    @property
    def max_requests(self) -> int | None: ...
    @property
    def max_tool_calls(self) -> int | None: ...


@dataclass(kw_only=True, slots=True)
class Budget:
    """A spending ledger with caps, optionally nested in a parent ledger.

    Attributes:
        max_tokens: Token cap, or None.
        max_cost: Dollar cap, or None.
        max_requests: Model request cap, or None.
        max_tool_calls: Tool call cap, or None.
        deadline: Absolute clock time (seconds) by which work must end, or None.
        prices: Prices over the public table (`agents.models.PRICES`) for the calls charged here; a
            ledger without its own uses its parent's.
        parent: The ledger this one also charges.
        used: What this ledger has been charged.
    """

    max_tokens: int | None = None
    max_cost: float | None = None
    max_requests: int | None = None
    max_tool_calls: int | None = None
    deadline: float | None = None
    prices: Mapping[str, Price] | None = None
    parent: Budget | None = None
    used: Usage = field(default_factory=Usage)

    @classmethod
    def from_limits(
        cls,
        limits: Caps,
        *,
        now: float,
        parent: Budget | None = None,
        prices: Mapping[str, Price] | None = None,
    ) -> Budget:
        """A ledger for `limits` (an agent's, a run's or a batch's) starting at `now`, nested in
        `parent`: the one place limits become a ledger."""
        deadline = None if limits.deadline_s is None else now + limits.deadline_s
        return cls(
            max_tokens=limits.max_tokens,
            max_cost=limits.max_cost,
            prices=prices,
            max_requests=limits.max_requests,
            max_tool_calls=limits.max_tool_calls,
            deadline=deadline,
            parent=parent,
        )

    def charge(self, usage: Usage) -> None:
        """Record spending here and in every ancestor."""
        ledger: Budget | None = self
        while ledger is not None:
            ledger.used = ledger.used + usage
            ledger = ledger.parent

    def charged(self, response: ModelResponse, model: str) -> ModelResponse:
        """`response` with its usage's `cost`, priced as the endpoint's answering model (else
        `model`, the name of the one that sent it) under this chain's price table, and charged
        here and in every ancestor."""
        usage = self.spend(response.usage, response.model, model)
        return response if usage is response.usage else response.model_copy(update={"usage": usage})

    def spend(self, usage: Usage, *models: str) -> Usage:
        """Charge `usage` (a reply's, or one that could not be read: billed all the same) here and
        in every ancestor, priced as the first of `models` the table prices; what was charged."""
        spent = self.priced_usage(usage, *models)
        self.charge(spent)
        return spent

    def priced_usage(self, usage: Usage, *models: str) -> Usage:
        """`usage` with its `cost`, priced as the first of `models` this chain's table prices
        (unchanged when it prices none)."""
        table = self.price_table()
        price = next((p for m in models if m and (p := Price.of(m, table)) is not None), None)
        if price is None:
            return usage
        cost = price.dollars(usage.prompt_tokens, usage.cached_tokens, usage.completion_tokens)
        return usage.model_copy(update={"cost": cost})

    def price_table(self) -> Mapping[str, Price]:
        """The public table with the nearest ledger's own prices over it (names in any case)."""
        own = next((b.prices for b in self._chain() if b.prices is not None), None)
        return PRICES if not own else {**PRICES, **{k.lower(): p for k, p in own.items()}}

    def check_priced(self, model: str) -> None:
        """Check that a chain with a dollar cap can price `model`'s calls.

        Raises:
            ConfigurationError: It has no price for them: the cap could never be reached.
        """
        if any(b.max_cost is not None for b in self._chain()):
            require_price(model, self.price_table())

    def exhausted(self, now: float) -> StopReason | None:
        """The first cap reached here or in an ancestor, or None."""
        ledger: Budget | None = self
        while ledger is not None:
            reason = ledger._own_exhaustion(now)
            if reason:
                return reason
            ledger = ledger.parent
        return None

    def time_left(self, now: float) -> float | None:
        """Seconds until the nearest deadline in the chain (never negative), or None."""
        deadline = self.nearest_deadline()
        return None if deadline is None else max(0.0, deadline - now)

    def tool_calls_left(self) -> int | None:
        """Tool calls still allowed by the tightest cap in the chain, or None."""
        caps = [
            b.max_tool_calls - b.used.tool_calls
            for b in self._chain()
            if b.max_tool_calls is not None
        ]
        return max(0, min(caps)) if caps else None

    def requests_left(self) -> int | None:
        """Model requests still allowed by the tightest cap in the chain, or None."""
        caps = [
            b.max_requests - b.used.requests for b in self._chain() if b.max_requests is not None
        ]
        return max(0, min(caps)) if caps else None

    def nearest_deadline(self) -> float | None:
        """The earliest deadline in the chain (absolute clock time), or None."""
        deadlines = [b.deadline for b in self._chain() if b.deadline is not None]
        return min(deadlines) if deadlines else None

    def cost_left(self) -> float | None:
        """Dollars still allowed by the tightest cap in the chain, or None."""
        caps = [b.max_cost - b.used.cost for b in self._chain() if b.max_cost is not None]
        return max(0.0, min(caps)) if caps else None

    def tokens_left(self) -> int | None:
        """Tokens still allowed by the tightest cap in the chain, or None."""
        caps = [
            b.max_tokens - b.used.total_tokens for b in self._chain() if b.max_tokens is not None
        ]
        return max(0, min(caps)) if caps else None

    def _chain(self) -> list[Budget]:
        chain: list[Budget] = []
        ledger: Budget | None = self
        while ledger is not None:
            chain.append(ledger)
            ledger = ledger.parent
        return chain

    def _own_exhaustion(self, now: float) -> StopReason | None:
        if self.deadline is not None and now >= self.deadline:
            return "deadline"
        if self.max_tokens is not None and self.used.total_tokens >= self.max_tokens:
            return "tokens"
        if self.max_cost is not None and self.used.cost >= self.max_cost:
            return "cost"
        if self.max_requests is not None and self.used.requests >= self.max_requests:
            return "requests"
        if self.max_tool_calls is not None and self.used.tool_calls >= self.max_tool_calls:
            return "tool_calls"
        return None


@dataclass(kw_only=True, slots=True)
class LoopDetector:
    """Notices an agent going round in circles.

    Four patterns: the same tool with the same normalised arguments again within `window` calls
    (after a failed call, `retries` repeats are a retry, not a loop); A-B-A-B ping-pong between two
    turns; the same tool on the same target failing `counter_failures` times with only a number
    changed (chunk 0, 1, 2... of a document that does not exist); and `stale_turns` turns in a row
    whose observations were all seen before (nothing new learned).

    Attributes:
        window: How many recent calls a repeat is looked for in.
        stale_turns: Turns in a row with nothing new that count as stuck.
        retries: Repeats of a call that just failed that count as retries.
        counter_failures: Failures on one target, numbers aside, that count as stuck.
    """

    window: int = 6
    stale_turns: int = 2
    retries: int = 1
    counter_failures: int = 3
    _calls: list[str] = field(default_factory=list)  # the last `window` calls' keys
    _turns: list[str] = field(default_factory=list)
    _seen: set[str] = field(default_factory=set)
    _stale: int = 0
    _failures: dict[str, int] = field(default_factory=dict)
    _target_failures: dict[str, int] = field(default_factory=dict)

    def observe(
        self,
        calls: Sequence[tuple[str, str]],
        observations: Sequence[str],
        failed: Sequence[bool] = (),
    ) -> str | None:
        """Record one turn: its (tool, arguments) pairs, observation digests and failures.

        Returns:
            A plain description of the loop, if the turn completes one.
        """
        keys = [f"{name}:{_normalise(arguments)}" for name, arguments in calls]
        recent = set(self._calls)
        repeated = [k for k in keys if k in recent and not self._retrying(k)]
        self._calls = [*self._calls, *keys][-self.window :] if self.window > 0 else []
        self._turns.append("|".join(sorted(keys)))
        fresh = [o for o in observations if o not in self._seen]
        self._seen.update(observations)
        self._stale = 0 if fresh or not observations else self._stale + 1
        flailing = self._count_failures(keys, list(failed) or [False] * len(keys))
        t = self._turns
        if len(t) >= 4 and t[-1] == t[-3] and t[-2] == t[-4] and t[-1] != t[-2]:
            return "you are alternating between the same two actions (A-B-A-B)"
        if repeated:
            name = repeated[0].split(":", 1)[0]
            return f"you already called {name} with these same arguments"
        if flailing:
            return (
                f"{flailing} failed {self.counter_failures} times on the same target with only a "
                "number changed"
            )
        if self._stale >= self.stale_turns:
            return f"your last {self._stale} turns returned nothing you had not already seen"
        return None

    def _retrying(self, key: str) -> bool:
        return 0 < self._failures.get(key, 0) <= self.retries

    def _count_failures(self, keys: list[str], failed: list[bool]) -> str | None:
        """Update the failure counts; the tool now flailing on one target, if any."""
        flailing = None
        for key, bad in zip(keys, failed, strict=False):
            target = _NUMBER.sub("#", key)
            self._failures[key] = self._failures.get(key, 0) + 1 if bad else 0
            self._target_failures[target] = self._target_failures.get(target, 0) + 1 if bad else 0
            if self._target_failures[target] >= self.counter_failures:
                flailing = key.split(":", 1)[0]
        return flailing


_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?![\w.])")


def _normalise(arguments: str) -> str:
    """Arguments as a canonical string: sorted keys, case and whitespace folded."""
    try:
        value: Any = json.loads(arguments or "{}")
    except (json.JSONDecodeError, RecursionError):
        return " ".join(arguments.lower().split())
    return json.dumps(_fold(value), sort_keys=True, separators=(",", ":"))


def _fold(value: Any) -> Any:
    if isinstance(value, str):
        return " ".join(value.lower().split())
    if isinstance(value, dict):
        return {k: _fold(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_fold(v) for v in value]
    return value
