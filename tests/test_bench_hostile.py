"""S10 and S11, hostile providers: the refusal of a prompt over the window as OpenAI words it, the
per-subtask result sizes, paor inside the window where a single agent cannot; hangs drawn alike
for every framework, and paor finishing every subtask under them."""

from __future__ import annotations

import httpx2
import openai
import pytest

from agents import OpenAIChatModel
from agents.errors import ModelRequestError
from agents.models import ModelRequest
from benchmarks._endpoints import SimChatModel, SimServer
from benchmarks._hostile import WINDOW, hang_figures, large_figures, s10, s11
from benchmarks._paor import run_orchestrator
from benchmarks._react import run_parallel
from benchmarks._report import render
from benchmarks._scenarios import Scenario, Sub
from benchmarks._sim import Simulator, count_tokens, tool_text
from memory import UserMessage

pytestmark = pytest.mark.anyio


def _windowed(window: int) -> Simulator:
    return Scenario(name="W", title="w", plan=(Sub(id="a"),), context_window=window).simulator()


def _body(text: str) -> dict[str, object]:
    return {"model": "sim", "messages": [{"role": "user", "content": text}]}


async def test_a_prompt_over_the_window_is_refused_with_openais_400() -> None:
    async with SimServer(_windowed(50)) as server, httpx2.AsyncClient() as http:
        fits = await http.post(f"{server.base_url}/chat/completions", json=_body("short"))
        over = await http.post(f"{server.base_url}/chat/completions", json=_body("word " * 60))
    assert fits.status_code == 200
    assert over.status_code == 400
    error = over.json()["error"]
    assert error["code"] == "context_length_exceeded"
    assert error["type"] == "invalid_request_error"
    assert "maximum context length is 50 tokens" in error["message"]
    assert "resulted in 6" in error["message"]  # 60 words and the message's role


async def test_every_client_reads_the_refusal_as_a_request_error_with_the_reason() -> None:
    sim = _windowed(50)
    async with SimServer(sim) as server:
        client = openai.AsyncOpenAI(base_url=server.base_url, api_key="k", max_retries=0)
        with pytest.raises(openai.BadRequestError) as raised:
            await client.chat.completions.create(
                model="sim", messages=[{"role": "user", "content": "word " * 60}]
            )
        await client.close()
        assert raised.value.code == "context_length_exceeded"
        model = OpenAIChatModel("sim", base_url=server.base_url, api_key="k")
        request = ModelRequest(messages=(UserMessage(content="word " * 60),))
        with pytest.raises(ModelRequestError, match="maximum context length is 50"):
            await model.complete(request)
        await model.aclose()
    with pytest.raises(ModelRequestError, match="maximum context length is 50"):
        await SimChatModel(sim).complete(request)
    assert [e.fault for e in sim.log] == ["context"] * 3


def test_a_subtask_may_have_results_of_its_own_length() -> None:
    scenario = s10()
    assert scenario.tool_size("d0.0") == 100_000
    assert scenario.tool_size("d1.4") == 30_000
    # the key's own tokens ("d3", ".", "1", ":") stand in for two of the words
    assert count_tokens(tool_text("d3.1", scenario.tool_size("d3.1"))) == 10_002
    plain = Scenario(name="P", title="p", plan=(Sub(id="a"),), tool_tokens=77)
    assert plain.tool_size("a.0") == 77


async def test_paor_stays_inside_the_window_where_the_single_agent_cannot() -> None:
    """paor's guarantee on S10, configured as its users would for long results (observations
    whole, histories compacted past half the window): every subtask done, no prompt refused, the
    largest under the window, though the five-page subtask read 150,000 tokens."""
    scenario = s10()
    record = await run_orchestrator(scenario, http=False)
    found = large_figures(record, scenario)
    assert record.error is None, record.error
    assert (found["failed_subtasks"], found["refused"]) == (0, 0)
    assert found["largest_prompt"] < WINDOW
    pages = [t for t in record.tools if t.key.startswith("d1.")]
    assert len(pages) == 5
    baseline = await run_parallel(scenario)
    lost = large_figures(baseline, scenario)
    assert lost["refused"] == 1
    assert lost["largest_prompt"] > WINDOW
    assert lost["failed_subtasks"] == len(scenario.plan)
    assert "maximum context length is 128000 tokens" in str(baseline.error)
    table = render(
        {
            "command": "c", "started": "s", "machine": {"python": "3", "cpus": 2},
            "unavailable": {}, "scenarios": {}, "targets": [], "s0": {}, "s8": {},
            "memory": {}, "dispatch_gap_ms": {}, "overhead": {},
            "large": {"paor": found, "parallel-tools": lost},
        }
    )  # fmt: skip
    assert "| paor | complete | 0 | 0 |" in table
    assert "| parallel-tools | error: BadRequestError" in table


def test_the_same_requests_hang_whatever_the_framework() -> None:
    """Which requests hang is drawn per arrival number, and a hung planner request keeps its
    number for the retry (the second replan is still the second)."""
    first, second = s11().simulator(), s11().simulator()
    hung = [n for n in range(200) if first.faults.take("agent:x:0", n) is not None]
    assert hung == [n for n in range(200) if second.faults.take("plan::0", n) is not None]
    assert 10 <= len(hung) <= 30  # one in ten
    assert s11().timeout_s == 2.0
    assert s11().client_retries == 2
    assert s10().timeout_s is None
    assert s10().client_retries == 0


async def test_under_hangs_paor_finishes_every_subtask_and_the_table_shows_the_hangs() -> None:
    """paor's guarantee on S11: a hung request costs its timeout and a retry, never the run."""
    scenario = s11()
    record = await run_orchestrator(scenario, http=True)
    found = hang_figures(record, scenario)
    assert record.error is None, record.error
    assert found["failed_subtasks"] == 0
    assert found["hung"] >= 1
    assert found["requests"] > found["hung"]
    table = render(
        {
            "command": "c", "started": "s", "machine": {"python": "3", "cpus": 2},
            "unavailable": {}, "scenarios": {}, "targets": [], "s0": {}, "s8": {},
            "memory": {}, "dispatch_gap_ms": {}, "overhead": {}, "hangs": {"paor": found},
        }
    )  # fmt: skip
    assert f"| paor | complete | 0 | {found['hung']} / {found['requests']} |" in table
