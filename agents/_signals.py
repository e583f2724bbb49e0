"""The built-in tools an agent may call besides the caller's: `report_issue`, and `ask_user`.

`report_issue` tells the planner that the task is blocked, or that what the agent found
invalidates the task's assumptions. `ask_user` asks the user one clarifying question ("a cheap
hotel": in which city, for what budget?), when the run allows questions (`questions=N` on the
`Orchestrator` or `Executor`): the question waits for an answer like an approval waits for a
decision (see `agents._waits`: in process a callback or `RunStream.decide`, a durable pause, a
terminal prompt, a Temporal update), and the answer is a recorded choice, a fact of the run that
a replay or a resume meets without asking anyone. A run asks at most N questions, its planner's
and all its agents' together; an agent that may not ask (none allowed, or none left) is told so.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Literal

from agents._approval import ApprovalRequest, Approver, Decision
from agents._tools import Tool, ToolOutcome, tool

if TYPE_CHECKING:
    from agents._effects import Effects, EffectSite
    from agents._waits import RunWaits

__all__ = ["ASK_USER", "NONE_LEFT", "SIGNALS", "ask", "asked_outcome", "question_request"]

_NOT_ALLOWED = "this run may not ask the user questions"
NONE_LEFT = "the run has asked the user all the questions it may ({limit})"
"""Why a question is refused once the run's limit is reached (`{limit}` is filled in)."""


# Async although they await nothing: a sync tool runs in a thread, and these pure signals must
# also run inside a workflow (on Temporal), where threads are not allowed.
@tool(name="report_issue", timeout=None)
async def _report_issue(kind: Literal["blocked", "invalidates"], reason: str) -> str:
    """Tell the planner about a problem with the task itself.

    Args:
        kind: "blocked" if the task cannot be done at all; "invalidates" if what you found
            contradicts an assumption of the task (then still give your final answer).
        reason: What you found, in one or two sentences.
    """
    return "Noted; the planner will be told." if kind == "invalidates" else "Noted; stopping."


@tool(name="ask_user", timeout=None)
async def _ask_user(question: str) -> str:
    """Ask the user one short clarifying question, when the task lacks something only they
    know (a budget, a city, a date). Their answer is the result. Ask only what you cannot find.

    Args:
        question: The question, in one sentence.
    """
    raise AssertionError("ask_user is answered by the run, never run as a function")


SIGNALS: tuple[Tool, ...] = (_report_issue,)
"""The built-in tools an executor offers besides the caller's (`signals=True`)."""
ASK_USER = _ask_user
"""The built-in tool that asks the user a question (offered with `questions=N`)."""


def question_request(site: EffectSite, agent_id: str, question: str) -> ApprovalRequest:
    """The request of `agent_id`'s question, at the question's own address."""
    return ApprovalRequest(
        approval_id=site.key, run_id=site.run_id, agent_id=agent_id, kind="question",
        tool=ASK_USER.name, description=question, args={"question": question},
    )  # fmt: skip


async def ask(
    effects: Effects,
    site: EffectSite,
    request: ApprovalRequest,
    approver: Approver | None,
    waits: RunWaits | None,
    limit: int,
) -> Decision:
    """The answer to a question, as a recorded choice at `site`; a refusal (action "deny")
    when the run may not ask it: none allowed, or all of its `limit` asked already. Whether it
    may is part of the recorded choice, so a replay or a resume serves what happened, in
    whatever order its agents reach their questions."""
    if approver is None or waits is None or limit <= 0:
        return Decision(action="deny", message=_NOT_ALLOWED)

    async def pick() -> str:
        if len(waits.questions) >= limit:
            refusal = Decision(action="deny", message=NONE_LEFT.format(limit=limit))
            return refusal.model_dump_json()
        waits.questions.add(site.key)  # taken before the wait: two cannot both take the last
        return (await waits.decision(request, approver)).model_dump_json()

    value = await effects.choice(site, pick)
    try:
        decision = Decision.model_validate(json.loads(value))
    except (ValueError, TypeError):
        return Decision(action="deny", message="the recorded answer could not be read")
    if decision.action == "answer":
        waits.questions.add(site.key)  # a served answer counts too
        waits.answers.append((request.agent_id, request.description, decision.message))
    return decision


def asked_outcome(decision: Decision) -> ToolOutcome:
    """What the agent reads of its question: the answer, or why it may not ask."""
    if decision.action == "answer":
        return ToolOutcome(ok=True, value=f"The user answered: {decision.message}")
    if decision.message in (_NOT_ALLOWED,) or decision.message.startswith("the run has asked"):
        text = f"You may not ask: {decision.message}. Go on with what you have, or say what is missing."
        return ToolOutcome(ok=False, error="rejected", message=text)
    text = f"The user gave no answer ({decision.message or 'none came'}). Go on with what you have."
    return ToolOutcome(ok=False, error="rejected", message=text)
