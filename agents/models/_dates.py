"""Dates a text names, read as ISO dates, for typed outputs with date fields.

A small model asked for `"due": "YYYY-MM-DD"` from "due on 8 June 2026" writes "8260-02-08" or
"1002-01-01": turning a month's name into its number is the step it gets wrong. paor reads the
dates itself ("8 June 2026", "June 8, 2026", "8 Jun 2026", "2026-06-08") and hands them over with
the text, so the model copies a date instead of converting it, and an ISO date in its object
that is none of them is sent back naming the ones there are.
"""

from __future__ import annotations

import datetime
import re
from typing import Any

__all__ = ["has_date_fields", "named_dates"]

_MONTHS = {
    name: number
    for number, full in enumerate(
        (
            "january", "february", "march", "april", "may", "june", "july", "august",
            "september", "october", "november", "december",
        ),
        start=1,
    )
    for name in (full, full[:3], *(("sept",) if full == "september" else ()))
}  # fmt: skip
_MONTH = r"(?P<month>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_DAY = r"(?P<day>\d{1,2})(?:st|nd|rd|th)?"
_YEAR = r"(?P<year>\d{4})"
_WRITTEN = (
    re.compile(rf"\b{_DAY}\s+(?:of\s+)?{_MONTH},?\s+{_YEAR}\b", re.IGNORECASE),
    re.compile(rf"\b{_MONTH}\s+{_DAY},?\s+{_YEAR}\b", re.IGNORECASE),
)
_ISO = re.compile(r"\b(?P<year>\d{4})-(?P<month>\d{2})-(?P<day>\d{2})\b")
_DATE_FORMATS = frozenset({"date", "date-time"})


def named_dates(text: str) -> dict[str, str]:
    """The dates `text` names, each as written mapped to its ISO form, in the order found;
    impossible ones ("31 February 2026") are left out."""
    found: dict[int, tuple[str, str]] = {}
    for pattern in (*_WRITTEN, _ISO):
        for match in pattern.finditer(text):
            month = match["month"]
            number = int(month) if month.isdigit() else _MONTHS[month.lower().rstrip(".")]
            try:
                day = datetime.date(int(match["year"]), number, int(match["day"]))
            except ValueError:
                continue
            found.setdefault(match.start(), (" ".join(match[0].split()), day.isoformat()))
    return dict(found[start] for start in sorted(found))


def has_date_fields(schema: Any) -> bool:
    """Whether a JSON schema has a string with a date or date-time format, at any depth."""
    if isinstance(schema, dict):
        if schema.get("format") in _DATE_FORMATS:
            return True
        return any(has_date_fields(value) for value in schema.values())
    if isinstance(schema, list):
        return any(has_date_fields(item) for item in schema)
    return False
