"""Progress for people: plain lines off a terminal, a block redrawn in place on one."""

from __future__ import annotations

import io
import re

from agents import AgentReport
from orchestrator import Event, Plan, Subtask
from orchestrator.cli._progress import Progress
from orchestrator.events import PlanCreated, RunFinished, SubtaskFinished, SubtaskStarted

PLAN = Plan(
    subtasks=(
        Subtask(id="gen", goal="How does a generator\npause?"),
        Subtask(id="stop", goal="What ends an iteration?"),
    )
)
REPORT = AgentReport(agent_id="gen", task="t", status="done", answer="a", steps=2)
EVENTS: list[Event] = [
    PlanCreated(run_id="r", plan=PLAN),
    SubtaskStarted(run_id="r", subtask_id="gen", goal="How does a generator\npause?"),
    SubtaskFinished(run_id="r", subtask_id="gen", report=REPORT),
    RunFinished(run_id="r", status="incomplete", reason="failed: stop", usage=REPORT.usage),
]


def test_plain_progress_is_one_line_per_event() -> None:
    """Off a terminal each event is one timestamped line, even for a goal written on two lines."""
    out = io.StringIO()
    progress = Progress(out=out, live=False)

    for event in EVENTS:
        progress.update(event)

    lines = out.getvalue().splitlines()
    assert [re.sub(r"^\[ *\d+\.\ds\] ", "", line) for line in lines] == [
        "plan: 2 subtasks: gen; stop",
        "gen started: How does a generator pause?",
        "gen done in 2 steps",
        "run incomplete (failed: stop)",
    ]


def test_live_progress_moves_up_exactly_the_lines_it_drew() -> None:
    """On a terminal each redraw first moves the cursor up over the whole previous block, so a
    goal with a line break cannot leave stale lines behind."""
    out = io.StringIO()
    progress = Progress(out=out, live=True)

    for event in EVENTS:
        progress.update(event)

    blocks = re.split(r"\x1b\[(\d+)F\x1b\[J", out.getvalue())
    drawn, moves = blocks[0::2], [int(n) for n in blocks[1::2]]
    assert len(drawn) == len(EVENTS)
    assert moves == [block.count("\n") for block in drawn[:-1]]
    assert "  ✓ gen          done        0 tools  How does a generator pause?" in drawn[-1]


HOSTILE = "Find\x1b]0;pwned\x07 it\x1b[2J now\x9b5m"


def test_model_written_escapes_never_reach_the_terminal() -> None:
    """A goal carrying terminal escapes (title, clear screen) is shown cleaned, in both views;
    the live block's cursor movement is the only escape written."""
    plan = Plan(subtasks=(Subtask(id="a", goal=HOSTILE),))
    events: list[Event] = [
        PlanCreated(run_id="r", plan=plan),
        SubtaskStarted(run_id="r", subtask_id="a", goal=HOSTILE),
    ]
    for live in (False, True):
        out = io.StringIO()
        progress = Progress(out=out, live=live)
        for event in events:
            progress.update(event)
        shown = re.sub(r"\x1b\[\d+F\x1b\[J", "", out.getvalue())
        assert "\x1b" not in shown
        assert "\x9b" not in shown
        assert "\x07" not in shown
        assert "Find it now" in shown
