"""What one benchmark run leaves behind, and the pieces every framework's runner shares."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import anyio

from agents import Usage
from benchmarks._sim import Exchange, Simulator, ToolExchange

__all__ = ["TOOL_DESCRIPTION", "Rendezvous", "RunRecord", "recording"]

TOOL_DESCRIPTION = "Look up one fact by its key."
KEY_DESCRIPTION = 'The fact\'s key, e.g. "a.0".'


@dataclass(kw_only=True, slots=True)
class RunRecord:
    """One framework's run of one scenario.

    Attributes:
        framework: One of `benchmarks._suite.FRAMEWORKS`, or "paor (no admission)".
        scenario: The scenario's name.
        transport: "http" or "inproc".
        wall_s: Seconds from the goal handed over to the answer returned.
        log: The simulator's model exchanges.
        tools: The simulator's tool exchanges (empty for a framework in another process).
        answer: The final answer, for a sanity check.
        usage: The tokens the framework itself counted, where it reports them.
        error: Why the run failed, if it did.
        read: The most characters of each lookup's result any prompt carried (`_facts.Reading`).
    """

    framework: str
    scenario: str
    transport: str
    wall_s: float = 0.0
    log: list[Exchange] = field(default_factory=list)
    tools: list[ToolExchange] = field(default_factory=list)
    answer: str = ""
    usage: Usage | None = None
    error: str | None = None
    read: dict[str, int] = field(default_factory=dict)


@contextmanager
def recording(record: RunRecord, sim: Simulator) -> Iterator[None]:
    """Around a framework's run: the simulator's logs go on `record` whatever happens, and a
    failure becomes its error (a peer giving up under a provider's limits is a figure: what it
    sent and what was refused count, not only that it failed)."""
    try:
        yield
    except Exception as exc:
        record.error = f"{type(exc).__name__}: {exc}"[:300]
    finally:
        record.log, record.tools, record.read = sim.log, sim.tools, sim.reading.read


class Rendezvous:
    """A tool body that holds every caller until `n` have arrived: proof they were all alive at once.

    Args:
        n: The callers to wait for.
        text: What each call returns.
    """

    def __init__(self, n: int, text: str) -> None:
        self.n = n
        self.text = text
        self.arrived = 0
        self._all_here = anyio.Event()

    async def __call__(self, key: str) -> str:
        """Arrive, and return once everyone has."""
        self.arrived += 1
        if self.arrived >= self.n:
            self._all_here.set()
        await self._all_here.wait()
        return f"{key}: {self.text}"
