"""The document corpus: documents from a folder (or the Python reference), passages, and search.

A `Corpus` is immutable once built: documents are split into passages of about 120 to 200 words
on paragraph boundaries and indexed with BM25 in the constructor, so searches only read shared
state and are safe from worker threads.
"""

from __future__ import annotations

import difflib
import itertools
import os
import re
from collections.abc import Collection, Iterable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath

from agents._errors import ConfigurationError
from agents._tracing import logger
from agents.toolkits._bm25 import BM25Index, sentences, snippet, tokenize
from agents.toolkits._loaders import (
    Skipped,
    document_files,
    load_file,
    pretty_name,
    setext_title,
)

__all__ = ["Chunk", "Corpus", "Document", "Hit", "count_words"]

_log = logger("paor.toolkits")

MIN_WORDS = 120
MAX_WORDS = 200
SNIPPET_CHARS = 300
"""The default size of a hit's text, in characters: a few sentences."""
MAX_FILE_BYTES = 5_000_000
"""The default cap on one file's size, in bytes: a large manual, not a data dump."""
MAX_DOCUMENTS = 10_000
"""The default cap on a folder corpus's documents."""
MAX_TOTAL_CHARS = 100_000_000
"""The default cap on a folder corpus's text: indexing this much takes about 1.5 GB of memory."""
# What a bracketed citation cannot carry: brackets, the separators of "[a, b; c]", line breaks.
_UNCITABLE = re.compile(r"[\[\],;\x00-\x1f\x7f]|[^\S ]")
_RULE = re.compile(r"^\s*([=\-~^*#+_\"'`])\1{2,}\s*$", re.M)
_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n")
_EXTENSIONS = frozenset({"md", "markdown", "txt", "rst", "html", "htm", "pdf"})


@dataclass(frozen=True, slots=True, kw_only=True)
class Document:
    """One document of a corpus.

    Attributes:
        id: A stable id, the relative path without extension ("guide/intro"): what answers cite.
        title: The first heading, the HTML <title>, or the file name.
        text: The full text.
    """

    id: str
    title: str
    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Chunk:
    """A passage of a document, the unit of search.

    Attributes:
        doc: The document id.
        title: The document title.
        index: The passage's position in its document, from 0.
        text: The passage text.
    """

    doc: str
    title: str
    index: int
    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Hit:
    """One search result.

    Attributes:
        doc: The document id.
        title: The document title.
        chunk: The passage index in the document.
        text: Whole sentences of the passage, about 300 characters, around the one that best
            matches the query.
        score: The BM25 score (higher is better).
    """

    doc: str
    title: str
    chunk: int
    text: str
    score: float


class Corpus:
    """A searchable set of documents.

    Args:
        documents: The documents; ids must be unique.

    Raises:
        ConfigurationError: There are no documents, or two share an id.
    """

    def __init__(self, documents: Iterable[Document]) -> None:
        self._docs: dict[str, Document] = {}
        for doc in documents:
            if doc.id in self._docs:
                raise ConfigurationError(f"corpus: two documents have the id {doc.id!r}")
            self._docs[doc.id] = doc
        if not self._docs:
            raise ConfigurationError("corpus: no usable documents")
        self._chunks: dict[str, tuple[Chunk, ...]] = {
            doc.id: tuple(_chunks_of(doc)) for doc in self._docs.values()
        }
        self._flat = tuple(c for chunks in self._chunks.values() for c in chunks)
        self._index = BM25Index([tokenize(f"{c.title}\n{c.text}") for c in self._flat])

    @classmethod
    def from_folder(
        cls,
        folder: str | os.PathLike[str],
        *,
        max_bytes: int = MAX_FILE_BYTES,
        max_documents: int = MAX_DOCUMENTS,
        max_total_chars: int = MAX_TOTAL_CHARS,
    ) -> Corpus:
        """Load every Markdown, text, reST and HTML file under `folder`, recursively.

        Hidden files and folders are left out; other file types are ignored. Only regular files
        inside `folder` are read: a link whose target lies outside it is skipped with a
        `corpus_file_skipped` (or `corpus_folder_skipped`) warning. A linked folder inside it is
        not entered (the walk reaches its files anyway, and no link loop can form), and a file
        link into it is loaded only when nothing else loads its target: one file, one id.

        A document file that cannot be used (binary, not UTF-8, empty, unreadable, not a regular
        file, larger than `max_bytes`, PDF) is skipped with a `corpus_file_skipped` warning.
        Ids are relative paths without extension, with "_" for what a citation cannot carry
        ("[a, b]" cites two); names that give the same id are numbered in walk order ("intro",
        "intro-2"), never taking an id another file has.

        Args:
            folder: The folder to load.
            max_bytes: The largest file read (5 MB by default).
            max_documents: At most this many documents (10,000 by default).
            max_total_chars: At most this much text in all (100 million characters by default).
                Loading stops, in walk order, at the first document past either total, with a
                `corpus_truncated` warning.

        Raises:
            ConfigurationError: The folder does not exist, or holds no usable document.
        """
        root = Path(folder)
        if not root.is_dir():
            raise ConfigurationError(f"corpus folder not found: {root}")
        caps = _Caps(documents=max_documents, chars=max_total_chars, file_bytes=max_bytes)
        documents = _numbered(list(_load_folder(root, caps)))
        if not documents:
            raise ConfigurationError(f"corpus folder has no usable documents: {root}")
        return cls(documents)

    @classmethod
    def python_docs(cls) -> Corpus:
        """The Python language reference topics that ship with CPython (`pydoc_data.topics`).

        Ids are "python/<topic>" ("python/assignment"); titles are the topics' headings
        ("Assignment statements").
        """
        from pydoc_data.topics import topics  # 465 KB of text: loaded only when asked for

        return cls(
            Document(id=f"python/{name}", title=setext_title(text) or name, text=text)
            for name, text in sorted(topics.items())
        )

    def __len__(self) -> int:
        """The number of documents."""
        return len(self._docs)

    @property
    def documents(self) -> tuple[Document, ...]:
        """Every document, in load order."""
        return tuple(self._docs.values())

    @property
    def chunks(self) -> tuple[Chunk, ...]:
        """Every passage, document by document."""
        return self._flat

    def get(self, doc_id: str) -> Document | None:
        """The document with exactly this id, if there is one."""
        return self._docs.get(doc_id)

    def chunks_of(self, doc_id: str) -> tuple[Chunk, ...]:
        """The passages of a document (empty for an unknown id)."""
        return self._chunks.get(doc_id, ())

    def resolve(self, name: str) -> Document | None:
        """A document by id, forgiving brackets or quotes around it, case, stray slashes, an
        extension or a missing folder.

        Only an unambiguous match is returned: "Assignment.md" finds "python/assignment" when no
        other document has that last path part.
        """
        for key in (name, _unquoted(name)):
            if key in self._docs:
                return self._docs[key]
        wanted = _normal(name)
        exact = [d for d in self._docs.values() if _normal(d.id) == wanted]
        if len(exact) == 1:
            return exact[0]
        tail = [d for d in self._docs.values() if _normal(d.id).rsplit("/", 1)[-1] == wanted]
        return tail[0] if len(tail) == 1 else None

    def close_matches(self, name: str, n: int = 5) -> list[str]:
        """Document ids that look like `name`, best first."""
        ids = {_normal(i): i for i in self._docs}
        tails = {_normal(i).rsplit("/", 1)[-1]: i for i in self._docs}
        wanted = _normal(name)
        found = difflib.get_close_matches(wanted, list(ids), n=n, cutoff=0.6)
        found += difflib.get_close_matches(wanted, list(tails), n=n, cutoff=0.6)
        matched = [ids.get(f) or tails[f] for f in found]
        return sorted(dict.fromkeys(matched), key=lambda i: -_similarity(wanted, i))[:n]

    def search(
        self,
        query: str,
        top_k: int = 5,
        *,
        per_doc: int = 2,
        docs: Collection[str] | None = None,
        size: int = SNIPPET_CHARS,
    ) -> list[Hit]:
        """The passages that best match `query` under BM25, best first.

        Each hit's text is whole sentences of its passage, around the one that best matches the
        query (see `snippet`).

        Args:
            query: Free text; case, stopwords and plurals do not matter.
            top_k: At most this many hits.
            per_doc: At most this many hits from one document, so a long document cannot crowd out
                the others.
            docs: Only hits from these document ids (all documents by default).
            size: The most characters of a hit's text.
        """
        hits: list[Hit] = []
        if top_k < 1:
            return hits
        weights = self._index.weights(query)
        taken: dict[str, int] = {}
        for number, score in self._index.scores(query):
            chunk = self._flat[number]
            if taken.get(chunk.doc, 0) >= per_doc or (docs is not None and chunk.doc not in docs):
                continue
            taken[chunk.doc] = taken.get(chunk.doc, 0) + 1
            text = snippet(chunk.text, query, size=size, weights=weights)
            hits.append(
                Hit(doc=chunk.doc, title=chunk.title, chunk=chunk.index, text=text, score=score)
            )
            if len(hits) >= top_k:
                break
        return hits


def count_words(text: str) -> int:
    """Words of `text` as passages count them (heading rules are not words)."""
    return len(_RULE.sub("", text).split())


def _unquoted(name: str) -> str:
    # Ids are taught in [brackets] and quoted in prose: a model passes them on with either.
    return name.strip().strip("[]()<>'\"`").strip()


def _normal(name: str) -> str:
    path = _unquoted(name).replace("\\", "/").strip("/").lower()
    path = path.removeprefix("./")
    stem, dot, ext = path.rpartition(".")
    return stem if dot and ext in _EXTENSIONS else path


def _similarity(wanted: str, doc_id: str) -> float:
    normal = _normal(doc_id)
    whole = difflib.SequenceMatcher(None, wanted, normal).ratio()
    tail = difflib.SequenceMatcher(None, wanted, normal.rsplit("/", 1)[-1]).ratio()
    return max(whole, tail)


@dataclass(frozen=True, slots=True, kw_only=True)
class _Caps:
    """The bounds of one folder load: documents, characters of text, and bytes per file."""

    documents: int
    chars: int
    file_bytes: int


def _load_folder(root: Path, caps: _Caps) -> Iterator[Document]:
    """The folder's usable documents in walk order, with ids that may still collide."""
    count = chars = 0
    for path, source in document_files(root):
        loaded = load_file(source, max_bytes=caps.file_bytes, suffix=path.suffix)
        if isinstance(loaded, Skipped):
            _log.warning("corpus_file_skipped", path=str(path), reason=loaded.reason)
            continue
        if count >= caps.documents or chars + len(loaded.text) > caps.chars:
            _log.warning("corpus_truncated", path=str(path), documents=count, chars=chars)
            return
        count, chars = count + 1, chars + len(loaded.text)
        stem = PurePosixPath(path.relative_to(root).as_posix()).with_suffix("")
        title = loaded.title or pretty_name(path.stem)
        yield Document(id=_citable(str(stem)), title=title, text=loaded.text)


def _citable(stem: str) -> str:
    """`stem` as an id a citation can carry: "[a, b]" cites two ids, stripped, on one line."""
    return _UNCITABLE.sub("_", stem).strip(" ") or "_"


def _numbered(documents: list[Document]) -> list[Document]:
    """The documents with unique ids: a repeated id becomes the first free "id-2", "id-3"...

    An id some document has on its own is never given to another, so a file named "a-2.md"
    keeps "a-2" whatever collides with "a"; the order, and so the numbers, follow the sorted walk.
    """
    taken = {doc.id for doc in documents}
    seen: set[str] = set()
    unique: list[Document] = []
    for doc in documents:
        if doc.id in seen:
            doc_id = next(
                f"{doc.id}-{n}" for n in itertools.count(2) if f"{doc.id}-{n}" not in taken
            )
            taken.add(doc_id)
            doc = replace(doc, id=doc_id)
        seen.add(doc.id)
        unique.append(doc)
    return unique


def _chunks_of(doc: Document) -> Iterator[Chunk]:
    for index, text in enumerate(_pack(_pieces(doc.text), "\n\n")):
        yield Chunk(doc=doc.id, title=doc.title, index=index, text=text)


def _pieces(text: str) -> Iterator[tuple[str, int]]:
    """Paragraphs with their word counts; a paragraph over MAX_WORDS is cut at sentence ends."""
    for paragraph in _PARAGRAPH_BREAK.split(_RULE.sub("", text)):
        paragraph = paragraph.strip("\n").rstrip()
        words = len(paragraph.split())
        if words > MAX_WORDS:
            yield from ((p, len(p.split())) for p in _pack(_sentences(paragraph), " "))
        elif words:
            yield paragraph, words


def _sentences(paragraph: str) -> Iterator[tuple[str, int]]:
    for sentence in sentences(paragraph):
        words = sentence.split()
        if len(words) <= MAX_WORDS:
            yield sentence, len(words)
            continue
        # A "sentence" past MAX_WORDS (a code listing, a table) is cut by word count.
        for start in range(0, len(words), MAX_WORDS):
            part = words[start : start + MAX_WORDS]
            yield " ".join(part), len(part)


def _pack(pieces: Iterable[tuple[str, int]], joiner: str) -> list[str]:
    """Join consecutive pieces into passages of MIN_WORDS to MAX_WORDS words where they allow it."""
    passages: list[tuple[list[str], int]] = []
    parts: list[str] = []
    count = 0
    for text, words in pieces:
        if parts and count + words > MAX_WORDS:
            passages.append((parts, count))
            parts, count = [], 0
        parts.append(text)
        count += words
        if count >= MIN_WORDS:
            passages.append((parts, count))
            parts, count = [], 0
    if parts and passages and count < MIN_WORDS // 4:
        passages[-1][0].extend(parts)  # a short tail reads better with what precedes it
    elif parts:
        passages.append((parts, count))
    return [joiner.join(p) for p, _ in passages]
