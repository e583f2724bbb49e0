"""What the journal keeps of a tool result: a long one capped to what the model could read (with
its size and sha256), replayed to the same observation, transcript and answer."""

from __future__ import annotations

import hashlib
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from agents import Tool, ToolContext, tool
from agents._capped import MAX_RESULT_CHARS
from agents._shaping import shaped
from agents._toolbox import ToolResult
from agents.effects import EffectSite, JournaledEffects, LiveEffects
from agents.testing import ScriptedModel, call
from agents.tools import Toolbox, ToolOutcome
from memory import Journal, ToolCall, ToolMessage
from memory.journal import EffectRecord
from orchestrator import Orchestrator, RunConfig
from orchestrator.cli import main
from tests._team import Team, plan, script, sub

pytestmark = pytest.mark.anyio

GUARD_S = 20  # a guard against a hang, not a timing claim
BIG = 1_000_000  # characters: well past the cap, small enough for a quick test


def page(chars: int) -> str:
    """Text whose every stretch differs ("0000000 0000001 ..."), so a cut anywhere shows."""
    return "".join(f"{i:07d} " for i in range(chars // 8))


def fetching(result: Any, **options: Any) -> Tool:
    """A `fetch` tool that returns `result`."""

    @tool(name="fetch", **options)
    async def fetch(url: str) -> Any:
        """Fetch a page.

        Args:
            url: The page.
        """
        return result

    return fetch


def raw_json(value: Any) -> bytes:
    """A result's JSON as the journal measures and hashes it."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()


def tool_record(records: list[EffectRecord]) -> EffectRecord:
    """The one tool result among `records`."""
    (found,) = [r for r in records if r.kind == "tool"]
    return found


@pytest.fixture
async def journal(tmp_path: Path) -> AsyncIterator[Journal]:
    """An open, empty journal."""
    async with Journal(tmp_path / "journal.db") as opened:
        yield opened


class Sink:
    """A `RecordSink` that keeps records in a dict."""

    def __init__(self) -> None:
        self.records: dict[tuple[str, int, str], EffectRecord] = {}

    async def append(self, run_id: str, record: EffectRecord) -> None:
        """Keep `record`."""
        self.records[(record.agent_id, record.seq, record.kind)] = record

    async def forget(self, run_id: str, agent_id: str, from_seq: int) -> None:
        """Nothing to forget in these tests."""


SHAPES: dict[str, tuple[Any, dict[str, Any]]] = {
    "text": (page(BIG), {}),
    "fields": ({"id": 7, "body": page(300_000), "junk": page(400_000)}, {"fields": ("id", "body")}),
    "wide": (page(BIG), {"max_chars": 100_000}),
}


@pytest.mark.parametrize("shape", SHAPES, ids=list(SHAPES))
async def test_a_long_result_is_stored_capped_and_replays_to_the_same_run(
    journal: Journal, shape: str
) -> None:
    """A result past the cap is stored as the start of the text the observation is cut from
    (64 Ki characters, or the tool's `max_chars` if more), with its full size and sha256; the
    replay asks for exactly what the live run asked (no drift: every request, the transcript
    with the tool's observation in it, is the same) and ends with the same answer and reports."""
    value, options = SHAPES[shape]
    fetch = fetching(value, **options)
    team = Team([plan(sub("a"))], {"a": script(call("fetch", url="u"), "A: fetched")})
    with anyio.fail_after(GUARD_S):
        recorded = await Orchestrator(team.model, [fetch], journal=journal).run("goal")
        offline = ScriptedModel([])
        report = await Orchestrator(offline, [fetch], journal=journal).replay(recorded.run_id)

    stored = tool_record(await journal.load(recorded.run_id))
    full = raw_json(value)
    keep = max(MAX_RESULT_CHARS, fetch.max_chars)
    cut = stored.payload["outcome"]["cut"]
    assert cut["bytes"] == len(full)
    assert cut["sha256"] == hashlib.sha256(full).hexdigest()
    assert len(stored.payload["outcome"]["value"]) == keep
    assert stored.size() < keep + 1024 < len(full) // 3
    seen = team.of("a")[1].messages[-1]
    assert isinstance(seen, ToolMessage)
    assert f"[truncated: showing {fetch.max_chars} of " in seen.content
    assert report.ok, report.drift
    assert report.result is not None
    assert report.result.answer == recorded.answer
    assert report.result.reports == recorded.reports
    assert offline.requests == []


def last_of(value: Any) -> str:
    """The last characters of a result: what only a reader of the whole of it sees."""
    return json.dumps(value)[-20:]


def timeless(outcome: ToolOutcome) -> ToolOutcome:
    """`outcome` without its duration (two runs of a tool take different times)."""
    return outcome.model_copy(update={"duration_ms": 0.0})


HOOKS: dict[str, tuple[Any, dict[str, Any]]] = {
    "plain": (page(BIG), {}),
    "fields": ({"id": 7, "body": page(BIG)}, {"fields": ("body",)}),
    "success-passes": (page(BIG), {"success": lambda v: v.endswith(" ")}),
    "success-rejects": (page(BIG), {"success": lambda v: v.endswith("END") or "no END at the end"}),
    "success-raises": (page(BIG), {"success": lambda v: 1 / 0}),
    "success-says-1": (page(BIG), {"success": lambda v: 1}),  # not True: a failure, as whole
    "success-says-5": (page(BIG), {"success": lambda v: 5}),
    "evidence": (page(BIG), {"evidence": lambda a, v: [(a["url"], last_of(v))]}),
    "evidence-raises": (page(BIG), {"evidence": lambda a, v: [(a["url"], v[BIG * 2])]}),
    "facts": ({"body": page(BIG), "price": 42, "tail": "x"}, {"facts": {"price": "price"}}),
}


@pytest.mark.parametrize("hooks", HOOKS, ids=list(HOOKS))
async def test_a_cut_outcome_gives_the_loop_what_the_whole_one_does(hooks: str) -> None:
    """At the effect boundary a long result is cut to what the loop reads, and the tool's own code
    (success check, evidence hook, facts) is judged on the whole value there: `Toolbox.finish`
    makes the same result (observation, verdict, evidence, findings) of the cut outcome, live or
    served back by the journal, as of the whole one."""
    value, options = HOOKS[hooks]
    fetch = fetching(value, **options)
    sink, site = Sink(), EffectSite(run_id="r", agent_id="a", seq=1, step=1)
    ctx = ToolContext(run_id="r", agent_id="a", call_id="c1", idempotency_key="r:a:1")
    whole = await fetch.execute({"url": "u"}, ctx)
    live = await JournaledEffects(LiveEffects(), sink, "r").tool_call(
        site, fetch, {"url": "u"}, ctx
    )
    replaying = JournaledEffects(
        LiveEffects(), sink, "r", mode="replay", records=sink.records.values()
    )
    served = await replaying.tool_call(site, fetch, {"url": "u"}, ctx)

    asked = ToolCall(id="c1", name="fetch", arguments='{"url": "u"}')
    prepared = Toolbox([fetch]).prepare(asked, 0.0)
    assert not isinstance(prepared, ToolResult)
    shown_whole = Toolbox([fetch]).finish(prepared, timeless(whole), 0.0)
    assert Toolbox([fetch]).finish(prepared, timeless(live), 0.0) == shown_whole
    assert Toolbox([fetch]).finish(prepared, timeless(served), 0.0) == shown_whole
    assert served == live
    assert live.cut is not None
    assert len(live.value) == MAX_RESULT_CHARS
    assert sink.records[("a", 1, "tool")].size() < MAX_RESULT_CHARS + 1024


async def test_a_record_of_the_earlier_format_still_replays() -> None:
    """A capped record written before the cut rode in the outcome (its size under `capped`, no
    hooks: it was made only for tools without them) serves the same result as the whole one."""
    value = page(BIG)
    fetch = fetching(value)
    text = json.dumps(value)[1:-1]  # the observation text of a string result is the string
    full = raw_json(value)
    legacy = {
        "tool": "fetch",
        "outcome": {"ok": True, "value": text[:MAX_RESULT_CHARS], "error": None, "message": "",
                    "duration_ms": 1.0},
        "capped": {"chars": len(value), "bytes": len(full),
                   "sha256": hashlib.sha256(full).hexdigest()},
    }  # fmt: skip
    assert len(text) == len(value)
    sink = Sink()
    site = EffectSite(run_id="r", agent_id="a", seq=1, step=1)
    ctx = ToolContext(run_id="r", agent_id="a", call_id="c1", idempotency_key="r:a:1")
    await JournaledEffects(LiveEffects(), sink, "r").tool_call(site, fetch, {"url": "u"}, ctx)
    recorded = sink.records[("a", 1, "tool")]
    old = recorded.model_copy(update={"payload": legacy})
    replaying = JournaledEffects(LiveEffects(), sink, "r", mode="replay", records=[old])
    served = await replaying.tool_call(site, fetch, {"url": "u"}, ctx)

    asked = ToolCall(id="c1", name="fetch", arguments='{"url": "u"}')
    prepared = Toolbox([fetch]).prepare(asked, 0.0)
    assert not isinstance(prepared, ToolResult)
    whole = await fetch.execute({"url": "u"}, ctx)
    shown = Toolbox([fetch]).finish(prepared, timeless(served), 0.0)
    assert shown == Toolbox([fetch]).finish(prepared, timeless(whole), 0.0)


@pytest.mark.parametrize("hooks", ["success-rejects", "evidence", "facts"])
async def test_a_result_read_by_the_tools_own_code_is_stored_cut_and_replays(
    journal: Journal, hooks: str
) -> None:
    """A tool whose success check, evidence hook or facts read the whole value is stored cut as
    well, with what that code made of it; the run replays to the same reports, no drift."""
    value, options = HOOKS[hooks]
    fetch = fetching(value, **options)
    team = Team([plan(sub("a"))], {"a": script(call("fetch", url="u"), "A: fetched")})
    unheld = RunConfig(cite=False)  # what is checked is the cut, not the answer (`cite`)
    with anyio.fail_after(GUARD_S):
        recorded = await Orchestrator(team.model, [fetch], journal=journal, config=unheld).run(
            "goal"
        )
        replaying = Orchestrator(ScriptedModel([]), [fetch], journal=journal, config=unheld)
        report = await replaying.replay(recorded.run_id)

    stored = tool_record(await journal.load(recorded.run_id))
    assert stored.size() < MAX_RESULT_CHARS + 1024
    assert report.ok, report.drift
    assert report.result is not None
    assert report.result.reports == recorded.reports
    seen = team.of("a")[1].messages[-1]
    assert isinstance(seen, ToolMessage)
    if hooks == "success-rejects":
        assert "no END at the end" in seen.content
    if hooks == "evidence":
        (evidence,) = recorded.reports[0].evidence
        assert (evidence.source, evidence.excerpt) == ("u", last_of(value))


async def test_a_result_under_the_cap_is_stored_as_it_was(journal: Journal) -> None:
    """A result of at most 64 Ki characters of JSON is stored whole, as before."""
    value = {"id": 7, "body": page(MAX_RESULT_CHARS - 100)}
    team = Team([plan(sub("a"))], {"a": script(call("fetch", url="u"), "A: fetched")})
    recorded = await Orchestrator(team.model, [fetching(value)], journal=journal).run("goal")

    stored = tool_record(await journal.load(recorded.run_id))
    assert stored.payload == {"tool": "fetch", "outcome": stored.payload["outcome"]}
    assert stored.payload["outcome"]["value"] == value


async def test_show_prints_what_the_run_takes_in_the_journal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`paor show` says how many bytes the run's records take, by kind (the most first), and
    names the largest record, with the size and sha256 of a capped result."""
    path = tmp_path / "journal.db"
    value = page(BIG)
    team = Team([plan(sub("a"))], {"a": script(call("fetch", url="u"), "A: fetched")})
    async with Journal(path) as journal:
        await Orchestrator(team.model, [fetching(value)], journal=journal).run("g", run_id="big")
        records = await journal.load("big")
    capsys.readouterr()

    assert await anyio.to_thread.run_sync(main, ["show", "big", "--journal", str(path)]) == 0

    lines = capsys.readouterr().out.splitlines()
    total = sum(r.size() for r in records)
    (footprint,) = [line for line in lines if line.startswith("journal: ")]
    assert footprint.startswith(f"journal: {total:,} bytes in {len(records)} records (tool ")
    stored = tool_record(records)
    digest = hashlib.sha256(raw_json(value)).hexdigest()
    assert (
        f"largest: a#{stored.seq} tool, {stored.size():,} bytes "
        f"(a {len(raw_json(value)):,}-byte result, capped; sha256 {digest})"
    ) in lines


@pytest.mark.parametrize(("chars", "cut"), [(10_922, False), (10_923, True)])
async def test_a_string_is_measured_as_json_with_its_escapes(chars: int, cut: bool) -> None:
    """A string result is cut by the length of its JSON, escapes included: 10,922 control
    characters (6 each as JSON, 65,534 in all) pass whole; one more is over the cap."""
    fetch = fetching("\x01" * chars)
    ctx = ToolContext(run_id="r", agent_id="a", call_id="c1", idempotency_key="r:a:1")
    site = EffectSite(run_id="r", agent_id="a", seq=1, step=1)
    outcome = await LiveEffects().tool_call(site, fetch, {"url": "u"}, ctx)
    assert (outcome.cut is not None) is cut
    assert len(raw_json("\x01" * chars)) == 6 * chars + 2


async def test_the_evidence_hook_reads_the_arguments_the_tool_ran_with() -> None:
    """A person who changed a call's arguments changed what it cites: the evidence hook (and the
    call's own citation) read the arguments the tool ran with, for a cut result as for a whole
    one."""
    for options in ({"evidence": lambda a, v: [(a["url"], v[-20:])]}, {}):
        fetch = fetching(page(BIG), **options)
        ctx = ToolContext(run_id="r", agent_id="a", call_id="c1", idempotency_key="r:a:1")
        site = EffectSite(run_id="r", agent_id="a", seq=1, step=1)
        ran = {"url": "edited"}
        whole = await fetch.execute(ran, ctx)
        cut = await LiveEffects().tool_call(site, fetch, ran, ctx)
        asked = ToolCall(id="c1", name="fetch", arguments='{"url": "u"}')
        prepared = Toolbox([fetch]).prepare(asked, 0.0)
        assert not isinstance(prepared, ToolResult)
        shown = Toolbox([fetch]).finish(prepared, timeless(whole), 0.0, ran_with=ran)
        assert Toolbox([fetch]).finish(prepared, timeless(cut), 0.0, ran_with=ran) == shown
        assert "edited" in shown.evidence[0].source


def test_a_cut_text_shorter_than_the_cut_says_how_much_it_shows() -> None:
    """A cut result's start shorter than the tool's cut (a recording made when the tool read less)
    says what it shows, not the cut."""
    assert shaped("abcdef", fields=None, max_chars=10, total=20) == (
        "abcdef… [truncated: showing 6 of 20 chars]",
        True,
    )
