"""The command line's approvals: `--approve plan|tools|all`, the terminal prompt, `paor approvals`
and `paor approve`.

On a terminal each request is asked there: approve, edit (in `$VISUAL` or `$EDITOR`: the plan, or
the call's arguments, as JSON), reject or deny with a reason, or, for a tool, approve it for the
rest of the run. Without a terminal the run pauses once only approvals wait: the process exits
with status 3, its last line on stdout naming the run and what waits, and `paor approve RUN_ID`
records the decision (of two people, the first wins) and continues the run to its end, writing
the report as `paor resume` does. An edited plan with problems comes back with them: the run
pauses again (or, on a terminal, asks again), showing what to fix.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

import anyio
import anyio.to_thread

from agents import ConfigurationError
from agents.approvals import PAUSE, ApprovalRequest, Approver, Decision
from memory.journal import JournalError, Waiting
from orchestrator._research import Approve, ResearchReport
from orchestrator._state import RunResult
from orchestrator.cli._console import clean, say
from orchestrator.cli._journal import find, open_journal
from orchestrator.cli._spec import ResearchSpec

__all__ = [
    "EXIT_PAUSED",
    "TerminalPrompt",
    "answer_arguments",
    "approvals",
    "approve_arguments",
    "approve_option",
    "batch_paused",
    "cli_approver",
    "decide_only",
    "decision_from",
    "decision_of",
    "paused",
    "pick_waiting",
    "report_or_pause",
]

EXIT_PAUSED = 3
_ASKS = 20  # answers a prompt reads before it gives up (EOF ends it at once)


def approve_option(sub: argparse.ArgumentParser) -> None:
    sub.add_argument(
        "--approve",
        choices=["plan", "tools", "all"],
        help="wait for a person's decision on every plan version (plan), on calls of tools that "
        "change something (tools), or both: asked on the terminal, else the run pauses "
        "(exit status 3) until `paor approve RUN_ID`",
    )


def cli_approver(
    approve_mode: Approve | None, *, journaled: bool, questions: int = 0
) -> Approver | None:
    """Who decides (and answers): the person at the terminal, else nobody now (the run pauses
    in the journal); None when nothing asks.

    Raises:
        ConfigurationError: No terminal to ask on, and no journal to pause in.
    """
    if approve_mode is None and not questions:
        return None
    if sys.stdin.isatty() and sys.stderr.isatty():
        return Approver(decide=TerminalPrompt())
    if not journaled:
        raise ConfigurationError(
            "--approve or --questions with no terminal to ask on pauses the run in the journal: "
            "drop --no-journal"
        )
    return PAUSE


def paused(result: RunResult) -> int:
    """Say what a paused run waits for; the last stdout line names the run and what waits."""
    for waiting in result.waiting:
        say(f"waits: {waiting.summary()}", file=sys.stderr)
        say(_indented(_shown(waiting)), file=sys.stderr)
    ids = ", ".join(w.approval_id for w in result.waiting)
    if all(w.kind == "question" for w in result.waiting):
        say(
            f'paused: run {result.run_id} waits for an answer on {ids} (paor answer {result.run_id} "...")'
        )
    else:
        say(
            f"paused: run {result.run_id} waits for a decision on {ids} "
            f"(paor approve {result.run_id} [--edit FILE | --reject REASON])"
        )
    return EXIT_PAUSED


def report_or_pause(report: ResearchReport, write: Callable[[ResearchReport], int]) -> int:
    """Write the report of a finished run (`write` gives the exit status); for a paused one,
    say what waits (exit status 3)."""
    if report.result.status == "paused":
        return paused(report.result)
    return write(report)


async def approvals(args: argparse.Namespace) -> int:
    """`paor approvals`: what the journal's paused runs wait for, oldest first."""
    async with open_journal(args) as journal:
        found = await journal.waiting()
    if not found:
        say("nothing waits for a decision")
        return 0
    for waiting in found:
        request = ApprovalRequest.model_validate(waiting.request)
        say(f"{waiting.run_id}  {request.summary()}  (asked {_when(waiting.asked)})")
        say(_indented(_shown(request)))
    return 0


async def decision_of(args: argparse.Namespace) -> tuple[ResearchSpec | None, str, Decision]:
    """`paor approve`'s research spec (None for a batch's task), the approval it decides and the
    decision, checked before anything runs.

    Raises:
        JournalError: The run does not wait for a decision (on this approval).
        ConfigurationError: The edit file cannot be read as JSON, or options conflict.
    """
    async with open_journal(args) as journal:
        info = await find(journal, args.run_id)
        batch = info.meta.get("command") == "batch"
        spec = None if batch else ResearchSpec.from_meta(info.run_id, info.meta)
        waits = await journal.waits_of(info.run_id) if info.status == "paused" else []
    target = _target(info.run_id, waits, args.id, info.status)
    request = ApprovalRequest.model_validate(target.request)
    return spec, target.approval_id, decision_from(args, request)


async def decide_only(args: argparse.Namespace, approval_id: str, decision: Decision) -> int:
    """Take the decision on a batch's task: the batch, run again, goes on with it."""
    async with open_journal(args) as journal:
        await journal.decide(args.run_id, approval_id, decision.model_dump(mode="json"))
    say(
        f"decided {approval_id} of run {args.run_id} ({decision.action}): run the batch again "
        "(the same tasks, --out and --journal) to go on"
    )
    return 0


def batch_paused(waiting: list[ApprovalRequest], args: argparse.Namespace) -> int:
    """Say what a paused batch waits for; the last stdout line names the runs that wait."""
    for request in waiting:
        say(f"waits: run {request.run_id}, {request.summary()}", file=sys.stderr)
        say(_indented(_shown(request)), file=sys.stderr)
    runs = ", ".join(dict.fromkeys(w.run_id for w in waiting))
    say(
        f"paused: batch {args.out} waits for decisions in runs {runs} (paor approve RUN_ID, "
        "then run the batch again)"
    )
    return EXIT_PAUSED


def _target(run_id: str, waits: list[Waiting], wanted: str | None, status: str) -> Waiting:
    """The open approval `paor approve` decides; one line on why there is none."""
    waiting = [w for w in waits if w.decision is None]
    taken = [w for w in waits if w.decision is not None and wanted in (None, w.approval_id)]
    if not waiting and not taken:
        raise JournalError(f"run {run_id} is not waiting for a decision (it is {status})")
    if (not waiting or wanted in {w.approval_id for w in taken}) and taken:
        first = taken[-1]
        action = (first.decision or {}).get("action", "?")
        raise JournalError(
            f"{first.approval_id} of run {run_id} was already decided ({action}, at "
            f"{_when(first.decided or 0)}): `paor resume {run_id}` continues it"
        )
    chosen = pick_waiting(run_id, [w.approval_id for w in waiting], wanted)
    return next(w for w in waiting if w.approval_id == chosen)


def pick_waiting(run_id: str, waiting: Sequence[str], wanted: str | None) -> str:
    """The approval `paor approve` decides: `wanted`, or the only one that waits.

    Raises:
        JournalError: Nothing waits, several do and none is named, or the one named does not.
    """
    ids = ", ".join(waiting)
    if not waiting:
        raise JournalError(f"run {run_id} is not waiting for a decision")
    if wanted is None:
        if len(waiting) > 1:
            raise JournalError(f"run {run_id} waits for several decisions ({ids}): pass --id")
        return waiting[0]
    if wanted not in waiting:
        raise JournalError(f"run {run_id} does not wait for {wanted}; it waits for: {ids}")
    return wanted


def decision_from(args: argparse.Namespace, request: ApprovalRequest) -> Decision:
    """`paor approve`'s decision on `request`: `--reject`, `--edit FILE`, or approve.

    Raises:
        ConfigurationError: The edit file cannot be read as a JSON object, or options conflict.
    """
    text = getattr(args, "text", None)
    if request.kind == "question" and text is None:
        raise ConfigurationError(
            f'{request.approval_id} is a question: answer it with paor answer {request.run_id} "..."'
        )
    if text is not None:
        if request.kind != "question":
            raise ConfigurationError(
                f"{request.approval_id} waits for a decision, not an answer: use paor approve"
            )
        return Decision.answer(text)
    if args.edit is not None and args.reject is not None:
        raise ConfigurationError("--edit and --reject cannot be given together")
    if args.reject is not None:
        return Decision.deny(args.reject)
    if args.edit is None:
        return Decision.approve(always=args.always)
    try:
        data = json.loads(Path(args.edit).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise ConfigurationError(f"--edit {args.edit}: not a readable JSON file ({exc})") from None
    if not isinstance(data, dict):
        raise ConfigurationError(f"--edit {args.edit}: the file must hold a JSON object")
    return (
        Decision.edit(data)
        if request.kind == "plan"
        else Decision.approve(data, always=args.always)
    )


@dataclass(kw_only=True)
class TerminalPrompt:
    """Asks the person at the terminal, one request at a time (concurrent ones queue).

    Attributes:
        read: Reads one line of the answer ("" at the end of input).
        out: Where requests and prompts are written.
        editor: The editor command (default: `$VISUAL`, `$EDITOR`, else `vi`).
    """

    read: Callable[[], str] = sys.stdin.readline
    out: IO[str] = sys.stderr
    editor: str | None = None
    _turn: anyio.Lock = field(default_factory=anyio.Lock)

    async def __call__(self, request: ApprovalRequest) -> Decision:
        """The person's decision on `request`."""
        async with self._turn:
            return await self._ask(request)

    async def _ask(self, request: ApprovalRequest) -> Decision:
        say(f"\npaor: approval needed, {request.summary()}", file=self.out)
        say(_indented(_shown(request)), file=self.out)
        if request.kind == "question":
            return await self._answer()
        options = "[a]pprove, [e]dit, [r]eject" + (", a[l]ways" if request.kind == "tool" else "")
        for _ in range(_ASKS):
            reply = await self._line(f"{options}? ")
            if reply is None:
                return Decision.deny("no decision came: the terminal's input ended")
            decision = await self._decided(request, reply.strip().lower())
            if decision is not None:
                return decision
        return Decision.deny("no usable decision came from the terminal")

    async def _answer(self) -> Decision:
        for _ in range(_ASKS):
            line = await self._line("your answer: ")
            if line is None:
                return Decision.deny("no answer came: the terminal's input ended")
            if line.strip():
                return Decision.answer(line.strip())
        return Decision.deny("no answer came from the terminal")

    async def _decided(self, request: ApprovalRequest, reply: str) -> Decision | None:
        if reply in ("a", "approve", "y", "yes"):
            return Decision.approve()
        if reply in ("l", "always") and request.kind == "tool":
            return Decision.approve(always=True)
        if reply in ("r", "reject", "d", "deny", "n", "no"):
            reason = await self._line("reason (the planner or the model reads it): ")
            return Decision.deny((reason or "").strip() or "rejected by a person")
        if reply in ("e", "edit"):
            return await self._edited(request)
        say(f"paor: not an answer: {clean(reply)[:40]!r}", file=self.out)
        return None

    async def _edited(self, request: ApprovalRequest) -> Decision | None:
        data = request.plan if request.kind == "plan" else request.args
        text = await _edit_in(self.editor or _editor(), json.dumps(data, indent=2))
        try:
            edited = json.loads(text)
        except ValueError as exc:
            say(
                f"paor: the edit is not JSON ({exc}); edit again or answer otherwise", file=self.out
            )
            return None
        if not isinstance(edited, dict):
            say("paor: the edit must be a JSON object", file=self.out)
            return None
        return Decision.edit(edited) if request.kind == "plan" else Decision.approve(edited)

    async def _line(self, prompt: str) -> str | None:
        self.out.write(prompt)
        self.out.flush()
        # Abandoned on cancellation: Ctrl-C must not wait for the person to press Enter.
        line = await anyio.to_thread.run_sync(self.read, abandon_on_cancel=True)
        return line if line else None


async def _edit_in(editor: str, text: str) -> str:
    """`text` as the person left it in `editor` (a temporary file, removed after)."""
    handle, name = tempfile.mkstemp(prefix="paor-", suffix=".json")
    path = anyio.Path(name)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as f:
            f.write(text)
        # The editor has the terminal: its input and output are not captured.
        await anyio.run_process([*shlex.split(editor), name], stdin=None, stdout=None, stderr=None)
        return await path.read_text(encoding="utf-8")
    finally:
        await path.unlink(missing_ok=True)


def _editor() -> str:
    return os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"


def _shown(request: ApprovalRequest) -> str:
    """What a person reads to decide: the plan drawn (and the problems of their last edit), or
    the call with the tool's description."""
    if request.kind == "plan":
        text = request.description
        if request.problems:
            text += "\nYour edit had problems:\n" + "\n".join(f"- {p}" for p in request.problems)
        return clean(text)
    args = json.dumps(request.args, ensure_ascii=False, sort_keys=True)
    return clean(f"{request.tool}({args})\n{request.description}")


def _indented(text: str) -> str:
    return "\n".join(f"    {line}" for line in text.splitlines())


def _when(seconds: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(seconds))


def answer_arguments(sub: argparse.ArgumentParser) -> None:
    """`paor answer`'s own options (the rest are `paor resume`'s)."""
    sub.add_argument("text", help="the answer to the question the run asks")
    sub.add_argument("--id", help="the question to answer, when the run waits for several")
    sub.set_defaults(edit=None, reject=None, always=False)


def approve_arguments(sub: argparse.ArgumentParser) -> None:
    """`paor approve`'s own options (the rest are `paor resume`'s)."""
    sub.add_argument("--id", help="the approval to decide, when the run waits for several")
    sub.add_argument("--edit", type=Path, metavar="FILE", help="approve this JSON instead")
    sub.add_argument("--reject", metavar="REASON", help="reject (deny) it, saying why")
    sub.add_argument(
        "--always",
        action="store_true",
        help="a tool call: approve the tool for the rest of the run",
    )
