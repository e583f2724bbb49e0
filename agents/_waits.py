"""What a run waits for people on: its open approvals, the decisions given to it, and its clock.

One `RunWaits` per run, shared by the planner loop and every sub-agent through a context variable
(set by the run, or by a lone `Executor` with an approver). It knows:

- the approvals that wait (`pending`), each answered by the approver's callback, by
  `RunStream.decide` from the caller, or, for a run that pauses, by a later process
  (`resume(run_id, decisions=...)`, `paor approve`): those arrive in `given`;
- how much work is in flight (`busy`: model and tool calls at the effect boundary). A run whose
  approvals wait while nothing is in flight is *quiet*: nothing it could do goes on without a
  person. A run with a pausing approver pauses then, which loses nothing: no effect is cut;
- the run's clock. `now()` is the wall clock less `offset`, the time the run spent quiet, so what
  a run waits for people never counts against its deadline (in process, and across a pause: the
  resumed run's offset adds the time it spent paused). Clock reads are effects, recorded as this
  clock gives them, so a replay sees the same times.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Iterator, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar

import anyio

from agents._approval import ApprovalRequest, Approver, Decision
from agents._errors import ConfigurationError

if TYPE_CHECKING:
    from agents._effects import Effects, EffectSite

__all__ = [
    "NONE_LEFT",
    "NOT_ALLOWED",
    "Pending",
    "RunWaits",
    "check_decider",
    "current_waits",
    "refused",
]

NOT_ALLOWED = "this run may not ask the user questions"
"""Why a question is refused when the run may ask none."""
NONE_LEFT = "the run has asked the user all the questions it may ({limit})"
"""Why a question is refused once the run's limit is reached (`{limit}` is filled in)."""


@dataclass(kw_only=True, slots=True, eq=False)
class Pending:
    """One approval that waits: its request, when it was asked (wall clock), and its answer."""

    request: ApprovalRequest
    asked: float
    answered: anyio.Event = field(default_factory=anyio.Event)
    decision: Decision | None = None


@dataclass(kw_only=True, slots=True, eq=False)
class RunWaits:
    """A run's open approvals, the decisions given to it, and its clock (see the module)."""

    always: set[str] = field(default_factory=set)
    given: dict[str, Decision] = field(default_factory=dict)
    asked_at: dict[str, float] = field(default_factory=dict)  # when paused waits were first asked
    questions: set[str] = field(default_factory=set)  # the questions the run asked (their ids)
    answers: list[tuple[str, str, str]] = field(default_factory=list)  # who asked, what, answer
    pending: dict[str, Pending] = field(default_factory=dict)
    offset: float = 0.0
    busy: int = 0
    _quiet_since: float | None = None
    _generation: int = 0
    _wake: anyio.Event | None = None

    NONE_LEFT: ClassVar[str] = NONE_LEFT
    """Why a question is refused once the run's limit is reached (`{limit}` is filled in)."""

    @classmethod
    @contextlib.contextmanager
    def shared(cls, waits: RunWaits | None = None) -> Iterator[RunWaits]:
        """One run's waits, for every sub-agent started inside the block: `waits`, else the
        enclosing run's, else new ones."""
        found = _current.get()
        if waits is None and found is not None:
            yield found
            return
        waits = waits or cls()
        token = _current.set(waits)
        try:
            yield waits
        finally:
            _current.reset(token)

    async def decided(
        self, effects: Effects, site: EffectSite, request: ApprovalRequest, approver: Approver
    ) -> Decision:
        """The decision on `request`, as a recorded choice at `site`: asked live, served on
        replay."""

        async def pick() -> str:
            if request.kind == "tool" and request.tool in self.always:
                return Decision(action="approve", by="always").model_dump_json()
            return (await self.decision(request, approver)).model_dump_json()

        value = await effects.choice(site, pick)
        try:
            decision = Decision.model_validate(json.loads(value))
        except (ValueError, TypeError):
            return Decision.deny(f"the recorded decision could not be read: {value[:80]!r}")
        if decision.action == "approve" and decision.always and request.kind == "tool":
            self.always.add(request.tool)  # replayed too: a resumed run goes on as the person said
        return decision

    async def ask(
        self,
        effects: Effects,
        site: EffectSite,
        request: ApprovalRequest,
        approver: Approver | None,
        limit: int,
    ) -> Decision:
        """The answer to a question (`ApprovalRequest.question`), as a recorded choice at `site`;
        a refusal (action "deny") when the run may not ask it: none allowed, or all of its
        `limit` asked already. Whether it may is part of the recorded choice, so a replay or a
        resume serves what happened, in whatever order its agents reach their questions."""
        if approver is None or limit <= 0:
            return Decision(action="deny", message=NOT_ALLOWED)

        async def pick() -> str:
            if len(self.questions) >= limit:
                refusal = Decision(action="deny", message=NONE_LEFT.format(limit=limit))
                return refusal.model_dump_json()
            self.questions.add(site.key)  # taken before the wait: two cannot both take the last
            return (await self.decision(request, approver)).model_dump_json()

        value = await effects.choice(site, pick)
        try:
            decision = Decision.model_validate(json.loads(value))
        except (ValueError, TypeError):
            return Decision(action="deny", message="the recorded answer could not be read")
        if decision.action == "answer":
            self.questions.add(site.key)  # a served answer counts too
            self.answers.append((request.agent_id, request.description, decision.message))
        return decision

    def undecided(self) -> list[tuple[ApprovalRequest, float]]:
        """What waits for a decision now: each request, and when it was first asked."""
        return [(p.request, p.asked) for p in self.pending.values() if p.decision is None]

    @property
    def quiet(self) -> bool:
        """Whether undecided approvals wait and nothing else is in flight."""
        return not self.busy and any(p.decision is None for p in self.pending.values())

    def now(self) -> float:
        """The run's clock: the wall clock, less the time the run spent quiet (still while it is)."""
        return time.time() - self.waited()

    def waited(self) -> float:
        """Seconds the run spent quiet, waiting only for people, so far."""
        since = self._quiet_since
        return self.offset if since is None else self.offset + anyio.current_time() - since

    @contextlib.contextmanager
    def working(self) -> Iterator[None]:
        """Count an effect in flight for the block."""
        self.busy += 1
        self._changed()
        try:
            yield
        finally:
            self.busy -= 1
            self._changed()

    async def decision(self, request: ApprovalRequest, approver: Approver) -> Decision:
        """The decision on `request`: one given to the run already, else the first of the
        approver's callback and `answer`; the approver's default once its timeout passes."""
        given = self.given.pop(request.approval_id, None)
        if given is not None:
            return given
        asked = self.asked_at.get(request.approval_id, time.time())
        pending = Pending(request=request, asked=asked)
        self.pending[request.approval_id] = pending
        self._changed()
        try:
            return await self._awaited(pending, approver)
        finally:
            del self.pending[request.approval_id]
            self._changed()

    def answer(self, approval_id: str, decision: Decision) -> bool:
        """Decide an approval that waits; False if none waits under that id (or it was decided)."""
        pending = self.pending.get(approval_id)
        if pending is None or pending.decision is not None:
            return False
        pending.decision = decision.model_copy(update={"by": "person"})
        pending.answered.set()
        self._changed()  # no longer quiet: a pause about to happen must see it
        return True

    def give(
        self, decisions: Mapping[str, Decision], asked: Mapping[str, float] | None = None
    ) -> None:
        """Decisions made while the run was paused, for the approvals they name, and when the
        approvals still undecided were first asked (their timeouts count from then)."""
        self.given.update(decisions)
        self.asked_at.update(asked or {})

    async def until_quiet(self, settle: float) -> None:
        """Return once the run has stayed quiet for `settle` seconds with nothing changing (a
        sub-agent between two effects is not yet quiet: it is about to start the next one)."""
        while True:
            if self.quiet:
                seen = self._generation
                await anyio.sleep(settle)
                if seen == self._generation and self.quiet:
                    return
                continue
            wake = self._wake = self._wake or anyio.Event()
            await wake.wait()

    async def _awaited(self, pending: Pending, approver: Approver) -> Decision:
        failure: list[Exception] = []

        async def ask() -> None:
            assert approver.decide is not None
            try:
                decision = await approver.decide(pending.request)
            except Exception as exc:  # raised where the decision is awaited, not as a group
                failure.append(exc)
                pending.answered.set()
                return
            self.answer(pending.request.approval_id, decision)

        async with anyio.create_task_group() as tg:
            if approver.decide is not None:
                tg.start_soon(ask)
            # An approval's timeout counts from when it was first asked, pauses included.
            left = (
                None
                if approver.timeout is None
                else approver.timeout - (time.time() - pending.asked)
            )
            with anyio.move_on_after(left):
                await pending.answered.wait()
            tg.cancel_scope.cancel()
        if failure:
            raise failure[0]
        if pending.decision is None:
            return approver.default.model_copy(update={"by": "timeout"})
        return pending.decision

    def _changed(self) -> None:
        self._generation += 1
        quiet = self.quiet
        if quiet and self._quiet_since is None:
            self._quiet_since = anyio.current_time()
        elif not quiet and self._quiet_since is not None:
            self.offset += anyio.current_time() - self._quiet_since
            self._quiet_since = None
        if self._wake is not None:
            self._wake.set()
            self._wake = None


_current: ContextVar[RunWaits | None] = ContextVar("paor_run_waits", default=None)


def current_waits() -> RunWaits | None:
    """The run's waits, inside a run (or a lone executor with an approver)."""
    return _current.get()


def refused(decision: Decision) -> bool:
    """Whether `decision` is a question's refusal: the run may ask none, or has none left."""
    return decision.action == "deny" and (
        decision.message == NOT_ALLOWED or decision.message.startswith(NONE_LEFT.partition("(")[0])
    )


def check_decider(approver: Approver | None) -> None:
    """Refuse a `PAUSE` approver outside a run: nobody could take its decisions.

    Raises:
        ConfigurationError: The approver pauses, and no run encloses the caller.
    """
    if approver is not None and approver.pauses and _current.get() is None:
        raise ConfigurationError(
            "approver=PAUSE leaves decisions to a run that can take them: run the executor in "
            "an Orchestrator (or run_batch with a journal), or give it a decide function"
        )
