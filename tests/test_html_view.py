"""`paor show RUN_ID --html FILE`: a journaled run as one self-contained page.

The run behind most tests is journaled with a scripted team: plan v1 is a, b, c (c after b); b's
model fails, so the planner replans (v2: a kept, b2 added, c removed, b dropped); a's first tool
call fails. Its goal and a subtask's goal carry markup that must come out as text.

The approval tests use the scripted run of `tests._pause_child`: its plan (a, b) is reviewed, then
b's call of `transfer` waits for approval; it is taken to its first pause (the plan waits), its
second (the call waits) or its end (both approved).

The escaping tests build a paused run by hand whose every written string is hostile: markup that
would close the SVG and open a script, in text, and quotes that would close an attribute.

The browser tests render the pages in Debian's `chromium` and check the DOM the browser built.
Their screenshots are written under the test's `tmp_path`; set `PAOR_ARTIFACTS=DIR` (for instance
`tests/artifacts`, which is not committed) to keep copies as DIR/html_view.png and
DIR/html_view_paused.png.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pytest

from agents import AgentReport, ToolFailure, tool
from agents.approvals import ApprovalRequest, Decision
from agents.errors import ModelRequestError
from agents.testing import call
from memory import Journal
from memory.journal import EffectRecord, RunInfo
from orchestrator import Orchestrator, Plan, RunResult, Subtask
from orchestrator.cli._html import Wait, render_html, timeline
from orchestrator.plans import PlanDiff
from tests._browser import CHROMIUM, Element, elements, render
from tests._pause_child import APPROVER, RUN_ID, orchestrator
from tests._pause_child import team as pause_team
from tests._team import Team, plan, script, sub
from tests.test_cli import paor

pytestmark = pytest.mark.anyio

GOAL = "Compare <script>alert('goal')</script> & friends"
HOSTILE = 'Find <img src=x onerror="alert(1)"> a.'
BREAKOUT = "</svg><script>alert(1)</script>"  # 31 characters: one line of a plan's box
QUOTED = 'x" onmouseover="alert(2)" y=\'z\''


@tool
async def lookup(key: str) -> str:
    """Look a fact up.

    Args:
        key: What to look up.
    """
    if key == "missing":
        raise ToolFailure("no such key")
    return f"the value of {key}"


async def journaled_run(path: Path) -> tuple[RunInfo, list[EffectRecord], RunResult]:
    """The replanned run described above, journaled at `path`."""
    team = Team(
        [plan(sub("a", goal=HOSTILE), sub("b"), sub("c", "b"))],
        {
            "a": script(call("lookup", key="missing"), call("lookup", key="a"), "A <b>bold</b>"),
            "b": script(ModelRequestError("400 bad request", status=400)),
            "c": script("C"),
            "b2": script(call("lookup", key="b2"), "B2"),
        },
        replans=[{"remove": [], "add": [sub("b2")], "rationale": "try b another way"}],
    )
    async with Journal(path) as journal:
        result = await Orchestrator(team.model, [lookup], journal=journal).run(GOAL)
        info = await journal.run(result.run_id)
        assert info is not None
        return info, await journal.load(result.run_id), result


async def approvals_run(tmp: Path, decisions: int) -> tuple[RunInfo, list[EffectRecord], RunResult]:
    """The run of `tests._pause_child`, journaled in `tmp`, with its first `decisions` waiting
    requests approved (0: its plan waits; 1: b's transfer waits; 2: it is complete)."""
    async with Journal(tmp / "journal.db") as journal:
        orch = orchestrator(pause_team(), journal, tmp / "ledger")
        result = await orch.run("Pay what is owed.", run_id=RUN_ID, approver=APPROVER)
        for _ in range(decisions):
            decided = {w.approval_id: Decision.approve() for w in result.waiting}
            result = await orch.resume(RUN_ID, decisions=decided, approver=APPROVER)
        info = await journal.run(RUN_ID)
        assert info is not None
        return info, await journal.load(RUN_ID), result


def row_markup(markup: str) -> dict[str, str]:
    """Each timeline row's classes and inner markup (as "CLASSES>INNER"), by agent id."""
    rows = re.findall(
        r'<g class="((?:planner|agent)-row[^"]*)" data-agent="([^"]*)">(.*?)</g>', markup, re.S
    )
    return {agent: f"{classes}>{inside}" for classes, agent, inside in rows}


def by_class(found: list[Element], *classes: str) -> list[Element]:
    """The elements that have every one of `classes`."""
    return [e for e in found if set(classes) <= e.classes]


def check_page(markup: str, result: RunResult) -> list[Element]:
    """The checks shared by the page as written and the page as the browser built it."""
    found = elements(markup)
    assert not [e for e in found if e.tag in ("script", "img", "iframe", "link")]
    assert not [e for e in found for name in e.attrs if name.startswith("on")]
    figures = by_class(found, "plan")
    assert [f.attrs["data-version"] for f in figures] == ["1", "2"]
    assert len([e for e in found if e.tag == "svg" and "dag" in e.classes]) == 2
    live = [e.attrs["data-id"] for e in by_class(found, "node", "live")]
    assert live == [s.id for p in result.plans for s in p.subtasks]
    assert [e.attrs["data-id"] for e in by_class(found, "node", "ghost")] == ["b", "c"]
    badges = [e.text for e in by_class(found, "badge")]
    assert badges == ["kept: a", "added: b2", "removed: c"]
    assert [e.text for e in by_class(found, "tag")] == ["kept", "added", "dropped", "removed"]
    rows = {e.attrs["data-agent"]: e for e in by_class(found, "agent-row")}
    assert sorted(rows) == ["a", "b", "b2"]  # c never ran: no row
    assert {a: sorted(r.classes - {"agent-row"}) for a, r in rows.items()} == {
        "a": ["st-done"],
        "b": ["st-failed"],
        "b2": ["st-done"],
    }
    assert len(by_class(found, "planner-row")) == 1
    assert len(by_class(found, "mark", "tool", "failed")) == 1
    assert len(by_class(found, "mark", "tool", "ok")) == 2
    assert len(by_class(found, "mark", "model", "failed")) == 1
    texts = [e.text for e in found]
    assert GOAL in texts  # the goal, as text
    assert any(HOSTILE in t for t in texts)  # the subtask's goal, as text (its box, its title)
    return found


async def test_show_html_writes_one_self_contained_page(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`show --html` writes the page and says so in one line: plan DAGs with the replan's
    changes, a timeline row per sub-agent, spend, reports, every written string escaped."""
    info, _, result = await journaled_run(tmp_path / "journal.db")
    out = tmp_path / "run.html"
    capsys.readouterr()

    code = await paor(
        "show", info.run_id, "--journal", str(tmp_path / "journal.db"), "--html", str(out)
    )

    assert (code, capsys.readouterr().out) == (0, f"wrote {out}\n")
    markup = out.read_text(encoding="utf-8")
    assert "http://" not in markup.replace('xmlns="http://www.w3.org/2000/svg"', "")
    assert "https://" not in markup
    assert "&lt;script&gt;alert(&#39;goal&#39;)&lt;/script&gt; &amp; friends" in markup
    found = check_page(markup, result)
    facts = [e.text for e in found if e.tag in ("dt", "dd")]
    usage = result.usage
    assert facts[facts.index("tokens") + 1] == str(usage.total_tokens)
    assert facts[facts.index("model requests") + 1] == str(usage.requests)
    assert facts[facts.index("tool calls") + 1] == str(usage.tool_calls) == "3"
    assert [e.text for e in by_class(found, "answer")] == [result.answer]
    assert "A &lt;b&gt;bold&lt;/b&gt;" in markup  # a report's answer, escaped
    assert len(by_class(found, "series")) == 2
    assert not by_class(found, "wait")  # no approval records: nothing shaded
    assert by_class(found, "key", "k-wait")  # but the legend has room for it
    assert by_class(found, "key", "k-alive")  # a row's band is said to be the agent at work


async def test_the_timeline_places_calls_between_the_clock_reads(tmp_path: Path) -> None:
    """Calls sit in time order within their lane, a tool call spans its intent to its result,
    spend only grows, and a failed model call adds no tokens."""
    _, records, result = await journaled_run(tmp_path / "journal.db")
    line = timeline(records, {r.agent_id: r for r in result.reports})

    assert line.timed
    assert [lane.agent_id for lane in line.lanes] == ["planner", "a", "b", "b2"]
    for lane in line.lanes:
        assert line.start <= lane.start <= lane.end <= line.end
        assert all(lane.start <= m.start <= m.end <= lane.end for m in lane.marks)
    a = line.lanes[1]
    assert [(m.kind, m.outcome) for m in a.marks] == [
        ("model", "ok"),
        ("tool", "failed"),
        ("model", "ok"),
        ("tool", "ok"),
        ("model", "ok"),
    ]
    assert "no such key" in a.marks[1].label
    assert [(m.kind, m.outcome) for m in line.lanes[2].marks] == [("model", "failed")]
    tokens = [t for _, t, _ in line.spend]
    assert tokens == sorted(tokens)
    assert tokens[-1] == result.usage.total_tokens
    assert line.spend[-1][2] == result.usage.requests


async def test_waits_passed_in_are_shaded_on_their_rows(tmp_path: Path) -> None:
    """A list of (agent, start, end) waits is drawn as shaded spans on those agents' rows only."""
    info, records, _ = await journaled_run(tmp_path / "journal.db")
    line = timeline(records, {})
    a = line.lanes[1]
    waits = [
        Wait(agent_id="a", start=a.start, end=a.end),
        Wait(agent_id="nobody", start=a.start, end=a.end),
    ]

    found = elements(render_html(info, records, waits))

    shaded = [e for e in found if e.tag == "rect" and "wait" in e.classes]
    assert len(shaded) == 1
    rows = by_class(found, "agent-row")
    assert [r.attrs["data-agent"] for r in rows] == ["a", "b", "b2"]


async def test_an_unfinished_run_still_has_its_timeline_and_spend(tmp_path: Path) -> None:
    """A run with no result yet (crashed) shows its header, timeline and spend from the
    records, and says its plan versions come with its result."""
    info, records, _ = await journaled_run(tmp_path / "journal.db")
    crashed = info.model_copy(update={"result": None, "status": "crashed"})

    markup = render_html(crashed, records)

    found = elements(markup)
    assert not by_class(found, "plan")
    assert "its plan versions are stored with its result" in markup
    assert len(by_class(found, "agent-row")) == 3
    assert len(by_class(found, "series")) == 2
    assert "(the run has not finished)" in markup


async def test_a_journal_without_clock_reads_is_laid_out_by_order(tmp_path: Path) -> None:
    """With no clock record the timeline falls back to the write order, and says so."""
    info, records, _ = await journaled_run(tmp_path / "journal.db")
    unclocked = [r for r in records if r.kind != "clock"]

    line = timeline(unclocked, {})

    assert not line.timed
    assert (line.start, line.end) == (0.0, float(len(unclocked) - 1))
    assert " effects</text>" in render_html(info, unclocked)


async def test_an_approved_tool_call_is_a_shaded_wait_on_its_agents_row(tmp_path: Path) -> None:
    """A sub-agent's recorded decision is a wait on its row, from its previous record (after its
    model asked for the call) to the decision (before the call ran); no other row is shaded."""
    info, records, result = await approvals_run(tmp_path, 2)
    assert result.status == "complete"

    line = timeline(records, {r.agent_id: r for r in result.reports})
    markup = render_html(info, records)

    lanes = {lane.agent_id: lane for lane in line.lanes}
    assert {a: len(lane.waits) for a, lane in lanes.items()} == {"planner": 0, "a": 0, "b": 1}
    (wait,) = lanes["b"].waits
    asked, transfer = lanes["b"].marks[0], lanes["b"].marks[1]
    assert (asked.kind, transfer.kind, transfer.label) == ("model", "tool", "transfer: ok")
    assert asked.end <= wait.start <= wait.end <= transfer.start
    assert (wait.label, wait.pending) == ("waited for approval: approved", False)
    rows = row_markup(markup)
    assert [a for a, row in rows.items() if 'class="wait' in row] == ["b"]
    shaded = by_class(elements(rows["b"]), "wait")
    assert [(e.tag, e.classes) for e in shaded] == [("rect", {"wait"})]
    assert 'id="waiting"' not in markup  # a finished run waits for nothing


async def test_only_a_decision_a_person_made_is_a_wait() -> None:
    """Choices that are not decisions (a scheduling pick, unreadable JSON) and an approval that an
    earlier "always" made are no wait; a denial's tooltip carries its message, escaped."""
    values = [
        "a",
        "{not json",
        '{"action": "approve", "always": false, "by": "always"}',
        '{"action": "deny", "message": "<b>no</b>", "by": "person"}',
    ]
    records = [EffectRecord(agent_id="b", seq=1, kind="clock", payload={"value": 100.0})]
    records += [
        EffectRecord(agent_id="b", seq=2 + i, kind="choice", payload={"value": v})
        for i, v in enumerate(values)
    ]

    (lane,) = timeline(records, {}).lanes

    assert [w.label for w in lane.waits] == ["waited for approval: denied: <b>no</b>"]
    info = RunInfo(run_id="r", goal="g", status="failed", created=0.0, updated=1.0)
    assert "denied: &lt;b&gt;no&lt;/b&gt;" in render_html(info, records)


def check_paused_plan(markup: str) -> list[Element]:
    """The checks of the page of the run paused on its plan, as written and as the browser
    built it: it says it is paused, and draws the plan that waits with its subtasks."""
    found = elements(markup)
    assert not [e for e in found if e.tag in ("script", "img", "iframe", "link")]
    assert [e.text for e in by_class(found, "pill")] == ["paused"]
    (banner,) = by_class(found, "banner", "paused")
    assert banner.text.startswith("Paused: this run waits for 1 decision")
    sections = [e.attrs["id"] for e in found if e.tag == "section"]
    assert sections == ["waiting", "plans", "timeline", "spend", "reports"]  # what waits first
    (request,) = by_class(found, "request", "r-plan")
    assert (request.attrs["data-approval"], request.attrs["data-agent"]) == ("run#4", "run")
    (figure,) = by_class(found, "proposal")
    assert (figure.tag, figure.attrs["data-version"]) == ("figure", "1")
    captions = [e.text for e in found if e.tag == "figcaption"]
    assert captions == ["plan v1 waits for approval (run#4)"]
    assert [e.attrs["data-id"] for e in by_class(found, "node", "live")] == ["a", "b"]
    goals = [e.text for e in by_class(found, "goal")]
    assert goals == ["Find fact a.", "Pay the invoice."]
    assert not by_class(found, "plan")  # no version adopted yet
    assert "No plan was adopted yet." in [e.text for e in found if e.tag == "p"]
    return found


async def test_a_paused_run_shows_the_plan_that_waits(tmp_path: Path) -> None:
    """A run paused on its plan review says it is paused and draws the waiting plan as a DAG of
    its subtasks, with the plan as text and the problems of the last edit, escaped."""
    info, records, result = await approvals_run(tmp_path, 0)
    (request,) = result.waiting
    hostile = "<script>alert('edit')</script> is not a subtask"
    edited = result.model_copy(
        update={"waiting": (request.model_copy(update={"problems": (hostile,)}),)}
    )
    info = info.model_copy(update={"result": edited.model_dump(mode="json")})

    markup = render_html(info, records)

    found = check_paused_plan(markup)
    assert [e.text for e in by_class(found, "description")] == [request.description]
    assert "Pay the invoice." in request.description
    assert [e.text for e in found if e.tag == "li"] == [hostile]
    assert "&lt;script&gt;alert(&#39;edit&#39;)&lt;/script&gt; is not a subtask" in markup
    assert "paor approve paused --id APPROVAL_ID" in markup
    assert not by_class(found, "wait")  # the planner's review is not a sub-agent's wait


async def test_a_waiting_tool_call_shows_its_call_and_shades_its_row_to_the_end(
    tmp_path: Path,
) -> None:
    """A run paused on b's transfer lists the call (agent, tool, JSON arguments), keeps its plan
    versions, and shades b's row, now "waiting", from its last record to the timeline's end."""
    info, records, result = await approvals_run(tmp_path, 1)
    (request,) = result.waiting

    markup = render_html(info, records)

    found = elements(markup)
    (article,) = by_class(found, "request", "r-tool")
    assert [article.attrs[k] for k in ("data-approval", "data-agent")] == [request.approval_id, "b"]
    facts = [e.text for e in found if e.tag in ("dt", "dd")]
    call = ["agent", "b", "tool", "transfer", "what it does", "Send money.", "arguments"]
    assert facts[facts.index("agent") :][:7] == call
    assert [e.text for e in by_class(found, "call")] == ['{\n  "amount": 40\n}']
    assert [f.attrs["data-version"] for f in by_class(found, "plan")] == ["1"]
    rows = row_markup(markup)
    (pending,) = by_class(elements(rows["b"]), "wait", "pending")
    end = float(pending.attrs["x"]) + float(pending.attrs["width"])
    ticks = [float(e.attrs["x1"]) for e in by_class(found, "tick")]
    assert end == pytest.approx(max(ticks), abs=0.2)  # to the end of the timeline
    assert "pending" not in rows["a"]
    assert "st-paused" in rows["b"].split(">")[0]  # the row's own class: it waits
    assert by_class(found, "key", "k-pending")


async def test_a_waiting_replan_shows_what_it_changes_in_the_plan_in_play(tmp_path: Path) -> None:
    """A waiting replan is drawn against the last plan version: kept, added, and taken out (a
    dashed box), with its text unfolded; every marker id in the page stays unique."""
    info, records, result = await approvals_run(tmp_path, 2)
    subtasks = [{"id": "a", "goal": "Find fact a."}, {"id": "c", "goal": "C", "depends_on": ["a"]}]
    request = ApprovalRequest(
        approval_id="run#12", run_id=RUN_ID, agent_id="run", kind="plan",
        description="plan v2 as text", plan={"version": 2, "subtasks": subtasks},
    )  # fmt: skip
    paused = result.model_copy(update={"status": "paused", "waiting": (request,)})
    info = info.model_copy(update={"status": "paused", "result": paused.model_dump(mode="json")})

    found = elements(render_html(info, records))

    (figure,) = by_class(found, "proposal")
    assert figure.attrs["data-version"] == "2"
    assert [e.text for e in by_class(found, "badge")] == ["kept: a", "added: c", "removed: b"]
    drawn = [(e.attrs["data-id"], sorted(e.classes)) for e in by_class(found, "node")][:3]
    assert drawn == [
        ("a", ["c-kept", "live", "node"]),
        ("c", ["c-added", "live", "node"]),
        ("b", ["c-removed", "ghost", "node"]),
    ]
    assert [e.attrs.get("open") for e in found if e.tag == "details"] == [""]
    ids = [e.attrs["id"] for e in found if "id" in e.attrs]
    assert len(ids) == len(set(ids))


def hostile_run() -> tuple[RunInfo, list[EffectRecord]]:
    """A paused run, built by hand, whose goal, answer, plans, replan, records, report and
    waiting requests all carry `BREAKOUT` as text and `QUOTED` where an attribute holds them."""
    goal = Subtask(id="a", goal=BREAKOUT, tools=(BREAKOUT,))
    plans = (
        Plan(version=1, subtasks=(goal,), rationale=BREAKOUT),
        Plan(version=2, subtasks=(Subtask(id="b", goal="B"),), rationale=BREAKOUT),
    )
    diff = PlanDiff(version=2, trigger=BREAKOUT, reason=BREAKOUT, added=("b",), removed=("a",))
    report = AgentReport(agent_id=QUOTED, task=BREAKOUT, status="done", answer=BREAKOUT)
    waiting = (
        ApprovalRequest(
            approval_id=QUOTED, run_id=QUOTED, agent_id=QUOTED, tool=BREAKOUT,
            description=BREAKOUT, args={BREAKOUT: QUOTED},
        ),
        ApprovalRequest(
            approval_id="run#9", run_id=QUOTED, agent_id="run", kind="plan", description=BREAKOUT,
            plan={"version": 3, "subtasks": [{"id": "c", "goal": BREAKOUT}]}, problems=(BREAKOUT,),
        ),
    )  # fmt: skip
    result = RunResult(
        run_id=QUOTED, goal=BREAKOUT, answer=BREAKOUT, status="paused", plans=plans,
        diffs=(diff,), reports=(report,), waiting=waiting,
    )  # fmt: skip
    tool = {"tool": BREAKOUT, "outcome": {"ok": False, "error": QUOTED, "message": BREAKOUT}}
    denied = json.dumps({"action": "deny", "message": BREAKOUT, "by": "person"})
    records = [
        EffectRecord(agent_id=QUOTED, seq=1, kind="clock", payload={"value": 10.0}),
        EffectRecord(agent_id=QUOTED, seq=2, kind="model", payload={"usage": {"requests": 1}}),
        EffectRecord(agent_id=QUOTED, seq=3, kind="choice", payload={"value": denied}),
        EffectRecord(agent_id=QUOTED, seq=4, kind="tool", payload=tool),
        EffectRecord(agent_id=QUOTED, seq=5, kind="clock", payload={"value": 12.0}),
    ]
    info = RunInfo(
        run_id=QUOTED, goal=BREAKOUT, status="paused", created=10.0, updated=12.0,
        result=result.model_dump(mode="json"),
    )  # fmt: skip
    return info, records


def check_hostile_page(markup: str) -> None:
    """The checks of the hostile run's page, as written and as the browser built it: nothing
    written became an element or an attribute, and every string reads back whole, as text."""
    found = elements(markup)
    assert not [e for e in found if e.tag in ("script", "img", "iframe", "link")]
    assert not [e for e in found for name in e.attrs if name.startswith("on")]
    assert len([e for e in found if e.tag == "svg"]) == 5  # 3 plans, the timeline, the spend
    texts = [e.text for e in found]
    goals = [BREAKOUT, "B", BREAKOUT, "B", BREAKOUT]  # v3 waits (c; b out), v1 (a), v2 (b; a out)
    assert [e.text for e in by_class(found, "goal")] == goals
    assert f"a: {BREAKOUT}" in texts  # a box's tooltip, inside the SVG
    assert f"tools: {BREAKOUT[:29]}…" in [e.text for e in by_class(found, "tools")]  # cut
    assert [e.text for e in by_class(found, "rationale")] == [BREAKOUT, BREAKOUT]
    assert f"plan v2: 1 subtasks, replanned after {BREAKOUT}: {BREAKOUT}" in texts
    assert f"{BREAKOUT} failed ({QUOTED}): {BREAKOUT}" in texts  # the tool call's tooltip
    assert f"waited for approval: denied: {BREAKOUT}" in texts
    (row,) = by_class(found, "agent-row")
    assert row.attrs["data-agent"] == QUOTED
    assert f"paor run {QUOTED}" in texts  # the page's title
    tool, plan = by_class(found, "request")
    assert (tool.attrs["data-approval"], tool.attrs["data-agent"]) == (QUOTED, QUOTED)
    assert (plan.attrs["data-approval"], plan.attrs["data-agent"]) == ("run#9", "run")
    assert f"{BREAKOUT} waits for approval ({QUOTED})" in texts
    assert [e.text for e in by_class(found, "call")] == [json.dumps({BREAKOUT: QUOTED}, indent=2)]
    assert [e.text for e in found if e.tag == "li"] == [BREAKOUT]
    assert [e.text for e in by_class(found, "description")] == [BREAKOUT]
    assert [e.text for e in by_class(found, "answer")] == [BREAKOUT]
    assert texts.count(BREAKOUT) >= 8  # and in the header, the reports, the waiting call's facts


async def test_every_written_string_is_escaped_in_text_svg_and_attributes() -> None:
    """A subtask goal that closes the SVG and opens a script is text inside the plan's SVG; ids
    with quotes stay inside their attributes; the same holds in every part of the page."""
    info, records = hostile_run()

    markup = render_html(info, records)

    assert "<script" not in markup
    assert BREAKOUT not in markup
    assert "&lt;/svg&gt;&lt;script&gt;alert(1)&lt;/script&gt;" in markup
    assert 'onmouseover="' not in markup
    assert "x&#34; onmouseover=&#34;alert(2)&#34; y=&#39;z&#39;" in markup
    check_hostile_page(markup)


@pytest.mark.slow
@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not on PATH (apt-get install chromium)")
async def test_the_page_renders_in_a_real_browser(tmp_path: Path) -> None:
    """Headless Chromium builds the page with the same plan nodes, rows and badges, the hostile
    goal as text and no injected element, and takes its screenshot."""
    info, records, result = await journaled_run(tmp_path / "journal.db")
    page, shot = tmp_path / "run.html", tmp_path / "html_view.png"
    page.write_text(render_html(info, records), encoding="utf-8")

    dom = await render(page, tmp_path / "profile", screenshot=shot)

    found = check_page(dom, result)
    assert next(e.text for e in found if e.tag == "title") == f"paor run {info.run_id}"
    assert shot.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    keep_artifact(shot)


def keep_artifact(shot: Path) -> None:
    """Copy the screenshot into $PAOR_ARTIFACTS, when it names a folder."""
    if target := os.environ.get("PAOR_ARTIFACTS"):
        Path(target).mkdir(parents=True, exist_ok=True)
        shutil.copyfile(shot, Path(target) / shot.name)


@pytest.mark.slow
@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not on PATH (apt-get install chromium)")
async def test_the_paused_page_renders_in_a_real_browser(tmp_path: Path) -> None:
    """Headless Chromium builds the page of a run paused on its plan with the banner, the waiting
    plan's figure and its subtask boxes, and takes its screenshot."""
    info, records, _ = await approvals_run(tmp_path, 0)
    page, shot = tmp_path / "paused.html", tmp_path / "html_view_paused.png"
    page.write_text(render_html(info, records), encoding="utf-8")

    dom = await render(page, tmp_path / "profile", screenshot=shot)

    found = check_paused_plan(dom)
    (details,) = [e for e in found if e.tag == "details"]
    assert "open" not in details.attrs  # a first plan's text is folded: the drawing says it
    assert shot.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    keep_artifact(shot)


@pytest.mark.slow
@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not on PATH (apt-get install chromium)")
async def test_the_hostile_page_renders_as_text_in_a_real_browser(tmp_path: Path) -> None:
    """Headless Chromium builds the hostile run's page with every written string as text: no
    script, no handler, the plan's SVG whole."""
    info, records = hostile_run()
    page = tmp_path / "hostile.html"
    page.write_text(render_html(info, records), encoding="utf-8")

    check_hostile_page(await render(page, tmp_path / "profile"))
