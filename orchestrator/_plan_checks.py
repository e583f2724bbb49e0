"""Plans checked like answers: subtask goals that an agent can act on alone.

`orchestrator._plan` checks a plan's structure (ids, dependencies, cycles, tools). This module
checks what its subtasks say, as the executor checks an answer: a sub-agent sees only its own
goal (and its dependencies' results), so a goal must stand alone. Small planner models write
goals that do not:

- a copy of a tool's description ("Find hotels in a city at or under a nightly price.": the city
  and the price the goal named are lost);
- a tool's name for a goal ("search_flights");
- a pronoun with nothing to point to ("How and by when must it be claimed?", split from a question
  whose subject stayed behind).

Each is a problem for the planner to repair, with the reason. When the repairs run out and only
such problems are left, `anchored` repairs them itself: the run's goal is added to each such
subtask's goal, so the agent knows what it is about (a plan is never refused for its wording
alone). `one_question` tells a goal that needs no plan at all: one short question for one fact
is its own one-subtask plan (a small planner splits it into rewordings that compete for the same
model). `first_plan_repairs` drops dependencies a first plan cannot have (a tool's name, an id no
subtask has), as a replan's are, renames a repeated id nothing depends on, and says so.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from difflib import SequenceMatcher
from typing import Literal

from agents.executor import AnswerCheck
from orchestrator._plan import Plan, PlanDraft, Subtask, SubtaskDraft, fresh_id

__all__ = [
    "anchored",
    "asking_goal",
    "evidence_rule",
    "first_plan_repairs",
    "goal_problems",
    "one_question",
    "same_question",
    "subtask_ids",
]

_MIN_GOAL_WORDS = 3  # fewer words (an id, a date) ask nothing
_SAME_RATIO = 0.8

_ONE_QUESTION_WORDS = 30
# A question in parts, or one that asks for several things side by side, is for a planner.
_SEVERAL = re.compile(
    r"\b(?:and|or|then|also)\s+(?:what|how|why|when|where|which|who|whom|whose|is|are|does|do"
    r"|can|should|must)\b|\b(?:compare|comparing|versus|vs|difference|differences"
    r"|respectively)\b|\b(?:for|of) each\b|\beach of\b",
    re.IGNORECASE,
)
# A question for one fact: a number, a time, a place, a person, one of some, what the X is.
# "How do generators work?", "Why ...?" or "What is asyncio?" are topics to plan.
_FACT = re.compile(
    r"^(?:(?:\w+ ){0,2}(?:at|by|from|above|below|in|on|for|within|until|to|of|after|before)"
    r" what\b|(?:for |within |in |after |up to )?how (?:many|much|long|soon|often|far|quickly"
    r"|old|large|big|high)\b|what (?:is|are|was|were) (?:the|each|a|an)\b|what (?:percentage"
    r"|share|amount|number|date|day|time|year|rate|address|name|price|cost|fee)\b"
    r"|(?:when|where|who|whom|whose|which)\b)",
    re.IGNORECASE,
)
_COPY_WORDS = 6  # a phrase of a tool's description, not a shared term
_COPY_RATIO = 0.8
_PRONOUNS = frozenset({"it", "its", "they", "them", "their", "theirs", "he", "she", "him", "her"})
# Words that name nothing: a pronoun after only these has no referent in the goal.
_FUNCTION_WORDS = frozenset(
    re.findall(
        r"\w+",
        """a an and are as at be been being by can could did do does for from had has have how if
        in into is may might must of on or shall should so than the then to was were what when
        where which who whom whose why will with would also just only all any each every find get
        give list look out say show tell up explain describe check compare determine identify
        summarise summarize calculate search read answer write state confirm""",
    )
)
_WORD = re.compile(r"[a-z0-9]+(?:['’][a-z]+)?")


def goal_problems(
    plan: Plan, *, tools: Mapping[str, str], only: Collection[str] | None = None
) -> list[str]:
    """What is wrong with the wording of the plan's subtask goals, phrased for the planner.

    Args:
        plan: The plan (structurally valid).
        tools: Tool names and their descriptions, as the planner was shown them.
        only: Check only these subtask ids (a replan's additions); None: all of them.
    """
    found = []
    check = AnswerCheck(tools.values(), words=_COPY_WORDS)
    for sub in plan.subtasks:
        if (only is None or sub.id in only) and sub.call is None:
            problem = _goal_problem(sub.goal, tools, check)
            if problem:
                found.append(f"subtask {sub.id}'s goal {problem}")
    return found


def anchored(plan: Plan, goal: str, ids: Collection[str]) -> Plan:
    """The plan with the run's goal added to the goals of subtasks `ids`, so each stands alone."""
    subtasks = tuple(
        sub.model_copy(update={"goal": f"{sub.goal} (for the goal: {goal})"})
        if sub.id in ids
        else sub
        for sub in plan.subtasks
    )
    return plan.model_copy(update={"subtasks": subtasks})


def first_plan_repairs(draft: PlanDraft, tools: Collection[str]) -> tuple[PlanDraft, list[str]]:
    """A first plan's draft without dependencies on tools, unknown ids or the subtask itself, and
    what was dropped.

    A small model lists the tools a subtask needs under `depends_on` (a subtask named after a
    tool then depends on itself). Such a dependency can only be dropped: it names no other
    subtask, and the subtask runs as soon as its real ones are done. A small model also gives
    several subtasks one id (Qwen2.5-Coder-0.5B named them after the schema's "call"): where no
    subtask depends on that id, which one is meant is no question, and the later ones are
    renamed ("call-2"), or left out where they repeat the goal too.
    """
    draft, notes = _unique_ids(draft)
    known = {d.id.strip() for d in draft.subtasks}
    kept = []
    for sub in draft.subtasks:
        own = sub.id.strip()
        kinds: dict[str, list[str]] = {}
        for dep in sub.depends_on:
            name = dep.strip()
            what = (
                "itself" if name == own
                else "tools, not subtasks" if name in tools
                else "no subtask" if name not in known
                else None
            )  # fmt: skip
            if what:
                kinds.setdefault(what, []).append(dep)
        for what, bad in kinds.items():
            shown = ", ".join(_shown(b) for b in bad[:5])
            notes.append(f"dropped {_shown(own)}'s dependencies on {shown} ({what})")
        if kinds:
            dropped = {b for bad in kinds.values() for b in bad}
            sub = sub.model_copy(
                update={"depends_on": [d for d in sub.depends_on if d not in dropped]}
            )
        kept.append(sub)
    return (draft.model_copy(update={"subtasks": kept}) if notes else draft), notes


def _unique_ids(draft: PlanDraft) -> tuple[PlanDraft, list[str]]:
    """The draft with each repeated id that no subtask depends on made unique (left out where
    its goal is repeated too), and what was changed."""
    needed = {dep.strip() for sub in draft.subtasks for dep in sub.depends_on}
    used = {sub.id.strip() for sub in draft.subtasks}
    ids: set[str] = set()
    seen: set[tuple[str, str]] = set()
    notes, kept = [], []
    for sub in draft.subtasks:
        own, goal = sub.id.strip(), " ".join(sub.goal.split())
        if own in ids and own not in needed:
            if (own, goal) in seen:
                notes.append(f"left out a second {_shown(own)}: it repeats its goal")
                continue
            new = fresh_id(own, used)
            used.add(new)
            notes.append(f"renamed a repeated id {_shown(own)} to {_shown(new)}")
            sub = sub.model_copy(update={"id": new})
        ids.add(own)
        seen.add((own, goal))
        kept.append(sub)
    return (draft.model_copy(update={"subtasks": kept}) if notes else draft), notes


def _goal_problem(goal: str, tools: Mapping[str, str], check: AnswerCheck) -> str | None:
    words = _words(goal)
    names = {name: _words(name.replace("_", " ")) for name in tools}
    named = next((n for n, w in names.items() if words == w or goal.strip() == n), None)
    if named:
        return f"is the name of the tool {named}; write what the subtask must find for the goal"
    copied = _copied(goal, words, tools, check)
    if copied:
        return (
            f"copies the description of the tool {copied}; write what this subtask must find for "
            "the goal, with the goal's own details (names, places, dates, amounts)"
        )
    dangling = _dangling(words)
    if dangling:
        return (
            f'does not stand alone: "{dangling}" points to nothing in it (an agent sees only its '
            "own goal); name what it refers to"
        )
    return None


def _copied(
    goal: str, words: list[str], tools: Mapping[str, str], check: AnswerCheck
) -> str | None:
    """The tool whose description the goal copies: six words of it in a row, or nearly all of
    the goal's words in the description's order."""
    phrase = check.copied(goal)
    for name, description in tools.items():
        said = _words(description)
        if phrase and f" {phrase} " in f" {' '.join(said)} ":
            return name
        close = SequenceMatcher(None, words, said, autojunk=False).ratio() >= _COPY_RATIO
        if said and close and set(words) <= set(said):
            return name
    return None


def _dangling(words: list[str]) -> str | None:
    """The first pronoun that comes before any word naming something."""
    for word in words:
        if word in _PRONOUNS:
            return word
        if word not in _FUNCTION_WORDS and not word.isdigit():
            return None  # a noun (or a verb with its object) came first: it can refer to it
    return None


def _shown(text: str) -> str:
    """A name the model wrote, for a one-line note: on one line, and short."""
    return " ".join(text.split())[:60]


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def subtask_ids(found: list[str], plan: Plan) -> set[str]:
    """The ids of the subtasks that `goal_problems` found problems with."""
    return {sub.id for sub in plan.subtasks if any(f"subtask {sub.id}'s " in p for p in found)}


def asking_goal(draft: PlanDraft, goal: str, room: int) -> PlanDraft:
    """The draft with the goal itself as its first subtask (added if the planner left it out or
    reworded it beyond `same_question`, the last subtask making room), and without subtasks that ask nothing (see `_asks`) or ask
    what an earlier one asks, word for word (a small model repeats the goal N times)."""
    kept, asked = [], set()
    for d in draft.subtasks:
        words = tuple(_words(d.goal))
        if _asks(d.goal) and words not in asked:
            kept.append(d)
            asked.add(words)
    dropped = {d.id for d in draft.subtasks} - {d.id for d in kept}
    kept = [
        d.model_copy(update={"depends_on": [x for x in d.depends_on if x not in dropped]})
        for d in kept
    ]
    if any(same_question(d.goal, goal) for d in kept):
        return draft.model_copy(update={"subtasks": kept})
    ids = {d.id for d in kept}
    first = SubtaskDraft(
        id=next(i for i in ("goal", "goal-0", "goal-00") if i not in ids), goal=goal
    )
    return draft.model_copy(update={"subtasks": [first, *kept][: max(room, 1)]})


def _asks(goal: str) -> bool:
    """Whether a subtask's goal is words at all (not an id, a number, a date or a URL)."""
    return "://" not in goal and len(re.findall(r"\b[^\W\d_]{2,}\b", goal)) >= _MIN_GOAL_WORDS


def one_question(goal: str) -> bool:
    """Whether a goal is one question for one fact, which needs no plan
    (`RunConfig(direct_questions=True)`): one sentence ending in its only question mark, at most
    30 words, asking how many, how much, how long (and the like), when, where, who, which, at or
    by what, or what the something is; not joining a second question ("... and how ..."), nor
    asking for a comparison, for each of several things or about two named ones ("France and
    Japan"). "How do generators work?" is a topic, not a fact: it is planned."""
    text = " ".join(goal.split())
    several = _SEVERAL.search(text) or AnswerCheck.parts(text)  # "France and Japan": two facts
    if not text.endswith("?") or text.count("?") != 1 or several:
        return False
    if not _FACT.match(text):
        return False
    if re.search(r"[.!;:]\s+\S", text):
        return False  # more than one sentence
    return 0 < len(_words(text)) <= _ONE_QUESTION_WORDS


def evidence_rule(sub: Subtask, goal: str) -> bool | Literal["facts"] | None:
    """Whether a subtask's answer must rest on a tool result: yes when the plan named the tools
    it needs; by the executor's own rule when it asks the goal itself, as a one-question goal's
    only subtask does (None: yes, when a tool is usable and no earlier results came with the
    task), so that "What is the capital of Australia?" is not answered from a small model's
    memory; otherwise when its answer states what it was not given ("facts": a planner's step
    that names no tools may reason from what it is given, but "212.15°C" for the boiling point
    of water, with nothing given, is the model's memory)."""
    if sub.tools:
        return True
    return None if same_question(sub.goal, goal) else "facts"


def same_question(one: str, other: str) -> bool:
    """Whether two questions are one, reworded by a word or two: every word of one is in the
    other, and their words mostly run in the same order ("How many days..." is "For how many
    days..."; "... in London?" is not "... in Paris?")."""
    a, b = _words(one), _words(other)
    if not a or not b or not (set(a) <= set(b) or set(b) <= set(a)):
        return False
    return SequenceMatcher(None, a, b, autojunk=False).ratio() >= _SAME_RATIO
