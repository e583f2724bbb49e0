"""Reading documents from disk: Markdown, plain text and reStructuredText, HTML.

`document_files` walks a corpus folder for the files to read, leaving out hidden ones and links
out of the folder, and reading each file once however many links lead to it. Each loader turns a file's decoded text into a title and a body. A file that cannot be used is
reported as `Skipped` with a reason, never raised: one bad file must not keep a corpus from loading.
Only a regular file is read, and never past a size cap: a FIFO or a device cannot hang or exhaust
the load.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

from agents._tracing import logger

__all__ = [
    "Loaded",
    "Skipped",
    "document_files",
    "is_document",
    "load_file",
    "pretty_name",
    "setext_title",
]

_log = logger("paor.toolkits")
_OUTSIDE = "links out of the corpus folder"
_ATX = re.compile(r"^ {0,3}#{1,6}\s+(.+?)\s*#*\s*$")
_FRONT_MATTER = re.compile(r"\A---[ \t]*\n(.*?)\n---[ \t]*(?:\n|\Z)", re.S)
_FRONT_TITLE = re.compile(r"^title:[ \t]*(.+)$", re.M)
_FENCE = re.compile(r"^ {0,3}(```|~~~)")
_UNDERLINE = re.compile(r"^([=\-~^*#+\"'`])\1{2,}\s*$")
_SKIPPED_TAGS = frozenset({"script", "style", "noscript", "template", "svg", "head"})
_BLOCK_TAG_LIST = """
    address article aside blockquote br dd details div dl dt figcaption figure footer form h1 h2 h3
    h4 h5 h6 header hr li main nav ol p pre section summary table td th tr ul
"""
_BLOCK_TAGS = frozenset(_BLOCK_TAG_LIST.split())
# O_NONBLOCK and O_NOFOLLOW are POSIX, O_BINARY Windows': a missing flag is 0, and the checks on
# the open descriptor remain.
_OPEN_FLAGS = (
    getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)
)


@dataclass(frozen=True, slots=True, kw_only=True)
class Loaded:
    """A usable file: its title (None: fall back to the file name) and its text."""

    title: str | None
    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Skipped:
    """A file left out of the corpus, and why."""

    reason: str


def is_document(path: Path) -> bool:
    """Whether the file's extension names a document type (loadable or not, like PDF)."""
    return path.suffix.lower() in _LOADERS or path.suffix.lower() == ".pdf"


def load_file(path: Path, *, max_bytes: int, suffix: str | None = None) -> Loaded | Skipped:
    """Read one document file by its extension; a binary, bad or unsupported file is `Skipped`.

    Args:
        path: The file to read; a symbolic link there is not followed (`Skipped`: resolve it first).
        max_bytes: The largest file read; a larger one is `Skipped`.
        suffix: The extension that picks the loader (a link's own, when `path` is its target);
            by default `path`'s.
    """
    suffix = (path.suffix if suffix is None else suffix).lower()
    loader = _LOADERS.get(suffix)
    if loader is None:
        # Reading PDF text needs a parser for compressed streams and font encodings: a dependency
        # the core does not take. Convert PDFs to text or Markdown first.
        return Skipped(reason=f"{suffix or 'this'} files are not supported; convert to text")
    raw = _read_regular(path, max_bytes)
    if isinstance(raw, Skipped):
        return raw
    if b"\x00" in raw:
        return Skipped(reason="binary content (NUL bytes)")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        return Skipped(reason=f"not UTF-8 (byte {exc.start})")
    loaded = loader(text)
    if not loaded.text.strip():
        return Skipped(reason="no text")
    return loaded


def _read_regular(path: Path, max_bytes: int) -> bytes | Skipped:
    """The bytes of `path` if it is a regular file of at most `max_bytes`.

    O_NONBLOCK keeps open() from waiting for a FIFO's writer, O_NOFOLLOW refuses a link swapped in
    since the caller checked it, and the type and size are read from the open descriptor, so what
    is read is what was checked. The read itself is bounded too: a file may grow after fstat().
    """
    try:
        fd = os.open(path, os.O_RDONLY | _OPEN_FLAGS)
    except OSError as exc:
        return Skipped(reason=f"unreadable: {exc.strerror or exc}")
    try:
        with os.fdopen(fd, "rb") as file:
            info = os.fstat(file.fileno())
            if not stat.S_ISREG(info.st_mode):
                return Skipped(reason="not a regular file")
            if info.st_size > max_bytes:
                return Skipped(reason=f"larger than {max_bytes} bytes ({info.st_size})")
            raw = file.read(max_bytes + 1)
    except OSError as exc:
        return Skipped(reason=f"unreadable: {exc.strerror or exc}")
    if len(raw) > max_bytes:
        return Skipped(reason=f"larger than {max_bytes} bytes (it grew while read)")
    return raw


def pretty_name(stem: str) -> str:
    """A title made from a file name: "getting-started" -> "getting started"."""
    return " ".join(re.split(r"[-_\s]+", stem)).strip() or stem


def setext_title(text: str) -> str | None:
    """The first heading underlined with a rule (reST, setext Markdown), if it opens the text."""
    lines = [line.rstrip() for line in text.lstrip("\n").splitlines()[:4]]
    if len(lines) >= 3 and _UNDERLINE.match(lines[0]) and _UNDERLINE.match(lines[2]):
        lines = lines[1:]  # reST over-and-underlined title
    if len(lines) >= 2 and lines[0].strip() and _UNDERLINE.match(lines[1]):
        return lines[0].strip()
    return None


def _markdown(text: str) -> Loaded:
    # Front matter (Jekyll, Hugo, MkDocs) is metadata, not text; its title wins if it has one.
    if front := _FRONT_MATTER.match(text):
        text = text[front.end() :]
        if title := _FRONT_TITLE.search(front.group(1)):
            return Loaded(title=title.group(1).strip().strip("\"'") or None, text=text)
    in_fence = False
    for line in text.splitlines():
        if _FENCE.match(line):
            in_fence = not in_fence
        elif not in_fence and (match := _ATX.match(line)):
            return Loaded(title=match.group(1), text=text)
    return Loaded(title=setext_title(text), text=text)


def _plain(text: str) -> Loaded:
    return Loaded(title=setext_title(text), text=text)


def _html(text: str) -> Loaded:
    parser = _TextExtractor()
    parser.feed(text)
    parser.close()
    return Loaded(title=parser.title or parser.first_h1, text=parser.text())


class _TextExtractor(HTMLParser):
    """Visible text of an HTML page, with block elements as paragraph breaks."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.title: str | None = None
        self.first_h1: str | None = None
        self._parts: list[str] = []
        self._hidden = 0  # depth inside script, style, head...
        self._pre = 0
        self._capture: str | None = None  # "title" or "h1" while reading one
        self._captured: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _SKIPPED_TAGS:
            self._hidden += 1
        elif tag == "body":
            self._hidden = 0  # a page may leave <head> unclosed
        if tag == "pre":
            self._pre += 1
        if tag in _BLOCK_TAGS:
            self._parts.append("\n" if tag == "br" else "\n\n")
        if (tag == "title" and self.title is None) or (tag == "h1" and self.first_h1 is None):
            self._capture, self._captured = tag, []

    def handle_endtag(self, tag: str) -> None:
        if tag in _SKIPPED_TAGS and self._hidden:
            self._hidden -= 1
        if tag == "pre" and self._pre:
            self._pre -= 1
        if tag in _BLOCK_TAGS:
            self._parts.append("\n\n")
        if tag == self._capture:
            found = " ".join("".join(self._captured).split()) or None
            if tag == "title":
                self.title = found
            else:
                self.first_h1 = found
            self._capture = None

    def handle_data(self, data: str) -> None:
        if self._capture:
            self._captured.append(data)
        if self._hidden:
            return
        # Source line breaks are not text breaks, except inside <pre>.
        self._parts.append(data if self._pre else re.sub(r"\s+", " ", data))

    def text(self) -> str:
        """The page text: paragraphs separated by blank lines, runs of spaces collapsed."""
        paragraphs = re.split(r"\n\s*\n", "".join(self._parts))
        return "\n\n".join(p.strip() for p in paragraphs if p.strip())


_LOADERS: dict[str, Callable[[str], Loaded]] = {
    ".md": _markdown,
    ".markdown": _markdown,
    ".txt": _plain,
    ".rst": _plain,
    ".html": _html,
    ".htm": _html,
}


def document_files(root: Path) -> Iterator[tuple[Path, Path]]:
    """Document files under `root` in sorted walk order, each with the regular file to read.

    The file to read is the path itself, or a link's target inside the root when nothing else
    loads it. Links out of the root are reported and left out; linked folders are never entered.
    """
    real_root = Path(os.path.realpath(root))
    linked: set[Path] = set()
    # followlinks=False (the default): a linked folder is listed but not entered, so no loop.
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in sorted(dirs) if _enter(Path(folder, d), real_root)]
        for name in sorted(files):
            path = Path(folder, name)
            if name.startswith(".") or not is_document(path):
                continue
            source = _source(path, real_root, linked)
            if isinstance(source, Skipped):
                _log.warning("corpus_file_skipped", path=str(path), reason=source.reason)
            else:
                yield path, source


def _enter(folder: Path, real_root: Path) -> bool:
    """Whether the walk enters `folder`: not hidden and not a link (one out of the root warns)."""
    if folder.name.startswith("."):
        return False
    if not folder.is_symlink():
        return True
    if not _inside(folder, real_root):
        _log.warning("corpus_folder_skipped", path=str(folder), reason=_OUTSIDE)
    return False


def _source(path: Path, real_root: Path, linked: set[Path]) -> Path | Skipped:
    """The file to read for `path`: itself, or a link's target when that is the target's one
    load (the walk does not list it, and no earlier link took it).
    """
    if not path.is_symlink():
        return path
    target = Path(os.path.realpath(path))
    if not target.is_relative_to(real_root):
        return Skipped(reason=_OUTSIDE)
    if target in linked or _listed(target, real_root):
        return Skipped(reason=f"the same file as {target.relative_to(real_root).as_posix()}")
    linked.add(target)
    # A broken link gives a missing path, a looping one a link: load_file reports either unreadable.
    return target


def _inside(path: Path, real_root: Path) -> bool:
    """Whether `path`, with every link resolved, lies inside the (resolved) corpus root."""
    return Path(os.path.realpath(path)).is_relative_to(real_root)


def _listed(target: Path, real_root: Path) -> bool:
    """Whether the walk loads the resolved file `target` under its own path.

    The walk enters only real, visible folders, so it lists a real file exactly when no part of
    its path under the root is hidden and its extension is a document's.
    """
    parts = target.relative_to(real_root).parts
    visible = not any(part.startswith(".") for part in parts)
    return visible and target.is_file() and is_document(target)
