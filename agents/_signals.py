"""The built-in tools an agent may call besides the caller's: `report_issue`, `ask_user`, and
`answer_with_results`.

`report_issue` tells the planner that the task is blocked, or that what the agent found
invalidates the task's assumptions. `ask_user` asks the user one clarifying question ("a cheap
hotel": in which city, for what budget?), when the run allows questions (`questions=N` on the
`Orchestrator` or `Executor`): the question waits for an answer like an approval waits for a
decision (see `agents._waits`: in process a callback or `RunStream.decide`, a durable pause, a
terminal prompt, a Temporal update), and the answer is a recorded choice, a fact of the run that
a replay or a resume meets without asking anyone. A run asks at most N questions, its planner's
and all its agents' together; an agent that may not ask (none allowed, or none left) is told so.
`answer_with_results`, offered where the caller reads the results themselves, ends the agent with
its tool results as its answer (see `agents._passing`).
"""

from __future__ import annotations

from typing import Literal

from agents._approval import ASK_USER_TOOL, Decision
from agents._tools import Tool, ToolOutcome, tool
from agents._waits import refused

__all__ = ["ANSWER_WITH_RESULTS", "ASK_USER", "SIGNALS", "asked_outcome"]


# Async although they await nothing: a sync tool runs in a thread, and these pure signals must
# also run inside a workflow (on Temporal), where threads are not allowed.
@tool(name="report_issue", timeout=None)
async def _report_issue(kind: Literal["blocked", "invalidates"], reason: str) -> str:
    """Tell the planner the task is blocked (it cannot be done) or that what you found
    invalidates its assumptions (then still answer).

    Args:
        reason: What you found.
    """
    return "Noted; the planner will be told." if kind == "invalidates" else "Noted; stopping."


@tool(name=ASK_USER_TOOL, timeout=None)
async def _ask_user(question: str) -> str:
    """Ask the user one short clarifying question, when the task lacks something only they
    know (a budget, a city, a date). Their answer is the result. Ask only what you cannot find.

    Args:
        question: The question, in one sentence.
    """
    raise AssertionError("ask_user is answered by the run, never run as a function")


@tool(name="answer_with_results", timeout=None)
async def _answer_with_results() -> str:
    """Call it with your last tool calls when their results answer the task: they are then
    your answer."""
    return "Noted: your results are checked as your answer."


SIGNALS: tuple[Tool, ...] = (_report_issue,)
"""The built-in tools an executor offers besides the caller's (`signals=True`)."""
ASK_USER = _ask_user
"""The built-in tool that asks the user a question (offered with `questions=N`)."""
ANSWER_WITH_RESULTS = _answer_with_results
"""The built-in tool that ends an agent with its tool results as its answer (offered with
`Executor.run(pass_results=...)`)."""


def asked_outcome(decision: Decision) -> ToolOutcome:
    """What the agent reads of its question: the answer, or why it may not ask."""
    if decision.action == "answer":
        return ToolOutcome(ok=True, value=f"The user answered: {decision.message}")
    if refused(decision):
        text = f"You may not ask: {decision.message}. Go on with what you have, or say what is missing."
        return ToolOutcome(ok=False, error="rejected", message=text)
    text = f"The user gave no answer ({decision.message or 'none came'}). Go on with what you have."
    return ToolOutcome(ok=False, error="rejected", message=text)
