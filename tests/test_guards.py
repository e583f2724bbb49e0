"""Guards: the budget ledger and its parent chain, and loop detection."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from agents import AgentLimits, Budget, Usage
from agents._guards import LoopDetector

pytestmark = pytest.mark.anyio


def test_limits_reject_impossible_values() -> None:
    """AgentLimits refuse zero steps, a non-positive deadline and a zero token cap."""
    for bad in ({"max_steps": 0}, {"deadline_s": 0}, {"max_tokens": 0}, {"max_tool_calls": -1}):
        with pytest.raises(ValidationError):
            AgentLimits.model_validate(bad)


def test_from_limits_turns_the_deadline_absolute() -> None:
    """A ledger built from limits carries their caps and a deadline relative to `now`."""
    limits = AgentLimits(deadline_s=10, max_tokens=100, max_requests=3, max_tool_calls=4)
    budget = Budget.from_limits(limits, now=1000.0)
    assert (budget.deadline, budget.max_tokens) == (1010.0, 100)
    assert (budget.max_requests, budget.max_tool_calls) == (3, 4)
    assert Budget.from_limits(AgentLimits(), now=5.0).deadline is None


def test_child_charges_its_parent() -> None:
    """Spending in a child ledger is recorded in every ancestor too."""
    root = Budget()
    parent = Budget(parent=root)
    child = Budget(parent=parent)
    child.charge(Usage(requests=1, prompt_tokens=7, completion_tokens=3, tool_calls=2))
    parent.charge(Usage(requests=1))
    assert child.used == Usage(requests=1, prompt_tokens=7, completion_tokens=3, tool_calls=2)
    assert parent.used.requests == 2
    assert root.used.requests == 2
    assert root.used.total_tokens == 10


@pytest.mark.parametrize(
    ("cap", "spent", "reason"),
    [
        ({"max_tokens": 10}, Usage(prompt_tokens=6, completion_tokens=4), "tokens"),
        ({"max_requests": 2}, Usage(requests=2), "requests"),
        ({"max_tool_calls": 1}, Usage(tool_calls=1), "tool_calls"),
    ],
)
def test_each_cap_is_an_exit(cap: dict[str, int], spent: Usage, reason: str) -> None:
    """Reaching a cap names that cap as the reason to stop."""
    budget = Budget(**cap)  # type: ignore[arg-type]
    assert budget.exhausted(0.0) is None
    budget.charge(spent)
    assert budget.exhausted(0.0) == reason


def test_parent_exhaustion_stops_the_child() -> None:
    """A child with room of its own is exhausted when its parent is."""
    parent = Budget(max_tokens=100)
    child = Budget(max_tokens=1000, parent=parent)
    sibling = Budget(parent=parent)
    sibling.charge(Usage(prompt_tokens=100))
    assert child.used.total_tokens == 0
    assert child.exhausted(0.0) == "tokens"
    assert child.tokens_left() == 0


def test_deadline_exhaustion() -> None:
    """A ledger is exhausted from its deadline on, also by a parent's deadline."""
    parent = Budget(deadline=50.0)
    child = Budget(deadline=100.0, parent=parent)
    assert child.exhausted(49.9) is None
    assert child.exhausted(50.0) == "deadline"


def test_time_left_takes_the_tightest_deadline() -> None:
    """time_left is measured to the nearest deadline in the chain, and never goes negative."""
    root = Budget(deadline=130.0)
    parent = Budget(deadline=None, parent=root)
    child = Budget(deadline=200.0, parent=parent)
    assert child.time_left(100.0) == 30.0
    assert Budget(deadline=90.0, parent=child).time_left(100.0) == 0.0
    assert Budget().time_left(100.0) is None


def test_tool_calls_left_takes_the_tightest_cap() -> None:
    """tool_calls_left is the smallest remainder of any cap in the chain."""
    parent = Budget(max_tool_calls=5)
    child = Budget(max_tool_calls=10, parent=parent)
    assert child.tool_calls_left() == 5
    child.charge(Usage(tool_calls=4))
    assert child.tool_calls_left() == 1
    child.charge(Usage(tool_calls=3))
    assert child.tool_calls_left() == 0
    assert Budget().tool_calls_left() is None


def test_requests_left_and_nearest_deadline_read_the_whole_chain() -> None:
    """requests_left is the smallest remainder of any request cap (never negative), and
    nearest_deadline the earliest deadline in the chain: what a child running elsewhere gets."""
    parent = Budget(max_requests=3, deadline=50.0)
    child = Budget(max_requests=10, deadline=80.0, parent=parent)
    assert (child.requests_left(), child.nearest_deadline()) == (3, 50.0)
    child.charge(Usage(requests=5))
    assert child.requests_left() == 0
    assert (Budget().requests_left(), Budget().nearest_deadline()) == (None, None)


def _turn(name: str, **arguments: object) -> list[tuple[str, str]]:
    return [(name, json.dumps(arguments))]


def test_repeated_call_is_noticed() -> None:
    """The same tool with the same arguments again is reported by name."""
    detector = LoopDetector()
    assert detector.observe(_turn("search", q="cats"), ["d1"]) is None
    assert detector.observe(_turn("search", q="dogs"), ["d2"]) is None
    found = detector.observe(_turn("search", q="cats"), ["d3"])
    assert found == "you already called search with these same arguments"


def test_repeats_are_compared_after_normalising() -> None:
    """Case, whitespace and key order do not make a call new."""
    detector = LoopDetector()
    first = [("search", '{"query": "Paris  hotels", "filters": {"Stars": 4, "area": "Centre"}}')]
    again = [("search", '{"filters":{"area":"centre","Stars":4},"query":"  paris hotels "}')]
    assert detector.observe(first, ["d1"]) is None
    assert detector.observe(again, ["d2"]) is not None


def test_different_arguments_are_not_a_repeat() -> None:
    """Normalising keeps values and key names apart: other values are a new call."""
    detector = LoopDetector()
    assert detector.observe(_turn("search", q="cats"), ["d1"]) is None
    assert detector.observe(_turn("search", q="cats", page=2), ["d2"]) is None
    assert detector.observe(_turn("lookup", q="cats"), ["d3"]) is None


def test_repeats_outside_the_window_are_forgotten() -> None:
    """A repeat further back than `window` calls is not a loop."""
    detector = LoopDetector(window=2)
    assert detector.observe(_turn("search", q="a"), ["d1"]) is None
    assert detector.observe(_turn("search", q="b"), ["d2"]) is None
    assert detector.observe(_turn("search", q="c"), ["d3"]) is None
    assert detector.observe(_turn("search", q="a"), ["d4"]) is None


def test_ping_pong_is_noticed() -> None:
    """Alternating between two actions (A-B-A-B) is reported as such."""
    detector = LoopDetector(window=1)
    a, b = _turn("weather", city="Oslo"), _turn("flights", to="Oslo")
    assert detector.observe(a, ["d1"]) is None
    assert detector.observe(b, ["d2"]) is None
    assert detector.observe(a, ["d3"]) is None
    assert detector.observe(b, ["d4"]) == (
        "you are alternating between the same two actions (A-B-A-B)"
    )


def test_ping_pong_wins_over_the_repeat_message() -> None:
    """When a turn completes A-B-A-B and repeats a call, the more telling A-B-A-B is reported."""
    detector = LoopDetector()
    a, b = _turn("weather", city="Oslo"), _turn("flights", to="Oslo")
    for turn, obs in ((a, "d1"), (b, "d2"), (a, "d3")):
        detector.observe(turn, [obs])
    assert detector.observe(b, ["d4"]) == (
        "you are alternating between the same two actions (A-B-A-B)"
    )


def test_stale_observations_are_noticed() -> None:
    """Turns in a row that bring only observations already seen count as stuck."""
    detector = LoopDetector(stale_turns=2)
    assert detector.observe(_turn("search", q="a"), ["same"]) is None
    assert detector.observe(_turn("search", q="b"), ["same"]) is None
    found = detector.observe(_turn("search", q="c"), ["same"])
    assert found == "your last 2 turns returned nothing you had not already seen"


def test_a_fresh_observation_resets_staleness() -> None:
    """One new observation in a turn breaks a stale streak."""
    detector = LoopDetector(stale_turns=2)
    detector.observe(_turn("search", q="a"), ["x"])
    detector.observe(_turn("search", q="b"), ["x"])
    assert detector.observe(_turn("search", q="c"), ["x", "new"]) is None
    assert detector.observe(_turn("search", q="d"), ["x"]) is None


def test_one_retry_after_a_failure_is_not_a_loop_but_a_second_is() -> None:
    """A call that just failed may be repeated once (a transient failure); then it is a loop."""
    detector = LoopDetector()
    assert detector.observe(_turn("fetch", url="u"), ["e1"], [True]) is None
    assert detector.observe(_turn("fetch", url="u"), ["e2"], [True]) is None
    found = detector.observe(_turn("fetch", url="u"), ["e3"], [True])
    assert found == "you already called fetch with these same arguments"


def test_failing_on_one_target_with_only_a_number_changed_is_a_loop() -> None:
    """read_doc on the same missing doc with chunk 0, 1, 2 is stuck; success resets the count."""
    detector = LoopDetector()
    assert detector.observe(_turn("read_doc", doc="x", chunk=0), ["e0"], [True]) is None
    assert detector.observe(_turn("read_doc", doc="x", chunk=1), ["e1"], [True]) is None
    found = detector.observe(_turn("read_doc", doc="x", chunk=2), ["e2"], [True])
    assert found == "read_doc failed 3 times on the same target with only a number changed"
    paging = LoopDetector()
    for chunk in range(5):
        assert (
            paging.observe(_turn("read_doc", doc="y", chunk=chunk), [f"p{chunk}"], [False]) is None
        )
