"""History compaction: under budget, in big steps, never losing the protected part or a pair."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from agents import Budget, Executor, Usage, tool
from agents.effects import EffectSite, LiveEffects
from agents.errors import ModelRequestError
from agents.models import ModelRequest, ModelResponse
from agents.testing import FunctionModel, Turn
from memory import (
    AssistantMessage,
    Compactor,
    Message,
    SystemMessage,
    ToolCall,
    ToolMessage,
    Transcript,
    UserMessage,
)
from memory import _tokens as tokens_module
from memory._compaction import SUMMARY_PREFIX
from memory._tokens import encoding_for
from memory.compaction import count_tokens

pytestmark = pytest.mark.anyio

_WORDS = ("the", "generator", "yields", "values", "lazily", "while", "the", "caller", "iterates")
_MASKED = re.compile(r"\[observation of (\w+) elided: [\d,]+ chars, digest [0-9a-f]{6}\]")
_SUMMARY_SYSTEM = "You compress the working history"


def _text(seed: int, chars: int) -> str:
    words = [_WORDS[(seed * 7 + i * 3) % len(_WORDS)] for i in range(chars // 4 + 1)]
    return " ".join(words)[:chars]


def _turn(i: int, chars: int = 2000, *, parallel: int = 1) -> list[Message]:
    calls = tuple(
        ToolCall(id=f"c{i}_{k}", name="search_docs", arguments=json.dumps({"query": f"q {i} {k}"}))
        for k in range(parallel)
    )
    results = [
        ToolMessage(tool_call_id=c.id, name="search_docs", content=f"Result {i}: {_text(i, chars)}")
        for c in reversed(calls)
    ]
    return [AssistantMessage(tool_calls=calls), *results]


def _opening() -> list[Message]:
    return [
        SystemMessage(content="You are a research agent."),
        UserMessage(content="Task: explain"),
    ]


def _transcript(steps: int, chars: int = 2000) -> list[Message]:
    return _opening() + [m for i in range(steps) for m in _turn(i, chars)]


def _tail_start(messages: tuple[Message, ...] | list[Message], turns: int) -> int:
    starts = [i for i, m in enumerate(messages) if isinstance(m, AssistantMessage)]
    return starts[-turns]


def _assert_pairs(messages: tuple[Message, ...]) -> None:
    Transcript(messages).check()
    asked = [c.id for m in messages if isinstance(m, AssistantMessage) for c in m.tool_calls]
    answered = [m.tool_call_id for m in messages if isinstance(m, ToolMessage)]
    assert sorted(asked) == sorted(answered)


async def test_a_transcript_that_fits_is_returned_unchanged() -> None:
    """Under the budget nothing is rewritten, so the prompt prefix stays byte-identical."""
    messages = _transcript(3)
    done = await Compactor(max_tokens=100_000).compact(messages)
    assert done.messages == tuple(messages)
    assert not done.changed
    assert done.tokens_before == done.tokens_after == count_tokens(messages, "")


async def test_old_observations_are_masked_oldest_first_down_to_the_target() -> None:
    """Stage 1 masks the oldest observations to digests until the target is reached, no further."""
    messages = _transcript(30)
    compactor = Compactor(max_tokens=count_tokens(messages, "") // 2, keep_turns=3)
    done = await compactor.compact(messages)
    assert done.summary is None
    assert done.within_budget
    assert done.tokens_after <= compactor.max_tokens * compactor.target
    assert done.tokens_after == count_tokens(done.messages, "")
    results = [m for m in done.messages if isinstance(m, ToolMessage)]
    masked = [bool(_MASKED.fullmatch(m.content)) for m in results]
    assert masked == sorted(masked, reverse=True)
    assert sum(masked) == done.masked
    assert 0 < done.masked < 27
    assert results[0].content.startswith("[observation of search_docs elided: 2,010 chars, digest ")


async def test_system_prompt_task_and_latest_turns_are_never_touched() -> None:
    """Whatever the budget, the system prompt, the task and the latest turn come through intact,
    and the latest `keep_turns` turns too whenever they fit the budget."""
    messages = _transcript(12)
    two = count_tokens([*messages[:2], *messages[_tail_start(messages, 2) :]], "")
    for budget in (8000, 3000, 1800, 400):
        done = await Compactor(max_tokens=budget, keep_turns=2).compact(messages)
        assert done.messages[:2] == tuple(messages[:2])
        tail = _tail_start(messages, 2 if two <= budget else 1)
        assert done.messages[-(len(messages) - tail) :] == tuple(messages[tail:])
    assert two > 400  # the smallest budget is the case where only the latest turn is kept whole


@pytest.mark.parametrize("budget", [3000, 1500, 900, 500])
async def test_tool_calls_and_results_are_never_split(budget: int) -> None:
    """With parallel calls and loop feedback, no budget parts a call from its result."""
    messages = _opening()
    for i in range(10):
        messages += _turn(i, 800, parallel=1 + i % 3)
        if i % 4 == 3:
            messages.append(UserMessage(content="Loop warning: change approach."))
    done = await Compactor(max_tokens=budget, keep_turns=2).compact(messages)
    _assert_pairs(done.messages)
    assert done.changed


async def test_stage_two_folds_older_turns_into_one_extractive_summary() -> None:
    """Without a summariser, older turns become one summary of tools, arguments and first lines."""
    messages = _transcript(8, 400)
    messages[4:4] = [AssistantMessage(content="Interim: generators are lazy.\nMore detail.")]
    done = await Compactor(max_tokens=700, keep_turns=2, summary_tokens=300).compact(messages)
    assert (done.summary, done.masked) == ("extractive", 0)
    assert done.summarised == _tail_start(messages, 2) - 2
    summary = done.messages[2]
    assert isinstance(summary, UserMessage)
    assert summary.content.startswith(f"{SUMMARY_PREFIX}\n")
    assert '- search_docs({"query": "q 5 0"}) → Result 5: ' in summary.content
    assert "- said: Interim: generators are lazy." in summary.content
    assert "More detail" not in summary.content
    assert done.messages[3:] == tuple(messages[_tail_start(messages, 2) :])
    assert done.within_budget
    _assert_pairs(done.messages)


async def test_a_later_summary_folds_in_the_earlier_one() -> None:
    """A second stage-2 compaction keeps the first summary's entries inside the new one."""
    compactor = Compactor(max_tokens=700, keep_turns=2, summary_tokens=400)
    first = await compactor.compact(_transcript(6, 400))
    assert first.summary == "extractive"
    grown = [*first.messages, *[m for i in range(6, 10) for m in _turn(i, 400)]]
    second = await compactor.compact(grown)
    assert second.summary == "extractive"
    summary = second.messages[2]
    assert isinstance(summary, UserMessage)
    assert summary.content.count(SUMMARY_PREFIX) == 1
    assert '"q 1 0"' in summary.content
    assert '"q 7 0"' in summary.content
    _assert_pairs(second.messages)


async def test_hysteresis_keeps_the_prefix_stable_between_compactions() -> None:
    """Compaction goes down to the target, so the next calls reuse the prefix until it is full again."""
    messages = _transcript(20)
    compactor = Compactor(max_tokens=count_tokens(messages, "") // 2, keep_turns=3)
    first = await compactor.compact(messages)
    grown = [*first.messages, *_turn(20), *_turn(21)]
    second = await compactor.compact(grown)
    assert not second.changed
    assert second.messages[: len(first.messages)] == first.messages
    while count_tokens(grown, "") <= compactor.max_tokens:
        grown += _turn(len(grown))
    third = await compactor.compact(grown)
    assert third.masked > 0
    diff = next(i for i, (a, b) in enumerate(zip(grown, third.messages, strict=True)) if a != b)
    last_masked = max(
        i
        for i, m in enumerate(first.messages)
        if isinstance(m, ToolMessage) and _MASKED.fullmatch(m.content)
    )
    assert diff > last_masked


async def test_an_oversized_protected_part_is_masked_but_its_latest_turn() -> None:
    """When the latest turns alone exceed the budget, their observations are masked too (but the
    latest turn's), nothing is summarised, and a result still over the budget is flagged."""
    asked: list[tuple[Message, ...]] = []

    async def summariser(prompt: tuple[Message, ...], max_tokens: int) -> str:
        asked.append(prompt)
        return "never used"

    messages = _transcript(4, 4000)
    compactor = Compactor(max_tokens=500, keep_turns=3)
    done = await compactor.compact(messages, summariser=summariser)
    assert asked == []
    assert (done.masked, done.summary, done.within_budget) == (3, None, False)
    assert done.messages[-2:] == tuple(messages[-2:])
    assert all(_MASKED.fullmatch(m.content) for m in done.messages[2:-2] if m.role == "tool")
    assert done.tokens_after == count_tokens(done.messages, "") < count_tokens(messages, "") // 3
    _assert_pairs(done.messages)


async def test_protected_turns_over_the_budget_are_masked_oldest_first() -> None:
    """Three kept turns over the budget lose their oldest observations first, down to the target,
    and the latest turn stays whole."""
    messages = _transcript(3, 4000)
    one_turn = count_tokens([*messages[:2], *messages[-2:]], "")
    compactor = Compactor(max_tokens=one_turn * 2, keep_turns=3)
    done = await compactor.compact(messages)
    assert done.within_budget
    tools = [m for m in done.messages if m.role == "tool"]
    assert [bool(_MASKED.fullmatch(m.content)) for m in tools] == [True, True, False]
    _assert_pairs(done.messages)


@pytest.mark.parametrize(
    "bad", [{"max_tokens": 0}, {"target": 1.0}, {"target": 0.0}, {"keep_turns": 0}]
)
def test_settings_out_of_range_raise(bad: dict[str, Any]) -> None:
    """A zero budget, a target outside (0, 1) or no kept turn is refused at construction."""
    settings: dict[str, Any] = {"max_tokens": 1000, **bad}
    with pytest.raises(ValueError, match="need max_tokens"):
        Compactor(**settings)


def test_openai_model_names_map_to_their_encodings() -> None:
    """gpt-4o, gpt-4.1, o-series and gpt-5 use o200k; classic gpt-4 and gpt-3.5 use cl100k."""
    names = {
        "gpt-4o-mini": "o200k_base",
        "gpt-4.1": "o200k_base",
        "o3-mini": "o200k_base",
        "gpt-5": "o200k_base",
        "openai/gpt-4o": "o200k_base",
        "ft:gpt-4o-mini:acme::x1": "o200k_base",
        "gpt-4": "cl100k_base",
        "gpt-4-turbo": "cl100k_base",
        "gpt-3.5-turbo": "cl100k_base",
        "llama3.1:8b": None,
        "scripted": None,
    }
    assert {name: encoding_for(name) for name in names} == names


def test_counts_are_exact_with_toktok_for_openai_models() -> None:
    """With toktok, a gpt-4o prompt costs its texts' o200k tokens plus the per-message overhead."""
    toktok = pytest.importorskip("toktok")
    messages: list[Message] = [
        SystemMessage(content="Be brief."),
        UserMessage(content="How many tokens is this?"),
    ]
    texts = ["system", "Be brief.", "user", "How many tokens is this?"]
    exact = sum(toktok.batch_count(texts, "o200k_base")) + 3 * 2 + 3
    assert count_tokens(messages, "gpt-4o") == exact
    cl100k = sum(toktok.batch_count(texts, "cl100k_base")) + 3 * 2 + 3
    assert count_tokens(messages, "gpt-3.5-turbo") == cl100k


def test_counts_are_approximate_for_other_models_or_without_toktok(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Unknown models, or any model without toktok, count a quarter of the characters."""
    messages: list[Message] = [
        UserMessage(content="x" * 41),
        AssistantMessage(tool_calls=(ToolCall(id="a", name="search", arguments='{"q": 1}'),)),
        ToolMessage(tool_call_id="a", name="search", content="y" * 8),
    ]
    # ceil(chars / 4) per text: user 1 + 11; assistant 3 + 0, call 2 + 2; tool 1 + 2 + 2;
    # plus 3 per message, 3 per call and 3 to prime the reply.
    approx = (1 + 11) + (3 + 0 + 2 + 2) + (1 + 2 + 2) + 3 * 3 + 3 + 3
    assert count_tokens(messages, "llama3") == approx == 39
    monkeypatch.setattr(tokens_module, "_TOKTOK", None)
    assert count_tokens(messages, "gpt-4o") == approx


class _RecordingEffects(LiveEffects):
    """Live effects that remember every model call they carried."""

    def __init__(self) -> None:
        self.model_calls: list[tuple[EffectSite, ModelRequest]] = []

    async def model_call(
        self, site: EffectSite, model: Any, request: ModelRequest
    ) -> ModelResponse:
        self.model_calls.append((site, request))
        return await super().model_call(site, model, request)


@tool
def fetch(n: int) -> str:
    """Fetch one page."""
    return f"page {n}: short"


def _is_summary_request(request: ModelRequest) -> bool:
    first = request.messages[0]
    return isinstance(first, SystemMessage) and first.content.startswith(_SUMMARY_SYSTEM)


def _agent(summary: Turn) -> FunctionModel:
    """Three fetch turns with long reasoning, then an answer; summary requests get `summary`."""

    turns = 0

    def decide(request: ModelRequest) -> Turn:
        nonlocal turns
        Transcript(request.messages).check()
        if _is_summary_request(request):
            return summary
        turns += 1
        if turns > 4:
            return "Pages 1 to 4 are fetched."
        call = ToolCall(id=f"f{turns}", name="fetch", arguments=json.dumps({"n": turns}))
        return AssistantMessage(content=f"Thinking about page {turns}. " * 60, tool_calls=(call,))

    return FunctionModel(decide)


async def test_summary_goes_through_the_effect_boundary_and_is_charged() -> None:
    """The stage-2 summary is a model effect: recorded by the boundary, billed to the budget."""
    summary = ModelResponse(
        message=AssistantMessage(content="Fetched pages 1 and 2; both short."),
        usage=Usage(requests=1, prompt_tokens=777, completion_tokens=11),
    )
    model, effects, parent = _agent(summary), _RecordingEffects(), Budget()
    compactor = Compactor(max_tokens=1500, keep_turns=1, summary_tokens=120)
    report = await Executor(model, tools=[fetch], effects=effects, compactor=compactor).run(
        "Fetch four pages.", budget=parent
    )
    assert (report.status, report.answer) == ("done", "Pages 1 to 4 are fetched.")
    asked = [r for _, r in effects.model_calls if _is_summary_request(r)]
    assert len(asked) == 1
    prompt = asked[0]
    assert prompt.max_output_tokens == 120
    assert prompt.tools == ()
    assert "Task: Fetch four pages." in str(prompt.messages[1].content)
    assert '[call] fetch({"n": 1})' in str(prompt.messages[1].content)
    assert [r for _, r in effects.model_calls] == model.requests
    after = model.requests[model.requests.index(prompt) + 1]
    assert after.messages[2] == UserMessage(
        content=f"{SUMMARY_PREFIX}\nFetched pages 1 and 2; both short."
    )
    assert report.usage.requests == len(model.requests) == 6
    assert report.usage.prompt_tokens == 777 + 5 * 10
    assert parent.used == report.usage


async def test_a_failed_summary_call_falls_back_to_an_extractive_summary() -> None:
    """A model error on the summary call is noted, and the extractive summary is used instead."""
    model = _agent(ModelRequestError("context too long"))
    compactor = Compactor(max_tokens=1500, keep_turns=1)
    report = await Executor(model, tools=[fetch], compactor=compactor).run("Fetch four pages.")
    assert report.status == "done"
    assert any(note.startswith("summary call failed") for note in report.notes)
    later = model.requests[-1].messages[2]
    assert isinstance(later, UserMessage)
    assert later.content.startswith(f"{SUMMARY_PREFIX}\n- fetch(")


async def test_extractive_compaction_in_a_run_makes_no_model_call() -> None:
    """With summarise_with_model=False, stage 2 never asks the model."""
    model = _agent("unused")
    compactor = Compactor(max_tokens=1500, keep_turns=1, summarise_with_model=False)
    report = await Executor(model, tools=[fetch], compactor=compactor).run("Fetch four pages.")
    assert report.status == "done"
    assert report.usage.requests == len(model.requests) == 5
    assert any(
        isinstance(m, UserMessage) and m.content.startswith(SUMMARY_PREFIX)
        for m in model.requests[-1].messages
    )
