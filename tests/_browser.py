"""A real headless browser for tests: Debian's `chromium`, run as a command, one page at a time.

Every run gets a fresh profile folder, and the flags that keep Chromium from reaching out
(background networking, component updates, sync): the page under test must render with no
network, and the test machines refuse outgoing connections. `--no-sandbox` because CI runs as root.
"""

from __future__ import annotations

import shutil
from html.parser import HTMLParser
from pathlib import Path

import anyio

__all__ = ["CHROMIUM", "Element", "elements", "render"]

CHROMIUM = shutil.which("chromium")
"""The browser's path, or None where it is not installed (the tests that need it skip)."""
GUARD_S = 60  # a guard against a hung browser, not a timing claim
_VOID = frozenset({"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta"})

_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)


async def render(page: Path, profile: Path, *, screenshot: Path | None = None) -> str:
    """The DOM of `page` (an absolute path) as the browser built it (`--dump-dom`); with
    `screenshot`, also a 1400x1800 PNG of it there."""
    assert CHROMIUM is not None, "chromium is not on PATH"
    url = page.as_uri()
    base = [CHROMIUM, *_FLAGS, f"--user-data-dir={profile}"]
    with anyio.fail_after(GUARD_S):
        dom = await anyio.run_process([*base, "--dump-dom", url])
        if screenshot is not None:
            shot = [*base, f"--screenshot={screenshot}", "--window-size=1400,1800", url]
            await anyio.run_process(shot)
    return dom.stdout.decode()


class Element:
    """One element of a parsed page: its tag, attributes and the text directly inside it."""

    def __init__(self, tag: str, attrs: dict[str, str]) -> None:
        self.tag = tag
        self.attrs = attrs
        self.text = ""

    @property
    def classes(self) -> set[str]:
        """The element's CSS classes."""
        return set(self.attrs.get("class", "").split())


class _Collector(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.found: list[Element] = []
        self.open: list[Element] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        element = Element(tag, {k: v or "" for k, v in attrs})
        self.found.append(element)
        if tag not in _VOID:
            self.open.append(element)

    def handle_endtag(self, tag: str) -> None:
        if tag in _VOID or all(e.tag != tag for e in self.open):
            return
        while self.open.pop().tag != tag:
            pass  # an element closed implicitly (a <p> by a <section>...)

    def handle_data(self, data: str) -> None:
        if self.open:
            self.open[-1].text += data


def elements(markup: str) -> list[Element]:
    """Every element of `markup`, in document order (text entities decoded)."""
    collector = _Collector()
    collector.feed(markup)
    collector.close()
    return collector.found
