"""Text streaming: `stream(goal, text=True)` carries the models' text as it is generated (each
sub-agent's, the synthesis's), over real HTTP with `"stream": true`; the journal keeps whole
replies, and a replay hands out the same pieces."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import anyio
import pytest

from agents import Executor, OpenAIChatModel, tool
from agents._streaming import Streamed, chunks, live_sink, streaming
from agents.events import AgentEvent, TextDelta
from agents.models import ModelResponse
from agents.models._chunks import Chunks
from agents.testing import FakeOpenAIServer, ScriptedModel, ServerAction, TokenUsage, reply
from memory import AssistantMessage, Journal, ToolCall
from orchestrator import Event, Orchestrator, RunConfig, RunResult
from orchestrator.testing import plan_reply, subtask
from tests._team import goal, plan, sub

SYNTHESIS = RunConfig().synthesis_instructions

pytestmark = pytest.mark.anyio

GUARD_S = 20  # a deadlock guard, not a timing claim
USAGE = TokenUsage(prompt_tokens=10, completion_tokens=2)
FINAL = "Final: alpha is one and beta is two."

# Plans arrive whole here: from a hosted endpoint they stream by default (`RunConfig.stream_plans`,
# tested in test_plan_streaming), and these tests are about the text of replies.
WHOLE = RunConfig(stream_plans=False)


@tool
def lookup(key: str) -> str:
    """Look a fact up.

    Args:
        key: The fact's name.
    """
    return f"{key} is one"


def decide(body: dict[str, Any]) -> ServerAction:
    """The planner plans a and b; a looks alpha up, then answers; b answers; the writer sums up."""
    if "response_format" in body:
        return ServerAction.json_content(plan(sub("a"), sub("b")), usage=USAGE)
    messages = body["messages"]
    if messages[0]["content"] == SYNTHESIS:
        return ServerAction.text(FINAL, usage=USAGE)
    task = messages[1]["content"].removeprefix("Task: ").split("\n")[0]
    if task == goal("b"):
        return ServerAction.text("B: beta is two.", usage=USAGE)
    if sum(m["role"] == "assistant" for m in messages) == 0:
        return ServerAction.tool_calls([("lookup", {"key": "alpha"})], usage=USAGE)
    return ServerAction.text("A: alpha is one, as looked up.", usage=USAGE)


async def _stream(orch: Orchestrator, **kwargs: Any) -> tuple[list[Event], RunResult]:
    seen: list[Event] = []
    with anyio.fail_after(GUARD_S):
        async with orch.stream("What are alpha and beta?", **kwargs) as events:
            async for event in events:
                seen.append(event)
    return seen, events.result


def _texts(events: list[Event]) -> dict[str, list[str]]:
    pieces: defaultdict[str, list[str]] = defaultdict(list)
    for event in events:
        if isinstance(event, TextDelta):
            pieces[event.agent_id].append(event.text)
    return dict(pieces)


async def test_text_streams_as_generated_and_adds_up_to_the_replies() -> None:
    async with FakeOpenAIServer(decide) as server:
        model = OpenAIChatModel(base_url=server.base_url, api_key="test", protocol="tools")
        try:
            events, result = await _stream(Orchestrator(model, [lookup], config=WHOLE), text=True)
        finally:
            await model.aclose()
    assert result.status == "complete"
    texts = _texts(events)
    assert "".join(texts["planner"]) == FINAL == result.answer
    assert len(texts["planner"]) == len(FINAL.split())  # piece by piece, as the server sent it
    assert "".join(texts["a"]) == "A: alpha is one, as looked up."
    assert "".join(texts["b"]) == "B: beta is two."
    assert not any(isinstance(e, TextDelta) for e in result.events)  # the trace keeps replies
    streamed = [body.get("stream") is True for body in server.requests]
    planner_asked = ["response_format" in body for body in server.requests]
    assert streamed == [not structured for structured in planner_asked]
    # The tool call came back in pieces too, and was put together: a's lookup ran.
    assert any(
        m["role"] == "tool" and "alpha is one" in m["content"]
        for body in server.requests
        for m in body["messages"]
    )


async def test_without_text_nothing_is_streamed() -> None:
    async with FakeOpenAIServer(decide) as server:
        model = OpenAIChatModel(base_url=server.base_url, api_key="test", protocol="tools")
        try:
            events, result = await _stream(Orchestrator(model, [lookup], config=WHOLE))
        finally:
            await model.aclose()
    assert result.answer == FINAL
    assert _texts(events) == {}
    assert not any(body.get("stream") for body in server.requests)


async def test_a_replay_hands_out_the_same_pieces(tmp_path: Any) -> None:
    async with Journal(tmp_path / "journal.db") as journal, FakeOpenAIServer(decide) as server:
        model = OpenAIChatModel(base_url=server.base_url, api_key="test", protocol="tools")
        try:
            live, result = await _stream(Orchestrator(model, [lookup], journal=journal), text=True)
        finally:
            await model.aclose()
        offline = Orchestrator(ScriptedModel([]), [lookup], journal=journal)
        replayed: list[Event] = []
        async with offline.stream_replay(result.run_id, text=True) as events:
            async for event in events:
                replayed.append(event)
    assert _texts(replayed) == _texts(live)
    assert len(_texts(live)["planner"]) > 1


def decide_in_text(body: dict[str, Any]) -> ServerAction:
    """As `decide`, but a's model writes its tool call as text (small local models do)."""
    messages = body["messages"]
    if "response_format" in body or messages[0]["content"] == SYNTHESIS:
        return decide(body)
    task = messages[1]["content"].removeprefix("Task: ").split("\n")[0]
    if task == goal("a") and sum(m["role"] == "assistant" for m in messages) == 0:
        return ServerAction.text(CALL_IN_TEXT, usage=USAGE)
    return decide(body)


CALL_IN_TEXT = '{"name": "lookup", "arguments": {"key": "alpha"}}'


async def test_a_call_written_as_text_is_not_streamed_and_a_replay_hands_out_the_same(
    tmp_path: Any,
) -> None:
    """A reply that opens as a tool call written as text is held until it is read: it was a
    call, so none of it reaches the display (before, its JSON did, and a replay, which sends
    what is left of the reply, handed out other pieces). The reply's own text still streams."""
    async with (
        Journal(tmp_path / "journal.db") as journal,
        FakeOpenAIServer(decide_in_text) as server,
    ):
        model = OpenAIChatModel(base_url=server.base_url, api_key="test", protocol="tools")
        try:
            orch = Orchestrator(model, [lookup], journal=journal, config=WHOLE)
            live, result = await _stream(orch, text=True)
        finally:
            await model.aclose()
        offline = Orchestrator(ScriptedModel([]), [lookup], journal=journal, config=WHOLE)
        replayed: list[Event] = []
        async with offline.stream_replay(result.run_id, text=True) as events:
            async for event in events:
                replayed.append(event)
    assert result.status == "complete"
    texts = _texts(live)
    assert "".join(texts["a"]) == "A: alpha is one, as looked up."  # the call's JSON is not there
    assert len(texts["planner"]) > 1  # prose still streams piece by piece
    assert _texts(replayed) == texts


def _replying(
    pieces: list[str], answer: AssistantMessage, *, retried_after: int | None = None
) -> Any:
    """A model call that streams `pieces` (retried after the first `retried_after` of them) and
    answers `answer`, its text cut as it came when the reply is that text."""

    async def call() -> ModelResponse:
        streamed = live_sink()
        assert streamed is not None
        for index, piece in enumerate(pieces):
            if index == retried_after:
                streamed.retrying()
            await streamed.send(piece)
        sent = pieces[retried_after or 0 :]
        whole = "".join(sent) == (answer.content or "")
        return ModelResponse(message=answer, text_chunks=tuple(map(len, sent)) if whole else ())

    return call


async def test_prose_that_opens_like_a_call_is_sent_as_it_came_once_read() -> None:
    """An answer opening with a citation in brackets waits for the reply to be read (it might
    have been a call), then goes on in the pieces it came in, as a replay cuts it."""
    seen: list[tuple[str, bool]] = []

    async def sink(text: str, restart: bool) -> None:
        seen.append((text, restart))

    pieces = ["[doc-1] ", "says the limit ", "is 5."]
    await streaming(
        _replying(pieces, AssistantMessage(content="".join(pieces))), sink, may_call=True
    )
    assert seen == [(piece, False) for piece in pieces]


async def test_text_sent_before_a_retry_whose_reply_was_a_call_is_voided() -> None:
    """A retry voids the text sent before it; when the retried reply is a call written as text,
    nothing of it is shown, and an empty piece says the earlier text is void."""
    seen: list[tuple[str, bool]] = []

    async def sink(text: str, restart: bool) -> None:
        seen.append((text, restart))

    call = ToolCall(id="c1", name="lookup", arguments='{"key": "alpha"}')
    answer = AssistantMessage(content=None, tool_calls=(call,))
    pieces = ["Let me ", "check. ", CALL_IN_TEXT[:20], CALL_IN_TEXT[20:]]
    await streaming(_replying(pieces, answer, retried_after=2), sink, may_call=True)
    assert seen == [("Let me ", False), ("check. ", False), ("", True)]


async def test_a_lone_executor_streams_its_text_when_asked() -> None:
    """`Executor.run(text=True)` sends its model's text to its events as `TextDelta`s, asked for
    with `"stream": true`; without it, nothing is streamed."""
    streamed: list[AgentEvent] = []
    quiet: list[AgentEvent] = []

    async with FakeOpenAIServer(lambda _body: ServerAction.text(FINAL, usage=USAGE)) as server:
        model = OpenAIChatModel(base_url=server.base_url, api_key="test", protocol="tools")
        try:
            executor = Executor(model)

            async def keep(event: AgentEvent) -> None:
                streamed.append(event)

            await executor.run("Sum up alpha and beta.", events=keep, text=True)
            asked_streaming = len(server.requests)

            async def keep_quiet(event: AgentEvent) -> None:
                quiet.append(event)

            await executor.run("Sum up alpha and beta.", events=keep_quiet)
        finally:
            await model.aclose()
    deltas = [e for e in streamed if isinstance(e, TextDelta)]
    assert len(deltas) > 1  # in pieces, as they came
    assert FINAL in "".join(e.text for e in deltas)
    assert not any(isinstance(e, TextDelta) for e in quiet)
    assert all(body.get("stream") for body in server.requests[:asked_streaming])
    assert not any(body.get("stream") for body in server.requests[asked_streaming:])


async def test_a_model_that_does_not_stream_gives_each_reply_whole() -> None:
    model = ScriptedModel([plan_reply(subtask("a", "Find a.")), reply("A: done."), "The answer."])
    events, result = await _stream(Orchestrator(model), text=True)
    assert result.status == "complete"
    assert _texts(events) == {"a": ["A: done."], "planner": ["The answer."]}


async def test_a_retried_stream_says_the_text_starts_again() -> None:
    seen: list[tuple[str, bool]] = []

    async def sink(piece: str, restart: bool) -> None:
        seen.append((piece, restart))

    streamed = Streamed(sink)
    await streamed.send("Hel")
    streamed.retrying()
    await streamed.send("Hello")
    await streamed.send(" world")
    assert seen == [("Hel", False), ("Hello", True), (" world", False)]


def test_recorded_sizes_cut_the_text_again_or_leave_it_whole() -> None:
    assert chunks("Hello world", (5, 6)) == ["Hello", " world"]
    assert chunks("Hello world", (5, 5)) == ["Hello world"]  # they do not describe it
    assert chunks("Hello", ()) == ["Hello"]
    assert chunks("", (3,)) == []


def test_hostile_chunks_are_skipped_and_the_rest_is_judged_as_a_body() -> None:
    parts = Chunks()
    for chunk in (
        "not an object",
        {"choices": "no"},
        {"choices": [{"delta": {"content": 7}}]},
        {"id": "c1", "choices": [{"delta": {"content": "Hi"}}]},
        {"choices": [{"delta": {"tool_calls": [{"index": "x", "function": {"name": "f"}}]}}]},
        {"choices": [{"delta": {"tool_calls": [{"index": 0, "function": {"arguments": "{}"}}]}}]},
        {"choices": [{"delta": {}, "finish_reason": "stop"}], "usage": {"prompt_tokens": 3}},
    ):
        parts.add(chunk)
    body = parts.body()
    assert body["id"] == "c1"
    assert body["choices"][0]["message"]["content"] == "Hi"
    assert body["choices"][0]["finish_reason"] == "stop"
    assert [c["function"] for c in body["choices"][0]["message"]["tool_calls"]] == [
        {"name": "f", "arguments": "{}"}
    ]
    assert Chunks().body()["choices"] == []  # nothing came: no choices, a malformed reply
