"""Prices: what a model call costs in dollars, read from a price table.

A run's ledger prices every model call it is charged (`Usage.cost`), so `RunResult.usage.cost`
and `AgentReport.usage.cost` say what the work cost, and `Limits(max_cost=...)` stops a run
into its partial answer once its calls cost that much, like any other limit.

A call is priced by the model the endpoint says answered it (`ModelResponse.model`: a dated
snapshot such as "gpt-4.1-mini-2025-04-14" is priced as "gpt-4.1-mini", a routed name such as
"openai/gpt-4.1-mini" as its last part), else by the name of the model that sent it, under the
table's longest matching name. Cached prompt tokens are billed at the cached-input price, as the
providers bill them. `PRICES` holds OpenAI's published standard-tier prices; a run's
`Limits(prices=...)` adds its own (a local model's, a negotiated rate) over them.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from types import MappingProxyType

from pydantic import BaseModel, ConfigDict, Field

from agents._errors import ConfigurationError

__all__ = ["PRICES", "Price", "require_price"]


class Price(BaseModel):
    """One model's price, in dollars per million tokens.

    Attributes:
        input: A prompt token.
        cached_input: A prompt token served from the provider's prompt cache (None: as `input`).
        output: A completion token.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    input: float = Field(ge=0)
    cached_input: float | None = Field(default=None, ge=0)
    output: float = Field(ge=0)

    def dollars(self, prompt: int, cached: int, completion: int) -> float:
        """The price of `prompt` input tokens (`cached` of them from the cache) and
        `completion` output tokens."""
        cached = min(cached, prompt)
        cached_rate = self.input if self.cached_input is None else self.cached_input
        fresh = prompt - cached
        return (fresh * self.input + cached * cached_rate + completion * self.output) / 1e6

    @staticmethod
    def of(name: str, table: Mapping[str, Price] | None = None) -> Price | None:
        """The price of model `name` under `table` (default `PRICES`): its own entry, else the
        longest entry it is a dated or suffixed version of ("gpt-4o-mini-2024-07-18" is
        "gpt-4o-mini", not "gpt-4o"); None when the table has none."""
        if table is None or table is PRICES:
            return _public_price(name)
        return _price_in(name, table)


def _price_in(name: str, table: Mapping[str, Price]) -> Price | None:
    name = name.rsplit("/", 1)[-1].strip().lower()
    if name in table:
        return table[name]
    matches = [key for key in table if name.startswith(f"{key}-")]
    return table[max(matches, key=len)] if matches else None


@functools.lru_cache(maxsize=64)
def _public_price(name: str) -> Price | None:
    """`Price.of` under the public table, which never changes: looked up once a model name."""
    return _price_in(name, PRICES)


def _p(input: float, cached_input: float, output: float) -> Price:
    return Price(input=input, cached_input=cached_input, output=output)


PRICES: Mapping[str, Price] = MappingProxyType(
    {
        "gpt-5": _p(1.25, 0.125, 10.00),
        "gpt-5-mini": _p(0.25, 0.025, 2.00),
        "gpt-5-nano": _p(0.05, 0.005, 0.40),
        "gpt-4.1": _p(2.00, 0.50, 8.00),
        "gpt-4.1-mini": _p(0.40, 0.10, 1.60),
        "gpt-4.1-nano": _p(0.10, 0.025, 0.40),
        "gpt-4o": _p(2.50, 1.25, 10.00),
        "gpt-4o-mini": _p(0.15, 0.075, 0.60),
        "o3": _p(2.00, 0.50, 8.00),
        "o4-mini": _p(1.10, 0.275, 4.40),
    }
)
"""OpenAI's published standard-tier prices (dollars per million tokens, as of August 2025);
the benchmark suite prices its runs with the same table."""


def require_price(name: str, table: Mapping[str, Price]) -> None:
    """Check that a run with a dollar cap can price model `name`.

    Raises:
        ConfigurationError: The table has no price for it: the cap could never be reached.
    """
    if Price.of(name, table) is None:
        raise ConfigurationError(
            f"max_cost needs a price for model {name!r}, and the price table has none: "
            f"pass Limits(prices={{{name!r}: Price(input=..., output=...)}})"
        )
