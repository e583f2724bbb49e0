"""What a sub-agent's answer must pass to be `done`: paor's own rules, then the caller's check.

    unusable     paor's own text, a copy of the task or the prompt, a raw call, nothing
    ungrounded   no tool result backs it, when the task needed one (`require_evidence`)
    invented     numbers or names no tool result (nor the task) showed
    uncovered    a task in several parts has a part nothing looked at, or that the answer
                 says nothing a tool found about (`agents._coverage`)
    unsupported  in a cited run, nothing a passage says holds it up (`agents._support`)
    acceptance   the caller's `AcceptanceCheck`

The executor sends a failing answer back with the reason, then reports it `partial`; a last word
given after a limit is `done` only in a cited run, and only when it passes them all (`holds_up`);
a task that was one tool call is `done` with the call's result only when that result passes the
rules an answer must rest on (`called`), else `partial`: no model is there to look further.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from agents._answer_check import AnswerCheck
from agents._answers import unseen_numbers
from agents._brief import asked
from agents._coverage import dropped, uncovered, unseen_names
from agents._report import AcceptanceCheck, AgentReport
from agents._steps import EXCERPT_CHARS, AgentState
from agents._toolbox import ToolResult
from memory import AssistantMessage, Message

__all__ = ["LOOK_INTRO", "AnswerRules"]

LOOK_INTRO = "What a first search for the task found:"
"""The head of the message that hands the model the first look's result."""


@dataclass(frozen=True, slots=True)
class AnswerRules:
    """The rules of one executor.

    Attributes:
        check: paor's own text, copies of what the model is told (instructions, tool
            descriptions) and raw calls to any tool on the menu are no answer (`AnswerCheck`).
        tools: The names of the executor's own tools (the evidence rule asks for one of them).
        cite: The run asks for citations: the support rule applies.
        acceptance: The caller's check, after paor's rules.
    """

    check: AnswerCheck
    tools: frozenset[str]
    cite: bool
    acceptance: AcceptanceCheck | None

    def unusable(self, s: AgentState, answer: str) -> str | None:
        """Why `answer` is no answer at all, if it is not one."""
        return self.check.unusable(answer, task=s.task)

    def unfounded(self, s: AgentState, answer: str) -> str | None:
        """Why `answer` does not rest on what was found: the evidence, number, coverage and support
        rules."""
        return (
            _ungrounded(s, self.tools, answer)
            or _invented(s, answer, self.tools)
            or _left_out(s, answer)
            or self._unsupported(s, answer)
        )

    def called(self, s: AgentState, tool: str, result: ToolResult) -> AgentReport:
        """The report of a task that was one call of `tool`: failed when the call failed; done
        with its result when that passes the rules an answer rests on (`unfounded`: a result
        that covers one part of a task in two is not the task's answer); else partial."""
        if not result.ok:
            s.notes.append(f"{tool} failed: {' '.join(result.content.split())[:EXCERPT_CHARS]}")
            return s.report(status="failed", answer="")
        problem = self.unfounded(s, result.content)
        if problem is None:
            return s.report(status="done", answer=result.content)
        s.notes.append(f"{tool}'s result is not the task's whole answer: {problem}")
        return s.report(status="partial", answer=result.content, stop_reason="acceptance")

    def holds_up(self, s: AgentState, answer: str) -> bool:
        """Whether a last word, given after a loop or a limit stopped the agent, is as good as
        a final answer: only in a cited run (where the support rule checks what it says), and
        only when it passes every check a final answer must, that rule and acceptance included."""
        if not self.cite or not s.evidence or self.unfounded(s, answer):
            return False
        return self.acceptance is None or self.acceptance(answer, s.evidence) is None

    def _unsupported(self, s: AgentState, answer: str) -> str | None:
        """The support rule of cited runs (see `agents._support`): the answer must say what a
        passage the tools showed, or the earlier results the task came with, says about what the
        task asks. Only with `cite` (an answer from the context alone is held to it too). An
        agent that could have looked but cited nothing (no tool result it gathered, no earlier
        results) has no passage behind its answer: in a cited run that answer is not taken, what
        the evidence rule says (an orchestrator's subtask with no tools named is not held to it)."""
        if not self.cite:
            return None
        if not (s.evidence or s.context.strip()):
            return _UNCITED if _usable(s, self.tools) else None
        found = [m.content or "" for m in s.transcript.messages if m.role == "tool" or _looked(m)]
        texts = [p for p in (*found, s.context) if p]
        return self.check.unsupported(answer, asked(s.task), [*texts, *s.evidence])


_UNCITED = (
    "no source backs your answer: nothing your tools returned says it; call a tool to find it, "
    "then answer from what it returns, or say the sources do not tell"
)


def _ungrounded(s: AgentState, tools: frozenset[str], answer: str) -> str | None:
    """The evidence rule (see `Executor`'s `require_evidence`): why the answer rests on nothing."""
    rule = s.require_evidence
    if rule is False or s.evidence or not _usable(s, tools):
        return None
    if rule is None and s.context.strip():
        return None
    if rule == "facts":
        stated = _unshown(s, answer)
        if not stated:
            return None
        return (
            f"nothing you were given shows what your answer states ({', '.join(stated[:5])}); "
            "call a tool to find or check it, then answer from what it returns"
        )
    return (
        "no tool result backs your answer; call a tool to find or check it, then answer "
        "from what it returns"
    )


def _usable(s: AgentState, tools: frozenset[str]) -> frozenset[str]:
    """The agent's own tools it may call in this run."""
    return tools if s.allowed is None else s.allowed & tools


def _unshown(s: AgentState, answer: str) -> list[str]:
    """The numbers and names in `answer` that nothing the model was given shows (`_shown`)."""
    shown = _shown(s)
    return unseen_numbers(answer, shown) or unseen_names(answer, shown)


def _invented(s: AgentState, answer: str, tools: frozenset[str]) -> str | None:
    """Numbers or names in a grounded answer that no tool result, nor the task, showed (see
    `agents._answers.unseen_numbers` and `agents._coverage.unseen_names`): only where the
    evidence rule holds and tools ran (for the "facts" rule, tools that could look it up: the
    user's answer to a question does not make a hotel it did not name an invention)."""
    if s.require_evidence is False or not s.evidence:
        return None
    if s.require_evidence == "facts" and not _usable(s, tools):
        return None
    shown = _shown(s)
    unseen = unseen_numbers(answer, shown)
    if unseen:
        return (
            f"your answer has numbers that no tool result shows ({', '.join(unseen[:5])}); "
            "give only the numbers the tools returned"
        )
    names = unseen_names(answer, [*shown, *(e.excerpt for e in s.evidence)])
    if names:
        return (
            f"your answer names what no tool result shows ({', '.join(names[:5])}); "
            "give only what the tools returned"
        )
    return None


def _left_out(s: AgentState, answer: str) -> str | None:
    """The coverage rule (see `agents._coverage`): only where the agent looked at something (a
    tool ran, or its task came with results), since that is what a part must be found in; and
    a part a tool result is about (its call or its text names it) that the answer says nothing
    of what it found ("Paris, Japan" when the tool said "Tokyo" for Japan)."""
    if not (s.evidence or s.context.strip()):
        return None
    looked = [s.context, *_looked_at(s.transcript.messages)]
    looked += [f"{e.source} {e.excerpt}" for e in s.evidence]
    task = asked(s.task)
    name = uncovered(task, answer, looked)
    if name is not None:
        return (
            f"your answer says nothing about {name}, which the task asks about, and nothing you "
            f"looked at mentions it; look {name} up too, then answer every part of the task"
        )
    found = [(f"{e.source} {e.excerpt}", e.excerpt) for e in s.evidence]
    name = dropped(task, answer, found)
    if name is None:
        return None
    return (
        f"your answer says nothing your tools found about {name}, which the task asks about; "
        "say what they found"
    )


def _looked_at(messages: Iterable[Message]) -> list[str]:
    """What the agent asked its tools and what they returned: each call's arguments, each tool
    result, and the first look (not the task, which names every part)."""
    texts = []
    for message in messages:
        if message.role == "tool" or _looked(message):
            texts.append(message.content or "")
        elif isinstance(message, AssistantMessage):
            texts += [call.arguments for call in message.tool_calls]
    return texts


def _shown(s: AgentState) -> list[str]:
    """What the model was shown of the world: the instructions, the task's question and context,
    the first look and every tool result; not its own words, nor paor's messages to it (a refusal
    quotes the very numbers it refuses), nor the answer's shape and checks a planner wrote after
    the question, where a small one puts its own guess ("Expected output: The CEO of Apple Inc.
    is Steve Jobs.")."""
    messages = s.transcript.messages
    shown = [m.content or "" for m in messages if m.role in ("system", "tool") or _looked(m)]
    return [*shown, asked(s.task), s.context]


def _looked(message: Message) -> bool:
    """Whether `message` hands the model the first look's result."""
    return message.role == "user" and (message.content or "").startswith(LOOK_INTRO)
