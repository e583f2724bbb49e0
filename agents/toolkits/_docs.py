"""The research tools over a corpus: `search_docs` finds passages, `read_doc` reads one.

Both are closures over an immutable `Corpus`, so one corpus serves any number of concurrent agents.
What the model reads is kept small and citable: a search shows doc id, title, chunk and a snippet
of whole sentences (never the score), a read is capped after a whole sentence with a pointer to the
chunk that continues it, and every hit or read becomes `Evidence` whose source is the doc id an
answer cites in [brackets].
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from agents._errors import ToolFailure
from agents._tools import Tool, tool
from agents.toolkits._bm25 import snippet
from agents.toolkits._corpus import Chunk, Corpus, Document, count_words

__all__ = ["research_tools"]

MAX_TOP_K = 10
READ_CHARS = 3000
_TIMEOUT = 10.0
_EXCERPT_CHARS = 300
_NO_HITS = "no passage matches; try other words"
# A sentence's end: its punctuation and the space after it, or a blank line.
_STOP = re.compile(r"[.!?][\"')\]]*(?=\s)|\n[ \t]*\n")


def research_tools(corpus: Corpus) -> list[Tool]:
    """The tools a research agent needs over `corpus`: `search_docs` and `read_doc`.

    Args:
        corpus: The documents to search and read.

    Returns:
        `[search_docs, read_doc]`, ready for an `Executor` or a `Toolbox`.
    """
    return [_search_tool(corpus), _read_tool(corpus)]


def _search_tool(corpus: Corpus) -> Tool:
    def search_docs(query: str, top_k: int = 5) -> list[dict[str, Any]]:
        """Search the documents for passages about a topic, best first.

        Each hit gives the doc id (cite it), the title, the chunk number (for read_doc) and a
        snippet. Use a few specific words; if nothing matches, try synonyms.

        Args:
            query: A few keywords or a short question.
            top_k: How many passages to return (1 to 10).
        """
        # Clamped rather than rejected: a small model asking for 50 hits should still get some.
        hits = corpus.search(query, max(1, min(top_k, MAX_TOP_K)))
        return [{"doc": h.doc, "title": h.title, "chunk": h.chunk, "text": h.text} for h in hits]

    return tool(
        timeout=_TIMEOUT,
        success=_has_hits,
        fields=("doc", "title", "chunk", "text"),
        max_chars=4000,
        evidence=_hit_evidence,
        first_look="query",
    )(search_docs)


def _read_tool(corpus: Corpus) -> Tool:
    def read_doc(doc: str, chunk: int | None = None) -> str:
        """Read a document by its id, whole (cut after about 3000 characters) or one chunk of it.

        Args:
            doc: The doc id, exactly as search_docs shows it.
            chunk: A chunk number from search_docs, to read just that passage.
        """
        found = _find(corpus, doc)
        chunks = corpus.chunks_of(found.id)
        if chunk is None:
            count = f"{len(chunks)} chunk{'' if len(chunks) == 1 else 's'}"
            return f"{found.title} [{found.id}], {count}\n\n{_capped(corpus, found)}"
        if not 0 <= chunk < len(chunks):
            raise ToolFailure(
                f"{found.id!r} has chunks 0 to {len(chunks) - 1}, not {chunk}", bad_call=True
            )
        return f"{found.title} [{found.id}], chunk {chunk} of {len(chunks)}\n\n{chunks[chunk].text}"

    def evidence(args: dict[str, Any], value: Any) -> Sequence[tuple[str, str]]:
        found = corpus.resolve(str(args["doc"]))
        body = str(value).partition("\n\n")[2]
        return [(found.id if found else str(args["doc"]), _excerpt(body))]

    return tool(timeout=_TIMEOUT, max_chars=READ_CHARS + 400, evidence=evidence)(read_doc)


def _find(corpus: Corpus, name: str) -> Document:
    found = corpus.resolve(name)
    if found is not None:
        return found
    close = corpus.close_matches(name)
    hint = f"did you mean: {', '.join(close)}? " if close else ""
    raise ToolFailure(
        f"unknown doc {name[:80]!r}; {hint}search_docs shows the doc ids", bad_call=True
    )


def _capped(corpus: Corpus, document: Document) -> str:
    text = document.text.strip()
    if len(text) <= READ_CHARS:
        return text
    shown = text[: _last_stop(text, READ_CHARS)].rstrip()
    resume = _chunk_at(corpus.chunks_of(document.id), count_words(shown))
    return (
        f"{shown}… [truncated: showing {len(shown)} of {len(text)} chars; "
        f'read_doc(doc="{document.id}", chunk={resume}) continues]'
    )


def _last_stop(text: str, limit: int) -> int:
    """Where to cut `text` at most `limit` characters in: after the last sentence that ends in
    its second half, else at the last space (a sentence that long is cut anyway)."""
    stops = [m.end() for m in _STOP.finditer(text, limit // 2, limit + 1)]
    if stops:
        return stops[-1]
    space = text.rfind(" ", 0, limit)
    return space if space > 0 else limit


def _chunk_at(chunks: Sequence[Chunk], words: int) -> int:
    """The chunk holding word number `words` of the document: where a capped read resumes."""
    # Passages keep every word of the text in order, so counting words finds the cut.
    seen = 0
    for chunk in chunks:
        seen += count_words(chunk.text)
        if seen > words:
            return chunk.index
    return len(chunks) - 1


def _has_hits(value: Any) -> str | None:
    return None if value else _NO_HITS


def _hit_evidence(args: dict[str, Any], value: Any) -> Sequence[tuple[str, str]]:
    return [(str(hit["doc"]), str(hit["text"])) for hit in value]


def _excerpt(text: str) -> str:
    """The opening sentences of what was read, whole: a read has no query to centre on."""
    return snippet(text, "", size=_EXCERPT_CHARS)
