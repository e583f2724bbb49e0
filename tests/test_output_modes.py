"""How a typed answer is asked for (`OutputMode`): a JSON-schema `response_format`, a final tool's
arguments, or JSON written in text; "auto" takes the first the endpoint accepts and keeps it. The
endpoint is `FakeOpenAIServer` over real HTTP."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest
from pydantic import BaseModel

from agents import AgentReport, Executor, OpenAIChatModel
from agents.errors import ModelRequestError
from agents.models import ModelRequest, OutputSchema, OutputSpec
from agents.testing import FakeOpenAIServer, FunctionModel, ServerAction, by_purpose
from memory import SystemMessage, UserMessage

pytestmark = pytest.mark.anyio
GUARD_S = 10  # a guard against hangs, not a timing claim


class Place(BaseModel):
    city: str
    days: int


SPEC: OutputSpec[Place] = OutputSpec(Place)
ASK = ModelRequest(
    messages=(
        SystemMessage(content="You turn an answer into data."),
        UserMessage(content="Lyon, 3 days."),
    ),
    output=OutputSchema(name=SPEC.name, schema_=SPEC.schema),
    purpose="output",
)
TASK = "Where, and how long?"
FINAL = ServerAction.tool_calls([("final_result", {"city": "Lyon", "days": 3})])


@asynccontextmanager
async def chat_model(server: FakeOpenAIServer, **options: Any) -> AsyncIterator[OpenAIChatModel]:
    model = OpenAIChatModel("fake-model", base_url=server.base_url, api_key="test", **options)
    try:
        yield model
    finally:
        await model.aclose()


async def test_auto_asks_with_the_schema_first() -> None:
    async with (
        FakeOpenAIServer([ServerAction.text('{"city": "Lyon", "days": 3}')]) as server,
        chat_model(server) as model,
    ):
        reply = await model.complete(ASK)
    (sent,) = server.requests
    assert sent["response_format"]["json_schema"]["name"] == "Place"
    assert "tools" not in sent
    assert SPEC.parse(reply.message.content or "") == Place(city="Lyon", days=3)
    assert model.output_mode == "schema"


async def test_an_endpoint_refusing_the_schema_is_asked_through_a_final_tool_for_good() -> None:
    script = [ServerAction.status(400), FINAL, FINAL]
    async with FakeOpenAIServer(script) as server, chat_model(server) as model:
        first = await model.complete(ASK)
        second = await model.complete(ASK)
    server.assert_complete()
    refused, *tool_asks = server.requests
    assert "response_format" in refused
    for sent in tool_asks:
        assert "response_format" not in sent
        assert sent["tool_choice"] == "required"
        (final,) = sent["tools"]
        assert final["function"]["name"] == "final_result"
        assert final["function"]["parameters"]["required"] == ["city", "days"]
    for reply in (first, second):
        assert not reply.message.tool_calls
        assert SPEC.parse(reply.message.content or "") == Place(city="Lyon", days=3)
    assert model.output_mode == "tool"


async def test_an_endpoint_refusing_both_is_asked_in_text_with_the_schema_in_the_prompt() -> None:
    prose = 'Here it is:\n```json\n{"city": "Lyon", "days": 3}\n```'
    script = [
        ServerAction.status(400),
        ServerAction.status(400),
        ServerAction.text(prose),
        ServerAction.text(prose),
    ]
    async with FakeOpenAIServer(script) as server, chat_model(server) as model:
        await model.complete(ASK)
        reply = await model.complete(ASK)
    server.assert_complete()
    assert model.output_mode == "text"
    for sent in server.requests[2:]:
        assert "response_format" not in sent
        assert "tools" not in sent
        system = sent["messages"][0]
        assert system["role"] == "system"
        assert system["content"].startswith("You turn an answer into data.")
        assert '"required":["city","days"]' in system["content"]
    assert SPEC.parse(reply.message.content or "") == Place(city="Lyon", days=3)


async def test_text_mode_adds_a_system_message_when_there_is_none() -> None:
    bare = ModelRequest(messages=(UserMessage(content="Lyon, 3 days."),), output=ASK.output)
    async with (
        FakeOpenAIServer([ServerAction.text("{}")]) as server,
        chat_model(server, output_mode="text") as model,
    ):
        await model.complete(bare)
    messages = server.requests[0]["messages"]
    assert [m["role"] for m in messages] == ["system", "user"]
    assert "Its JSON Schema:" in messages[0]["content"]


async def test_a_mode_named_is_kept_and_its_refusal_raised() -> None:
    async with (
        FakeOpenAIServer([ServerAction.status(400)]) as server,
        chat_model(server, output_mode="tool") as model,
    ):
        with pytest.raises(ModelRequestError):
            await model.complete(ASK)
    assert len(server.requests) == 1
    assert server.requests[0]["tool_choice"] == "required"
    assert model.output_mode == "tool"


async def test_the_last_mode_refused_is_raised_and_nothing_settles() -> None:
    async with (
        FakeOpenAIServer([ServerAction.status(400)] * 3) as server,
        chat_model(server) as model,
    ):
        with pytest.raises(ModelRequestError):
            await model.complete(ASK)
    assert len(server.requests) == 3
    assert model.output_mode == "auto"


async def test_a_refused_decision_leaves_the_output_mode_alone() -> None:
    """A 400 on a request that is not for a typed answer says nothing of output modes."""
    plain = ModelRequest(messages=ASK.messages)
    async with (
        FakeOpenAIServer([ServerAction.status(400)]) as server,
        chat_model(server, protocol="json") as model,
    ):
        with pytest.raises(ModelRequestError):
            await model.complete(plain)
    assert model.output_mode == "auto"


@pytest.mark.parametrize(
    "written",
    [
        '{"name": "final_result", "arguments": {"city": "Lyon", "days": 3}}',
        'Calling:\n<tool_call>\n{"name": "final_result", "arguments": {"city": "Lyon", "days": 3}}'
        "\n</tool_call>",
    ],
)
async def test_a_final_call_written_as_text_is_read(written: str) -> None:
    """A server whose template it cannot parse calls from hands the call back as text."""
    async with (
        FakeOpenAIServer([ServerAction.text(written)]) as server,
        chat_model(server, output_mode="tool") as model,
    ):
        reply = await model.complete(ASK)
    assert SPEC.parse(reply.message.content or "") == Place(city="Lyon", days=3)


async def test_an_executor_gets_its_object_through_the_final_tool() -> None:
    script = [ServerAction.text("Lyon, for 3 days."), FINAL]
    async with (
        FakeOpenAIServer(script) as server,
        chat_model(server, protocol="tools", output_mode="tool") as model,
    ):
        with anyio.fail_after(GUARD_S):
            report = await Executor(model, output_type=Place).run(TASK)
    server.assert_complete()
    assert report.status == "done"
    assert report.output == Place(city="Lyon", days=3)
    assert server.requests[1]["tools"][0]["function"]["name"] == "final_result"


async def typed_agent(step: Any, context: str = "") -> tuple[AgentReport, list[ModelRequest]]:
    """A typed agent whose steps answer `step` and whose object requests get Lyon, 3 days: its
    report, and the object requests it made."""
    routes: dict[str, Any] = {"step": step, "output": '{"city": "Lyon", "days": 3}'}
    model = FunctionModel(by_purpose(**routes))
    with anyio.fail_after(GUARD_S):
        report = await Executor(model, output_type=Place).run(TASK, context=context)
    return report, [r for r in model.requests if r.purpose == "output"]


async def test_an_agent_with_no_usable_answer_has_its_object_read_from_its_context() -> None:
    """Its answers all rejected (the task copied back), the agent's object is still written,
    from what it was given, and the report says partial and why."""
    report, asked = await typed_agent(TASK, context="The trip: Lyon, 3 days.")
    assert report.status == "partial"
    assert report.output == Place(city="Lyon", days=3)
    assert report.notes[-1].startswith("no usable answer: its object was read from")
    (request,) = asked
    assert "Given:\nThe trip: Lyon, 3 days." in (request.messages[-1].content or "")
    assert "Answer found" not in (request.messages[-1].content or "")


async def test_an_object_read_from_the_context_that_never_passes_is_kept_as_the_best() -> None:
    """The context shows no 3: the object goes back each time, and the last one of the right
    shape is kept, the report partial with both reasons."""
    report, asked = await typed_agent(TASK, context="The trip: Lyon, a few days.")
    assert report.status == "partial"
    assert report.output == Place(city="Lyon", days=3)
    assert any(note.startswith("no usable answer") for note in report.notes)
    assert report.notes[-1].startswith("no valid Place: numbers nothing you were given shows: 3")
    assert len(asked) == 3


async def test_an_agent_with_nothing_to_read_from_gets_no_object() -> None:
    report, asked = await typed_agent(TASK)
    assert report.output is None
    assert report.status != "done"
    assert asked == []


async def test_an_agent_stopped_by_an_error_asks_for_no_object() -> None:
    report, asked = await typed_agent(ModelRequestError("refused", status=400), "Lyon, 3 days.")
    assert report.status == "failed"
    assert report.stop_reason == "error"
    assert report.output is None
    assert asked == []


async def test_a_final_tools_strings_are_bounded_as_a_schemas_are() -> None:
    """`max_string_chars` bounds the final tool's strings too (a grammar-constrained small model
    otherwise runs on inside one)."""
    async with (
        FakeOpenAIServer([FINAL]) as server,
        chat_model(server, output_mode="tool", max_string_chars=40) as model,
    ):
        await model.complete(ASK)
    (final,) = server.requests[0]["tools"]
    assert final["function"]["parameters"]["properties"]["city"]["maxLength"] == 40
    assert "maxLength" not in SPEC.schema["properties"]["city"]
