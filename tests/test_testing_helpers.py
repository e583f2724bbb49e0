"""The test helpers users get: request purposes, planner replies, token estimates, the pytest plugin."""

from __future__ import annotations

import textwrap
from typing import Any

import anyio
import pytest

from agents import AgentLimits, Executor, OpenAIChatModel, tool
from agents._journaled import _digest, request_digest
from agents.errors import ModelRequestError
from agents.models import ModelRequest
from agents.testing import (
    FakeOpenAIServer,
    FunctionModel,
    ScriptedModel,
    ServerAction,
    by_purpose,
    call,
    reply,
    task_of,
)
from agents.testing._usage import estimated_usage
from memory import AssistantMessage, Compactor, Journal, UserMessage
from orchestrator import Limits, Orchestrator, RunConfig
from orchestrator.testing import plan_reply, replan_reply, subtask, synthesis_reply

pytest_plugins = ["pytester"]

GUARD_S = 10  # a guard against hangs, not a timing claim


@tool
def lookup(key: str) -> str:
    """Look a key up."""
    return f"value of {key}: " + "details " * 40


def _team(**routes: Any) -> FunctionModel:
    """A run's model: a two-subtask plan, agents that answer their task, a synthesis."""
    plan = plan_reply(subtask("a", "Find fact a."), subtask("b", "Find fact b.", depends_on=["a"]))
    given: dict[str, Any] = {
        "plan": plan,
        "step": lambda r: f"Answer to {task_of(r)}",
        "synthesis": synthesis_reply("The final answer."),
    }
    return FunctionModel(by_purpose(**(given | routes)), tokens="estimated")


# Purposes


@pytest.mark.anyio
async def test_every_request_of_a_run_says_what_it_is_for() -> None:
    """Plan, sub-agent steps, replan and synthesis requests carry their purpose."""

    def step(request: ModelRequest) -> Any:
        if task_of(request) == "Find fact b.":
            return ModelRequestError("400 bad request", status=400)
        return f"Answer to {task_of(request)}"

    model = _team(step=step, replan=replan_reply(add=[subtask("b2", "Find fact b again.")]))
    with anyio.fail_after(GUARD_S):
        result = await Orchestrator(model).run("Find facts a and b.")
    assert [d.added for d in result.diffs] == [("b2",)]
    assert [r.purpose for r in model.requests] == [
        "plan",
        "step",
        "step",
        "replan",
        "step",
        "synthesis",
    ]


@pytest.mark.anyio
async def test_a_cut_short_agent_wraps_up_and_a_compaction_summary_says_so() -> None:
    """An agent out of steps makes a "wrap_up" request; the compactor's call is a "summary"."""
    model = FunctionModel(
        by_purpose(
            step=lambda r: call("lookup", key=f"k{len(r.messages)}"),
            wrap_up="What I found, in short.",
            summary="Looked up several keys.",
        )
    )
    compactor = Compactor(max_tokens=400, keep_turns=1, summary_tokens=40)
    executor = Executor(model, tools=[lookup], limits=AgentLimits(max_steps=3), compactor=compactor)
    report = await executor.run("Look keys up.")
    assert (report.stop_reason, report.answer) == ("steps", "What I found, in short.")
    purposes = [r.purpose for r in model.requests]
    assert purposes[-1] == "wrap_up"
    assert "summary" in purposes
    assert purposes.count("step") == 3


def test_the_purpose_is_not_part_of_what_a_journal_digests() -> None:
    """A request's journal digest is the one of its dump from before the field (old records
    match); the purpose itself survives a round trip (a Temporal activity's input)."""
    request = ModelRequest(messages=(UserMessage(content="hi"),), purpose="plan")
    assert ModelRequest.model_validate_json(request.model_dump_json()).purpose == "plan"
    before_the_field = {
        "messages": [{"role": "user", "content": "hi"}],
        "tools": [],
        "output": None,
        "max_output_tokens": None,
        "citable": [],
    }
    assert request_digest(request) == _digest(before_the_field)
    assert ModelRequest(messages=request.messages).purpose == "step"


@pytest.mark.anyio
async def test_a_recorded_run_replays_without_drift(tmp_path: Any) -> None:
    """Live and replayed requests digest alike whatever their purpose."""
    async with Journal(tmp_path / "journal.db") as journal:
        recorded = await Orchestrator(_team(), journal=journal).run("Find facts a and b.")
        report = await Orchestrator(ScriptedModel([]), journal=journal).replay(recorded.run_id)
    assert report.ok, report.drift


@pytest.mark.anyio
async def test_the_openai_adapter_does_not_send_the_purpose() -> None:
    """The wire request has the usual fields and no purpose."""
    async with FakeOpenAIServer([ServerAction.text("ok")]) as server:
        model = OpenAIChatModel(base_url=server.base_url, api_key="test", protocol="tools")
        try:
            await model.complete(
                ModelRequest(messages=(UserMessage(content="hi"),), purpose="plan")
            )
        finally:
            await model.aclose()
    assert "purpose" not in server.requests[0]
    assert "purpose" not in str(server.requests[0])


# Replies


def test_planner_replies_are_checked_against_the_planner_s_schema() -> None:
    """A field the planner does not know, or a wrong type, fails when the reply is built."""
    with pytest.raises(ValueError, match=r"subtasks\[0\]\.needs"):
        plan_reply({"id": "a", "goal": "Find a.", "needs": ["b"]})
    with pytest.raises(ValueError, match="could not read"):
        plan_reply({"id": "a", "goal": 3})
    with pytest.raises(ValueError, match=r"add\[0\]\.after"):
        replan_reply(add=[{"id": "b", "goal": "Find b.", "after": ["a"]}])
    with pytest.raises(ValueError, match="blank"):
        synthesis_reply(" ")
    assert plan_reply(subtask("a", "Find a.")).message.content == (
        '{"subtasks": [{"id": "a", "goal": "Find a.", "depends_on": [], "tools": [], '
        '"acceptance": "", "expected_output": ""}], "rationale": ""}'
    )


@pytest.mark.anyio
async def test_by_purpose_names_the_purpose_it_has_no_reply_for() -> None:
    """An unrouted purpose, or a list of turns that ran out, fails loudly with its name."""
    model = FunctionModel(by_purpose(step=["one"]))
    ask = ModelRequest(messages=(UserMessage(content="Task: x"),))
    assert (await model.complete(ask)).message.content == "one"
    with pytest.raises(AssertionError, match="more 'step' requests than the 1 scripted"):
        await model.complete(ask)
    with pytest.raises(AssertionError, match=r"by_purpose\(plan=\.\.\.\)"):
        await model.complete(ask.model_copy(update={"purpose": "plan"}))


# Tokens


@pytest.mark.anyio
async def test_estimated_tokens_follow_the_request_and_the_reply() -> None:
    """Estimated counts grow with the text; stated counts are kept; the default stays 10 and 5."""
    short = ModelRequest(messages=(UserMessage(content="hi"),))
    long = ModelRequest(messages=(UserMessage(content="hi " * 400),))
    model = ScriptedModel(
        [reply("ok"), reply("ok " * 100), reply("x", prompt_tokens=3)], tokens="estimated"
    )
    first, second, third = [(await model.complete(r)).usage for r in (short, long, short)]
    assert first.prompt_tokens < second.prompt_tokens
    assert first.completion_tokens < second.completion_tokens
    assert first == estimated_usage(short, AssistantMessage(content="ok"))
    assert (third.prompt_tokens, third.completion_tokens) == (3, 1)
    fixed = await ScriptedModel(["ok"]).complete(long)
    assert (fixed.usage.prompt_tokens, fixed.usage.completion_tokens) == (10, 5)


@pytest.mark.anyio
async def test_a_token_limit_is_hit_with_a_scripted_model() -> None:
    """Long tool results spend the agent's token budget: it wraps up on "tokens"."""
    turns = [call("lookup", key=f"k{i}") for i in range(6)] + ["Partial answer."]
    model = ScriptedModel(turns, tokens="estimated")
    executor = Executor(model, tools=[lookup], limits=AgentLimits(max_tokens=1500))
    report = await executor.run("Look up every key.")
    assert report.stop_reason == "tokens"
    assert report.usage.total_tokens >= 1500
    assert model.remaining > 0


@pytest.mark.anyio
async def test_a_run_s_token_limit_is_hit_with_estimated_tokens() -> None:
    """`Limits(max_tokens=...)` ends the run as incomplete, with a synthesis."""
    model = _team(
        step=lambda r: call("lookup", key=f"k{len(r.messages)}"),
        wrap_up="Partial answer.",
        replan=replan_reply(),
    )
    with anyio.fail_after(GUARD_S):
        result = await Orchestrator(
            model, [lookup], config=RunConfig(limits=Limits(max_tokens=3000))
        ).run("goal")
    assert result.status == "incomplete"
    assert "tokens" in (result.reason or "")


# The pytest plugin

_CLIENT = """
    import anyio
    import pytest
    from agents import OpenAIChatModel
    from agents.errors import ModelRequestError
    from agents.models import ModelRequest
    from memory import UserMessage

    ASK = ModelRequest(messages=(UserMessage(content="hi"),))

    def blocked() -> bool:
        # 127.0.0.2 is not an allowed host, and nothing listens there: refused at once when
        # allowed, refused before sending when blocked.
        model = OpenAIChatModel(base_url="http://127.0.0.2:9/v1", api_key="x")
        try:
            anyio.run(model.complete, ASK)
        except ModelRequestError as exc:
            return "blocked" in str(exc)
        except Exception:
            return False
        raise AssertionError("a request to 127.0.0.2:9 was answered")
"""


def _client_tests(pytester: pytest.Pytester, body: str) -> None:
    pytester.makepyfile(textwrap.dedent(_CLIENT) + textwrap.dedent(body))


def test_the_plugin_blocks_real_requests_unless_a_test_is_marked(pytester: pytest.Pytester) -> None:
    """By default a request to a remote host fails; the marker lets one test through."""
    _client_tests(
        pytester,
        """
        def test_blocked():
            assert blocked()

        @pytest.mark.paor_allow_model_requests
        def test_allowed():
            assert not blocked()
        """,
    )
    pytester.runpytest_subprocess("--strict-markers", "-W", "error").assert_outcomes(passed=2)


@pytest.mark.parametrize(
    ("args", "ini"),
    [(["--paor-allow-model-requests"], ""), ([], "paor_block_model_requests = false")],
)
def test_the_block_can_be_turned_off_for_a_run(
    pytester: pytest.Pytester, args: list[str], ini: str
) -> None:
    """The command-line flag and the ini option both lift the block."""
    pytester.makeini(f"[pytest]\n{ini}\n")
    _client_tests(pytester, "def test_allowed():\n    assert not blocked()\n")
    pytester.runpytest_subprocess(*args).assert_outcomes(passed=1)


def test_the_plugin_coexists_with_a_conftest_that_blocks(pytester: pytest.Pytester) -> None:
    """A project's own block stays in force; the two nest without errors."""
    pytester.makeconftest(
        """
        import pytest
        from agents.testing import block_model_requests

        @pytest.fixture(autouse=True)
        def _own_block():
            with block_model_requests():
                yield
        """
    )
    _client_tests(
        pytester,
        """
        @pytest.mark.paor_allow_model_requests
        def test_still_blocked_by_the_conftest():
            assert blocked()
        """,
    )
    pytester.runpytest_subprocess("-W", "error").assert_outcomes(passed=1)


def test_the_plugin_can_be_left_out(pytester: pytest.Pytester) -> None:
    """`-p no:paor` installs no block."""
    _client_tests(pytester, "def test_allowed():\n    assert not blocked()\n")
    pytester.runpytest_subprocess("-p", "no:paor").assert_outcomes(passed=1)


def test_the_fixtures_give_fake_models_servers_and_a_private_journal(
    pytester: pytest.Pytester,
) -> None:
    """A scripted model, a running fake server (from a sync test) and a journal in tmp_path."""
    pytester.makepyfile(
        """
        import os
        import anyio
        import openai
        from agents.models import ModelRequest
        from agents.testing import ServerAction
        from memory import UserMessage

        ASK = ModelRequest(messages=(UserMessage(content="hi"),))

        def test_scripted(paor_scripted_model):
            model = paor_scripted_model(["hello"])
            response = anyio.run(model.complete, ASK)
            assert response.message.content == "hello"
            assert response.usage.prompt_tokens != 10  # estimated

        def test_server(paor_fake_openai):
            server = paor_fake_openai([ServerAction.text("hi there")])
            client = openai.OpenAI(base_url=server.base_url, api_key="x")
            answer = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "q"}])
            assert answer.choices[0].message.content == "hi there"
            client.close()

        def test_journal(paor_journal, tmp_path):
            assert paor_journal.path.is_relative_to(tmp_path)
            assert os.environ["PAOR_HOME"] == str(paor_journal.path.parent)

            async def use():
                async with paor_journal as journal:
                    await journal.begin("run-1", "goal")

            anyio.run(use)
        """
    )
    pytester.runpytest_inprocess("-W", "error").assert_outcomes(passed=3)


def test_the_fixtures_fail_a_test_that_left_turns_unplayed(pytester: pytest.Pytester) -> None:
    """A scripted model or a fake server with turns left errors at teardown."""
    pytester.makepyfile(
        """
        from agents.testing import ServerAction

        def test_model(paor_scripted_model):
            paor_scripted_model(["never played"])

        def test_server(paor_fake_openai):
            paor_fake_openai([ServerAction.text("never asked")])

        def test_unchecked(paor_fake_openai):
            paor_fake_openai([ServerAction.text("never asked")], check=False)
        """
    )
    result = pytester.runpytest_inprocess()
    result.assert_outcomes(passed=3, errors=2)
    result.stdout.fnmatch_lines(["*1 scripted turns were never played*"])
    result.stdout.fnmatch_lines(["*1 scripted actions were never played*"])
