"""Results passed on as an answer: an agent may end with its tool results instead of writing.

A sub-agent that only gathers (look a fact up, follow it to the next, and so on) ends with a
closing model call that restates what its tools returned. Where the caller reads the results
themselves (an orchestrator's writer does), that call is a serial model call spent on nothing new.
Such an agent is offered the built-in `answer_with_results` tool (`Executor.run(pass_results=N)`):
called with its last calls, it ends the agent once their results are in, and its answer is every
result its tools returned, in order, as they returned it.

    lookup(key) + answer_with_results()
        ──▶ every call of the turn ok, the results fit N characters, they cover the task, and
            the caller still reads them ──▶ done
        └─▶ otherwise: told why, and it writes its answer (or looks up what was missing, and
            calls the tool again)

A refusal costs the agent little it would not have spent: it writes its answer next, as it would
have. The tool stays on its menu, so that the tools leading every request stay the same and a
provider's prompt cache keeps holding the agent's history. A caller that cannot yet tell whether
it will read the results itself (`may_pass`: an orchestrator's sub-agent started while the plan
was still streaming in) is asked once more before the agent's second decision: if it now knows
that it does not, the tool leaves the menu for good (the one change comes after the agent's first
request, so that its later requests share one prefix), unless that first request was already long
enough for a provider to cache (`CACHED_FROM` tokens): a changed menu would then have the whole
history read uncached again to save the tool's few tokens a request, so the tool stays, refused
if called (a join's branches of long results, started as the plan streamed in, each paid that
miss). If it still does not know, the tool stays.
It is asked again when the agent calls the tool, and results it does not know it will not read
are refused. Its answers are recorded choices, so a replay takes the same path. A tool of the
caller's own with that name wins: the built-in one is then not offered.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from agents._effects import Effects
from agents._report import AgentReport
from agents._steps import AgentState, tell
from agents._verdict import AnswerRules
from agents.models._warm import CACHED_FROM

__all__ = ["Passing", "passed", "withdrawn"]

_NOT_KNOWN = "not known"
_OPTIONS = ("pass", "write", _NOT_KNOWN)


@dataclass(slots=True, kw_only=True)
class Passing:
    """What one agent may pass on as its answer, and what it has to pass on.

    Attributes:
        bound: The most characters its results may total.
        may_pass: The caller's word, before the agent's second decision and when it calls the
            tool: whether it reads this agent's results themselves (None from it: not known yet;
            no `may_pass`: it does).
        results: The results of its successful calls so far (paor's own tools' left out).
        asked: The turn that just ended called `answer_with_results`.
    """

    bound: int
    may_pass: Callable[[], bool | None] | None = None
    results: list[str] = field(default_factory=list)
    asked: bool = False


async def withdrawn(s: AgentState, effects: Effects) -> None:
    """Before a decision: at the second, take `answer_with_results` off the menu for good if the
    caller now knows that it does not read the agent's results themselves, and the agent's first
    prompt was too short for a provider to have cached it."""
    if s.steps != 1 or s.passing is None:
        return
    used = s.usage
    if used.prompt_tokens >= CACHED_FROM * max(1, used.requests):  # a hedge's copy counts too
        return
    if await _may_pass(s, s.passing, effects) is False:
        s.passing = None


async def passed(s: AgentState, rules: AnswerRules, effects: Effects) -> AgentReport | None:
    """The agent's report with its results as its answer, if they may stand as one; else None,
    having told the model why."""
    passing = s.passing
    assert passing is not None
    passing.asked = False
    text = "\n\n".join(passing.results)
    problem = _problem(s, passing, text, rules)
    if problem is None and not await _may_pass(s, passing, effects):
        problem = "other steps may read your answer, so write it"
    if problem is None:
        s.notes.append("passed its tool results on as its answer (answer_with_results)")
        return s.report(status="done", answer=text)
    s.notes.append(f"results not passed on: {problem}")
    tell(s, f"Your results cannot stand as your answer: {problem}. Write your final answer.")
    return None


async def _may_pass(s: AgentState, passing: Passing, effects: Effects) -> bool | None:
    """Whether the caller reads the results themselves; None: not known yet (a recorded
    choice)."""
    may_pass = passing.may_pass
    if may_pass is None:
        return True

    async def pick() -> str:
        said = may_pass()
        return _NOT_KNOWN if said is None else ("pass" if said else "write")

    chosen = await effects.choice(s.site(), pick, options=_OPTIONS)
    return None if chosen == _NOT_KNOWN else chosen == "pass"


def _problem(s: AgentState, passing: Passing, text: str, rules: AnswerRules) -> str | None:
    """Why the results cannot stand as the answer, by paor's own checks, if they cannot."""
    if any(s.turn_failed):
        return "a call of your last turn failed"
    if not passing.results:
        return "no tool has returned anything yet"
    if len(text) > passing.bound:
        return f"they are {len(text):,} characters, more than the {passing.bound:,} passed on"
    return rules.unfounded(s, text)
