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
from typing import Any, Unpack

from typing_extensions import TypeVar

from agents import AcceptanceCheck, ChatModel, ConfigurationError, Executor, Tool
from agents.approvals import Approver, Decide, Decision
from agents.effects import Effects
from agents.errors import ReplayDrift
from agents.executor import Configured
from agents.models import OutputSpec
from agents.tools import Toolbox
from memory import Compactor, FactStore, Journal
from memory.facts import Fact, FactKind
from orchestrator._config import RunConfig, RunOptions
from orchestrator._durable import ReplayReport
from orchestrator._run_stream import RunStream, drain
from orchestrator._state import RunResult

__all__ = ["Orchestrator", "RunStream"]

T = TypeVar("T", default=Any)
"""A run's output type: what `output_type=` names, Any without one."""


class Orchestrator(Configured):
    """Plans a goal into subtasks, runs them in concurrent sub-agents, replans, and synthesises.

    ```python
    orch = Orchestrator(model, [search_docs], config=RunConfig(limits=Limits(deadline_s=120)))
    result = await orch.run("goal")
    ```

    What a run is (limits, prompts, review and question policy, ...) is its `RunConfig`; what
    one run is given besides (an approver, the effect boundary, event options) goes to `run`,
    `stream`, `resume` or `replay` (`RunOptions`). The Orchestrator keeps what outlives a run.

    Args:
        model: The model of the sub-agents (and of the planner, unless `planner_model` is given).
        tools: The tools, or a `Toolbox` whose breakers are shared with other users.
        config: What its runs are, unless a run is given its own (`RunConfig()` by default).
        planner_model: A separate model for planning and synthesis.
        acceptance: A check every sub-agent's final answer must pass.
        compactor: Keeps every sub-agent's history under a token budget.
        facts: Long-term facts; those of the run's `scope` are read once at the start of each
            run and shown to the planner and every sub-agent (once per run, so prompt prefixes
            stay stable), and what tools declare worth remembering (`@tool(facts=...)`) is
            stored there.
        journal: Record every run here (an open `Journal`), which makes `resume` and `replay`
            possible; each run's configuration is recorded with it (`RunInfo.config`).
    """

    def __init__(
        self,
        model: ChatModel,
        tools: Iterable[Tool] | Toolbox = (),
        *,
        config: RunConfig | None = None,
        planner_model: ChatModel | None = None,
        acceptance: AcceptanceCheck | None = None,
        compactor: Compactor | None = None,
        facts: FactStore | None = None,
        journal: Journal | None = None,
    ) -> None:
        self.model = model
        self.planner_model = planner_model or model
        self.toolbox = tools if isinstance(tools, Toolbox) else Toolbox(tools)
        self._keep(
            {
                "model": model, "tools": self.toolbox, "config": config,
                "planner_model": planner_model, "acceptance": acceptance,
                "compactor": compactor, "facts": facts, "journal": journal,
            }
        )  # fmt: skip
        self.config = config or RunConfig()
        self.acceptance = acceptance
        self.compactor = compactor
        self.facts = facts
        self.journal = journal
        self._seal()

    def executor(
        self,
        config: RunConfig | None = None,
        *,
        approver: Approver | Decide | None = None,
        effects: Effects | None = None,
    ) -> Executor:
        """The executor a run's sub-agents use under `config` (default: the Orchestrator's).
        It offers `report_issue` only when the run may replan: no one else acts on an issue
        (and a run does not offer it to a plan's sole subtask, whose issue nothing could use);
        its first look and its citations follow the tools unless `config` says otherwise."""
        config = config or self.config
        look = self.toolbox.first_look if config.first_look == "tools" else config.first_look
        return Executor(
            self.model,
            self.toolbox,
            instructions=config.instructions,
            limits=config.limits.agent,
            acceptance=self.acceptance,
            effects=effects,
            compactor=self.compactor,
            first_look=look,
            cite=self.toolbox.sourced if config.cite is None else config.cite,
            approver=approver,
            questions=config.questions,
            signals=config.limits.max_replans > 0,
        )

    def stream(
        self,
        goal: str,
        *,
        run_id: str | None = None,
        meta: dict[str, Any] | None = None,
        text: bool = False,
        output_type: type[T] | OutputSpec[T] | None = None,
        **options: Unpack[RunOptions],
    ) -> RunStream[T]:
        """Run `goal`, as `async with orch.stream(goal) as events: async for event in events: ...`.

        Args:
            goal: What to do.
            run_id: The run's id (generated if omitted).
            meta: JSON data stored with the run in the journal (e.g. how to rebuild its tools).
            text: Also stream the models' text as it is generated (`TextDelta` events: each
                sub-agent's replies and the synthesis, by agent id), for chat-style displays.
            output_type: The type of the run's answer (a pydantic model, a dataclass, a
                TypedDict, a `list[...]`, a primitive, or a union of them): the synthesis writes
                an object of it, validated, as `result.output` (see `agents.models.OutputSpec`).
            **options: This run's own configuration, approver, effects and event options
                (`RunOptions`).

        Raises:
            ConfigurationError: The goal is blank or not valid UTF-8 text, the output type has
                no JSON schema, the run's configuration asks for an approver it was not
                given, or it caps dollars (`Limits.max_cost`) and a model has no price.
        """
        if not goal.strip():
            raise ConfigurationError("the goal is empty: say what the run should do")
        if not goal.isascii():
            try:
                goal.encode("utf-8")
            except UnicodeEncodeError:
                raise ConfigurationError("the goal is not valid UTF-8 text") from None
        limits = (options.get("config") or self.config).limits
        limits.check_priced(self.model.name, self.planner_model.name)
        run_id = run_id or uuid.uuid4().hex[:12]
        return RunStream(
            self, goal, run_id, meta=meta, text=text, options=options, output_type=output_type
        )

    async def run(
        self,
        goal: str,
        *,
        run_id: str | None = None,
        meta: dict[str, Any] | None = None,
        output_type: type[T] | OutputSpec[T] | None = None,
        **options: Unpack[RunOptions],
    ) -> RunResult[T]:
        """Run `goal` to the end and return the result (see `stream`); with `output_type` T,
        a `RunResult[T]` whose `output` is the answer as a T.

        Raises:
            ConfigurationError: The goal is blank or not valid UTF-8 text, the output type has
                no JSON schema, or the run's configuration asks for an approver it was not
                given.
        """
        stream = self.stream(goal, run_id=run_id, meta=meta, output_type=output_type, **options)
        return await drain(stream)

    def stream_resume(
        self,
        run_id: str,
        *,
        text: bool = False,
        decisions: Mapping[str, Decision] | None = None,
        output_type: type[Any] | OutputSpec[Any] | None = None,
        **options: Unpack[RunOptions],
    ) -> RunStream[Any]:
        """Continue a crashed or paused run, as a stream: the same run id and goal, recorded
        results first (nothing completed runs again), then live. Its events are the whole run's
        (with `text`, the recorded replies' text too, in the pieces it first came in).

        Args:
            run_id: The run.
            text: Stream the models' text too (see `stream`).
            decisions: For a paused run, decisions on what it waits for, by approval id (taken
                in the journal first: of two people deciding one approval, one wins).
            output_type: The run's output type, as it was given (see `stream`).
            **options: As the run was given them (`RunOptions`); its approver may differ.
                Without `config`, the run goes on under the configuration it was recorded with.

        Raises:
            ConfigurationError: The orchestrator has no journal.
            RunLocked: Another live process holds the run (raised when the stream starts).
            JournalError: The run is unknown or already ended, or a decision is for an approval
                it does not wait for (raised when the stream starts).
        """
        self._needs_journal("resume")
        return RunStream(
            self, "", run_id, mode="resume", text=text, decisions=decisions, options=options,
            output_type=output_type,
        )  # fmt: skip

    def stream_replay(
        self,
        run_id: str,
        *,
        text: bool = False,
        output_type: type[Any] | OutputSpec[Any] | None = None,
        **options: Unpack[RunOptions],
    ) -> RunStream[Any]:
        """Re-run a recorded run offline, as a stream of its events (see `replay`): with `text`,
        the same text deltas it streamed live.

        Raises:
            ConfigurationError: The orchestrator has no journal.
        """
        self._needs_journal("replay")
        return RunStream(
            self, "", run_id, mode="replay", text=text, options=options, output_type=output_type
        )

    async def resume(
        self,
        run_id: str,
        *,
        decisions: Mapping[str, Decision] | None = None,
        output_type: type[Any] | OutputSpec[Any] | None = None,
        **options: Unpack[RunOptions],
    ) -> RunResult[Any]:
        """Continue a crashed or paused run to its end, or its next pause (see `stream_resume`)."""
        stream = self.stream_resume(run_id, decisions=decisions, output_type=output_type, **options)
        return await drain(stream)

    async def replay(
        self,
        run_id: str,
        *,
        output_type: type[Any] | OutputSpec[Any] | None = None,
        **options: Unpack[RunOptions],
    ) -> ReplayReport:
        """Re-run a recorded run offline from the journal: no model, tool or clock is touched.

        The orchestrator and the options must be as they were (same tools and approver); the
        run's configuration is the one it was recorded with, unless `config=` says otherwise.
        The first effect asked for that differs from the recording stops the replay and is
        reported.

        Raises:
            ConfigurationError: The orchestrator has no journal.
            JournalError: The run is unknown.
        """
        stream = self.stream_replay(run_id, output_type=output_type, **options)
        try:
            await drain(stream)
        except* ReplayDrift:
            pass  # reported below, from the effects that saw it
        return ReplayReport(run_id=run_id, result=stream.ended_with, drift=tuple(stream.drift))

    def _needs_journal(self, what: str) -> Journal:
        if self.journal is None:
            raise ConfigurationError(f"{what}() needs Orchestrator(journal=...)")
        return self.journal

    async def remember(
        self, key: str, value: str, *, kind: FactKind = "preference", scope: str | None = None
    ) -> None:
        """Store a fact the user committed to (a budget, a preference) for `scope`'s runs
        (default: the configuration's scope).

        Raises:
            ConfigurationError: The orchestrator has no fact store.
        """
        if self.facts is None:
            raise ConfigurationError("remember() needs Orchestrator(facts=...)")
        await self.facts.put(Fact.from_user(scope or self.config.scope, key, value, kind=kind))
