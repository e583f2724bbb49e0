"""The simulator's provider (caching rules, rate limits), the parallel-tool-call baseline, and paor's
provider-aware admission against a rate-limited endpoint."""

from __future__ import annotations

import math

import anyio
import pytest

from agents import ChatModel, OpenAIChatModel
from agents._streaming import text_to
from agents.models import Admission, ModelRequest, stack
from agents.models._admission import parse_reset
from agents.testing import Completion, FakeOpenAIServer, ServerAction, TokenUsage
from agents.testing._actions import ServerScript
from benchmarks._catalogue import SCENARIOS
from benchmarks._endpoints import SimServer
from benchmarks._provider import CacheRules, RateLimiter, RateLimits, go_duration
from benchmarks._react import run_parallel
from benchmarks._sim import Reply, Simulator, Who
from memory import UserMessage

pytestmark = pytest.mark.anyio


def test_cache_rules_cache_from_1024_tokens_in_steps_of_128() -> None:
    rules = CacheRules()
    assert [rules.cached(n) for n in (0, 1023, 1024, 1151, 1152, 5000)] == [
        0,
        0,
        1024,
        1024,
        1152,
        4992,
    ]


def test_the_rate_limiter_refuses_past_the_bucket_and_says_when() -> None:
    limiter = RateLimiter(RateLimits(tokens=1000, window_s=1.0), start=0.0)
    assert limiter.take(600, 0.0) is None
    wait = limiter.take(600, 0.0)
    assert wait == pytest.approx(0.2)  # 200 missing at 1000 per second
    assert limiter.take(600, 0.2) is None
    headers = limiter.headers(0.2)
    assert headers["x-ratelimit-limit-tokens"] == "1000"
    assert headers["x-ratelimit-remaining-tokens"] == "0"
    assert parse_reset(headers["x-ratelimit-reset-tokens"]) == pytest.approx(1.0)


def test_the_limiters_headers_for_a_stream_leave_its_clock_where_it_was() -> None:
    """A streamed reply's headers leave at its first token; a request arriving after them but
    timed before an earlier refill (answers race) adds nothing and takes nothing away."""
    limiter = RateLimiter(RateLimits(tokens=1000, window_s=1.0), start=0.0)
    assert limiter.take(1000, now=0.0) is None
    assert limiter.headers(now=0.5)["x-ratelimit-remaining-tokens"] == "500"
    assert limiter.take(450, now=0.4) is None  # 500 there: the clock does not run backwards


def test_reset_durations_parse_as_openai_writes_them() -> None:
    assert parse_reset("6m0s") == 360.0
    assert parse_reset("1.5s") == 1.5
    assert parse_reset("20ms") == pytest.approx(0.02)
    assert parse_reset("2") == 2.0
    assert parse_reset("soon") is None
    assert parse_reset("-1") is None
    assert parse_reset("") is None
    for seconds in (0.02, 1.5, 75.25):
        assert parse_reset(go_duration(seconds)) == pytest.approx(seconds, abs=1e-3)


async def test_the_parallel_agent_makes_every_ready_lookup_in_one_turn() -> None:
    scenario = SCENARIOS["S3"]
    record = await run_parallel(scenario)
    assert record.error is None
    turns = [e for e in record.log if e.who.kind == "par"]
    assert len(turns) == len(scenario.par_turns) + 1
    assert sorted(t.key for t in record.tools) == sorted(k for b in scenario.par_turns for k in b)
    # Dependencies hold: c1's lookup comes in a later turn than l1's and l2's last.
    order = {k: i for i, batch in enumerate(scenario.par_turns) for k in batch}
    assert order["c1.0"] > max(order["l1.0"], order["l2.1"])


class _Words:
    """A script answering every request with a short text (the prompt is what counts)."""

    def reply(self, who: Who) -> Reply:
        return Reply(content="done")

    def slow(self, who: Who) -> float:
        return 1.0


async def _burst(model: ChatModel, n: int) -> None:
    async def one(i: int) -> None:
        text = f"Task: [goal:g{i}] " + " ".join(f"w{i}x{j}" for j in range(300))
        await model.complete(ModelRequest(messages=(UserMessage(content=text),)))

    async with anyio.create_task_group() as tg:
        for i in range(n):
            tg.start_soon(one, i)


@pytest.mark.parametrize("admission", [True, False])
async def test_admission_keeps_a_burst_within_the_token_limit(admission: bool) -> None:
    """Twelve concurrent requests of ~300 tokens against 1,500 tokens per 0.5 s: with admission
    none is refused and all pass; without it the endpoint refuses many (and retries absorb them)."""
    sim = Simulator(_Words(), limits=RateLimits(tokens=1500, window_s=0.5))
    limits = Admission() if admission else None
    async with SimServer(sim) as server:
        inner = OpenAIChatModel("sim", base_url=server.base_url, api_key="sim", rate_limits=limits)
        model = stack(inner, max_retries=10, admission=limits)
        with anyio.fail_after(30):
            await _burst(model, 12)
        await inner.aclose()
    refused = sum(1 for e in sim.log if e.fault == "429")
    answered = sum(1 for e in sim.log if e.fault is None)
    assert answered == 12
    if limits is not None:
        assert refused == 0
        assert limits.limited
    else:
        assert refused > 0


async def test_admission_learns_from_a_429_without_headers_and_holds_everyone() -> None:
    admission = Admission()
    with anyio.fail_after(5):
        admission.observe({"retry-after-ms": "200"}, 429)
        start = anyio.current_time()
        await admission.admit(10)
        assert anyio.current_time() - start >= 0.19
    assert admission.refused == 1


async def test_a_local_endpoint_without_limits_is_never_held() -> None:
    sim = Simulator(_Words())
    admission = Admission()
    async with SimServer(sim) as server:
        inner = OpenAIChatModel(
            "sim", base_url=server.base_url, api_key="sim", rate_limits=admission
        )
        await _burst(stack(inner, admission=admission), 4)
        await inner.aclose()
    assert admission.answered
    assert not admission.limited


async def _stream_then_ask(decide: ServerScript, arrived: anyio.Event) -> list[str]:
    """Send a streamed request and, once the server has it, a plain one on the same model: the
    order they finished in (the streamed one is cancelled if the plain one finished first)."""
    order: list[str] = []

    async def ignore(piece: str, restart: bool) -> None:
        return None

    async with FakeOpenAIServer(decide) as server:
        admission = Admission()
        inner = OpenAIChatModel(
            base_url=server.base_url, api_key="k", protocol="tools", rate_limits=admission
        )
        model = stack(inner, admission=admission)
        request = ModelRequest(messages=(UserMessage(content="hi"),))

        async def streamed() -> None:
            with text_to(ignore):
                await model.complete(request)
            order.append("streamed")

        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(streamed)
                with anyio.fail_after(10):
                    await arrived.wait()
                    await model.complete(request)
                order.append("second")
                tg.cancel_scope.cancel()
        finally:
            await inner.aclose()
    return order


async def test_a_streamed_first_answer_releases_the_held_callers_at_its_headers() -> None:
    """Until the endpoint has answered once, one request goes out at a time; a streamed first
    answer from an endpoint showing no limit counts from its headers, so a long plan stream does
    not hold the sub-agents."""
    arrived = anyio.Event()

    def decide(body: dict[str, object]) -> Completion:
        if body.get("stream") is True:  # the first request: a slow stream
            arrived.set()
            return Completion(content="word " * 40, stream_s=30.0)
        return ServerAction.text("quick")

    assert await _stream_then_ask(decide, arrived) == ["second"]


async def test_a_limited_endpoints_streamed_first_answer_releases_the_others_at_its_headers() -> (
    None
):
    """An endpoint that shows limits in its first answer's headers releases the held callers at
    them too: a plan streaming for seconds does not hold the subtasks it has written, which are
    admitted within what the headers allow."""
    limits = (
        ("x-ratelimit-limit-tokens", "100000"),
        ("x-ratelimit-remaining-tokens", "99000"),
        ("x-ratelimit-reset-tokens", "1s"),
    )
    arrived = anyio.Event()
    usage = TokenUsage(prompt_tokens=10, completion_tokens=40)

    def decide(body: dict[str, object]) -> Completion:
        if body.get("stream") is True:
            arrived.set()
            return Completion(content="word " * 40, stream_s=30.0, headers=limits, usage=usage)
        return Completion(content="quick", headers=limits, usage=usage)

    assert await _stream_then_ask(decide, arrived) == ["second"]


def test_estimates_are_cautious_until_a_usage_then_carry_their_own_errors() -> None:
    """Before any usage, two characters a token (half the usual) and 15% over; the first usage
    sets the measure; after eight more, the headroom is the most the estimates fell short by."""
    admission = Admission()
    assert admission.estimate(400) == math.ceil(400 / 2 * 1.15)
    admission.settle(admission.estimate(400), 400, prompt=100, completion=10)
    assert admission.estimate(400) == math.ceil((400 / 4 + 10) * 1.15)  # measured, 15% over
    for _ in range(8):  # each reply counts what was guessed: estimates need no headroom
        admission.settle(admission.estimate(400), 400, prompt=100, completion=10)
    assert admission.headroom == pytest.approx(1.0)
    admission.settle(admission.estimate(400), 400, prompt=111, completion=10)  # 10% short
    assert admission.headroom == pytest.approx(1.1, abs=0.01)
    assert admission.estimate(400) >= 121  # what that reply counted
    admission.settle(admission.estimate(400), 400, prompt=100, completion=2000)  # a long answer
    assert admission.headroom == pytest.approx(1.5)  # bounded: it says little of the next ones
