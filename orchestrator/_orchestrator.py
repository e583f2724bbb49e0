"""`Orchestrator`: the public face of a run, as a result or as a stream of typed events.

`stream()` is the one code path: it returns an async context manager that runs the loop in its own
task group and hands back the receiving end of the event stream. `run()` drains that same stream.
Leaving the `async with` block early cancels the run, and so does cancelling the caller's scope:
both abandon it. `RunStream.cancel()` stops it and keeps its work: the running sub-agents end with
their partial reports and the run ends `incomplete`, with a synthesis of what exists.

With a journal every run is recorded; `resume()` continues a crashed run from its records and
`replay()` re-runs a recorded one offline. Both take the same code path, through `RunStream`.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping
from typing import Any, Literal

import anyio
from anyio.streams.memory import MemoryObjectSendStream

from agents import AcceptanceCheck, Budget, ChatModel, ConfigurationError, Executor, Tool
from agents.approvals import Approver, Decide, Decision, RunWaits
from agents.effects import (
    RUN_AGENT,
    Addresses,
    Effects,
    LiveEffects,
)
from agents.errors import ReplayDrift
from agents.executor import DEFAULT_INSTRUCTIONS, Configured, FirstLook
from agents.tools import Toolbox
from memory import Compactor, FactStore, Journal
from memory.facts import FactKind, render_facts, user_fact
from orchestrator._durable import ReplayReport
from orchestrator._events import Event
from orchestrator._limits import Limits
from orchestrator._planner import PLANNER_INSTRUCTIONS, SYNTHESIS_INSTRUCTIONS, Planner
from orchestrator._run import RunLoop
from orchestrator._run_stream import RunStream, drain
from orchestrator._state import RunDeps, RunResult, RunState

__all__ = ["Orchestrator", "RunStream"]

_FACTS_CHARS = 1500


class Orchestrator(Configured):
    """Plans a goal into subtasks, runs them in concurrent sub-agents, replans, and synthesises.

    Args:
        model: The model of the sub-agents (and of the planner, unless `planner_model` is given).
        tools: The tools, or a `Toolbox` whose breakers are shared with other users.
        limits: The run's budget and exits.
        planner_model: A separate model for planning and synthesis.
        instructions: The sub-agents' system prompt.
        planner_instructions: The planner's system prompt (`{max_subtasks}` is filled in).
        synthesis_instructions: The final writer's system prompt.
        acceptance: A check every sub-agent's final answer must pass.
        effects: The effect boundary (live by default).
        keep_events: Keep every event in `RunResult.events`.
        on_plan_failure: When no valid plan can be made: "fail" ends the run "failed" with the
            planner's problems as its reason, "single" runs the goal as one subtask (noted in
            `RunResult.notes`). Either way `run()` and `stream()` return; they never raise for a
            run's own failure.
        compactor: Keeps every sub-agent's history under a token budget.
        facts: Long-term facts; those of `scope` are read once at the start of each run and shown
            to the planner and every sub-agent (once per run, so prompt prefixes stay stable), and
            what tools declare worth remembering (`@tool(facts=...)`) is stored there.
        scope: The user or session whose facts apply.
        journal: Record every run here (an open `Journal`), which makes `resume` and `replay`
            possible.
        first_look: A tool call every sub-agent makes before its first decision, with its
            subtask's goal (`FirstLook("search_docs", "query")`).
        cite: Sub-agents' answers cite the sources they gathered (see `Executor`).
        ask_goal: Every first plan asks the goal itself: a subtask for it is put first when the
            planner left it out (the last subtask making room), and subtasks of one or two words
            are dropped, so a plan that strays still answers the question.
        approver: Decides on the calls of tools that need approval, for every sub-agent, and
            on the plans under `review` (see `agents.approvals`); a call approved "always" is
            so for the rest of the run. With `agents.approvals.PAUSE` the caller decides while
            the run streams (`RunStream.decide`), and a journaled run pauses once nothing but
            approvals is left: it ends "paused", and `resume(run_id, decisions=...)` goes on.
        review: Plans the approver reviews before they run: the "first" plan, or "every"
            version (each replan's too). A person may approve a plan, edit it (validated like
            the planner's) or reject it with feedback the planner reads (see
            `orchestrator._review`).
        questions: How many clarifying questions a run may ask the user, its planner's and
            its sub-agents' together (the approver answers; see `agents._signals`).
        direct_calls: The planner may write a subtask out as one tool call (`Subtask.call`),
            which then runs without a sub-agent's model calls (LLMCompiler's tasks).
        stream_plans: Stream the first plan, and start each subtask with no dependencies as
            soon as the planner has written it (LLMCompiler's trick); the plan is still
            validated whole, and an early start the final plan does not keep is stopped. For
            a hosted endpoint; off for a single local server, where early sub-agents would
            wait on the planner's slot. Live runs only (not journaled, nor in Temporal), and
            not with `review` or `questions`.

    Raises:
        ConfigurationError: `review` or `questions` without an `approver`.
    """

    def __init__(
        self,
        model: ChatModel,
        tools: Iterable[Tool] | Toolbox = (),
        *,
        limits: Limits | None = None,
        planner_model: ChatModel | None = None,
        instructions: str = DEFAULT_INSTRUCTIONS,
        planner_instructions: str = PLANNER_INSTRUCTIONS,
        synthesis_instructions: str = SYNTHESIS_INSTRUCTIONS,
        acceptance: AcceptanceCheck | None = None,
        effects: Effects | None = None,
        keep_events: bool = True,
        on_plan_failure: Literal["fail", "single"] = "fail",
        compactor: Compactor | None = None,
        facts: FactStore | None = None,
        scope: str = "default",
        journal: Journal | None = None,
        first_look: FirstLook | None = None,
        cite: bool = False,
        ask_goal: bool = False,
        approver: Approver | Decide | None = None,
        review: Literal["first", "every"] | None = None,
        questions: int = 0,
        direct_calls: bool = False,
        stream_plans: bool = False,
    ) -> None:
        if review is not None and approver is None:
            raise ConfigurationError("review= needs an approver= to ask (see agents.approvals)")
        if questions and approver is None:
            raise ConfigurationError("questions= needs an approver= to answer them")
        self.model = model
        self.planner_model = planner_model or model
        self.toolbox = tools if isinstance(tools, Toolbox) else Toolbox(tools)
        self._keep(
            {
                "model": model, "tools": self.toolbox, "limits": limits,
                "planner_model": planner_model, "instructions": instructions,
                "planner_instructions": planner_instructions,
                "synthesis_instructions": synthesis_instructions, "acceptance": acceptance,
                "effects": effects, "keep_events": keep_events,
                "on_plan_failure": on_plan_failure, "compactor": compactor, "facts": facts,
                "scope": scope, "journal": journal, "first_look": first_look, "cite": cite,
                "ask_goal": ask_goal, "approver": approver, "review": review,
                "questions": questions, "direct_calls": direct_calls,
                "stream_plans": stream_plans,
            }
        )  # fmt: skip
        self.limits = limits or Limits()
        self.planner_instructions = planner_instructions
        self.synthesis_instructions = synthesis_instructions
        self.effects: Effects = effects or LiveEffects()
        self.keep_events = keep_events
        self.on_plan_failure = on_plan_failure
        self.facts = facts
        self.scope = scope
        self.journal = journal
        self.ask_goal = ask_goal
        self.approver = Approver.of(approver)
        self.review = review
        self.questions = questions
        self.direct_calls = direct_calls
        self.stream_plans = stream_plans
        self.executor = Executor(
            model,
            self.toolbox,
            instructions=instructions,
            limits=self.limits.agent,
            acceptance=acceptance,
            effects=self.effects,
            compactor=compactor,
            first_look=first_look,
            cite=cite,
            approver=self.approver,
            questions=questions,
        )
        self._seal()

    def stream(
        self,
        goal: str,
        *,
        run_id: str | None = None,
        meta: dict[str, Any] | None = None,
        text: bool = False,
    ) -> RunStream:
        """Run `goal`, as `async with orch.stream(goal) as events: async for event in events: ...`.

        Args:
            goal: What to do.
            run_id: The run's id (generated if omitted).
            meta: JSON data stored with the run in the journal (e.g. how to rebuild its tools).
            text: Also stream the models' text as it is generated (`TextDelta` events: each
                sub-agent's replies and the synthesis, by agent id), for chat-style displays.

        Raises:
            ConfigurationError: The goal is blank, or not valid UTF-8 text.
        """
        if not goal.strip():
            raise ConfigurationError("the goal is empty: say what the run should do")
        if not goal.isascii():
            try:
                goal.encode("utf-8")
            except UnicodeEncodeError:
                raise ConfigurationError("the goal is not valid UTF-8 text") from None
        return RunStream(self, goal, run_id or uuid.uuid4().hex[:12], meta=meta, text=text)

    async def run(self, goal: str, *, run_id: str | None = None) -> RunResult:
        """Run `goal` to the end and return the result.

        Raises:
            ConfigurationError: The goal is blank, or not valid UTF-8 text.
        """
        return await drain(self.stream(goal, run_id=run_id))

    def stream_resume(
        self,
        run_id: str,
        *,
        text: bool = False,
        decisions: Mapping[str, Decision] | None = None,
    ) -> RunStream:
        """Continue a crashed or paused run, as a stream: the same run id and goal, recorded
        results first (nothing completed runs again), then live. Its events are the whole run's
        (with `text`, the recorded replies' text too, in the pieces it first came in).

        Args:
            run_id: The run.
            text: Stream the models' text too (see `stream`).
            decisions: For a paused run, decisions on what it waits for, by approval id (taken
                in the journal first: of two people deciding one approval, one wins).

        Raises:
            ConfigurationError: The orchestrator has no journal.
            RunLocked: Another live process holds the run (raised when the stream starts).
            JournalError: The run is unknown or already ended, or a decision is for an approval
                it does not wait for (raised when the stream starts).
        """
        self._needs_journal("resume")
        return RunStream(self, "", run_id, mode="resume", text=text, decisions=decisions)

    def stream_replay(self, run_id: str, *, text: bool = False) -> RunStream:
        """Re-run a recorded run offline, as a stream of its events (see `replay`): with `text`,
        the same text deltas it streamed live.

        Raises:
            ConfigurationError: The orchestrator has no journal.
        """
        self._needs_journal("replay")
        return RunStream(self, "", run_id, mode="replay", text=text)

    async def resume(
        self, run_id: str, *, decisions: Mapping[str, Decision] | None = None
    ) -> RunResult:
        """Continue a crashed or paused run to its end, or its next pause (see `stream_resume`)."""
        return await drain(self.stream_resume(run_id, decisions=decisions))

    async def replay(self, run_id: str) -> ReplayReport:
        """Re-run a recorded run offline from the journal: no model, tool or clock is touched.

        The orchestrator must be set up as it was (same tools, instructions and limits). The
        first effect asked for that differs from the recording stops the replay and is reported.

        Raises:
            ConfigurationError: The orchestrator has no journal.
            JournalError: The run is unknown.
        """
        stream = self.stream_replay(run_id)
        try:
            await drain(stream)
        except* ReplayDrift:
            pass  # reported below, from the effects that saw it
        return ReplayReport(run_id=run_id, result=stream.ended_with, drift=tuple(stream.drift))

    def _needs_journal(self, what: str) -> Journal:
        if self.journal is None:
            raise ConfigurationError(f"{what}() needs Orchestrator(journal=...)")
        return self.journal

    async def _loop(self, state: RunState, deps: RunDeps) -> RunResult:
        """Run the main loop over `state` with `deps` (the stream that made them holds them)."""
        effects = deps.effects
        executor = self.executor if effects is self.effects else self.executor.with_effects(effects)
        loop = RunLoop(
            executor=executor,
            toolbox=self.toolbox,
            deps=deps,
            max_replans=self.limits.max_replans,
            single_on_plan_failure=self.on_plan_failure == "single",
            facts=self.facts,
            scope=self.scope,
            stream_plans=self.stream_plans and type(effects) is LiveEffects,
        )
        return await loop.execute(state)

    async def _new_run(
        self,
        goal: str,
        run_id: str,
        send: MemoryObjectSendStream[Event],
        effects: Effects,
        waits: RunWaits,
    ) -> tuple[RunState, RunDeps]:
        """What a new (or resumed, or replayed) run knows, and what it uses."""
        limits = self.limits
        addresses = Addresses(run_id=run_id, agent_id=RUN_AGENT)
        now = await effects.now(addresses.next(step=0))
        budget = Budget(
            max_tokens=limits.max_tokens,
            max_requests=limits.max_requests,
            max_tool_calls=limits.max_tool_calls,
            deadline=None if limits.deadline_s is None else now + limits.deadline_s,
        )
        # Sub-agents stop early enough to leave the synthesis its share of the deadline.
        agent_deadline = (
            None
            if limits.deadline_s is None
            else now + limits.deadline_s * (1 - limits.synthesis_reserve)
        )
        planner = Planner(
            model=self.planner_model,
            effects=effects,
            run_id=run_id,
            budget=budget,
            tools=self.toolbox.descriptions(),
            max_subtasks=limits.max_subtasks,
            max_repairs=limits.max_plan_repairs,
            instructions=self.planner_instructions,
            synthesis_instructions=self.synthesis_instructions,
            ask_goal=self.ask_goal,
            calls=self.toolbox.signatures() if self.direct_calls else None,
            cite=self.executor.cite,
        )
        state = RunState(
            run_id=run_id,
            goal=goal,
            budget=budget,
            agent_budget=Budget(deadline=agent_deadline, parent=budget),
        )
        deps = RunDeps(
            effects=effects,
            addresses=addresses,
            planner=planner,
            events=send,
            limiter=anyio.CapacityLimiter(limits.max_concurrency),
            keep_events=self.keep_events,
            waits=waits,
            approver=self.approver,
            review=self.review,
            questions=self.questions,
        )
        # Read through the boundary: a replay sees the facts the run saw, whatever changed since.
        state.known = await deps.choose(state.step, self._known_facts)
        return state, deps

    async def remember(self, key: str, value: str, *, kind: FactKind = "preference") -> None:
        """Store a fact the user committed to (a budget, a preference) for this scope's runs.

        Raises:
            ConfigurationError: The orchestrator has no fact store.
        """
        if self.facts is None:
            raise ConfigurationError("remember() needs Orchestrator(facts=...)")
        await self.facts.put(user_fact(self.scope, key, value, kind=kind))

    async def _known_facts(self) -> str:
        if self.facts is None:
            return ""
        return render_facts(await self.facts.query(self.scope), _FACTS_CHARS)
