"""Crash-resume for real: a run killed with SIGKILL mid-plan, then resumed in a new process.

Through the API (`tests._kill_child`), and through the command line: `paor research --journal`
against a scripted model server on 127.0.0.1, killed, then `paor resume`. The kill lands where
the requests in flight are known: the server holds chosen requests (each researcher's n-th, or the
writer's) and the process is killed once all of them are held. "Kill when request N+1 arrives" is
no such point while agents run concurrently: the server may have just answered another agent
whose process had not yet written that reply to the journal, and that request is then rightly
asked again, as one in flight.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import pytest
from anyio.abc import Process
from anyio.streams.text import TextReceiveStream

from agents.testing import FakeOpenAIServer, ServerAction, TokenUsage
from memory import Journal
from tests._kill_child import RUN_ID
from tests.test_cli import role_of

pytestmark = pytest.mark.anyio

ROOT = Path(__file__).resolve().parent.parent
# A guard against a hung child, not a timing claim.
GUARD_S = 45


def _child(mode: str, journal: Path, calls: Path, out: Path) -> list[str]:
    return [sys.executable, "-m", "tests._kill_child", mode, str(journal), str(calls), str(out)]


def _env(*, block: bool) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PAOR_TEST_BLOCK"}
    return {**env, "PAOR_TEST_BLOCK": "1"} if block else env


async def _wait_for(process: Process, marker: str) -> None:
    """Read the child's output until `marker` is printed on a line of its own."""
    assert process.stdout is not None
    seen = ""
    async for chunk in TextReceiveStream(process.stdout):
        seen += chunk
        if f"\n{marker}\n" in f"\n{seen}":
            return
    raise AssertionError(f"the child ended without printing {marker}:\n{seen[-2000:]}")


def _calls(path: Path) -> Counter[str]:
    return Counter(path.read_text(encoding="utf-8").splitlines())


def _answer(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


async def test_a_killed_run_resumes_to_the_same_answer_running_each_tool_once(
    tmp_path: Path,
) -> None:
    """SIGKILL while the last subtask's tool is in flight; a new process resumes the run: the
    answer equals an uninterrupted run's and every tool completed exactly once, by its own count."""
    journal, calls = tmp_path / "journal.db", tmp_path / "calls.txt"
    with anyio.fail_after(GUARD_S):
        command = _child("run", journal, calls, tmp_path / "killed.json")
        async with await anyio.open_process(command, cwd=ROOT, env=_env(block=True)) as child:
            await _wait_for(child, "BLOCKED")
            child.send_signal(signal.SIGKILL)
            await child.wait()
        assert child.returncode == -signal.SIGKILL
        assert _calls(calls) == {"lookup a": 1, "lookup b": 1, "lookup c": 1}
        async with Journal(journal) as opened:
            info = await opened.run(RUN_ID)
        assert info is not None
        assert info.status == "crashed"

        await anyio.run_process(
            _child("resume", journal, calls, tmp_path / "resumed.json"),
            cwd=ROOT,
            env=_env(block=False),
        )
        reference = tmp_path / "reference"
        reference.mkdir()
        await anyio.run_process(
            _child(
                "run", reference / "journal.db", reference / "calls.txt", reference / "out.json"
            ),
            cwd=ROOT,
            env=_env(block=False),
        )

    resumed = _answer(tmp_path / "resumed.json")
    assert resumed == _answer(reference / "out.json")
    assert resumed["status"] == "complete"
    assert "D settled" in resumed["answer"]
    assert _calls(calls) == {"lookup a": 1, "lookup b": 1, "lookup c": 1, "settle d": 1}
    async with Journal(journal) as opened:
        info = await opened.run(RUN_ID)
    assert info is not None
    assert (info.status, info.owner) == ("complete", None)


TOPIC = "How do generators work?"
# Each researcher reads these documents in turn, then answers: 3, 4 and 4 requests.
READS = {
    TOPIC: ("generators", "iterators"),
    "How does a generator pause?": ("generators", "iterators", "guide/coroutines"),
    "What ends an iteration?": ("iterators", "guide/coroutines", "generators"),
}
ANSWERS = {
    TOPIC: "A generator function pauses at each yield and resumes on next() [generators].",
    "How does a generator pause?": "It pauses at each yield [generators].",
    "What ends an iteration?": "StopIteration ends the iteration [iterators].",
}
USAGE = TokenUsage(prompt_tokens=10, completion_tokens=5)


def _corpus(folder: Path) -> Path:
    (folder / "guide").mkdir(parents=True)
    (folder / "generators.md").write_text(
        "# Generators\n\nA generator function pauses at each yield and resumes on next().\n"
    )
    (folder / "iterators.md").write_text(
        "# Iterators\n\nAn iterator has a __next__ method; StopIteration ends the iteration.\n"
    )
    (folder / "guide" / "coroutines.md").write_text(
        "# Coroutines\n\nA coroutine is defined with async def and suspends at each await.\n"
    )
    return folder


def _turn(body: dict[str, Any]) -> int:
    return sum(m["role"] == "assistant" for m in body["messages"])


def _team(body: dict[str, Any]) -> ServerAction:
    """The planner, the researchers and the writer: each reply depends on its request only."""
    asker = role_of(body)
    if asker == "plan":
        subtasks = [{"id": f"q{i}", "goal": goal} for i, goal in enumerate(READS)]
        return ServerAction.json_content({"subtasks": subtasks}, usage=USAGE)
    if asker == "writer":
        return ServerAction.text("Generators pause at yield [generators].", usage=USAGE)
    reads, turn = READS[asker], _turn(body)
    if turn < len(reads):
        return ServerAction.tool_calls([("read_doc", {"doc": reads[turn]})], usage=USAGE)
    return ServerAction.text(ANSWERS[asker], usage=USAGE)


@dataclass(kw_only=True, slots=True)
class _Held:
    """What the killed run's server answered, and the requests it holds until the kill."""

    askers: frozenset[str]
    turn: int
    answered: list[dict[str, Any]] = field(default_factory=list)
    held: list[dict[str, Any]] = field(default_factory=list)
    all_held: anyio.Event = field(default_factory=anyio.Event)

    async def decide(self, body: dict[str, Any]) -> ServerAction:
        """`_team`, but a request of `askers` after their first `turn` replies never ends."""
        if role_of(body) in self.askers and _turn(body) >= self.turn:
            self.held.append(body)
            if len(self.held) == len(self.askers):
                self.all_held.set()
            await anyio.sleep_forever()
        self.answered.append(body)
        return _team(body)


def _paor(*argv: str) -> list[str]:
    return [sys.executable, "-m", "orchestrator.cli", *argv]


def _cli_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_BASE_URL", "PAOR_MODEL")}
    return {**env, "OPENAI_API_KEY": "sk-test"}  # a key: the embedded model never starts


def _research(server: FakeOpenAIServer, docs: Path, out: Path, journal: Path) -> list[str]:
    return _paor(
        "research", TOPIC, "--docs", str(docs), "--out", str(out), "--journal", str(journal),
        "--base-url", server.base_url, "--protocol", "tools",
    )  # fmt: skip


def _asked(body: dict[str, Any]) -> str:
    """A request as the model saw it (the same transcript asked again reads the same)."""
    return json.dumps(body, sort_keys=True)


@pytest.mark.parametrize(
    ("askers", "turn", "expected"),
    [
        pytest.param(frozenset(READS), 1, (4, 3), id="first-questions"),
        pytest.param(frozenset(READS), 2, (7, 3), id="mid-research"),
        pytest.param(frozenset({"writer"}), 0, (12, 1), id="writer"),
    ],
)
async def test_a_killed_research_command_resumes_asking_only_what_was_in_flight(
    tmp_path: Path, askers: frozenset[str], turn: int, expected: tuple[int, int]
) -> None:
    """`paor research --journal` killed with SIGKILL while known requests are held in flight;
    `paor resume` asks none whose reply the journal holds, each held one once more, and writes
    the report an uninterrupted run writes (13 requests in all, however they are split)."""
    docs, env = _corpus(tmp_path / "docs"), _cli_env()
    journal, out, log = tmp_path / "journal.db", tmp_path / "report.md", tmp_path / "log"
    killed = _Held(askers=askers, turn=turn)
    with anyio.fail_after(GUARD_S):
        async with FakeOpenAIServer(_team) as server:
            reference = tmp_path / "reference.md"
            command = _research(server, docs, reference, tmp_path / "reference.db")
            await anyio.run_process(command, cwd=ROOT, env=env)
        uninterrupted = list(server.requests)

        async with FakeOpenAIServer(killed.decide) as server:
            with log.open("wb") as stderr:
                command = _research(server, docs, out, journal)
                async with await anyio.open_process(
                    command, cwd=ROOT, env=env, stderr=stderr
                ) as child:
                    # An agent writes a reply to the journal before it asks again: once every
                    # held asker is held, each answered request's reply is recorded.
                    with anyio.move_on_after(GUARD_S / 2):
                        await killed.all_held.wait()
                    child.send_signal(signal.SIGKILL)
                    await child.wait()
        assert killed.all_held.is_set(), log.read_text(encoding="utf-8")[-2000:]
        async with Journal(journal) as opened:
            (info,) = await opened.runs()
            records = await opened.load(info.run_id)
        assert info.status == "crashed"

        async with FakeOpenAIServer(_team) as server:
            command = _paor(
                "resume", info.run_id, "--journal", str(journal), "--base-url", server.base_url
            )
            await anyio.run_process(command, cwd=ROOT, env=env)
        resumed = list(server.requests)

    answered = {_asked(body) for body in killed.answered}
    in_flight = Counter(_asked(body) for body in killed.held)
    replies = [r for r in records if r.kind == "model" and r.outcome == "ok"]
    assert (len(uninterrupted), len(answered), sum(in_flight.values())) == (13, *expected)
    assert len(replies) == len(answered)  # what the server answered is what the journal holds
    assert [role_of(body) for body in resumed if _asked(body) in answered] == []
    assert Counter(a for a in map(_asked, resumed) if a in in_flight) == in_flight
    assert len(answered) + len(resumed) == len(uninterrupted)
    assert out.read_text(encoding="utf-8") == reference.read_text(encoding="utf-8")
