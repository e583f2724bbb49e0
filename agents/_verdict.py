"""What a sub-agent's answer must pass to be `done`: paor's own rules, then the caller's check.

    unusable     paor's own text, a copy of the task or the prompt, a raw call, nothing
    ungrounded   no tool result backs it, when the task needed one (`require_evidence`)
    invented     numbers no tool result (nor the task) showed
    unsupported  in a cited run, nothing a passage says holds it up (`agents._support`)
    acceptance   the caller's `AcceptanceCheck`

The executor sends a failing answer back with the reason, then reports it `partial`; a last word
given after a limit is `done` only in a cited run, and only when it passes them all (`holds_up`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from agents._answer_check import AnswerCheck
from agents._answers import unseen_numbers
from agents._brief import asked
from agents._report import AcceptanceCheck
from agents._steps import AgentState
from memory import Message

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
        """Why `answer` does not rest on what was found: the evidence, number and support rules."""
        return _ungrounded(s, self.tools) or _invented(s, answer) or self._unsupported(s, answer)

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
            usable = self.tools if s.allowed is None else s.allowed & self.tools
            return _UNCITED if usable else None
        found = [m.content or "" for m in s.transcript.messages if m.role == "tool" or _looked(m)]
        texts = [p for p in (*found, s.context) if p]
        return self.check.unsupported(answer, asked(s.task), [*texts, *s.evidence])


_UNCITED = (
    "no source backs your answer: nothing your tools returned says it; call a tool to find it, "
    "then answer from what it returns, or say the sources do not tell"
)


def _ungrounded(s: AgentState, tools: frozenset[str]) -> str | None:
    """The evidence rule (see `Executor`'s `require_evidence`): why the answer rests on nothing."""
    if s.require_evidence is False or s.evidence:
        return None
    usable = tools if s.allowed is None else s.allowed & tools
    if not usable or (s.require_evidence is None and s.context.strip()):
        return None
    return (
        "no tool result backs your answer; call a tool to find or check it, then answer "
        "from what it returns"
    )


def _invented(s: AgentState, answer: str) -> str | None:
    """Numbers in a grounded answer that no tool result, nor the task, showed (see
    `agents._answers.unseen_numbers`): only where the evidence rule holds and tools ran."""
    if s.require_evidence is False or not s.evidence:
        return None
    unseen = unseen_numbers(answer, _shown(s.transcript.messages))
    if not unseen:
        return None
    return (
        f"your answer has numbers that no tool result shows ({', '.join(unseen[:5])}); "
        "give only the numbers the tools returned"
    )


def _shown(messages: Iterable[Message]) -> list[str]:
    """What the model was shown of the world: the instructions, the task with its context, the
    first look and every tool result; not its own words, nor paor's messages to it (a refusal
    quotes the very numbers it refuses)."""
    return [
        m.content or ""
        for index, m in enumerate(messages)
        if m.role in ("system", "tool") or (m.role == "user" and (index == 1 or _looked(m)))
    ]


def _looked(message: Message) -> bool:
    """Whether `message` hands the model the first look's result."""
    return message.role == "user" and (message.content or "").startswith(LOOK_INTRO)
