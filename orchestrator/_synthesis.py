"""The synthesis: the run's final answer, written from what its sub-agents reported.

The writer sees each result under its task (cut at `RunConfig.result_chars`, `RESULT_CHARS` by
default) with its sources, and its answer is checked like a sub-agent's (`Planner.synthesise`);
when it fails twice, the answer is the results joined as they were reported (`joined`). A complete
run whose one subtask asked the goal itself needs no writer at all (`answered_alone`), nor does one
whose subtask asking the goal joined every other result (`final_join`), when that answer passes
the writer's checks.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from agents import AgentReport
from agents.errors import ModelError
from agents.events import TextSink
from agents.executor import AnswerCheck
from agents.models import ModelRequest, ModelResponse, OutputSpec
from agents.telemetry import logger
from agents.tools import Evidence
from memory import AssistantMessage, Message, SystemMessage, UserMessage
from orchestrator._plan_checks import same_question

__all__ = [
    "RESULT_CHARS",
    "SYNTHESIS_INSTRUCTIONS",
    "SYNTHESIS_TRIES",
    "Synthesis",
    "Writer",
    "answered_alone",
    "final_join",
    "goal_answered",
    "goal_text",
    "joined",
    "left_out",
    "passages",
    "report_text",
    "restarted",
    "synthesis_prompt",
]

SYNTHESIS_INSTRUCTIONS = (
    "You write the final answer to the goal from the results your agents reported. Use only those "
    "results; keep their citations in [brackets]; say plainly what is missing or uncertain."
)
RESULT_CHARS = 1500
"""The most of one result the writer (and a dependent sub-agent) sees, by default."""
_log = logger("paor.planner")
SYNTHESIS_TRIES = 2
"""The answer, and once more with the reason it was not accepted."""


@dataclass(frozen=True, slots=True)
class Synthesis:
    """The run's final answer, why it is not the model's when it is not, and the object of the
    run's output type when it has one."""

    answer: str
    problem: str | None = None
    output: Any = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Writer:
    """The synthesis step of a run's planner.

    Attributes:
        ask: The planner's model call (through the effect boundary, charged to the run's
            budget; text to the sink as it comes, when one is given).
        instructions: The writer's system prompt.
        judge: Why an answer is no answer (`(goal, answer, shown) -> problem`), if it is not;
            `shown` is its prompt and the excerpts the sub-agents read, which its numbers and
            names must come from.
        cite: The run asks for citations: a complete run's answer must say what a result or an
            excerpt says (`agents.executor.AnswerCheck.unsupported`).
        result_chars: The most of one result the writer reads (None: all of it).
    """

    ask: Callable[[ModelRequest, TextSink | None], Awaitable[ModelResponse]]
    instructions: str
    judge: Callable[[str, str, str], str | None]
    cite: bool
    result_chars: int | None = RESULT_CHARS

    async def write(
        self,
        goal: str,
        reports: Sequence[AgentReport],
        note: str | None,
        *,
        known: str = "",
        on_text: TextSink | None = None,
        needs: Mapping[str, Sequence[str]] | None = None,
    ) -> Synthesis:
        """The final answer from the reports; never raises. An answer that fails the answer
        check (paor's own text or layout, a copy of the goal or the prompt, a raw call,
        nothing) is sent back once with the reason; if the second is no better, or the model
        fails, the answer is the results joined as they were reported, and `problem` says why.
        With `on_text`, its text goes there as the model writes it. With `needs` (each subtask's
        dependencies), a subtask that asked the goal itself after every other result
        (`final_join`) has written the answer already: it is the run's when it passes the
        checks a written one must, and no model call is made."""
        alone = answered_alone(goal, reports, note, known) or self._joined_by(
            goal, reports, note, known, needs
        )
        if alone is not None:
            if on_text is not None:
                await on_text(alone, False)
            return Synthesis(answer=alone)
        prompt = synthesis_prompt(goal, reports, note, known, self.result_chars)
        messages: list[Message] = [
            SystemMessage(content=self.instructions),
            UserMessage(content=prompt),
        ]
        problem = ""
        shown = _shown(goal, reports, note, known, self.result_chars)
        for attempt in range(SYNTHESIS_TRIES):
            try:
                request = ModelRequest(messages=tuple(messages), purpose="synthesis")
                response = await self.ask(request, restarted(on_text) if attempt else on_text)
            except (ModelError, TimeoutError) as exc:
                problem = f"the synthesis failed ({str(exc) or 'the deadline was reached'})"
                break
            answer = (response.message.content or "").strip()
            problem = self._rejects(goal, answer, shown, reports, note)
            if not problem:
                return Synthesis(answer=answer)
            _log.warning("synthesis_rejected", problem=problem)
            messages += [
                AssistantMessage(content=answer or "(empty)"),
                UserMessage(content=f"Your answer was not accepted: {problem}. Write it again."),
            ]
        why = f"{problem}; the answer is the agents' results as they reported them"
        return Synthesis(answer=joined(reports, note, self.result_chars), problem=why)

    def _rejects(
        self, goal: str, answer: str, shown: str, reports: Sequence[AgentReport], note: str | None
    ) -> str:
        """Why `answer` is not the run's ("" when it is): no answer (`judge`), a claim no result
        supports when the run cites, or a part of the goal a done result is about left out."""
        problem = self.judge(goal, answer, shown) or ""
        if not problem and self.cite and note is None:
            problem = AnswerCheck().unsupported(answer, goal, passages(reports)) or ""
        return problem or _dropped(goal, answer, reports)

    def _joined_by(
        self,
        goal: str,
        reports: Sequence[AgentReport],
        note: str | None,
        known: str,
        needs: Mapping[str, Sequence[str]] | None,
    ) -> str | None:
        """The answer of the subtask that joined every result to answer the goal
        (`final_join`), if the run is complete and it passes the writer's checks."""
        joiner = None if note or known or needs is None else final_join(goal, reports, needs)
        if joiner is None:
            return None
        read = [r for r in reports if r is not joiner]  # its answer cannot back itself
        shown = "\n".join(
            [goal, *(report_text(_asked(r), None) for r in read)]
            + [e.excerpt for r in reports for e in r.evidence]
        )
        problem = self._rejects(goal, joiner.answer, shown, read, note)
        if problem:
            _log.info("final_join_rewritten", subtask_id=joiner.agent_id, problem=problem)
            return None
        _log.info("final_join_answers", subtask_id=joiner.agent_id)
        return joiner.answer

    async def write_object(
        self,
        goal: str,
        reports: Sequence[AgentReport],
        note: str | None,
        output: OutputSpec[Any],
        *,
        known: str = "",
    ) -> Synthesis:
        """The run's answer as an object of `output`'s type, written from the results alone
        and validated (`OutputSpec.write`); with no results there is none to write.
        Never raises."""
        if not reports:
            return Synthesis(answer="", problem=f"no results to write a {output.name} from")
        prompt = synthesis_prompt(goal, reports, note, known, self.result_chars)

        async def ask(request: ModelRequest) -> ModelResponse:
            return await self.ask(request, None)

        typed = await output.write(
            ask, system=self.instructions, prompt=prompt, purpose="synthesis"
        )
        return Synthesis(answer=typed.text, problem=typed.problem, output=typed.value)


def synthesis_prompt(
    goal: str,
    reports: Sequence[AgentReport],
    note: str | None,
    known: str,
    chars: int | None = RESULT_CHARS,
) -> str:
    """What the writer is given: the goal (with the facts the run knows), every result (the
    first `chars` characters of each), and what is missing when the run is incomplete."""
    body = "\n\n".join(report_text(r, chars) for r in reports) or "(no results)"
    prompt = f"{goal_text(goal, known)}\n\nResults from the agents:\n\n{body}"
    if note:
        prompt += f"\n\nNote: the run is incomplete ({note}); say what is missing."
    return prompt


def _shown(
    goal: str, reports: Sequence[AgentReport], note: str | None, known: str, chars: int | None
) -> str:
    """What the writer was given, which the numbers and names of its answer must be in: its
    prompt and the tools' excerpts, less the expected output and checks a planner wrote under
    each task, where a small one puts its own guess ("Expected output: The CEO of Apple is Steve
    Jobs")."""
    prompt = synthesis_prompt(goal, [_asked(r) for r in reports], note, known, chars)
    return "\n".join([prompt, *(e.excerpt for r in reports for e in r.evidence)])


def _asked(report: AgentReport) -> AgentReport:
    """`report` under the question its task asked (`AgentReport.question`)."""
    return report.model_copy(update={"task": report.question})


def report_text(report: AgentReport, chars: int | None = RESULT_CHARS) -> str:
    """One result as the writer reads it: under its task, cut at `chars`, with its sources."""
    sources = ", ".join(dict.fromkeys(f"[{e.source}]" for e in report.evidence))
    text = f"## {report.agent_id} ({report.status})\nTask: {report.task}\n{report.answer[:chars]}"
    return f"{text}\nSources: {sources}" if sources else text


def passages(reports: Sequence[AgentReport]) -> list[str | Evidence]:
    """What a synthesis may rest on: each `done` answer under the task it answers (checked
    against its own sources when the run cites; a partial one was not accepted, so it backs
    nothing), and each excerpt the tools showed, under its source."""
    passages: list[str | Evidence] = [
        f"# {r.task}\n{r.answer}" for r in reports if r.status == "done"
    ]
    return passages + [e for r in reports for e in r.evidence]


def joined(
    reports: Sequence[AgentReport], note: str | None, chars: int | None = RESULT_CHARS
) -> str:
    """The fallback answer when synthesis fails: every result, as it was reported."""
    head = f"Incomplete ({note}). " if note else ""
    parts = [f"{head}Results gathered by the agents:"]
    parts += [report_text(r, chars) for r in reports]
    return "\n\n".join(parts) if reports else f"{head}No results were gathered."


def left_out(goal: str, answer: str, reports: Sequence[AgentReport]) -> str | None:
    """Why a run's answer does not cover its goal: a part the goal names ("Japan") that neither
    the answer nor any subtask (its task, answer or evidence) mentions, so no one looked at it
    (the coverage rule, `agents.executor.AnswerCheck.uncovered`); None when each part is."""
    looked = [f"{r.task}\n{r.answer}" for r in reports]
    looked += [f"{e.source} {e.excerpt}" for r in reports for e in r.evidence]
    name = AnswerCheck.uncovered(answer, goal, looked)
    return (
        None if name is None else f"nothing in the run looked at {name}, which the goal asks about"
    )


def _dropped(goal: str, answer: str, reports: Sequence[AgentReport]) -> str:
    """Why a synthesis is not accepted when it leaves out a part of the goal that a done result
    is about ("New Delhi" for the capitals of Brazil and India), or ""."""
    done = [(r.question, r.answer) for r in reports if r.status == "done"]
    name = AnswerCheck.dropped(answer, goal, done)
    if name is None:
        return ""
    return (
        f"your answer says nothing the results found about {name}, which the goal asks about; "
        "say what they found"
    )


def answered_alone(
    goal: str, reports: Sequence[AgentReport], note: str | None, known: str
) -> str | None:
    """The one result's answer when it is the whole run's: a complete run whose one subtask
    asked the goal itself (`same_question`) needs no join. Its answer passed the sub-agent's
    checks; a second model call rewriting it could only lose what it says (or spend a small
    model's deadline)."""
    if note or known or len(reports) != 1:
        return None
    (report,) = reports
    return report.answer if _asks_goal(report, goal) else None


def goal_answered(goal: str, reports: Sequence[AgentReport]) -> AgentReport | None:
    """A done report of a subtask that asked the goal itself (`same_question`), if there is one."""
    return next((r for r in reports if _asks_goal(r, goal)), None)


def final_join(
    goal: str, reports: Sequence[AgentReport], needs: Mapping[str, Sequence[str]]
) -> AgentReport | None:
    """The done report of a subtask that asked the goal itself and needs, directly or through
    others (`needs`: each subtask's dependencies), every other subtask with a result: it read
    what a writer would read, and wrote the goal's answer from it (see `Writer.write`)."""
    for report in (r for r in reports if _asks_goal(r, goal)):
        read: set[str] = set()
        todo = list(needs.get(report.agent_id, ()))
        while todo:
            if (dep := todo.pop()) not in read:
                read.add(dep)
                todo += needs.get(dep, ())
        if all(r is report or r.agent_id in read for r in reports):
            return report
    return None


def _asks_goal(report: AgentReport, goal: str) -> bool:
    """Whether `report` is a done answer to the goal itself: its subtask's question (its brief
    less what a good answer looks like) is the goal, reworded by a word or two at most."""
    return report.status == "done" and same_question(report.question, goal)


def restarted(sink: TextSink | None) -> TextSink | None:
    """`sink` for a second reply: its first piece replaces what the first reply streamed."""
    if sink is None:
        return None
    first = True

    async def send(text: str, restart: bool) -> None:
        nonlocal first
        restart, first = restart or first, False
        await sink(text, restart)

    return send


def goal_text(goal: str, known: str) -> str:
    """The goal, with the long-term facts the run knows (rendered) when there are any."""
    return f"Goal: {goal}\n\n{known}" if known else f"Goal: {goal}"
