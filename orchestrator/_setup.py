"""What a run is set up with: its ledger, its planner, its sub-agents' executor and its loop.

`RunStream` calls `set_up` once its effects are known (live, journaled, or a workflow's): a new,
resumed or replayed run is set up the same way from the Orchestrator, the run's configuration
and what the run was given.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import anyio
from anyio.streams.memory import MemoryObjectSendStream

from agents import Budget, ChatModel, OpenAIChatModel
from agents.approvals import Approver, RunWaits
from agents.effects import Addresses, Effects, LiveEffects, ReservedAgent
from agents.models import OutputSpec, unwrapped
from memory.facts import Fact
from orchestrator._config import RunConfig
from orchestrator._events import Event
from orchestrator._planner import Planner
from orchestrator._run import RunLoop
from orchestrator._state import RunDeps, RunState

if TYPE_CHECKING:
    from orchestrator._orchestrator import Orchestrator

__all__ = ["RunSetup", "set_up", "with_model_defaults"]

_FACTS_CHARS = 1500
# What a sub-agent may pass on when the writer reads results whole: the most one tool result is.
_PASSED_CHARS = 65_536


@dataclass(frozen=True, slots=True)
class RunSetup:
    """A run ready to go: what it knows, what it uses, and the loop that drives it."""

    state: RunState
    deps: RunDeps
    loop: RunLoop


async def set_up(
    orch: Orchestrator,
    config: RunConfig,
    *,
    goal: str,
    run_id: str,
    events: MemoryObjectSendStream[Event],
    effects: Effects,
    approver: Approver | None,
    waits: RunWaits,
    keep_events: bool,
    text: bool = False,
    output: OutputSpec[Any] | None = None,
) -> RunSetup:
    """Set up a new (or resumed, or replayed) run of `orch` under `config`, through `effects`
    (with `text`, its synthesis streams its text; with `output`, its answer is an object of
    that type)."""
    limits = config.limits
    addresses = Addresses(run_id=run_id, agent_id=ReservedAgent.RUN)
    now = await effects.now(addresses.next(step=0))
    budget = Budget.from_limits(limits, now=now, prices=limits.prices)
    # Sub-agents stop early enough to leave the synthesis its share of the deadline.
    agent_deadline = (
        None
        if limits.deadline_s is None
        else now + limits.deadline_s * (1 - limits.synthesis_reserve)
    )
    executor = orch.executor(config, approver=approver, effects=effects)
    planner = Planner(
        model=orch.planner_model,
        effects=effects,
        run_id=run_id,
        budget=budget,
        tools=orch.toolbox.descriptions(),
        max_subtasks=limits.max_subtasks,
        max_repairs=limits.max_plan_repairs,
        instructions=config.planner_instructions,
        synthesis_instructions=config.synthesis_instructions,
        ask_goal=config.ask_goal,
        calls=orch.toolbox.signatures() if config.direct_calls else None,
        cite=executor.cite,  # what the sub-agents were told (on with sourced tools by default)
        schemas=config.typed_subtasks,
        result_chars=config.result_chars,
    )
    state = RunState(
        run_id=run_id,
        goal=goal,
        budget=budget,
        agent_budget=Budget(deadline=agent_deadline, parent=budget),
        result_chars=config.result_chars,
    )
    deps = RunDeps(
        effects=effects,
        addresses=addresses,
        planner=planner,
        events=events,
        limiter=anyio.CapacityLimiter(limits.max_concurrency),
        keep_events=keep_events,
        waits=waits,
        approver=approver,
        review=config.review,
        questions=config.questions,
    )
    facts = orch.facts

    async def known() -> str:
        if facts is None:
            return ""
        return Fact.render(await facts.query(config.scope), _FACTS_CHARS)

    # Read through the boundary: a replay sees the facts the run saw, whatever changed since.
    state.known = await deps.choose(state.step, known)
    loop = RunLoop(
        executor=executor,
        toolbox=orch.toolbox,
        deps=deps,
        max_replans=limits.max_replans,
        single_on_plan_failure=config.on_plan_failure == "single",
        direct_questions=config.direct_questions,
        facts=facts,
        scope=config.scope,
        stream_plans=_streams_plans(config, orch.planner_model) and type(effects) is LiveEffects,
        pass_results=_passed_chars(config, executor.model),
        text=text,
        output=output,
    )
    return RunSetup(state=state, deps=deps, loop=loop)


def _streams_plans(config: RunConfig, planner: ChatModel) -> bool:
    """Whether the first plan streams (`RunConfig.stream_plans`): as configured, else when the
    planner is a hosted endpoint."""
    return _hosted(planner) if config.stream_plans is None else config.stream_plans


def with_model_defaults(config: RunConfig, model: ChatModel) -> RunConfig:
    """`config` with the defaults that follow the sub-agents' model made explicit
    (`pass_results`), as a run records it: a replay or a resume then asks what the run asked,
    whatever model it is given."""
    if config.pass_results is not None:
        return config
    return config.model_copy(update={"pass_results": _hosted(model)})


def _passed_chars(config: RunConfig, model: ChatModel) -> int:
    """How much of its results a sub-agent that only gathers may pass on as its answer
    (`RunConfig.pass_results`): what the writer reads of a result; 0 when it may not."""
    on = _hosted(model) if config.pass_results is None else config.pass_results
    return (config.result_chars or _PASSED_CHARS) if on else 0


def _hosted(model: ChatModel) -> bool:
    """Whether `model` is a hosted endpoint (not a server on this machine, nor one's own)."""
    inner = unwrapped(model)
    return isinstance(inner, OpenAIChatModel) and not inner.local
