"""Two hostile providers: S10, long tool results behind a context window, and S11, hangs.

S10: tool results of 10,000 to 100,000 tokens, behind a model with a 128,000-token window. Each
lookup returns a long document (one of 100,000 tokens, five of 30,000 read one after the
other by one subtask, four more of 10,000 to 20,000). The provider refuses a prompt over its window
with OpenAI's 400 `context_length_exceeded`, and its time to first token grows with the uncached
prompt (prefill), so a framework that re-sends long histories pays in seconds as well as dollars.
No framework can finish unless its histories stay inside the window: the single agent holds every
document in one conversation; a framework with a history per worker holds a subtask's documents,
which for the five-page subtask come to 150,000 tokens.

Every framework runs as its users write it for long tool results, its histories kept under half
the window: paor with its observations left whole and `Compactor(max_tokens=64_000)`
(`benchmarks._paor`); LangGraph's workers and the Agents SDK's with the hook each offers for it
(a `pre_model_hook`, a `call_model_input_filter`) written as a user would: the oldest tool results
masked, the latest turn's kept (LangGraph's own `trim_messages` drops whole turns, which the
model, the scripted one like a real one, reads as steps it has not taken). The single agent has
no such help: its first turn's results alone are over the window.

S11: S2's eight branches of four lookups where one model request in ten hangs (the provider takes
it and never answers; which ones is drawn per arrival number, so the n-th request of a run hangs
whatever the framework). Every framework's client gets the same 2 s request timeout and the
`openai` client's default of 2 retries (paor: its own default of 3), so a hang costs the timeout
and a retry; a framework that sends more requests meets more hangs.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from benchmarks._catalogue import SCENARIOS
from benchmarks._limits import dollars, failed_subtasks
from benchmarks._run import RunRecord
from benchmarks._scenarios import DEFAULT_LATENCY, Scenario, Sub

__all__ = ["WINDOW", "hang_figures", "large_figures", "s10", "s11"]

WINDOW = 128_000
# About 3 s to prefill 100,000 tokens at a hosted provider, scaled down tenfold like the rest.
_LATENCY = dataclasses.replace(DEFAULT_LATENCY, seed=10, prefill_s=3e-6)


def s10() -> Scenario:
    """S10: long documents as tool results, behind a 128,000-token context window."""
    plan = (
        Sub(id="d0", steps=1, tool_tokens=100_000),
        Sub(id="d1", steps=5, tool_tokens=30_000),
        Sub(id="d2", steps=2, tool_tokens=20_000),
        Sub(id="d3", steps=2, tool_tokens=10_000),
        Sub(id="d4", deps=("d0", "d1"), steps=1, tool_tokens=2_000),
    )
    return Scenario(
        name="S10",
        title="Tool results of 10k-100k tokens, 128k-token window",
        plan=plan,
        latency=_LATENCY,
        context_window=WINDOW,
    )


def large_figures(record: RunRecord, scenario: Scenario) -> dict[str, Any]:
    """A run of S10: whether it stayed inside the window, and what its prompts cost (S12's
    figures too, `benchmarks._brief`)."""
    answered = [e for e in record.log if e.fault is None]
    prompt = sum(e.prompt_tokens for e in answered)
    cached = sum(e.cached_tokens for e in answered)
    return _run_figures(
        record,
        scenario,
        refused=sum(e.fault == "context" for e in record.log),
        prompt_tokens=prompt,
        largest_prompt=max((e.prompt_tokens for e in record.log), default=0),
        cached_share=round(cached / prompt, 4) if prompt else 0.0,
    )


def s11() -> Scenario:
    """S11: S2's fan-out where one model request in ten hangs, behind a 2 s client timeout."""
    return dataclasses.replace(
        SCENARIOS["S2"],
        name="S11",
        title="Hangs: one model request in ten never answered, 2 s timeout",
        hang_share=0.1,
        timeout_s=2.0,
    )


def hang_figures(record: RunRecord, scenario: Scenario) -> dict[str, Any]:
    """A run of S11: the hangs it met, whether it lost work, and its wall over the critical path
    (which has no hang in it)."""
    return _run_figures(record, scenario, hung=sum(e.fault == "hang" for e in record.log))


def _run_figures(record: RunRecord, scenario: Scenario, **specific: Any) -> dict[str, Any]:
    """What every one-run section shows (failed subtasks, requests, dollars, how the run ended,
    wall over the critical path once it finished), with the section's own figures."""
    out: dict[str, Any] = {
        "failed_subtasks": failed_subtasks(record, scenario),
        "requests": len(record.log),
        "dollars": round(dollars(record), 6),
        "error": record.error,
        **specific,
    }
    if record.error is None:
        cp = scenario.critical_path()
        out |= {"wall_s": round(record.wall_s, 4), "wall_over_cp": round(record.wall_s / cp, 4)}
    return out
