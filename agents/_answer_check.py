"""`AnswerCheck`: the executor's answer rules, for a loop of one's own.

An executor judges its sub-agent's final answer itself (`agents._verdict`). A loop that asks a
model for an answer outside an executor, such as the planner's synthesis, a research report's
sections or a plan's goals, judges it with this object, by the same rules:

    unusable     paor's own text, a tool call written as text, a copy of the task or of what
                 the model was told, a placeholder, nothing, one sentence over and over
                 (`agents._answers`); with what the model was shown, numbers or names none of
                 it shows
    unsupported  nothing the passages say holds it up (`agents._support`)
    uncovered    a part of a task in several parts that nothing mentions (`agents._coverage`)
    dropped      a part the answer leaves out though a result is about it

```python
check = AnswerCheck([MY_INSTRUCTIONS], tools=[t.spec() for t in tools])
problem = check.unusable(answer, task=goal, seen=[prompt]) or check.unsupported(answer, goal, found)
```
"""

from __future__ import annotations

from collections.abc import Iterable

from agents._answers import SHINGLE_WORDS, Parrot, described, unseen_numbers, unusable_answer
from agents._coverage import dropped, parts, uncovered, unseen_names
from agents._signals import ASK_USER, SIGNALS
from agents._support import sourced, unsupported
from agents._toolbox import Evidence
from agents.models._model import ToolSpec

__all__ = ["AnswerCheck"]


class AnswerCheck:
    """The answer rules of an executor, for an answer a model gives outside one.

    Args:
        told: What the model was told (instructions, examples, descriptions): an answer that
            copies `words` of it in a row is no answer.
        tools: The tools the model could call: a call to one written as text is no answer, and
            what their descriptions say counts as told (paor's own, `report_issue` and
            `ask_user`, always are).
        names: More tool names the model knew (a call to one written as text is no answer).
        words: How many consecutive words make a copy (8 by default: a phrase, not a shared term).
    """

    def __init__(
        self,
        told: Iterable[str] = (),
        *,
        tools: Iterable[ToolSpec] = (),
        names: Iterable[str] = (),
        words: int = SHINGLE_WORDS,
    ) -> None:
        specs = [*tools, *(t.spec() for t in (*SIGNALS, ASK_USER))]
        self._parrot = Parrot([*told, *described(specs)], words=words)
        self._names = frozenset(names) | {spec.name for spec in specs}

    def copied(self, text: str) -> str | None:
        """The first phrase of `text` copied from what the model was told, if any."""
        return self._parrot.copied(text)

    def unusable(
        self, answer: str, *, task: str = "", seen: Iterable[str] | None = None
    ) -> str | None:
        """Why `answer` is no answer, phrased for the model to fix; None when it is one.

        Args:
            answer: The model's final answer.
            task: The task or goal it was given (an answer that only restates it is no answer).
            seen: Everything the model was shown, when its numbers and names must come from
                it: a number none of it (nor the task) shows, nor the sum, difference, product or
                ratio of two it shows, is invented, and so is a name none of it mentions
                ("Sydney", when the results say "Canberra"). None: neither is checked.
        """
        problem = unusable_answer(answer, parrot=self._parrot, tools=self._names, task=task)
        if problem or seen is None:
            return problem
        seen = [task, *seen]
        unseen = unseen_numbers(answer, seen)
        if unseen:
            return (
                f"your answer has numbers that none of the results shows ({', '.join(unseen[:5])}); "
                "give only the numbers the results show"
            )
        names = unseen_names(answer, seen)
        if names:
            return (
                f"your answer names what none of the results shows ({', '.join(names[:5])}); "
                "give only what the results show"
            )
        return None

    def unsupported(self, answer: str, task: str, passages: Iterable[str | Evidence]) -> str | None:
        """Why `answer` does not say what its passages say, as an answer to `task`; None when it
        does (the support rule of cited runs, in `agents._support`).

        Args:
            answer: The final answer, citations included.
            task: What was asked.
            passages: What the answer may rest on: texts, and evidence the tools gathered (each
                excerpt under its source, whose id often names what it is about).
        """
        texts = [p if isinstance(p, str) else sourced(p.source, p.excerpt) for p in passages]
        return unsupported(answer, task, texts)

    @staticmethod
    def parts(task: str) -> list[str]:
        """The things `task` lists side by side, each once: names joined by commas, "and" or
        "or" ("France and Japan"), each of which the task asks about (`agents._coverage`)."""
        return parts(task)

    @staticmethod
    def uncovered(answer: str, task: str, looked: Iterable[str]) -> str | None:
        """The first name a task in several parts asks about ("Japan", in "What are the
        capitals of France and Japan?") that neither `answer` nor anything in `looked` (what
        was asked and found) mentions; None when each is covered or the task names fewer than
        two things (the coverage rule, in `agents._coverage`)."""
        return uncovered(task, answer, looked)

    @staticmethod
    def dropped(answer: str, task: str, results: Iterable[tuple[str, str]]) -> str | None:
        """The first name a task in several parts asks about that `answer` leaves out though
        one of `results` ((question, answer) pairs) is about it: the answer says nothing that
        result's answer says ("Tokyo", for Japan), whether or not it names it. None when nothing
        is left out (see `agents._coverage`)."""
        return dropped(task, answer, results)
