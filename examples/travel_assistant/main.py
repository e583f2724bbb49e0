"""Travel assistant: tools that fail the way real APIs do, and a run that routes around them.

The PAOR loop's Act and Observe layers in full: a call whose argument names or values are near
misses is bound before it runs (`temp_unit="c"` runs as `unit="celsius"`, and the model is told);
every result the model reads starts with one line of what ran and how it ended (`[OBSERVE]
get_weather("Porto", "2025-06-14", "celsius") failed (timeout) 2000ms`); and an agent that lacks
something only the traveller knows asks (`ask_user`): "What is your budget?" is answered by the
example's scripted traveller (`Traveller`), a person at a terminal in a real assistant.

Three tools over fake travel services, each failing in a fixed, repeatable pattern:

- `get_weather` calls a forecast API in the middle of an outage: odd-numbered requests stall until
  the tool's timeout gives up on them, even-numbered ones are refused with HTTP 403. After
  `BREAKER_THRESHOLD` failures in a row its circuit breaker opens: the tool leaves the menu of every
  agent for `BREAKER_COOLDOWN` seconds, the model is told why, and the planner sees it as
  unavailable.
- `search_flights` answers 200 with no flights for some routes (Lisbon to Porto among them). Its
  success check, `not_empty`, turns that empty answer into a failure the model reads, instead of
  a "success" it might build on.
- `book_train` is the fallback: it always has a seat.

The events of the run are printed as they stream, then the final answer.

    python examples/travel_assistant/main.py

The model is the endpoint in OPENAI_BASE_URL / OPENAI_API_KEY / PAOR_MODEL if one is set, else the
embedded local model.
"""

from __future__ import annotations

import hashlib
import logging
import sys
from dataclasses import dataclass, field
from typing import Any, Literal

import anyio

import agents
from agents import ChatModel, PaorError, ToolContext, ToolFailure, open_model, tool
from agents.approvals import ApprovalRequest, Decision
from agents.events import ApprovalDecided, ApprovalRequested, BreakerOpened, ToolCalled
from agents.tools import Toolbox, not_empty
from orchestrator import Event, Limits, Orchestrator, RunConfig, RunResult
from orchestrator.events import (
    PlanCreated,
    Replanned,
    RunFinished,
    SubtaskFailed,
    SubtaskFinished,
    SubtaskStarted,
)

GOAL = (
    "I am in Lisbon and want to spend the weekend of 14-15 June 2025 in Porto. Two things, which "
    "can be done in parallel: check the weather forecast for Porto that weekend (get_weather); and "
    "get me from Lisbon to Porto on Saturday 2025-06-14 within my budget (ask me for it), by "
    "plane if search_flights finds a flight, otherwise book a train (book_train)."
)
BUDGET = "At most 120 EUR."
QUESTIONS = 1  # clarifying questions the run may ask the traveller
WEATHER_TIMEOUT = 2.0  # seconds before a forecast request is abandoned
BREAKER_THRESHOLD = 2  # failures in a row that take a tool off the menu
BREAKER_COOLDOWN = 300.0  # seconds it stays off
LIMITS = Limits(
    max_subtasks=3,
    max_replans=1,
    deadline_s=300,
    agent=agents.AgentLimits(max_steps=6),
)

# What the flight API returns per route: the fields the model needs, and the noise it does not.
_FLIGHTS: dict[tuple[str, str], list[dict[str, Any]]] = {
    ("lisbon", "madrid"): [
        {
            "flight": "IB 3105",
            "departs": "07:10",
            "arrives": "09:25",
            "price_eur": 89.0,
            "fare_basis": "OLOWES1",
            "request_id": "f3a9c1e2",
            "cache_ttl": 120,
        },
        {
            "flight": "TP 1016",
            "departs": "13:45",
            "arrives": "16:00",
            "price_eur": 134.0,
            "fare_basis": "KCLSTP",
            "request_id": "f3a9c1e2",
            "cache_ttl": 120,
        },
    ],
    ("lisbon", "porto"): [],  # the feed has no direct flights that day: a 200 with nothing in it
    ("porto", "lisbon"): [],
}
_FLIGHT_FIELDS = ("flight", "departs", "arrives", "price_eur")
_TRAINS: dict[tuple[str, str], dict[str, Any]] = {
    ("lisbon", "porto"): {
        "train": "Alfa Pendular 121 (Lisboa Santa Apolonia - Porto Campanha)",
        "departs": "08:39",
        "arrives": "11:27",
        "price_eur": 31.4,
    },
    ("porto", "lisbon"): {
        "train": "Alfa Pendular 134 (Porto Campanha - Lisboa Santa Apolonia)",
        "departs": "18:52",
        "arrives": "21:44",
        "price_eur": 31.4,
    },
}


@dataclass(kw_only=True, slots=True)
class WeatherOutage:
    """A forecast API mid-outage: odd-numbered requests stall, even-numbered ones get HTTP 403."""

    requests: int = 0

    async def forecast(self, city: str, date: str) -> dict[str, Any]:
        """Never answers: stalls (the caller's timeout ends it) or raises `ToolFailure`."""
        self.requests += 1
        if self.requests % 2:
            await anyio.sleep_forever()  # the gateway holds the connection; only a timeout helps
        raise ToolFailure(
            f"HTTP 403: Forbidden for {city} on {date}: the failover region rejects this API key"
        )


@dataclass(kw_only=True, slots=True)
class Traveller:
    """The example's scripted traveller: answers what the assistant asks, as a person would at
    a terminal (a budget question gets the budget; anything else, that they do not know)."""

    asked: list[str] = field(default_factory=list)

    async def __call__(self, request: ApprovalRequest) -> Decision:
        """Answer a question (the example's tools need no approval)."""
        self.asked.append(request.description)
        if any(word in request.description.lower() for word in ("budget", "price", "spend")):
            return Decision.answer(BUDGET)
        return Decision.answer("I don't know; decide for me.")


def travel_tools(*, weather_timeout: float = WEATHER_TIMEOUT) -> Toolbox:
    """The travel tools over fresh fake services, in a toolbox with touchy breakers."""
    weather = WeatherOutage()

    async def get_weather(
        city: str, date: str, unit: Literal["celsius", "fahrenheit"] = "celsius"
    ) -> dict[str, Any]:
        """Get the weather forecast for a city on one day.

        Args:
            city: The city, e.g. "Porto".
            date: The day, as YYYY-MM-DD.
            unit: The temperature unit.
        """
        return await weather.forecast(city, date)

    async def search_flights(
        origin: str, destination: str, date: str, max_price: float
    ) -> list[dict[str, Any]]:
        """Search direct flights on one day, cheapest first.

        Args:
            origin: The departure city.
            destination: The arrival city.
            date: The day, as YYYY-MM-DD.
            max_price: The highest fare to show, in EUR.
        """
        found = _FLIGHTS.get(_route(origin, destination), [])
        return sorted((f for f in found if f["price_eur"] <= max_price), key=_price)

    async def book_train(
        origin: str, destination: str, date: str, ctx: ToolContext
    ) -> dict[str, Any]:
        """Book a seat on the first direct train of the day (a real booking: call it once).

        Args:
            origin: The departure city.
            destination: The arrival city.
            date: The day, as YYYY-MM-DD.
        """
        train = _TRAINS.get(_route(origin, destination))
        if train is None:
            raise ToolFailure(f"no direct train from {origin} to {destination}")
        # The idempotency key is stable across retries of this call: a retry cannot book twice.
        reference = hashlib.sha256(ctx.idempotency_key.encode()).hexdigest()[:8].upper()
        return {"booking": f"CP-{reference}", "date": date, **train}

    return Toolbox(
        [
            tool(timeout=weather_timeout, synonyms=_UNITS)(get_weather),
            tool(timeout=10.0, success=not_empty, fields=_FLIGHT_FIELDS)(search_flights),
            tool(timeout=10.0, side_effects=True)(book_train),
        ],
        breaker_threshold=BREAKER_THRESHOLD,
        breaker_cooldown=BREAKER_COOLDOWN,
    )


_UNITS = {"unit": {"c": "celsius", "f": "fahrenheit"}}  # what a model may write for a unit


def _route(origin: str, destination: str) -> tuple[str, str]:
    return origin.strip().lower(), destination.strip().lower()


def _price(flight: dict[str, Any]) -> float:
    return float(flight["price_eur"])


async def run(
    model: ChatModel,
    *,
    goal: str = GOAL,
    weather_timeout: float = WEATHER_TIMEOUT,
    traveller: Traveller | None = None,
) -> RunResult:
    """Plan and run the trip with `model`, printing each event as it streams; the traveller
    answers the assistant's questions."""
    orch = Orchestrator(
        model,
        travel_tools(weather_timeout=weather_timeout),
        config=RunConfig(limits=LIMITS, questions=QUESTIONS),
    )
    async with orch.stream(goal, approver=traveller or Traveller()) as events:
        async for event in events:
            line = describe(event)
            if line is not None:
                print(line, flush=True)
    return events.result


def describe(event: Event) -> str | None:
    """One line for the events worth watching (None for the rest)."""
    match event:
        case PlanCreated(plan=plan):
            return "plan: " + "; ".join(f"{s.id}: {s.goal}" for s in plan.subtasks)
        case SubtaskStarted(subtask_id=subtask):
            return f"[{subtask}] started"
        case ToolCalled(agent_id=agent, tool=name, ok=ok, error_kind=error):
            return f"[{agent}] {name}: {'ok' if ok else _FAILURES.get(error or '', error)}"
        case BreakerOpened(agent_id=agent, tool=name, reason=reason):
            return f"[{agent}] BREAKER OPENED on {name}: {reason.splitlines()[-1]}"
        case ApprovalRequested(agent_id=agent, kind="question", request=request) if request:
            return f"[{agent}] asks the traveller: {request.description}"
        case ApprovalDecided(agent_id=agent, kind="question", message=said):
            return f"[{agent}] the traveller answers: {said}"
        case (
            SubtaskFinished(subtask_id=subtask, report=report)
            | SubtaskFailed(subtask_id=subtask, report=report)
        ):
            return f"[{subtask}] {report.status}: {report.answer}"
        case Replanned(diff=diff):
            return f"replanned (v{diff.version}) after {diff.trigger}: added {list(diff.added)}"
        case RunFinished(status=status, reason=reason):
            return f"run {status}" + (f" ({reason})" if reason else "")
        case _:
            return None


_FAILURES = {
    "timeout": "TIMED OUT",
    "failed": "FAILED",
    "rejected": "REJECTED by its success check (empty result)",
    "unavailable": "refused: breaker open",
}


def main() -> None:
    """Pick the model, run the trip, and print the answer."""
    # Errors only: the tools fail on purpose, and the events printed below already say so.
    logging.basicConfig(level=logging.ERROR, format="%(levelname)s %(name)s: %(message)s")
    try:
        result = anyio.run(_run_with_configured_model)
    except PaorError as exc:  # no usable plan, or no model: say so in one line
        sys.exit(f"travel_assistant: {exc}")
    print(f"\nanswer ({result.status}):\n{result.answer}")


async def _run_with_configured_model() -> RunResult:
    async with open_model() as model:
        return await run(model)


if __name__ == "__main__":
    main()
