"""The scenarios, S0 to S13: the timed DAGs (`SCENARIOS`) and the special-purpose ones (S0 for
overhead, S7 for memory, S8 for prompt-prefix stability). What a scenario is, and how its critical
path is computed, is `benchmarks._scenarios`."""

from __future__ import annotations

import random

from benchmarks._scenarios import DEFAULT_LATENCY, Replan, Scenario, Sub, goal_of
from benchmarks._sim import LatencyModel

__all__ = ["SCENARIOS", "fan_out", "s0", "s6", "s7", "s8", "s13"]


def fan_out(
    name: str,
    title: str,
    n: int,
    *,
    steps: int = 1,
    tool_tokens: int = 200,
    latency: LatencyModel = DEFAULT_LATENCY,
) -> Scenario:
    """N independent subtasks."""
    plan = tuple(Sub(id=f"t{i}", steps=steps) for i in range(n))
    return Scenario(name=name, title=title, plan=plan, tool_tokens=tool_tokens, latency=latency)


def s0() -> Scenario:
    """S0: one sub-agent, model, tool, model; zero latency (framework overhead only)."""
    zero = LatencyModel(ttft_s=0.0, per_token_s=0.0, tool_s=0.0)
    return Scenario(
        name="S0", title="Zero-latency overhead", plan=(Sub(id="s0"),), tool_tokens=20, latency=zero
    )


def s7(n: int) -> Scenario:
    """S7: n concurrent one-lookup sub-agents; zero latency (memory only)."""
    zero = LatencyModel(ttft_s=0.0, per_token_s=0.0, tool_s=0.0)
    return fan_out("S7", f"{n} concurrent sub-agents", n, tool_tokens=20, latency=zero)


def s8() -> Scenario:
    """S8: one sub-agent of 30 lookups (tokens and prefix stability); fast latencies."""
    fast = LatencyModel(seed=8, ttft_s=0.01, per_token_s=0.0005, tool_s=0.005, jitter=0.2)
    return Scenario(
        name="S8", title="A 30-step sub-agent", plan=(Sub(id="s8", steps=30),), latency=fast
    )


def _s3() -> Scenario:
    plan = (
        Sub(id="l1", steps=1),
        Sub(id="l2", steps=2),
        Sub(id="l3", steps=3),
        Sub(id="l4", steps=1),
        Sub(id="c1", deps=("l1", "l2"), steps=1),
        Sub(id="c2", deps=("l3", "l4"), steps=2),
        Sub(id="f", deps=("c1", "c2"), steps=1),
    )
    return Scenario(name="S3", title="Dependent DAG: lookups, then combining steps", plan=plan)


def _s4() -> Scenario:
    plan = (Sub(id="a", steps=2, invalidates="source A was retracted"), Sub(id="x", steps=5))
    replans = (
        Replan(
            trigger="a", add=(Sub(id="b", deps=("a",), steps=2, invalidates="source B disagrees"),)
        ),
        Replan(trigger="b", add=(Sub(id="c", deps=("b",), steps=2),)),
    )
    return Scenario(name="S4", title="Iterative replanning", plan=plan, replans=replans)


def _s5() -> Scenario:
    plan = (
        Sub(id="a", steps=3),
        Sub(id="b", steps=1, invalidates="b's premise is false"),
        Sub(id="c", steps=5),
        Sub(id="d", deps=("a",), steps=1),
        Sub(id="e", deps=("b",), steps=2),
        Sub(id="f", deps=("d", "e"), steps=1),
    )
    replan = Replan(
        trigger="b",
        remove=("c", "e", "f"),
        add=(Sub(id="e2", deps=("b",), steps=2), Sub(id="f2", deps=("d", "e2"), steps=1)),
    )
    return Scenario(
        name="S5", title="Mid-graph invalidation: cancel and replan", plan=plan, replans=(replan,)
    )


def s6(seed: int) -> Scenario:
    """S6: a random wide and deep DAG (5 layers of 2 to 5 subtasks, 1 to 3 lookups each)."""
    rng = random.Random(seed)
    layers: list[list[Sub]] = []
    for depth in range(5):
        layer = []
        for i in range(rng.randint(2, 5)):
            earlier = [s.id for lay in layers[-2:] for s in lay]
            deps = (
                tuple(sorted(rng.sample(earlier, min(len(earlier), rng.randint(1, 2)))))
                if earlier
                else ()
            )
            slow = 2.0 if rng.random() < 0.15 else 1.0
            layer.append(Sub(id=f"n{depth}{i}", deps=deps, steps=rng.randint(1, 3), slow=slow))
        layers.append(layer)
    plan = tuple(s for layer in layers for s in layer)
    return Scenario(name=f"S6.{seed}", title="Random wide and deep DAG", plan=plan)


def _s2() -> Scenario:
    plan = tuple(Sub(id=f"s{i}", steps=4, slow=2.0 if i in (2, 6) else 1.0) for i in range(8))
    return Scenario(name="S2", title="Eight-way fan-out with stragglers", plan=plan)


def _s9() -> Scenario:
    """Six three-lookup branches and two combining steps, with heavy-tailed latencies: one model
    or tool call in twelve takes ten times as long, as a provider's queue or a slow page does."""
    heavy = LatencyModel(
        seed=9, ttft_s=0.06, per_token_s=0.001, tool_s=0.08, jitter=0.3, tail_p=1 / 12, tail_x=10.0
    )
    roots = tuple(Sub(id=f"h{i}", steps=3) for i in range(6))
    joins = (Sub(id="j0", deps=("h0", "h1", "h2"), steps=1), Sub(id="j1", deps=("h3", "h4", "h5")))
    return Scenario(
        name="S9", title="Heavy-tailed latencies: stragglers in models and tools",
        plan=(*roots, *joins), latency=heavy,
    )  # fmt: skip


def _s1() -> Scenario:
    return fan_out("S1", "Two-way fan-out", 2, steps=2)


def s13(invalidating: bool = False) -> Scenario:
    """S13, structured work: ten subtasks of 1 to 5 dependent lookups (two of each length) with
    800-token results, then a two-lookup join over all of them; log-normal jitter of sigma 0.5 on
    models and tools, prefill time on every uncached prompt token, a 128,000-token window (so
    paor's tool reads results whole, as the others do), and the facts checked to the final
    answer. `invalidating` (S13b): the first one-lookup subtask's result invalidates the longest
    one, which a replan replaces with a shorter one and a new join."""
    latency = LatencyModel(
        seed=13, ttft_s=0.06, per_token_s=0.001, tool_s=0.08, jitter=0.5, prefill_s=2e-5
    )
    lengths = (1, 1, 2, 2, 3, 3, 4, 4, 5, 5)
    name, title = "S13", "Structured work: uneven dependent branches, long results, a join"
    if invalidating:
        name, title = "S13b", "Structured work, one branch invalidating another"
    # The join asks the goal itself, as a planner's last step that joins every result does.
    goal = goal_of(name, title)
    branches = [Sub(id=f"b{i}", steps=n, restates=True) for i, n in enumerate(lengths)]
    replans: tuple[Replan, ...] = ()
    if invalidating:
        branches[0] = Sub(id="b0", steps=1, restates=True, invalidates="b9's source is retracted")
        kept = tuple(b.id for b in branches[:-1])
        replans = (
            Replan(
                trigger="b0",
                remove=("b9", "join"),
                add=(
                    Sub(id="b9r", steps=2, restates=True),
                    Sub(id="join2", deps=(*kept, "b9r"), steps=2, restates=True, asks=goal),
                ),
            ),
        )
    join = Sub(id="join", deps=tuple(b.id for b in branches), steps=2, restates=True, asks=goal)
    return Scenario(
        name=name, title=title, plan=(*branches, join), replans=replans, tool_tokens=800,
        latency=latency, context_window=128_000, facts=True,
    )  # fmt: skip


SCENARIOS: dict[str, Scenario] = {
    s.name: s
    for s in (_s1(), _s2(), _s3(), _s4(), _s5(), s6(1), s6(2), _s9(), s13(), s13(invalidating=True))
}
"""The timed DAG scenarios S1-S13, by name."""
