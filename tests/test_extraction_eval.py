"""The extraction evaluation's items and scoring (the runs themselves need a real model)."""

from __future__ import annotations

import datetime
import json

from benchmarks.extraction_eval import ITEMS, Notice, score


def test_every_item_states_its_expected_fields() -> None:
    items = [json.loads(line) for line in ITEMS.read_text(encoding="utf-8").splitlines()]
    assert len(items) >= 20
    assert len({item["id"] for item in items}) == len(items)
    for item in items:
        text, want = item["text"], item["expected"]
        assert want["name"] in text
        assert want["city"] in text
        assert f"EUR {want['amount_eur']:,}" in text
        due = datetime.date.fromisoformat(want["due"])
        assert f"{due.day} {due:%B} {due.year}" in text


def test_fields_are_scored_one_by_one() -> None:
    want = {"name": "Anna Keller", "city": "Lyon", "amount_eur": 150, "due": "2026-01-01"}
    right = Notice(name="anna  keller", city="Lyon", amount_eur=150, due=datetime.date(2026, 1, 1))
    assert score(want, right) == 4
    wrong = right.model_copy(update={"amount_eur": 151, "city": "Paris"})
    assert score(want, wrong) == 2
    assert score(want, None) == 0
