"""Final answers a model cannot pass off: placeholders, parroted prompts, raw calls, no words."""

from __future__ import annotations

import json

import pytest

from agents import AgentLimits, Executor, tool
from agents._own_text import own_text
from agents.executor import AnswerCheck
from agents.models import ModelRequest
from agents.testing import FunctionModel, ScriptedModel, Turn, call, reply
from orchestrator import Orchestrator, RunConfig
from orchestrator.testing import subtask

PROMPT = (
    "You research one question in a document collection. Use search_docs to find passages and "
    "read_doc to read more."
)


@pytest.mark.parametrize(
    ("answer", "problem"),
    [
        ("<your answer>", "placeholder"),
        ("The answer is <answer>.", "placeholder"),
        ("...", "no content"),
        ("", "no content"),
        ('```json\n{"name": "search_docs", "arguments": {"query": "x"}}\n```', "tool call"),
        ('{"name": "read_doc", "arguments": {"doc": "python/yield"', "tool call"),
        (
            "You research one question in a document collection. Use search_docs to find it.",
            "copies the instructions",
        ),
        ("The task is still pending. " * 4, "over and over"),
        ("It makes a function that returns " + "a new function that returns " * 5, "over and over"),
    ],
)
def test_unusable_answers_are_named(answer: str, problem: str) -> None:
    """Each kind of junk answer is refused with a problem the model can act on."""
    found = AnswerCheck([PROMPT], names={"search_docs", "read_doc"}).unusable(answer)
    assert found is not None
    assert problem in found


@pytest.mark.parametrize(
    "answer",
    [
        "42",
        "A generator pauses at each yield and resumes on next() [python/yield].",
        "Use search_docs? No: the reference says a with statement calls __enter__ [python/with].",
        "You research one question in a document, I think [python/yield].",
        "The value of x is 1, the value of y is 2, the value of z is 3 [python/assignment].",
    ],
)
def test_real_answers_pass(answer: str) -> None:
    """Short answers, cited answers and answers naming a tool in passing are usable."""
    assert AnswerCheck([PROMPT], names={"search_docs"}).unusable(answer) is None


def test_a_copy_needs_a_phrase_not_a_shared_word() -> None:
    """With six-word shingles, five words in a row from the prompt are a shared phrase; six are a
    copy."""
    check = AnswerCheck([PROMPT], words=6)
    assert check.copied("one question in a document") is None
    assert check.copied("so: one question in a document collection, then") == (
        "one question in a document collection"
    )


# --- paor's own text, copies of the task, calls of any name -----------------------------------


@pytest.mark.parametrize(
    "answer",
    [
        "You already called search_docs with these same arguments. Change approach, or give your "
        "final answer now.",
        "Incomplete: stopped early (acceptance: no usable answer).",
        "Nothing usable was gathered.",
        "[brackets]Lyon - Lisbon, 89 EUR, LX101",
        "## find_is_and_eq (done)\nTask: what is `is`\nExpected output: is is equal to equals",
        "**lookup (partial)**\nthe value of x",
        '[OBSERVE] search_docs("refund") ok 12ms\nThe refund window is 30 days.',
        # As Qwen2.5-Coder-0.5B copied it, its bracket mangled.
        'OBSERVE} capital("Australia") ok\nCanberra',
        "OBSERVE",
        "Results gathered by the agents:\n\n## a (done)\nx",
        # A refusal's advice, appended to an answer by Qwen2.5-Coder-0.5B (a complete run).
        "The capital city of Kenya is Nairobi. The capital city of Peru is Lima. The answer is a "
        "tool call written as text. To use a tool, call it. To finish, answer in plain sentences.",
    ],
)
def test_paors_own_text_is_never_an_answer(answer: str) -> None:
    """Warnings, status lines, the synthesis layout and markers are refused as paor's own text."""
    found = AnswerCheck().unusable(answer)
    assert found is not None
    assert "paor's own text" in found


@pytest.mark.parametrize(
    "answer",
    [
        '{"name": "is", "arguments": "[python/binary, python/comparisons]"}',
        '{"name": "invalidates", "reason": "the premise is wrong"}',
        '```json\n[{"tool": "weather", "args": {"city": "Lyon"}}]\n```',
    ],
)
def test_a_call_of_any_name_written_as_json_is_refused(answer: str) -> None:
    """A JSON object shaped like a call or a signal is no answer, whatever name it gives."""
    found = AnswerCheck(names={"search_docs"}).unusable(answer)
    assert found is not None
    assert "tool call" in found


@pytest.mark.parametrize(
    "answer", ["[capital({", 'capital("France")', "  search_docs(query='leave') -> 25 days"]
)
def test_a_call_of_a_known_tool_written_in_code_is_refused(answer: str) -> None:
    """Qwen2.5-Coder-0.5B's synthesis once answered "[capital({": a call cut short, no answer."""
    found = AnswerCheck(names={"capital", "search_docs"}).unusable(answer)
    assert "tool call written as text" in (found or "")


@pytest.mark.parametrize(
    "answer", ["Capital (of France): Paris.", "The search_docs tool found 25 days.", "Paris"]
)
def test_a_tool_name_in_prose_is_not_a_call(answer: str) -> None:
    assert AnswerCheck(names={"capital", "search_docs"}).unusable(answer) is None


@pytest.mark.parametrize(
    ("task", "answer"),
    [
        (
            "Find hotels in Lyon under 120 EUR a night.",
            "Find hotels in Lyon under 120 EUR a night.",
        ),
        (
            "How many working days of leave do staff get?",
            "how many working days of leave do staff get",
        ),
        (
            "Find the flight from Lyon to Lisbon.\nExpected output: flight number and price",
            "Flight number and price.",
        ),
    ],
)
def test_a_copy_of_the_task_is_refused(task: str, answer: str) -> None:
    """An answer that only restates the task (or a line of it) is sent back."""
    found = AnswerCheck().unusable(answer, task=task)
    assert found is not None
    assert "restates the task" in found


@pytest.mark.parametrize(
    ("task", "answer"),
    [
        ("Which is drier this weekend, Lyon or Turin?", "Turin"),
        ("Which is drier this weekend, Lyon or Turin?", "Lyon is drier this weekend"),
        ("Is the refund window 30 days?", "The refund window is 30 days"),
        ("Is Lyon in France?", "Lyon is in France"),
        ("Delete the draft.", "Done."),
    ],
)
def test_an_answer_that_echoes_the_task_words_is_still_an_answer(task: str, answer: str) -> None:
    """Choosing between options the task names, or confirming it, is not copying it."""
    assert AnswerCheck().unusable(answer, task=task) is None


async def _said_by_paor() -> list[str]:
    """Every message the executor says to a model that loops, guesses and gives up."""

    @tool
    async def search(query: str) -> str:
        """Search.

        Args:
            query: What to look for.
        """
        return "nothing new"

    again = call("search", query="x")
    model = ScriptedModel([again, again, reply("<your answer>"), again, again, reply("x")])
    report = await Executor(model, [search], limits=AgentLimits(max_steps=5)).run("Find x.")
    said = [
        m.content or ""
        for request in model.requests
        for m in request.messages
        if m.role == "user" and not (m.content or "").startswith("Task:")
    ]
    return [*dict.fromkeys(said), report.answer]


@pytest.mark.anyio
async def test_every_message_paor_says_is_caught_as_its_own_text() -> None:
    """What the executor really says (loop warning, refusal, stop, digest) is refused as an answer:
    the phrase list cannot drift from the messages."""
    said = await _said_by_paor()
    assert len(said) >= 4, said
    for text in said:
        assert own_text(text), f"not recognised as paor's own text: {text!r}"
        assert AnswerCheck().unusable(text) is not None


@pytest.mark.anyio
async def test_the_synthesis_prompt_and_fallback_are_caught_as_paors_own_text() -> None:
    """The synthesis prompt's layout, and the fallback answer joining the results, are refused."""
    prompts: list[str] = []

    def decide(request: ModelRequest) -> Turn:
        if request.purpose == "plan":
            return reply(json.dumps({"subtasks": [subtask("a", "Find the capital of France.")]}))
        if request.purpose == "synthesis":
            prompts.append(request.messages[-1].content or "")
            return reply(prompts[-1])  # the prompt copied back, twice
        return reply("Paris.")

    planned = RunConfig(direct_questions=False)  # the synthesis is what is under test
    result = await Orchestrator(FunctionModel(decide), config=planned).run(
        "What is the capital of France?"
    )
    assert len(prompts) == 2
    assert AnswerCheck().unusable(prompts[0]) is not None
    assert result.status == "incomplete"
    assert (
        AnswerCheck().unusable(result.answer) is not None
    )  # the fallback: paor's, and labelled so


@pytest.mark.parametrize(
    ("answer", "seen", "unseen"),
    [
        ("255 working days [leave]", ["receive 25 working days of paid leave"], ["255"]),
        ("25 working days [leave]", ["receive 25 working days of paid leave"], []),
        ("6 months", ["within 4 months of the birth"], ["6"]),
        ("221 EUR: 132 for the flight, 89 for the hotel.", ["132 EUR", "89 EUR"], []),
        ("1. Claims\n2. Within 1,500 EUR [doc-7]", ["up to 1500 EUR"], []),
        ("Python 3.11, and v2 of the API", ["since 3.11"], []),
    ],
)
def test_numbers_the_model_was_never_shown_are_found(
    answer: str, seen: list[str], unseen: list[str]
) -> None:
    """Invented numbers are named; shown ones, their sums, list markers and citations are not."""
    problem = AnswerCheck().unusable(answer, seen=seen)
    assert (problem is None) if not unseen else f"({', '.join(unseen)})" in (problem or "")


def test_a_phrase_lifted_from_the_task_is_no_answer() -> None:
    """Four words or more of the task, in a row and nothing else, restate it (a hotel search that
    answers "Hotel under 120 EUR a night" found no hotel)."""
    task = "Find a hotel in Lisbon, and book a hotel under 120 EUR a night for the weekend."
    assert AnswerCheck().unusable("Hotel under 120 EUR a night.", task=task) is not None
    assert AnswerCheck().unusable("Casa Azul, 95 EUR a night.", task=task) is None


def test_among_many_numbers_seen_an_invented_one_is_not_excused_as_a_sum() -> None:
    """A page with dozens of numbers makes nearly any number a sum of two: past a few, only the
    numbers themselves count as seen ("$100 to $150" from a page of EUR 240 and EUR 170 rules)."""
    page = " ".join(f"rule {n}: EUR {n * 10}" for n in range(1, 40))
    check = AnswerCheck()
    assert check.unusable("around 100 to 150 [travel]", seen=[page]) is None  # both on the page
    assert "(105, 155)" in (check.unusable("around 105 to 155 [travel]", seen=[page]) or "")


@pytest.mark.parametrize(
    "text", ["We observe) that leave is 25 days.", "Observed: 25 days.", "OBSERVED: 25 days."]
)
def test_the_word_observe_in_prose_is_not_paors_marker(text: str) -> None:
    assert own_text(text) is None


def test_a_mangled_observe_line_is_taken_out_like_the_marker() -> None:
    from agents.executor import strip_markers

    assert strip_markers('OBSERVE} capital("Australia") ok\nCanberra') == "Canberra"
    assert strip_markers("We observe) that") == "We observe) that"


@pytest.mark.parametrize("answer", ["['Egypt', 'Norway', 'Chile']", "Egypt, Norway, Chile"])
def test_the_things_a_task_lists_listed_back_are_no_answer(answer: str) -> None:
    """Qwen2.5-Coder-0.5B answered a planner's "Find the capitals of Egypt, Norway and Chile"
    with the list of countries, and the run was complete."""
    task = "Find the capitals of Egypt, Norway and Chile"
    assert "only restates the task" in (AnswerCheck().unusable(answer, task=task) or "")
    assert AnswerCheck().unusable("Cairo, Oslo, Santiago", task=task) is None


def test_paors_phrases_are_found_as_the_case_blind_pattern_finds_them() -> None:
    """`own_text` searches lower-cased text for the phrases instead of running the case-blind
    alternation (`_PHRASE`); on any text it finds the same phrase, at the same place. Random
    texts mix the phrases, cased and spaced at random, with prose, the letters whose case folds
    are odd (long s, dotless and dotted capital I, the Kelvin sign) included."""
    import random

    from agents import _own_text

    rng = random.Random(7)
    filler = [
        "the",
        "refund",
        "window",
        "is",
        "30",
        "days",
        "\u017fo",
        "\u0130stanbul",
        "\u212aelvin",
    ]
    phrases = list(_own_text.OWN_PHRASES)
    for _ in range(3000):
        words: list[str] = []
        for _ in range(rng.randint(0, 12)):
            if rng.random() < 0.15:
                words.append(rng.choice(phrases))
            else:
                words.append(rng.choice(filler))
        text = rng.choice([" ", "\n", "  ", "\t"]).join(words)
        text = "".join(c.upper() if rng.random() < 0.2 else c for c in text)
        pattern = _own_text._PHRASE.search(text)
        expected = " ".join(pattern.group(0).split()) if pattern else None
        flat = " ".join(text.split())
        if len(flat.lower()) == len(flat) and "\u017f" not in flat and "\u0131" not in flat:
            assert _own_text._first_phrase(flat, flat.lower()) == expected, text
        found = own_text(text)
        if expected is not None:
            assert found == expected, text
