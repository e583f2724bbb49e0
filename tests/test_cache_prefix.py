"""Cache-aware prompts: a run's sub-agents offered the same tools send one byte-identical prefix
(tools, instructions, the run's known facts) with what differs at the end; `CacheWarming` holds
the requests that share a long cold prefix until the first of them is answered, and never holds
a short or a warm one."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest

from agents import ChatModel, OpenAIChatModel, tool
from agents.errors import ModelRetryableError
from agents.models import CacheWarming, ModelRequest, stack
from agents.models._warm import prefix_of
from agents.testing import FakeOpenAIServer, ServerAction
from memory import InMemoryFactStore, SystemMessage, UserMessage
from orchestrator import Orchestrator, RunConfig

pytestmark = pytest.mark.anyio

GUARD_S = 20
LONG = "House rules for every answer. " * 200  # about 1,500 tokens


@tool
def lookup(key: str) -> str:
    """Look a key up."""
    return f"value of {key}"


def _sub_agent_turn(body: dict[str, Any]) -> ServerAction:
    """A sub-agent's turns: one lookup, then an answer naming its task."""
    task = next(m["content"] for m in body["messages"] if m["role"] == "user")
    if body["messages"][-1]["role"] == "tool":
        return ServerAction.text(f"done: {task.splitlines()[0]}")
    return ServerAction.tool_calls([("lookup", {"key": task.splitlines()[0][-1]})])


async def test_the_sub_agents_of_a_run_share_one_prefix_and_differ_at_the_end() -> None:
    plan = {
        "subtasks": [
            {"id": "a", "goal": "find a"},
            {"id": "b", "goal": "find b"},
            {"id": "c", "goal": "find c", "depends_on": ["a"]},
        ]
    }

    def script(body: dict[str, Any]) -> ServerAction:
        if "response_format" in body:
            return ServerAction.text(json.dumps(plan))
        if "tools" not in body:
            return ServerAction.text("The synthesis.")
        return _sub_agent_turn(body)

    facts = InMemoryFactStore()
    async with FakeOpenAIServer(script) as server:
        model = OpenAIChatModel(base_url=server.base_url, api_key="test", protocol="tools")
        orch = Orchestrator(model, [lookup], facts=facts, config=RunConfig(scope="s"))
        await orch.remember("budget", "500 EUR")
        with anyio.fail_after(GUARD_S):
            result = await orch.run("plan a trip")
        await model.aclose()
    assert result.complete
    firsts = [b for b in server.requests if "tools" in b and len(b["messages"]) == 2]
    assert len(firsts) == 3
    # Tools and system message, byte for byte, for the sub-agents offered the same tools: a,
    # which c reads, is not offered `answer_with_results` (a hosted endpoint's default); b
    # and c, whose results only the writer reads, are.
    by_menu: dict[str, set[str]] = {}
    for body in firsts:
        by_menu.setdefault(json.dumps(body["tools"]), set()).add(prefix_of(body))
    assert sorted(len(prefixes) for prefixes in by_menu.values()) == [1, 1]
    assert len({b["messages"][0]["content"] for b in firsts}) == 1
    system = firsts[0]["messages"][0]["content"]
    assert "- budget = 500 EUR (user, 1.0)" in system
    users = {b["messages"][1]["content"].splitlines()[0] for b in firsts}
    assert users == {"Task: find a", "Task: find b", "Task: find c"}
    (of_c,) = (
        b["messages"][1]["content"] for b in firsts if "find c" in b["messages"][1]["content"]
    )
    assert "[a] find a\nResult (done): done: Task: find a" in of_c  # its dependency, at the end


def _body(system: str, user: str = "hi", model: str = "m") -> dict[str, Any]:
    return {
        "model": model,
        "tools": [{"type": "function", "function": {"name": "lookup"}}],
        "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}],
    }


class Recorder:
    """A server script that answers after `delay_s` and records when each request came and went."""

    def __init__(self, delay_s: float = 0.2, fail_first: int = 0, together: int = 0) -> None:
        self.delay_s = delay_s
        self.fail_first = fail_first
        self.together = together  # hold answers until this many requests are in, at most 10 s
        self.all_in = anyio.Event()
        self.came: list[tuple[str, float]] = []
        self.went: list[tuple[str, float]] = []

    async def __call__(self, body: dict[str, Any]) -> ServerAction:
        user = body["messages"][-1]["content"]
        self.came.append((user, anyio.current_time()))
        if len(self.came) >= self.together:
            self.all_in.set()
        with anyio.move_on_after(10):
            await self.all_in.wait()
        await anyio.sleep(self.delay_s)
        self.went.append((user, anyio.current_time()))
        if len(self.went) <= self.fail_first:
            return ServerAction.status(503)
        return ServerAction.text(f"answer to {user}")


async def _ask_all(model: ChatModel, requests: list[ModelRequest]) -> list[str]:
    out: dict[int, str] = {}

    async def one(i: int, request: ModelRequest) -> None:
        try:
            response = await model.complete(request)
            out[i] = str(response.message.content)
        except ModelRetryableError as exc:
            out[i] = f"error: {exc}"

    async with anyio.create_task_group() as tg:
        for i, request in enumerate(requests):
            tg.start_soon(one, i, request)
    return [out[i] for i in range(len(requests))]


def _requests(system: str, n: int) -> list[ModelRequest]:
    return [
        ModelRequest(messages=(SystemMessage(content=system), UserMessage(content=f"q{i}")))
        for i in range(n)
    ]


async def _run(
    recorder: Recorder,
    requests: list[ModelRequest],
    warming: CacheWarming | None,
    *,
    max_retries: int = 3,
) -> list[str]:
    async with FakeOpenAIServer(recorder) as server:
        # No admission: its first contact with an endpoint holds the others as well.
        inner = OpenAIChatModel(base_url=server.base_url, api_key="test")
        model = stack(inner, max_retries=max_retries, warming=warming)
        with anyio.fail_after(GUARD_S):
            answers = await _ask_all(model, requests)
        await inner.aclose()
    return answers


async def test_requests_sharing_a_long_cold_prefix_wait_for_the_first_to_be_answered() -> None:
    recorder, warming = Recorder(), CacheWarming()
    answers = await _run(recorder, _requests(LONG, 5), warming)
    assert answers == [f"answer to q{i}" for i in range(5)]
    (_first, first_went), rest = recorder.went[0], recorder.came
    assert sum(1 for _user, at in rest if at < first_went) == 1  # only the writer came before
    assert warming.waited == 4
    # Warm now: a second wave goes at once, all three in at the server together.
    together = Recorder(together=3)
    await _run(together, _requests(LONG, 3), warming)
    assert warming.waited == 4
    assert max(at for _u, at in together.came) < min(at for _u, at in together.went)


async def test_a_short_prefix_or_no_warming_never_waits() -> None:
    for system, warming in (("Be brief.", CacheWarming()), (LONG, None)):
        recorder = Recorder(together=4)
        await _run(recorder, _requests(system, 4), warming)
        assert len(recorder.came) == 4
        assert max(at for _u, at in recorder.came) < min(at for _u, at in recorder.went)


async def test_different_prefixes_and_models_are_warmed_apart() -> None:
    warming = CacheWarming()
    keys = {
        warming._key(_body(LONG)),
        warming._key(_body(LONG + "!")),
        warming._key(_body(LONG, model="other")),
    }
    assert len(keys) == 3
    assert None not in keys
    assert warming._key(_body(LONG, user="something else")) in keys  # what differs is at the end
    recorder = Recorder()
    requests = _requests(LONG, 2) + _requests(LONG + " Other rules.", 2)
    await _run(recorder, requests, warming)
    first_went = recorder.went[0][1]
    assert sum(1 for _u, at in recorder.came if at < first_went) == 2  # one writer per prefix


async def test_a_failing_writer_hands_the_prefix_to_the_next_request() -> None:
    recorder, warming = Recorder(fail_first=1), CacheWarming()
    answers = await _run(recorder, _requests(LONG, 3), warming, max_retries=0)
    assert sorted(answers)[:2] == ["answer to q1", "answer to q2"]
    assert answers[0].startswith("error:")  # q0 came first and wrote
    assert warming.waited == 2  # each waiter counted once, q2 though it waited for two writers
    # The second writer came after the first failed, and the third after the second answered.
    came = [at for _u, at in recorder.came]
    went = [at for _u, at in recorder.went]
    assert came[1] >= went[0]
    assert came[2] >= went[1]


async def test_a_waiter_gives_up_after_max_wait() -> None:
    recorder, warming = Recorder(delay_s=1.0), CacheWarming(max_wait_s=0.1)
    await _run(recorder, _requests(LONG, 3), warming)
    came = [at for _u, at in recorder.came]
    assert max(came) - min(came) < 0.6  # the waiters went after 0.1 s, not after the writer's 1 s


async def test_a_prefix_unused_for_its_ttl_is_cold_again() -> None:
    recorder, warming = Recorder(delay_s=0.05), CacheWarming(ttl_s=0.1)
    await _run(recorder, _requests(LONG, 2), warming)
    assert warming.waited == 1
    await anyio.sleep(0.2)
    await _run(recorder, _requests(LONG, 2), warming)
    assert warming.waited == 2


def test_settings_out_of_range_are_refused() -> None:
    for bad in ({"min_tokens": 0}, {"ttl_s": 0.0}, {"max_wait_s": -1.0}):
        with pytest.raises(ValueError, match="need"):
            CacheWarming(**bad)
