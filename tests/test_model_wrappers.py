"""Model wrappers: retries, admission, hedging and cache warming around any `ChatModel`, a scripted
one and paor's own client alike, composed in the usual order by `stack`."""

from __future__ import annotations

import anyio
import pytest

from agents import OpenAIChatModel
from agents.errors import ModelRequestError, ModelRetryableError
from agents.models import (
    Admission,
    AdmittedModel,
    CacheWarming,
    CacheWarmingModel,
    HedgedModel,
    ModelRequest,
    ModelResponse,
    RetryingModel,
    stack,
    unwrapped,
    without_retries,
)
from agents.testing import FakeOpenAIServer, FunctionModel, ServerAction
from memory import AssistantMessage, SystemMessage, UserMessage

pytestmark = pytest.mark.anyio
GUARD_S = 10  # a guard against hangs, not a timing claim
ASK = ModelRequest(messages=(UserMessage(content="hi"),))


def failing(*errors: Exception) -> FunctionModel:
    """A model that raises `errors` in turn, then answers "ok"."""
    left = list(errors)

    def answer(_request: ModelRequest) -> AssistantMessage | Exception:
        return left.pop(0) if left else AssistantMessage(content="ok")

    return FunctionModel(answer)


async def test_retrying_retries_transient_failures_then_answers() -> None:
    inner = failing(ModelRetryableError("busy", status=503), ModelRetryableError("busy"))
    model = RetryingModel(inner, max_retries=2, backoff=0.0)
    with anyio.fail_after(GUARD_S):
        response = await model.complete(ASK)
    assert response.message.content == "ok"
    assert len(inner.requests) == 3
    assert model.name == inner.name


async def test_retrying_gives_up_after_its_retries_and_leaves_the_rest_alone() -> None:
    inner = failing(*(ModelRetryableError("busy") for _ in range(5)))
    with anyio.fail_after(GUARD_S), pytest.raises(ModelRetryableError, match="busy"):
        await RetryingModel(inner, max_retries=2, backoff=0.0).complete(ASK)
    assert len(inner.requests) == 3
    refused = failing(ModelRequestError("bad request", status=400))
    with pytest.raises(ModelRequestError):
        await RetryingModel(refused, backoff=0.0).complete(ASK)
    assert len(refused.requests) == 1
    silent = failing(ModelRetryableError("went silent", resend=False))
    with pytest.raises(ModelRetryableError, match="went silent"):
        await RetryingModel(silent, backoff=0.0).complete(ASK)
    assert len(silent.requests) == 1  # a local server still at work gets no copy


def test_retrying_waits_within_bounds() -> None:
    model = RetryingModel(failing(), backoff=0.5, max_backoff=2.0)
    assert model.delay(0, 1.5) == 1.5  # the server's Retry-After
    assert model.delay(0, 1e9) == 2.0  # capped
    assert 0.25 <= model.delay(0, None) <= 0.5  # jittered backoff
    assert model.delay(10, None) == 2.0
    assert 0.25 <= model.delay(0, float("nan")) <= 0.5


async def test_admission_learns_a_429_from_any_model_and_holds_the_next_request() -> None:
    admission = Admission()
    inner = failing(ModelRetryableError("slow down", status=429, retry_after=0.05))
    model = RetryingModel(AdmittedModel(inner, admission), backoff=0.0)
    with anyio.fail_after(GUARD_S):
        response = await model.complete(ASK)
    assert response.message.content == "ok"
    assert admission.refused == 1
    assert admission.limited


async def test_hedging_sends_a_late_request_again_and_bills_both_copies() -> None:
    calls = 0

    async def answer(_request: ModelRequest) -> AssistantMessage:
        nonlocal calls
        calls += 1
        if calls == 1:
            await anyio.sleep(GUARD_S)  # the first copy hangs
        return AssistantMessage(content="ok")

    model = HedgedModel(FunctionModel(answer), min_samples=1, window=1)
    model.hedging.observe("step", 0.01)  # requests of this kind answer in 10 ms
    with anyio.fail_after(GUARD_S - 1):
        response = await model.complete(ASK)
    assert response.message.content == "ok"
    assert calls == 2
    assert model.hedged == 1
    assert response.usage.requests == 2  # the copy that lost is billed too


async def test_hedging_stays_off_while_the_endpoint_shows_limits() -> None:
    admission = Admission()
    admission.observe({"retry-after": "0"}, 429)  # the endpoint has limits
    model = HedgedModel(failing(), min_samples=1, window=1, admission=admission)
    model.hedging.observe("step", 0.0001)
    with anyio.fail_after(GUARD_S):
        await model.complete(ASK)
    assert model.hedging.requests == 0


async def test_cache_warming_holds_a_shared_prefix_until_its_first_request_is_answered() -> None:
    order: list[str] = []

    async def answer(request: ModelRequest) -> AssistantMessage:
        who = request.messages[-1].content or ""
        order.append(f"{who} sent")
        await anyio.sleep(0.05)
        order.append(f"{who} answered")
        return AssistantMessage(content="ok")

    prefix = SystemMessage(content="A long shared prompt. " * 50)
    model = CacheWarmingModel(FunctionModel(answer), CacheWarming(min_tokens=10))

    async def ask(who: str) -> None:
        await model.complete(ModelRequest(messages=(prefix, UserMessage(content=who))))

    with anyio.fail_after(GUARD_S):
        async with anyio.create_task_group() as tg:
            tg.start_soon(ask, "a")
            await anyio.sleep(0.01)
            tg.start_soon(ask, "b")
    assert order == ["a sent", "a answered", "b sent", "b answered"]


def test_stack_composes_the_usual_order_and_temporal_leaves_retries_out() -> None:
    inner = failing()
    admission = Admission()
    model = stack(inner, admission=admission, hedging=True, warming=CacheWarming())
    assert isinstance(model, RetryingModel)
    assert isinstance(model.inner, CacheWarmingModel)
    assert isinstance(model.inner.inner, AdmittedModel)
    assert isinstance(model.inner.inner.inner, HedgedModel)
    assert unwrapped(model) is inner
    bare = without_retries(model)
    assert isinstance(bare, CacheWarmingModel)
    assert unwrapped(bare) is inner
    assert isinstance(model.inner, CacheWarmingModel)  # the original is untouched
    assert stack(inner, max_retries=0) is inner


async def test_paor_own_client_sends_once_and_is_retried_by_the_wrapper() -> None:
    """The protocol model sends a request once; the same client in `stack` retries a 503 and
    its admission learns from the answers' headers."""
    async with FakeOpenAIServer([ServerAction.status(503)]) as server:
        bare = OpenAIChatModel(base_url=server.base_url, api_key="k")
        with anyio.fail_after(GUARD_S), pytest.raises(ModelRetryableError):
            await bare.complete(ASK)
        await bare.aclose()
        assert len(server.requests) == 1
    script = [ServerAction.status(503), ServerAction.text("ok")]
    async with FakeOpenAIServer(script) as server:
        admission = Admission()
        client = OpenAIChatModel(base_url=server.base_url, api_key="k", rate_limits=admission)
        model = stack(client, admission=admission, backoff=0.0)
        with anyio.fail_after(GUARD_S):
            response: ModelResponse = await model.complete(ASK)
        await client.aclose()
    server.assert_complete()
    assert response.message.content == "ok"
    assert admission.answered
