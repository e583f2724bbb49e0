"""Hedged requests: a late request is sent again, the first answer taken and the other cancelled;
failures wait for the other copy; hedges stay within their share; a reply that has begun is not
hedged, however long it takes to write; a `HedgedModel` around `OpenAIChatModel` over real HTTP
beats a hang without waiting for the timeout, and charges the copy, but leaves a long streamed
answer alone."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio
import pytest

from agents import OpenAIChatModel
from agents.errors import ModelRetryableError
from agents.models import (
    Admission,
    AdmittedModel,
    HedgedModel,
    ModelRequest,
    ModelResponse,
    stack,
)
from agents.models._hedge import Hedging, first_token
from agents.testing import Completion, FakeOpenAIServer, ScriptedModel, ServerAction, TokenUsage
from memory import UserMessage

pytestmark = pytest.mark.anyio

ASK = ModelRequest(messages=(UserMessage(content="hi"),))


def _warm(kind: str = "step", seconds: float = 0.01, **settings: Any) -> Hedging:
    """A `Hedging` that has seen enough answers of `kind` to hedge after 2 × `seconds`."""
    hedging = Hedging(**settings)
    for _ in range(hedging.min_samples):
        hedging.observe(kind, seconds)
    return hedging


class Copies:
    """Attempt bodies, one per copy in the order they are sent; records which were cancelled."""

    def __init__(self, *bodies: Any) -> None:
        self.bodies = list(bodies)
        self.sent = 0
        self.cancelled: list[int] = []

    async def __call__(self) -> str:
        n = self.sent
        self.sent += 1
        try:
            return str(await self.bodies[n]())
        except anyio.get_cancelled_exc_class():
            self.cancelled.append(n)
            raise


async def _forever() -> str:
    await anyio.sleep_forever()
    raise AssertionError("unreachable")


async def _sixth_answer(
    decide: Callable[[dict[str, Any]], ServerAction], *, factor: float = 2.0
) -> tuple[ModelResponse, HedgedModel]:
    """`decide` behind a `HedgedModel` around `OpenAIChatModel` over real HTTP: five requests
    answered, then the sixth's answer, and the model."""
    async with FakeOpenAIServer(decide) as server:
        inner = OpenAIChatModel(base_url=server.base_url, api_key="k", timeout=30.0)
        model = HedgedModel(inner, factor=factor)
        for _ in range(5):
            await model.complete(ASK)
        with anyio.fail_after(10):
            response = await model.complete(ASK)
        await inner.aclose()
    return response, model


async def test_a_late_request_is_sent_again_and_the_first_answer_wins() -> None:
    hedging = _warm()
    assert hedging.delay("step") == pytest.approx(0.02)

    async def quick() -> str:
        return "hedge"

    copies = Copies(_forever, quick)
    with anyio.fail_after(5):
        result, hedged = await hedging.send("step", copies)
    assert (result, hedged) == ("hedge", True)
    assert copies.cancelled == [0]
    assert (hedging.requests, hedging.hedged) == (1, 1)


async def test_a_reply_that_has_begun_is_not_hedged_and_its_first_token_is_what_is_timed() -> None:
    """A long answer takes long because it is long: once its first token has come, no copy is
    sent, however far past the delay it ends; and the kind's latency is the wait for that token."""
    hedging = _warm(seconds=0.1, window=5)  # late after 0.2 s: far from a loaded host's stalls

    async def writes_long() -> str:
        await anyio.sleep(0.005)
        began = first_token()
        assert began is not None
        began()
        await anyio.sleep(0.5)  # well past the delay, spent writing
        return "long answer"

    copies = Copies(writes_long, _forever)
    with anyio.fail_after(5):
        assert await hedging.send("step", copies) == ("long answer", False)
    assert copies.sent == 1
    assert first_token() is None  # only inside a timed request
    for _ in range(hedging.window):
        await hedging.send("step", Copies(writes_long))
    delay = hedging.delay("step")
    assert delay is not None
    assert delay < 0.2  # twice the wait for its first token (the answers' 1 s or more)


async def test_no_hedge_before_enough_answers_of_that_kind() -> None:
    hedging = _warm(kind="plan")
    assert hedging.delay("step") is None

    async def slow() -> str:
        await anyio.sleep(0.05)
        return "one"

    copies = Copies(slow)
    assert await hedging.send("step", copies) == ("one", False)
    assert copies.sent == 1
    assert hedging.delay("step") is None  # one answer seen, five needed


async def test_a_kind_not_yet_timed_is_judged_by_every_kinds_first_tokens() -> None:
    """A run's one synthesis has no history of its own: where first tokens were timed, it is
    late after twice the factor times their median over every kind; answers timed whole (their
    length in them) say nothing about it."""
    whole = _warm(kind="step")
    assert whole.delay("synthesis") is None
    hedging = Hedging()
    for _ in range(hedging.min_samples):
        hedging.observe("step", 0.01, first_token=True)
    assert hedging.delay("synthesis") == pytest.approx(0.04)
    assert hedging.delay("step") == pytest.approx(0.02)  # its own, where it has one

    async def quick() -> str:
        return "hedge"

    with anyio.fail_after(5):
        assert await hedging.send("synthesis", Copies(_forever, quick)) == ("hedge", True)


async def test_an_early_failure_raises_at_once_without_a_hedge() -> None:
    async def refused() -> str:
        raise ModelRetryableError("HTTP 503")

    copies = Copies(refused, _forever)
    with pytest.raises(ModelRetryableError, match="503"):
        await _warm().send("step", copies)
    assert copies.sent == 1


async def test_a_copy_that_fails_waits_for_the_other() -> None:
    hedge_sent = anyio.Event()

    async def fails_late() -> str:
        await hedge_sent.wait()
        raise ModelRetryableError("connection reset")

    async def answers() -> str:
        hedge_sent.set()
        await anyio.sleep(0.02)
        return "hedge"

    with anyio.fail_after(5):
        assert await _warm().send("step", Copies(fails_late, answers)) == ("hedge", True)


async def test_when_both_copies_fail_the_first_ones_error_is_raised() -> None:
    hedge_sent = anyio.Event()

    async def first() -> str:
        await hedge_sent.wait()
        await anyio.sleep(0.02)
        raise ModelRetryableError("first")

    async def second() -> str:
        hedge_sent.set()
        raise ModelRetryableError("second")

    with anyio.fail_after(5), pytest.raises(ModelRetryableError, match="first"):
        await _warm().send("step", Copies(first, second))


async def test_hedges_stay_within_their_share_of_requests_and_one() -> None:
    hedging = _warm()

    async def quick() -> str:
        return "hedge"

    async def late() -> str:
        await anyio.sleep(0.1)
        return "late"

    # A tenth of the requests, and one more: the first two late requests are hedged, the third
    # (2 hedges of 3 requests) is not.
    assert await hedging.send("step", Copies(_forever, quick)) == ("hedge", True)
    assert await hedging.send("step", Copies(_forever, quick)) == ("hedge", True)
    copies = Copies(late, quick)
    assert await hedging.send("step", copies) == ("late", False)
    assert copies.sent == 1


async def test_a_request_sent_before_its_kind_was_timed_is_judged_once_it_is() -> None:
    """A run's first requests go out together: one that hangs is hedged as soon as enough of its
    siblings have answered to tell it is late."""
    hedging = Hedging()

    async def quick() -> str:
        return "hedge"

    found: list[tuple[str, bool]] = []

    async def first() -> None:
        found.append(await hedging.send("step", Copies(_forever, quick)))

    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(first)
            await anyio.sleep(0.05)
            assert found == []  # not judged yet: no answer of its kind
            for _ in range(hedging.min_samples):
                hedging.observe("step", 0.01)
    assert found == [("hedge", True)]


@pytest.mark.parametrize(
    "settings", [{"factor": 1.0}, {"min_samples": 0}, {"window": 2}, {"max_share": 0.0}]
)
def test_settings_out_of_range_are_refused(settings: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match="need"):
        HedgedModel(ScriptedModel([]), **settings)


async def test_the_model_beats_a_hang_with_a_hedge_and_charges_the_copy() -> None:
    """Over HTTP: after five quick answers the sixth request hangs; its hedge answers long
    before the 30 s timeout, and the answer's usage counts twice."""
    seen = 0

    def decide(body: dict[str, Any]) -> ServerAction:
        nonlocal seen
        seen += 1
        if seen == 6:
            return ServerAction.hang()
        return ServerAction.text(
            f"answer {seen}", usage=TokenUsage(prompt_tokens=10, completion_tokens=2)
        )

    response, model = await _sixth_answer(decide)
    assert response.message.content == "answer 7"
    assert (response.usage.requests, response.usage.prompt_tokens) == (2, 20)
    assert model.hedged == 1


async def test_no_hedge_against_an_endpoint_with_rate_limits() -> None:
    """An endpoint that shows limits is never sent copies: admission counts on each request."""
    seen = 0
    limits = (("x-ratelimit-limit-requests", "1000"), ("x-ratelimit-remaining-requests", "999"))

    def decide(body: dict[str, Any]) -> ServerAction:
        nonlocal seen
        seen += 1
        if seen == 6:
            return ServerAction.hang(0.5)
        return Completion(content="ok", usage=TokenUsage(), headers=limits)

    async with FakeOpenAIServer(decide) as server:
        admission = Admission()
        inner = OpenAIChatModel(
            base_url=server.base_url, api_key="k", timeout=0.3, rate_limits=admission
        )
        model = stack(inner, max_retries=0, admission=admission, hedging=True)
        hedged = model.inner if isinstance(model, AdmittedModel) else None
        assert isinstance(hedged, HedgedModel)  # admission outside, hedging within
        for _ in range(5):
            await model.complete(ASK)
        assert admission.limited
        with pytest.raises(ModelRetryableError, match="no reply within"):
            await model.complete(ASK)
        await inner.aclose()
    assert seen == 6
    assert hedged.hedged == 0


async def test_the_model_streams_a_timed_request_and_leaves_a_long_answer_alone() -> None:
    """Over HTTP: the requests a hedge times are streamed; after five quick answers, the sixth
    is written slowly (a second from its first token to its last), and no copy is sent (late
    after 50 times the quick ones' wait, a margin over a loaded host's stalls that timing whole
    answers would still pass)."""
    bodies: list[dict[str, Any]] = []

    def decide(body: dict[str, Any]) -> ServerAction:
        bodies.append(body)
        slow = len(bodies) == 6
        return Completion(
            content=" ".join(["word"] * 40) if slow else "ok",
            usage=TokenUsage(prompt_tokens=10, completion_tokens=40 if slow else 1),
            stream_s=1.0 if slow else 0.0,
        )

    response, model = await _sixth_answer(decide, factor=50.0)
    assert response.message.content == " ".join(["word"] * 40)
    assert (response.usage.requests, response.usage.prompt_tokens) == (1, 10)
    assert model.hedged == 0
    assert len(bodies) == 6
    assert all(body.get("stream") is True for body in bodies)
