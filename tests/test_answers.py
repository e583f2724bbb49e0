"""Final answers a model cannot pass off: placeholders, parroted prompts, raw calls, no words."""

from __future__ import annotations

import pytest

from agents._answers import Parrot, unusable_answer

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
    found = unusable_answer(answer, parrot=Parrot([PROMPT]), tools={"search_docs", "read_doc"})
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
    assert unusable_answer(answer, parrot=Parrot([PROMPT]), tools={"search_docs"}) is None


def test_a_parrot_needs_a_phrase_not_a_shared_word() -> None:
    """With six-word shingles, five words in a row from the prompt are a shared phrase; six are a
    copy."""
    parrot = Parrot([PROMPT], words=6)
    assert parrot.copied("one question in a document") is None
    assert parrot.copied("so: one question in a document collection, then") == (
        "one question in a document collection"
    )
