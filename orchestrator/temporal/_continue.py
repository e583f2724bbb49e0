"""Long sub-agents continue as new before their history reaches Temporal's limits.

A workflow's history is capped (about 50,000 events or 50 MB), and a sub-agent adds a few events
per model and tool call. Before a model call (a step boundary: no tool is in flight), a sub-agent
whose history is long enough continues as new, carrying the effect records of its run so far. The
new run replays them through `JournaledEffects`, exactly as a crashed run resumes from its
journal: the executor retraces its steps without calling anything, then goes on live. Nothing
that completed runs again, and the report is the one an uninterrupted run would have written.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from agents import ChatModel
    from agents.effects import EffectSite, JournaledEffects, JournalMode
    from agents.models import ModelRequest, ModelResponse
    from memory.journal import EffectRecord
    from orchestrator.temporal._effects import TemporalEffects
    from orchestrator.temporal._inputs import AgentInput

__all__ = ["CarriedRecords", "ContinuingEffects"]

_Key = tuple[str, int, str]


class CarriedRecords:
    """A sub-agent's effect records, kept in its workflow's memory (a `RecordSink`)."""

    def __init__(self, records: Iterable[EffectRecord] = ()) -> None:
        self._records: dict[_Key, EffectRecord] = {_key(r): r for r in records}

    async def append(self, run_id: str, record: EffectRecord) -> None:
        """Keep `record` (replacing one at the same address)."""
        self._records[_key(record)] = record

    async def forget(self, run_id: str, agent_id: str, from_seq: int) -> None:
        """Drop the agent's records from `from_seq` on, and its stop record."""
        for key in [k for k in self._records if k[0] == agent_id]:
            if key[1] >= from_seq or EffectRecord.is_stop(key[1], key[2]):
                del self._records[key]

    def records(self) -> tuple[EffectRecord, ...]:
        """Every record kept, in the order first written."""
        return tuple(self._records.values())


class ContinuingEffects(JournaledEffects):
    """A sub-agent's effects on Temporal, recorded so that it can continue as new.

    Args:
        inner: The activities.
        given: The sub-agent's input (its `carried` records are served first).
        stopping: Whether the sub-agent was asked to stop (it then finishes in this run).
    """

    def __init__(
        self, inner: TemporalEffects, given: AgentInput, stopping: Callable[[], bool]
    ) -> None:
        self._log = CarriedRecords(given.carried)
        mode: JournalMode = "resume" if given.carried else "record"
        super().__init__(inner, self._log, given.run.run_id, mode=mode, records=given.carried)
        self._given = given
        self._stopping = stopping

    async def model_call(
        self, site: EffectSite, model: ChatModel, request: ModelRequest
    ) -> ModelResponse:
        """Continue as new first if the history is long enough; then ask (or serve) the model."""
        if self._due(site.agent_id):
            carried = self._log.records()
            workflow.continue_as_new(self._given.model_copy(update={"carried": carried}))
        return await super().model_call(site, model, request)

    def _due(self, agent_id: str) -> bool:
        # Continuing as new is a live decision, like a stop: taken only where stops are obeyed
        # (not while the carried records are still being retraced), and not while wrapping up.
        if not self.obeys_stops(agent_id) or self._stopping():
            return False
        info = workflow.info()
        limit = self._given.run.agent_history_limit
        if limit is not None and info.get_current_history_length() >= limit:
            return True
        return info.is_continue_as_new_suggested()


def _key(record: EffectRecord) -> _Key:
    return (record.agent_id, record.seq, record.kind)
