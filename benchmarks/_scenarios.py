"""What a scenario is: scripted plans, sub-agent decisions, and their critical paths (the scenarios
themselves, S0 to S13, are in `benchmarks._catalogue`).

A scenario is a plan of subtasks (`Sub`), each a short ReAct job: `steps` lookups, one per model turn,
then an answer; a subtask may report that its result invalidates the plan, which the scripted planner
answers with a `Replan`. The same scenario also scripts two single agents for the baselines, each doing
every surviving lookup itself: a sequential ReAct agent (`mono`), one lookup per turn, and an agent that
makes parallel tool calls (`par`), each turn calling the next lookup of every subtask whose
dependencies are done (`Scenario.par_turns`), as a model that sees the whole task would. That agent
is no oracle: it starts work a later result invalidates, as paor does, until that result arrives.

The critical path is computed from the latency model alone, so it is a property of the scenario, not
of a run: the plan call, then the longest chain of subtasks (each costing its model and tool latencies)
and replan calls, then the synthesis call.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property

from benchmarks._facts import PLACEHOLDER, with_fact
from benchmarks._provider import RateLimits
from benchmarks._sim import Faults, LatencyModel, Reply, Simulator, Who, tool_text

__all__ = [
    "DEFAULT_LATENCY",
    "Replan",
    "Scenario",
    "ScenarioScript",
    "Sub",
    "goal_of",
    "longest_chains",
    "lookup",
]

# Scaled down about tenfold from a hosted model and web tools (0.6 s to first token, 1,000 tokens/s
# decode, 0.8 s per tool call), so the suite runs in minutes; every figure is a ratio.
DEFAULT_LATENCY = LatencyModel(seed=7, ttft_s=0.06, per_token_s=0.001, tool_s=0.08, jitter=0.2)


@dataclass(frozen=True, slots=True, kw_only=True)
class Sub:
    """One subtask: `steps` lookups, an optional invalidation report, then an answer.

    Attributes:
        id: The subtask id.
        deps: Ids whose results it needs.
        steps: Lookups it makes, one per model turn.
        slow: Multiplier on its tool latencies (a straggler's is above 1).
        invalidates: If set, it reports that its result invalidates the plan, for this reason.
        tool_tokens: The length of each of its lookup results, if not the scenario's.
        restates: Its answer restates the facts it read (`benchmarks._facts`), as a model's does.
        asks: What it asks, when not a lookup of its facts: a plan's last step that joins every
            result often asks the run's goal itself (`goal_of`).
    """

    id: str
    deps: tuple[str, ...] = ()
    steps: int = 1
    slow: float = 1.0
    invalidates: str | None = None
    tool_tokens: int | None = None
    restates: bool = False
    asks: str = ""

    @property
    def goal(self) -> str:
        """The subtask's goal, carrying the marker the simulator dispatches on."""
        asked = self.asks or f"Look up the {self.steps} facts of {self.id} and report them."
        return f"[sub:{self.id}] {asked}"

    def draft(self, calls: Collection[str] = ()) -> dict[str, object]:
        """The subtask as the scripted planner writes it. With "call" among `calls` (a planner
        that may write a subtask out as one tool call), a single lookup with nothing to report
        is that call; with "first_call", any other subtask whose goal names its first key (one
        that looks up its own facts) starts with that lookup."""
        out: dict[str, object] = {"id": self.id, "goal": self.goal, "depends_on": list(self.deps)}
        first = {"tool": "lookup", "arguments": {"key": self.lookups()[0]}}
        if "call" in calls and self.direct:
            out["call"] = first
        elif "first_call" in calls and not self.asks:
            out["first_call"] = first
        return out

    @property
    def direct(self) -> bool:
        """Whether the subtask is one lookup and nothing else (no invalidation to report)."""
        return self.steps == 1 and self.invalidates is None

    def lookups(self) -> list[str]:
        """The lookup keys, in order."""
        return [f"{self.id}.{i}" for i in range(self.steps)]

    def turns(self, finish: bool = False) -> list[Reply]:
        """The sub-agent's replies, one per model turn; offered paor's `answer_with_results`
        tool (`finish`), a subtask with nothing to report calls it with its last lookup, as a
        model told it may end on its results does (its answer turn, then, is played only if
        they are refused)."""
        out = [lookup(key) for key in self.lookups()]
        if finish and self.invalidates is None:
            out[-1] = Reply(tool_calls=(*out[-1].tool_calls, ("answer_with_results", "{}")))
        if self.invalidates:
            args = {"kind": "invalidates", "reason": self.invalidates}
            out.append(Reply(tool_calls=(("report_issue", json.dumps(args)),)))
        said = PLACEHOLDER if self.restates else f"all {self.steps} found"
        out.append(Reply(content=f"Facts of {self.id}: {said} [lookup {self.id}]."))
        return out


def longest_chains(needs: Mapping[str, Sequence[str]], cost: Mapping[str, int]) -> dict[str, int]:
    """For each subtask of a plan (`needs`: each one's dependencies), the cost of the longest
    chain it begins: its own `cost` and that of the costliest chain of subtasks needing it."""
    needed_by: dict[str, list[str]] = {sub_id: [] for sub_id in needs}
    for sub_id, deps in needs.items():
        for dep in deps:
            needed_by.setdefault(dep, []).append(sub_id)

    @functools.cache
    def chain(sub_id: str) -> int:
        return cost.get(sub_id, 0) + max((chain(n) for n in needed_by.get(sub_id, ())), default=0)

    return {sub_id: chain(sub_id) for sub_id in needs}


def goal_of(name: str, title: str) -> str:
    """Scenario `name`'s goal, carrying the marker the simulator dispatches on."""
    return f"[goal:{name}] {title}: gather every fact and write the answer."


def lookup(key: str) -> Reply:
    """A turn that calls the lookup tool once."""
    return Reply(tool_calls=(("lookup", json.dumps({"key": key})),))


@dataclass(frozen=True, slots=True, kw_only=True)
class Replan:
    """The planner's answer when `trigger` reports an invalidation: what to remove and add."""

    trigger: str
    remove: tuple[str, ...] = ()
    add: tuple[Sub, ...] = ()

    def reply(self, calls: Collection[str] = ()) -> Reply:
        """The scripted replan reply (`calls`: see `Sub.draft`)."""
        body = {
            "remove": list(self.remove),
            "add": [s.draft(calls) for s in self.add],
            "rationale": f"{self.trigger} changed the picture",
        }
        return Reply(content=json.dumps(body))


@dataclass(frozen=True, kw_only=True)
class Scenario:
    """A benchmark scenario.

    Attributes:
        name: S1, S2, ...
        title: One line for the tables.
        plan: The first plan.
        replans: The planner's answers to invalidations, in order.
        tool_tokens: The length of each lookup result.
        latency: The latency model.
        limits: The provider's rate limits, if any.
        context_window: The provider's context window in prompt tokens, if it has one.
        hang_share: The share of model requests that hang (never answered), drawn per arrival
            number, so the n-th request of a run hangs or not whatever the framework.
        timeout_s: The request timeout every framework's client is given (None: its default).
        brief: Text every framework adds to its workers' instructions (and the single agent to
            its own): a long one makes their shared prompt prefix long enough to be cached.
        facts: Each lookup's result ends with its fact, and the answers restate what they read,
            so the final answer's prompt shows which facts reached it (`benchmarks._facts`).
    """

    name: str
    title: str
    plan: tuple[Sub, ...]
    replans: tuple[Replan, ...] = ()
    tool_tokens: int = 200
    latency: LatencyModel = DEFAULT_LATENCY
    limits: RateLimits | None = None
    context_window: int | None = None
    hang_share: float = 0.0
    timeout_s: float | None = None
    brief: str = ""
    facts: bool = False

    @property
    def goal(self) -> str:
        """The goal handed to a framework, carrying the marker the simulator dispatches on."""
        return goal_of(self.name, self.title)

    @property
    def task(self) -> str:
        """The goal as a single ReAct agent's first user message reads it."""
        return f"Task: {self.goal}"

    @property
    def par_task(self) -> str:
        """The goal as the parallel-tool-call agent's first user message reads it."""
        return f"Task: {self.goal.replace('[goal:', '[par:', 1)}"

    @cached_property
    def par_turns(self) -> tuple[tuple[str, ...], ...]:
        """The parallel-tool-call agent's lookups, turn by turn: each turn the next lookup of every
        planned subtask whose dependencies finished in an earlier turn. It cannot know what a
        result will invalidate before the result arrives: a replan's removals stop, and its
        additions start, after the turn in which its trigger finished."""
        left = {s.id: s.lookups() for s in self.plan}
        pending = list(self.replans)
        done: set[str] = set()
        gone: set[str] = set()
        turns: list[tuple[str, ...]] = []
        while left:
            ready = [i for i in left if all(d in done or d in gone for d in self.subs[i].deps)]
            if not ready:
                raise ValueError(f"{self.name}: a dependency cycle among {sorted(left)}")
            turns.append(tuple(left[i].pop(0) for i in ready))
            done.update(i for i in ready if not left[i])
            left = {i: keys for i, keys in left.items() if keys}
            while pending and pending[0].trigger in done:
                replan = pending.pop(0)
                gone.update(r for r in replan.remove if r not in done)
                left = {i: keys for i, keys in left.items() if i not in replan.remove}
                left.update((s.id, s.lookups()) for s in replan.add)
        return tuple(turns)

    @cached_property
    def chains_first(self) -> tuple[Sub, ...]:
        """The plan as a planner asked to write the longest chains first writes it: the
        subtasks that need no other by the steps of the longest chain each begins (most first),
        then the rest in the plan's order."""
        needs = {s.id: s.deps for s in self.plan}
        chain = longest_chains(needs, {s.id: s.steps for s in self.plan})
        roots = sorted((s for s in self.plan if not s.deps), key=lambda s: -chain[s.id])
        return (*roots, *(s for s in self.plan if s.deps))

    @cached_property
    def subs(self) -> dict[str, Sub]:
        """Every subtask, planned or added by a replan."""
        found = {s.id: s for s in self.plan}
        for replan in self.replans:
            found.update((s.id, s) for s in replan.add)
        return found

    @cached_property
    def removed(self) -> frozenset[str]:
        """Subtasks some replan removes."""
        return frozenset(r for replan in self.replans for r in replan.remove)

    @cached_property
    def mono_keys(self) -> tuple[str, ...]:
        """The lookups a single ReAct agent makes: those of every subtask that is not removed."""
        return tuple(k for s in self.subs.values() if s.id not in self.removed for k in s.lookups())

    def tool_slow(self, key: str) -> float:
        """The latency multiplier of lookup `key`."""
        sub = self.subs.get(key.rsplit(".", 1)[0])
        return sub.slow if sub is not None else 1.0

    def result_text(self, key: str) -> str:
        """The result of lookup `key`, as every framework's tool returns it."""
        text = tool_text(key, self.tool_size(key))
        return with_fact(text, key) if self.facts else text

    def tool_size(self, key: str) -> int:
        """The length in tokens of lookup `key`'s result."""
        sub = self.subs.get(key.rsplit(".", 1)[0])
        found = sub.tool_tokens if sub is not None else None
        return self.tool_tokens if found is None else found

    def script(self) -> ScenarioScript:
        """A fresh script for one run."""
        return ScenarioScript(self)

    def simulator(self) -> Simulator:
        """A fresh simulator for one run of this scenario, by any framework."""
        return Simulator(
            self.script(),
            self.latency,
            tool_tokens=self.tool_size,
            limits=self.limits,
            context_window=self.context_window,
            faults=Faults(hang_share=self.hang_share, seed=self.latency.seed),
            facts=self.facts,
        )

    @property
    def client_retries(self) -> int:
        """Retries each peer's client makes: none (a failure is a failure), but under a provider's
        limits or hangs the `openai` client's default of 2, as its users would keep it."""
        return 0 if self.limits is None and not self.hang_share else 2

    def critical_path(self) -> float:
        """Seconds of simulated latency along the longest chain: plan, subtasks and replans, synthesis."""
        script = self.script()
        ends: dict[str, float] = {}
        creator = {s.id: "plan" for s in self.plan}
        for i, replan in enumerate(self.replans):
            creator.update((s.id, f"replan:{i}") for s in replan.add)

        def end(node: str) -> float:
            if node not in ends:
                ends[node] = self._start(node, creator, end) + self._cost(node, script)
            return ends[node]

        return end("synthesis")

    def parallel_path(self) -> float:
        """Seconds of simulated latency of the parallel-tool-call agent's whole run: each turn's
        model call, then its slowest lookup."""
        script = self.script()
        total = 0.0
        for step in range(len(self.par_turns) + 1):
            who = Who("par", self.name, step)
            total += self.latency.model_call(who.key, script.reply(who).completion_tokens)
        return total + sum(
            max(self.latency.tool_call(k, self.tool_slow(k)) for k in turn)
            for turn in self.par_turns
        )

    def sequential_path(self) -> float:
        """Seconds of simulated latency of the single sequential ReAct agent's whole run."""
        script = self.script()
        total = 0.0
        for step in range(len(self.mono_keys) + 1):
            who = Who("mono", self.name, step)
            total += self.latency.model_call(who.key, script.reply(who).completion_tokens)
        return total + sum(self.latency.tool_call(k, self.tool_slow(k)) for k in self.mono_keys)

    def _start(self, node: str, creator: dict[str, str], end: Callable[[str], float]) -> float:
        if node == "plan":
            return 0.0
        if node.startswith("replan:"):
            i = int(node.split(":")[1])
            earlier = end(f"replan:{i - 1}") if i else 0.0
            return float(max(end(self.replans[i].trigger), earlier))
        if node == "synthesis":
            needed = [s for s in self.subs if s not in self.removed]
            needed += [f"replan:{i}" for i in range(len(self.replans))]
            return float(max(end(n) for n in needed))
        return float(max([end(creator[node]), *(end(d) for d in self.subs[node].deps)]))

    def _cost(self, node: str, script: ScenarioScript) -> float:
        if node in ("plan", "synthesis") or node.startswith("replan:"):
            kind, _, n = node.partition(":")
            who = _planner_who(kind, int(n or 0))
            return self.latency.model_call(who.key, script.reply(who).completion_tokens)
        sub = self.subs[node]
        turns = sub.turns(self.passes(sub))
        if self.passes(sub):
            turns = turns[: sub.steps]  # it ends on its last lookup's results
        cost = sum(
            self.latency.model_call(Who("agent", sub.id, i).key, turn.completion_tokens)
            for i, turn in enumerate(turns)
        )
        return cost + sum(self.latency.tool_call(k, sub.slow) for k in sub.lookups())

    def passes(self, sub: Sub) -> bool:
        """Whether paor's sub-agent for `sub` ends on its lookups' results
        (`answer_with_results`): it has nothing to report, does not ask the goal itself, and no
        subtask of any plan needs it."""
        needed = {d for s in self.subs.values() for d in s.deps}
        return sub.invalidates is None and not sub.asks and sub.id not in needed


def _planner_who(kind: str, n: int) -> Who:
    if kind == "plan":
        return Who("plan", "", n)
    return Who("replan", "", n) if kind == "replan" else Who("synthesis", "", n)


class ScenarioScript:
    """The simulator's script for one run of a scenario."""

    def __init__(self, scenario: Scenario) -> None:
        self.scenario = scenario
        self._turns = {
            (s.id, finish): s.turns(finish)
            for s in scenario.subs.values()
            for finish in (False, True)
        }
        self._plans: dict[tuple[tuple[str, ...], bool], Reply] = {
            (calls, chains): Reply(
                content=json.dumps(
                    {
                        "subtasks": [
                            s.draft(calls)
                            for s in (scenario.chains_first if chains else scenario.plan)
                        ],
                        "rationale": "split by fact",
                    }
                )
            )
            for calls in ((), ("call",), ("call", "first_call"))
            for chains in (False, True)
        }

    def reply(self, who: Who) -> Reply:
        """The scripted reply to `who`."""
        if who.kind == "plan":
            return self._plans[who.calls, who.chains]
        if who.kind == "replan":
            replans = self.scenario.replans
            if who.step < len(replans):
                return replans[who.step].reply(who.calls)
            return Reply(content="{}")
        if who.kind == "agent":
            turns = self._turns[who.name, who.finishes]
            return turns[min(who.step, len(turns) - 1)]
        if who.kind == "mono":
            keys = self.scenario.mono_keys
            if who.step < len(keys):
                return lookup(keys[who.step])
            return self._final(f"Final answer for {who.name}: all {len(keys)} facts gathered.")
        if who.kind == "par":
            batches = self.scenario.par_turns
            if who.step < len(batches):
                return Reply(tool_calls=tuple(lookup(k).tool_calls[0] for k in batches[who.step]))
            n = sum(len(batch) for batch in batches)
            return self._final(f"Final answer for {who.name}: all {n} facts gathered.")
        return self._final(
            f"Final answer for {self.scenario.name}: every subtask reported its facts."
        )

    def _final(self, text: str) -> Reply:
        """A final answer; where the scenario checks facts, restating those its prompt carried."""
        return Reply(content=f"{text} {PLACEHOLDER}" if self.scenario.facts else text)

    def slow(self, who: Who) -> float:
        """Model calls are never stragglers here: slowness is in the tools."""
        return 1.0
