"""`Orchestrator` end to end over real HTTP: the real `openai` client against `FakeOpenAIServer`."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest

from agents import OpenAIChatModel, tool
from agents.testing import FakeOpenAIServer, ServerAction, TokenUsage
from orchestrator import Limits, Orchestrator, RunConfig
from orchestrator._drafts import ReplanDraft, base_schema
from orchestrator._plan import PlanDraft
from orchestrator.events import Replanned, SubtaskStarted
from tests._team import goal, plan, sub

SYNTHESIS = RunConfig().synthesis_instructions

pytestmark = pytest.mark.anyio

GUARD_S = 20  # a deadlock guard, not a timing claim
USAGE = TokenUsage(prompt_tokens=10, completion_tokens=2)
PLAN = plan(sub("a"), sub("b"), sub("c", "a", "b"))
REPLAN = {"remove": ["c"], "add": [sub("d", "a")], "rationale": "b says c is moot"}


def role_of(body: dict[str, Any]) -> str:
    """Who sent a request: "plan", "replan", "writer", or the sub-agent's subtask id."""
    if "response_format" in body:
        return str(body["response_format"]["json_schema"]["name"])
    messages = body["messages"]
    if messages[0]["content"] == SYNTHESIS:
        return "writer"
    task = messages[1]["content"].removeprefix("Task: ").split("\n")[0]
    return next(i for i in "abcd" if goal(i) == task)


def sub_agent(who: str, step: int) -> ServerAction:
    """The sub-agents' turns: a and b meet (only possible concurrently); b then objects."""
    turns: dict[str, list[ServerAction]] = {
        "a": [
            ServerAction.tool_calls([("meet", {"who": "a"})], usage=USAGE),
            ServerAction.text("A: alpha is 1", usage=USAGE),
        ],
        "b": [
            ServerAction.tool_calls([("meet", {"who": "b"})], usage=USAGE),
            ServerAction.tool_calls(
                [("report_issue", {"kind": "invalidates", "reason": "beta does not exist"})],
                usage=USAGE,
            ),
            ServerAction.text("B: there is no beta", usage=USAGE),
        ],
        "d": [ServerAction.text("D: alpha alone is enough", usage=USAGE)],
    }
    return turns[who][step]


def decide(body: dict[str, Any]) -> ServerAction:
    """The whole team's answers, dispatched on the request body."""
    who = role_of(body)
    if who == "plan":
        return ServerAction.json_content(PLAN, usage=USAGE)
    if who == "replan":
        return ServerAction.json_content(REPLAN, usage=USAGE)
    if who == "writer":
        return ServerAction.text("Final: alpha is 1 [meet]; there is no beta.", usage=USAGE)
    step = sum(m["role"] == "assistant" for m in body["messages"])
    return sub_agent(who, step)


async def test_concurrent_subtasks_a_replan_and_a_synthesis_over_http() -> None:
    """Over HTTP the planner plans with a JSON schema, two sub-agents call tools concurrently, an
    "invalidates" report is replanned around, and the writer gets the results."""
    here = {"a": anyio.Event(), "b": anyio.Event()}

    @tool(timeout=None)
    async def meet(who: str) -> str:
        """Wait until the other subtask is here too.

        Args:
            who: Who arrived.
        """
        here[who].set()
        await here["b" if who == "a" else "a"].wait()
        return f"{who} met the other: alpha is 1"

    async with FakeOpenAIServer(decide) as server:
        model = OpenAIChatModel(base_url=server.base_url, api_key="test")
        try:
            orch = Orchestrator(model, [meet], config=RunConfig(limits=Limits(max_concurrency=2)))
            with anyio.fail_after(GUARD_S):
                result = await orch.run("What are alpha and beta?")
        finally:
            await model.aclose()
    server.assert_complete()

    assert result.status == "complete", result.reason
    assert result.answer == "Final: alpha is 1 [meet]; there is no beta."
    bodies: dict[str, dict[str, Any]] = {}  # the first request of each role
    for body in server.requests:
        bodies.setdefault(role_of(body), body)
    roles = [role_of(b) for b in server.requests]
    assert roles.count("plan") == 1
    assert roles.count("replan") == 1
    assert roles[-1] == "writer"
    assert "c" not in roles
    # The planner asks for schema-constrained JSON and offers no tools.
    plan_schema = json.loads(base_schema(PlanDraft))  # no titles nor docstrings: tokens
    plan_schema["properties"]["subtasks"].update(minItems=1, maxItems=Limits().max_subtasks)
    replan_schema = json.loads(base_schema(ReplanDraft))
    for draft in (plan_schema, replan_schema):
        draft["$defs"]["SubtaskDraft"]["properties"]["tools"].update(
            items={"enum": ["meet"]}, maxItems=1
        )
        # Without `direct_calls` a subtask cannot be written out as a tool call.
        draft["$defs"]["SubtaskDraft"]["properties"].pop("call")
        draft["$defs"]["SubtaskDraft"]["properties"].pop("first_call")
        draft["$defs"].pop("CallDraft")
        # Without `typed_subtasks` a subtask has no output schema.
        draft["$defs"]["SubtaskDraft"]["properties"].pop("output_schema")
    # Only c was in play when b reported: a replan can remove nothing else.
    replan_schema["properties"]["remove"].update(items={"enum": ["c"]}, maxItems=1)
    for name, schema in (("plan", plan_schema), ("replan", replan_schema)):
        assert "tools" not in bodies[name]
        assert bodies[name]["response_format"]["json_schema"]["schema"] == schema
    assert "Subtask b reported a problem" in bodies["replan"]["messages"][1]["content"]
    # Sub-agents call with tools (theirs, report_issue and, from a hosted endpoint, where no
    # other subtask reads the result, answer_with_results); the writer with none.
    for who, passes in (("a", False), ("b", False), ("d", True)):
        names = {t["function"]["name"] for t in bodies[who]["tools"]}
        assert names == {"meet", "report_issue", *(["answer_with_results"] if passes else [])}
    assert "tools" not in bodies["writer"]
    assert "response_format" not in bodies["writer"]
    writer_prompt = bodies["writer"]["messages"][1]["content"]
    assert "A: alpha is 1" in writer_prompt
    assert "D: alpha alone is enough" in writer_prompt
    # d started after the replan, knowing a's result and nothing of b.
    d_task = bodies["d"]["messages"][1]["content"]
    assert "Result (done): A: alpha is 1" in d_task
    assert goal("b") not in d_task
    (replanned,) = [e for e in result.events if isinstance(e, Replanned)]
    assert (replanned.diff.added, replanned.diff.removed, replanned.diff.kept) == (
        ("d",),
        ("c",),
        ("a", "b"),
    )
    assert [e.subtask_id for e in result.events if isinstance(e, SubtaskStarted)][-1] == "d"
    # One budget: every HTTP request was charged, with the tokens the server reported.
    assert result.usage.requests == len(server.requests)
    assert result.usage.total_tokens == 12 * len(server.requests)
    assert result.usage.tool_calls == 2
    assert bodies["plan"]["messages"][1]["content"].startswith("Goal: What are alpha and beta?")
