"""The small pieces every part of the run page (`orchestrator._html`) is built from: escaping,
titled sections with their legends, SVG frames, and the CSS class of a status."""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import Any

__all__ = ["escape", "section", "status_class", "svg"]

_STATUSES = frozenset({"done", "partial", "failed", "blocked", "cancelled", "planner", "paused"})
# A paused run's sub-agent whose call waits for a person is "waiting".
_RUN_CLASSES = {"complete": "done", "waiting": "paused"} | dict.fromkeys(
    ("incomplete", "crashed", "running"), "partial"
)


def escape(text: Any) -> str:
    """`text` as HTML text, safe in an element and in a quoted attribute."""
    return html.escape(str(text), quote=True)


def section(name: str, title: str, body: str, keys: Sequence[tuple[str, str]] = ()) -> str:
    """A titled section of the page, after a legend of (key, meaning) pairs."""
    legend = "".join(f'<span class="key k-{key}"></span>{meaning} ' for key, meaning in keys)
    legend = f'<p class="legend">{legend}</p>' if keys else ""
    return f'<section id="{name}"><h2>{title}</h2>{legend}{body}</section>\n'


def svg(name: str, width: int, height: int, content: str) -> str:
    """An inline SVG drawing of class `name`, `width` by `height` pixels."""
    return (
        f'<svg class="{name}" xmlns="http://www.w3.org/2000/svg" width="{width}" '
        f'height="{height}" viewBox="0 0 {width} {height}">{content}</svg>'
    )


def status_class(status: str) -> str:
    """A CSS class for a status: only the known ones, so no written text reaches a class."""
    return _RUN_CLASSES.get(status) or (status if status in _STATUSES else "other")
