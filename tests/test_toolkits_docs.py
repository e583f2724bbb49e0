"""The research toolkit: loading a corpus, passages, BM25 search, search_docs and read_doc."""

from __future__ import annotations

import json
import os
from collections.abc import MutableMapping, Sequence
from pathlib import Path
from pydoc_data.topics import topics
from typing import Any

import pytest
from structlog.testing import capture_logs

from agents import ConfigurationError, Executor, Tool, ToolContext
from agents._report import cited_ids
from agents._toolbox import ToolResult
from agents.testing import ScriptedModel, call, reply
from agents.toolkits import Corpus, Document, research_tools
from agents.tools import Toolbox
from memory import ToolCall

pytestmark = pytest.mark.anyio

_CTX = ToolContext(run_id="run", agent_id="agent", call_id="c1", idempotency_key="k")


def _write(root: Path, relative: str, content: str | bytes) -> Path:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


def _skips(logs: Sequence[MutableMapping[str, Any]]) -> dict[str, str]:
    """The file names that corpus_file_skipped warnings report, with their reasons."""
    events = [e for e in logs if e["event"] == "corpus_file_skipped"]
    assert all(e["log_level"] == "warning" for e in events)
    return {Path(e["path"]).name: e["reason"] for e in events}


def _paragraph(word: str, n: int) -> str:
    return " ".join(f"{word}{i}" for i in range(n)) + "."


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    """A small folder: Markdown, text, reST and HTML, one of them nested."""
    _write(tmp_path, "guide/intro.md", "Preface.\n\n# Getting Started\n\nInstall the kettle.\n")
    _write(tmp_path, "notes.txt", "Tea leaves steep in hot water for three minutes.\n")
    _write(tmp_path, "ref/api.rst", "Kettle API\n==========\n\nThe kettle boils water.\n")
    _write(
        tmp_path,
        "site/page.html",
        "<html><head><title>Brewing  Coffee</title><style>p {color: red}</style></head>"
        "<body><h1>Coffee</h1><p>Grind the beans&nbsp;finely.</p>"
        "<script>var secret = 1;</script><p>Pour water slowly.</p></body></html>",
    )
    return tmp_path


@pytest.fixture
def corpus(docs: Path) -> Corpus:
    """The small folder, loaded."""
    return Corpus.from_folder(docs)


@pytest.fixture(scope="module")
def python_docs() -> Corpus:
    """The Python reference corpus, built once for the module."""
    return Corpus.python_docs()


def _tool(corpus: Corpus, name: str) -> Tool:
    return next(t for t in research_tools(corpus) if t.name == name)


async def _through_toolbox(corpus: Corpus, name: str, **args: Any) -> ToolResult:
    box = Toolbox(research_tools(corpus))
    prepared = box.prepare(ToolCall(id="c1", name=name, arguments=json.dumps(args)), now=0.0)
    assert not isinstance(prepared, ToolResult), prepared
    outcome = await prepared.tool.execute(prepared.args, _CTX)
    return box.finish(prepared, outcome, now=0.0)


# Loading


def test_loads_markdown_text_rst_and_html_recursively(corpus: Corpus) -> None:
    """Every supported file type under the folder becomes a document with a path-based id."""
    ids = [d.id for d in corpus.documents]
    assert ids == ["notes", "guide/intro", "ref/api", "site/page"]


def test_titles_come_from_headings_html_title_or_file_name(corpus: Corpus) -> None:
    """Titles: first Markdown heading, reST heading, HTML <title>, else the file name."""
    titles = {d.id: d.title for d in corpus.documents}
    assert titles == {
        "guide/intro": "Getting Started",
        "notes": "notes",
        "ref/api": "Kettle API",
        "site/page": "Brewing Coffee",
    }


def test_markdown_front_matter_gives_the_title_and_is_dropped(tmp_path: Path) -> None:
    """A Markdown file's front matter title wins over its heading and is not part of the text."""
    front = '---\ntitle: "Front Title"\ndate: 2024-01-01\n---\n'
    _write(tmp_path, "post.md", front + "# Heading\n\nBody.")
    (post,) = Corpus.from_folder(tmp_path).documents
    assert (post.title, post.text) == ("Front Title", "# Heading\n\nBody.")


def test_html_text_drops_scripts_and_styles(corpus: Corpus) -> None:
    """HTML keeps its visible text, paragraph by paragraph, without script or style content."""
    page = corpus.get("site/page")
    assert page is not None
    assert page.text == "Coffee\n\nGrind the beans finely.\n\nPour water slowly."


def test_skips_undecodable_and_binary_files_with_a_warning(docs: Path) -> None:
    """Non-UTF-8, binary and empty files are skipped with corpus_file_skipped, and the rest still load."""
    _write(docs, "latin1.txt", "caf\xe9 cr\xe8me".encode("latin-1"))
    _write(docs, "blob.md", b"\x89PNG\r\n\x1a\n\x00\x00\x00")
    _write(docs, "empty.md", "")
    with capture_logs() as logs:
        corpus = Corpus.from_folder(docs)
    skipped = _skips(logs)
    assert set(skipped) == {"latin1.txt", "blob.md", "empty.md"}
    assert "UTF-8" in skipped["latin1.txt"]
    assert "binary" in skipped["blob.md"]
    assert skipped["empty.md"] == "no text"
    assert len(corpus) == 4


def test_skips_pdf_with_a_warning_and_ignores_other_files(docs: Path) -> None:
    """A PDF is skipped with a warning; images, code and hidden files are not documents at all."""
    _write(docs, "paper.pdf", b"%PDF-1.7\n")
    _write(docs, "logo.png", b"\x89PNG")
    _write(docs, "script.py", "print('hi')\n")
    _write(docs, ".hidden.md", "# Hidden\n")
    _write(docs, ".git/README.md", "# Git\n")
    with capture_logs() as logs:
        corpus = Corpus.from_folder(docs)
    assert [(Path(e["path"]).name, e["event"]) for e in logs] == [
        ("paper.pdf", "corpus_file_skipped")
    ]
    assert len(corpus) == 4


def test_same_stem_in_one_folder_keeps_ids_unique(tmp_path: Path) -> None:
    """Two files differing only in extension get distinct ids; the second is numbered."""
    _write(tmp_path, "intro.md", "# Intro\n\nMarkdown.")
    _write(tmp_path, "intro.txt", "Text.")
    corpus = Corpus.from_folder(tmp_path)
    assert [d.id for d in corpus.documents] == ["intro", "intro-2"]
    assert [corpus.resolve(n) for n in ("[intro]", "[intro-2]")] == list(corpus.documents)


def test_names_mapping_to_one_id_are_numbered_in_path_order(tmp_path: Path) -> None:
    """Colliding ids get "-2", "-3"... by walk order, never a name another file has; all resolve."""
    names = ("[a].md", "_a_.md", "[a].txt", "_a_.txt", "_a_-2.md", "[x]/b.md", "_x_/b.md")
    for name in names:
        _write(tmp_path, name, f"Text of {name}.")
    corpus = Corpus.from_folder(tmp_path)
    ids = {d.id: d.text for d in corpus.documents}
    assert ids == {
        "_a_": "Text of [a].md.",
        "_a_-3": "Text of [a].txt.",
        "_a_-2": "Text of _a_-2.md.",
        "_a_-4": "Text of _a_.md.",
        "_a_-5": "Text of _a_.txt.",
        "_x_/b": "Text of [x]/b.md.",
        "_x_/b-2": "Text of _x_/b.md.",
    }
    for doc_id in ids:
        assert corpus.resolve(f"[{doc_id}]") is corpus.get(doc_id)
        assert corpus.resolve(f"'{doc_id}'") is corpus.get(doc_id)


def test_ids_carry_nothing_a_bracketed_citation_would_break(tmp_path: Path) -> None:
    """Brackets, commas, semicolons and line breaks in names become "_"; edge spaces go."""
    for name in ("a,b.md", "c;d.md", " e .md", "f\ng.md", "[h].md", ",/i.md", " .md"):
        _write(tmp_path, name, f"Text of {name}.")
    ids = sorted(d.id for d in Corpus.from_folder(tmp_path).documents)
    assert ids == ["_", "_/i", "_h_", "a_b", "c_d", "e", "f_g"]
    assert all(cited_ids(f"see [{doc_id}].") == {doc_id} for doc_id in ids)


def test_an_exact_id_wins_over_a_forgiving_match() -> None:
    """Ids differing only in case each resolve exactly, also in brackets; "INTRO" resolves to none."""
    corpus = Corpus(Document(id=i, title=i, text="text") for i in ("Intro", "intro"))
    assert [corpus.resolve(n) for n in ("Intro", "intro")] == list(corpus.documents)
    assert [corpus.resolve(n) for n in ("[Intro]", "`intro`")] == list(corpus.documents)
    assert corpus.resolve("INTRO") is None


# Loading a hostile folder: links, special files, caps


def test_a_file_link_out_of_the_folder_is_skipped_with_a_warning(tmp_path: Path) -> None:
    """A file link resolving outside the folder (a secret, /etc/passwd, /dev/zero) is never read."""
    secret = _write(tmp_path, "outside/secret.md", "# Secret\n\nroot:x:0:0 is the password.")
    root = tmp_path / "docs"
    _write(root, "intro.md", "# Intro\n\nHello.")
    (root / "secret.md").symlink_to(secret)
    (root / "up.md").symlink_to("../outside/secret.md")
    (root / "passwd.md").symlink_to("/etc/passwd")
    (root / "zero.md").symlink_to("/dev/zero")
    with capture_logs() as logs:
        corpus = Corpus.from_folder(root)
    assert [d.id for d in corpus.documents] == ["intro"]
    names = ["passwd.md", "secret.md", "up.md", "zero.md"]
    assert _skips(logs) == dict.fromkeys(names, "links out of the corpus folder")


def test_a_folder_link_out_of_the_folder_is_skipped_with_a_warning(tmp_path: Path) -> None:
    """A linked folder resolving outside the folder is not entered, with corpus_folder_skipped."""
    _write(tmp_path, "outside/secret.md", "# Secret\n\nThe password.")
    root = tmp_path / "docs"
    _write(root, "intro.md", "# Intro\n\nHello.")
    (root / "elsewhere").symlink_to(tmp_path / "outside", target_is_directory=True)
    with capture_logs() as logs:
        corpus = Corpus.from_folder(root)
    assert [d.id for d in corpus.documents] == ["intro"]
    events = [(e["event"], Path(e["path"]).name, e["log_level"], e["reason"]) for e in logs]
    assert events == [
        ("corpus_folder_skipped", "elsewhere", "warning", "links out of the corpus folder")
    ]


def test_links_inside_the_folder_load_each_file_once(tmp_path: Path) -> None:
    """Links into the folder never load a file twice; a linked folder or a loop is not entered."""
    _write(tmp_path, "guide/intro.md", "# Intro\n\nHello.")
    _write(tmp_path, ".drafts/plan.md", "# Plan\n\nA draft.")
    (tmp_path / "alias.md").symlink_to("guide/intro.md")
    (tmp_path / "draft.md").symlink_to(".drafts/plan.md")
    (tmp_path / "plan.md").symlink_to(tmp_path / ".drafts" / "plan.md")
    (tmp_path / "mirror").symlink_to("guide", target_is_directory=True)
    (tmp_path / "guide" / "loop").symlink_to("..", target_is_directory=True)
    (tmp_path / "self.md").symlink_to("self.md")
    with capture_logs() as logs:
        corpus = Corpus.from_folder(tmp_path)
    assert [(d.id, d.title) for d in corpus.documents] == [
        ("draft", "Plan"),
        ("guide/intro", "Intro"),
    ]
    skipped = _skips(logs)
    assert skipped.pop("self.md").startswith("unreadable")
    assert skipped == {
        "alias.md": "the same file as guide/intro.md",
        "plan.md": "the same file as .drafts/plan.md",
    }
    assert {e["event"] for e in logs} == {"corpus_file_skipped"}


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")
def test_a_named_pipe_is_skipped_without_blocking(tmp_path: Path) -> None:
    """A FIFO with a document's name is neither waited on nor read, just skipped."""
    _write(tmp_path, "intro.md", "# Intro\n\nHello.")
    os.mkfifo(tmp_path / "fifo.md")
    with capture_logs() as logs:
        corpus = Corpus.from_folder(tmp_path)
    assert [d.id for d in corpus.documents] == ["intro"]
    assert _skips(logs) == {"fifo.md": "not a regular file"}


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root reads all")
def test_an_unreadable_file_is_skipped_with_a_warning(tmp_path: Path) -> None:
    """A file without read permission is skipped with a warning; the rest load."""
    _write(tmp_path, "intro.md", "# Intro\n\nHello.")
    _write(tmp_path, "locked.md", "# Locked\n\nSecret.").chmod(0)
    with capture_logs() as logs:
        corpus = Corpus.from_folder(tmp_path)
    assert [d.id for d in corpus.documents] == ["intro"]
    assert _skips(logs)["locked.md"].startswith("unreadable")


def test_a_file_over_the_size_cap_is_skipped_with_a_warning(tmp_path: Path) -> None:
    """A file larger than max_bytes is skipped, its size in the warning; smaller ones load."""
    _write(tmp_path, "big.md", "word " * 100)
    _write(tmp_path, "small.md", "word " * 20)
    with capture_logs() as logs:
        corpus = Corpus.from_folder(tmp_path, max_bytes=100)
    assert [d.id for d in corpus.documents] == ["small"]
    assert _skips(logs) == {"big.md": "larger than 100 bytes (500)"}


def test_loading_stops_at_the_document_cap_with_a_warning(tmp_path: Path) -> None:
    """Past max_documents, loading stops in walk order with one corpus_truncated warning."""
    for name in "abcd":
        _write(tmp_path, f"{name}.md", f"Document {name}.")
    with capture_logs() as logs:
        corpus = Corpus.from_folder(tmp_path, max_documents=2)
    assert [d.id for d in corpus.documents] == ["a", "b"]
    assert [(e["event"], e["log_level"], e["documents"]) for e in logs] == [
        ("corpus_truncated", "warning", 2)
    ]


def test_loading_stops_at_the_total_text_cap_with_a_warning(tmp_path: Path) -> None:
    """A document that would take the text past max_total_chars ends loading with a warning."""
    for name in "abc":
        _write(tmp_path, f"{name}.md", "x" * 40)
    with capture_logs() as logs:
        corpus = Corpus.from_folder(tmp_path, max_total_chars=100)
    assert [d.id for d in corpus.documents] == ["a", "b"]
    assert [(e["event"], e["log_level"], e["chars"]) for e in logs] == [
        ("corpus_truncated", "warning", 80)
    ]


def test_missing_folder_is_a_configuration_error(tmp_path: Path) -> None:
    """A folder that does not exist fails at construction with a one-line message."""
    with pytest.raises(ConfigurationError, match="corpus folder not found") as info:
        Corpus.from_folder(tmp_path / "nope")
    assert "\n" not in str(info.value)


def test_folder_without_usable_documents_is_a_configuration_error(tmp_path: Path) -> None:
    """A folder whose files are all unusable or empty is refused, as is an empty document list."""
    _write(tmp_path, "empty.md", "  \n\n")
    _write(tmp_path, "bad.txt", b"\xff\xfe\xfa")
    with capture_logs(), pytest.raises(ConfigurationError, match="no usable documents"):
        Corpus.from_folder(tmp_path)
    with pytest.raises(ConfigurationError, match="no usable documents"):
        Corpus([])


def test_duplicate_document_ids_are_a_configuration_error() -> None:
    """Documents built by hand must have unique ids."""
    doc = Document(id="a", title="A", text="text")
    with pytest.raises(ConfigurationError, match="'a'"):
        Corpus([doc, doc])


def test_python_docs_holds_the_reference_topics(python_docs: Corpus) -> None:
    """The default corpus has one document per pydoc topic, titled by the topic's heading."""
    assert len(python_docs) == len(topics) >= 70
    assignment = python_docs.get("python/assignment")
    assert assignment is not None
    assert assignment.title == "Assignment statements"


# Passages


def test_passages_follow_paragraphs_and_stay_in_size(tmp_path: Path) -> None:
    """Paragraphs are packed whole into passages of 120 to 200 words, numbered from 0."""
    paragraphs = [_paragraph(f"p{i}w", 50) for i in range(10)]
    _write(tmp_path, "long.md", "# Long\n\n" + "\n\n".join(paragraphs))
    chunks = Corpus.from_folder(tmp_path).chunks
    assert [c.index for c in chunks] == list(range(len(chunks)))
    assert all(c.doc == "long" and c.title == "Long" for c in chunks)
    assert all(120 <= len(c.text.split()) <= 200 for c in chunks[:-1])
    for paragraph in paragraphs:
        assert sum(paragraph in c.text for c in chunks) == 1


def test_an_overlong_paragraph_is_cut_at_sentences(tmp_path: Path) -> None:
    """A paragraph over 200 words becomes several passages, none over 200 words, no word lost."""
    sentences = [_paragraph(f"s{i}w", 30) for i in range(20)]
    _write(tmp_path, "wall.txt", " ".join(sentences))
    chunks = Corpus.from_folder(tmp_path).chunks
    assert len(chunks) > 1
    assert all(len(c.text.split()) <= 200 for c in chunks)
    assert " ".join(c.text for c in chunks).split() == " ".join(sentences).split()


# Search


def test_bm25_ranks_the_relevant_document_first(corpus: Corpus) -> None:
    """The document that is about the query comes first."""
    assert corpus.search("grind coffee beans")[0].doc == "site/page"
    assert corpus.search("how long do tea leaves steep")[0].doc == "notes"


def test_bm25_ranks_the_python_reference_sensibly(python_docs: Corpus) -> None:
    """On the Python reference, plain questions find their topic first."""
    assert python_docs.search("augmented assignment")[0].doc == "python/augassign"
    assert python_docs.search("yield expression generator")[0].doc == "python/yield"
    assert python_docs.search("with statement")[0].doc == "python/with"


def test_search_ignores_case_stopwords_and_plurals(corpus: Corpus) -> None:
    """Case, stopwords and plural endings do not matter; stopwords alone match nothing."""
    assert corpus.search("THE KETTLES")[0].doc in {"guide/intro", "ref/api"}
    assert corpus.search("the of to") == []


def test_search_is_deterministic_with_ties_in_corpus_order(tmp_path: Path) -> None:
    """Equal scores rank in corpus order, the same on every call."""
    for name in ("b", "a", "c"):
        _write(tmp_path, f"{name}.txt", "identical words here")
    corpus = Corpus.from_folder(tmp_path)
    assert [h.doc for h in corpus.search("identical words")] == ["a", "b", "c"]
    assert corpus.search("identical words") == corpus.search("identical words")


def test_search_caps_hits_per_document_and_in_total(tmp_path: Path) -> None:
    """One long document yields at most two hits; top_k bounds the total."""
    _write(tmp_path, "long.md", "\n\n".join(f"needle {_paragraph('x', 130)}" for _ in range(5)))
    _write(tmp_path, "other.md", "a needle in here")
    corpus = Corpus.from_folder(tmp_path)
    assert sorted(h.doc for h in corpus.search("needle")) == ["long", "long", "other"]
    assert len(corpus.search("needle", top_k=1)) == 1
    assert corpus.search("needle", top_k=0) == []


def test_snippets_are_short_and_centred_on_the_query(python_docs: Corpus) -> None:
    """A hit's text is about 300 characters on one line and contains a query word."""
    for hit in python_docs.search("starred target unpacking"):
        assert len(hit.text) <= 302
        assert "\n" not in hit.text
        assert any(w in hit.text.lower() for w in ("starred", "target", "unpacking"))


# Tools


def test_research_tools_describe_their_arguments(corpus: Corpus) -> None:
    """The toolkit offers search_docs(query, top_k) and read_doc(doc, chunk) with small timeouts."""
    tools = research_tools(corpus)
    assert [t.name for t in tools] == ["search_docs", "read_doc"]
    params = [sorted(t.spec().parameters["properties"]) for t in tools]
    assert params == [["query", "top_k"], ["chunk", "doc"]]
    assert [t.spec().parameters.get("required") for t in tools] == [["query"], ["doc"]]
    assert all(t.timeout is not None and t.timeout <= 10 for t in tools)


async def test_search_docs_returns_hits_through_execute(corpus: Corpus) -> None:
    """search_docs returns doc, title, chunk and snippet per hit, and clamps top_k."""
    outcome = await _tool(corpus, "search_docs").execute({"query": "kettle", "top_k": 50}, _CTX)
    assert outcome.ok
    assert {h["doc"] for h in outcome.value} == {"guide/intro", "ref/api"}
    assert set(outcome.value[0]) == {"doc", "title", "chunk", "text"}


async def test_search_docs_through_toolbox_cites_each_hit(python_docs: Corpus) -> None:
    """Through the toolbox a search is shaped (no score) and each hit becomes doc-id evidence."""
    result = await _through_toolbox(python_docs, "search_docs", query="augmented assignment")
    assert result.ok
    shown = json.loads(result.content)
    assert shown[0]["doc"] == "python/augassign"
    assert all(set(h) == {"doc", "title", "chunk", "text"} for h in shown)
    assert [e.source for e in result.evidence] == [h["doc"] for h in shown]
    assert result.evidence[0].excerpt == shown[0]["text"]
    assert result.evidence[0].tool == "search_docs"


async def test_search_docs_without_hits_fails_its_success_check(corpus: Corpus) -> None:
    """An empty search is a rejected call with a hint, and cites nothing."""
    outcome = await _tool(corpus, "search_docs").execute({"query": "zyzzyva"}, _CTX)
    assert outcome.ok
    assert outcome.value == []
    result = await _through_toolbox(corpus, "search_docs", query="zyzzyva")
    assert not result.ok
    assert result.error == "rejected"
    assert "no passage matches; try other words" in result.content
    assert result.evidence == ()


async def test_read_doc_returns_the_document_with_evidence(corpus: Corpus) -> None:
    """read_doc shows the title, id and text, and cites the doc id."""
    result = await _through_toolbox(corpus, "read_doc", doc="ref/api")
    assert result.ok
    assert result.content.startswith("Kettle API [ref/api], 1 chunk\n\n")
    assert "The kettle boils water." in result.content
    assert [e.source for e in result.evidence] == ["ref/api"]
    assert result.evidence[0].excerpt.startswith("Kettle API")


async def test_read_doc_forgives_case_and_extension(corpus: Corpus) -> None:
    """A doc id with another case, an extension or no folder still finds its one document."""
    tool = _tool(corpus, "read_doc")
    for name in ("REF/API.rst", "api", "/ref/api/"):
        outcome = await tool.execute({"doc": name}, _CTX)
        assert outcome.ok, name
        assert "[ref/api]" in outcome.value


async def test_read_doc_caps_long_documents_and_points_to_the_next_chunk(
    python_docs: Corpus,
) -> None:
    """A long document is cut, marked, and names the chunk that continues it."""
    result = await _through_toolbox(python_docs, "read_doc", doc="python/assignment")
    assert result.ok
    assert "[truncated: showing" in result.content
    assert "[truncated: showing" not in result.content.partition("… [truncated")[0]
    marker = 'read_doc(doc="python/assignment", chunk='
    resume = int(result.content.split(marker)[1].split(")")[0])
    last_words = result.content.partition("… [truncated")[0].split()[-3:]
    chunk = python_docs.chunks_of("python/assignment")[resume]
    assert " ".join(last_words) in " ".join(chunk.text.split())


async def test_read_doc_reads_one_chunk(python_docs: Corpus) -> None:
    """With a chunk number, read_doc returns just that passage and cites the document."""
    result = await _through_toolbox(python_docs, "read_doc", doc="python/with", chunk=1)
    assert result.ok
    assert result.content.startswith('The "with" statement [python/with], chunk 1 of ')
    assert python_docs.chunks_of("python/with")[1].text in result.content
    assert [e.source for e in result.evidence] == ["python/with"]


async def test_read_doc_rejects_a_chunk_out_of_range(corpus: Corpus) -> None:
    """A chunk number past the end fails with the valid range, blamed on the call, not the tool."""
    result = await _through_toolbox(corpus, "read_doc", doc="notes", chunk=3)
    assert not result.ok
    assert result.error == "bad_call"
    assert "'notes' has chunks 0 to 0" in result.content


async def test_read_doc_unknown_id_suggests_close_matches(python_docs: Corpus) -> None:
    """An unknown doc id fails as a bad call that names the closest ids."""
    outcome = await _tool(python_docs, "read_doc").execute({"doc": "python/asignment"}, _CTX)
    assert not outcome.ok
    assert outcome.error == "bad_call"
    assert outcome.message.startswith(
        "unknown doc 'python/asignment'; did you mean: python/assignment"
    )
    result = await _through_toolbox(python_docs, "read_doc", doc="zzz")
    assert not result.ok
    assert "unknown doc 'zzz'; search_docs shows the doc ids" in result.content


async def test_an_executor_researches_and_cites_a_document(python_docs: Corpus) -> None:
    """An executor searching the Python reference gathers doc-id evidence its answer can cite."""
    model = ScriptedModel(
        [
            call("search_docs", query="augmented assignment"),
            reply("Augmented assignment evaluates the target once [python/augassign]."),
        ]
    )
    report = await Executor(model, tools=research_tools(python_docs)).run("What is x += 1?")
    model.assert_complete()
    assert report.ok
    assert "python/augassign" in {e.source for e in report.evidence}
    tool_message = model.requests[1].messages[-1]
    assert tool_message.role == "tool"
    assert "python/augassign" in tool_message.content


# Passages that hold the answer: whole sentences around the question's terms (issue 30)

POLICIES = {
    "refunds.md": (
        "# Refund policy\n\n"
        "Northwind Outfitters wants every customer to be happy with what they buy, and most "
        "problems are solved quickly by the store that sold the item. Our staff can exchange an "
        "item for another size or colour on the spot, and they can repair many products in the "
        "store. If an exchange or a repair does not solve the problem, customers may ask for their "
        "money back under this policy. Refunds are paid to the card or account that was used for "
        "the purchase, e.g. a gift card. Claims must be filed within 60 days of the purchase. A "
        "claim filed later than that is declined, except where the law of the customer's country "
        "gives a longer period.\n"
    ),
    "travel.md": (
        "# Travel expenses\n\n"
        "Employees who travel for work book their trips through the travel desk, which compares "
        "prices across airlines, rail companies and hotels and keeps the booking records in one "
        "place. Trips inside the country are approved by the line manager, while trips abroad "
        "also need the approval of the department head. Economy class is the rule for flights "
        "under six hours. Meals on the road are covered by a daily allowance rather than by "
        "receipts. Hotel nights are reimbursed up to EUR 240 per night in capital cities and up "
        "to EUR 150 elsewhere.\n"
    ),
    "security.md": (
        "# Information security\n\n"
        "All company laptops are encrypted and managed by the IT department, which installs "
        "updates automatically every week. Passwords must be at least 14 characters long and are "
        "never shared, not even with colleagues from IT. Staff lock their screen whenever they "
        "leave their desk and never plug in USB drives from unknown sources. A lost or stolen "
        "laptop is a security incident, whatever data it holds. Security incidents must be "
        "reported to the IT service desk within 4 hours of being noticed.\n"
    ),
    "leave.md": (
        "# Annual leave\n\n"
        "Every employee on a full-time contract earns paid leave from the first day of work, and "
        "part-time employees earn leave in proportion to their hours. Leave is requested in the "
        "HR portal and approved by the line manager, who checks that the team can cover the "
        "absence. Requests for more than two weeks in a row should be made at least a month in "
        "advance. Unused days may be carried into the next year, but they expire at the end of "
        "March. Full-time employees receive 25 working days of paid leave per calendar year.\n"
    ),
    "pension.md": (
        "# Pension plan\n\n"
        "The company pension plan is open to every employee with a permanent contract. The "
        "company pays 5 percent of the gross salary into the plan each month, and employees may "
        "add up to another 5 percent of their own. Contributions are invested in a fund chosen by "
        "the employee from a list of six funds, and the fund can be changed once a year. The new "
        "pension provider takes over the plan on 1 March 2027, and all balances move with it.\n"
    ),
}
ASKED = [
    ("How long do customers have to file a refund claim?", "refunds", "within 60 days"),
    ("What is the hotel limit per night in capital cities?", "travel", "EUR 240"),
    ("How quickly must a lost laptop be reported?", "security", "within 4 hours"),
    ("How many days of paid leave do full-time employees get?", "leave", "25 working days"),
    ("When does the new pension provider take over?", "pension", "1 March 2027"),
]


@pytest.fixture
def policies(tmp_path: Path) -> Corpus:
    """Policy documents whose key fact sits in the second half of a long paragraph."""
    for name, text in POLICIES.items():
        _write(tmp_path, name, text)
    return Corpus.from_folder(tmp_path)


def _sentence_of(fact: str, corpus: Corpus, doc_id: str) -> str:
    """The whole sentence of the document that states `fact`."""
    document = corpus.get(doc_id)
    assert document is not None
    flat = " ".join(document.text.split())
    start = flat.rfind(". ", 0, flat.index(fact)) + 2
    return flat[start : flat.index(".", flat.index(fact)) + 1]


def _assert_whole_sentences(text: str, corpus: Corpus, doc_id: str) -> None:
    """`text` is a run of whole sentences of the document: no sentence is cut at either end."""
    document = corpus.get(doc_id)
    assert document is not None
    flat = " ".join(document.text.split())
    body = text.removeprefix("…").removesuffix("…")
    at = flat.find(body)
    assert at >= 0, text
    heading = flat[:at].startswith("# ") and "." not in flat[:at]
    assert at == 0 or heading or flat[at - 2 : at] == ". ", f"starts mid-sentence: {text}"
    assert at + len(body) == len(flat) or body.endswith("."), f"ends mid-sentence: {text}"


@pytest.mark.parametrize(("question", "doc_id", "fact"), ASKED, ids=[a[1] for a in ASKED])
def test_a_hit_holds_the_asked_fact_in_whole_sentences(
    policies: Corpus, question: str, doc_id: str, fact: str
) -> None:
    """The hit for a question quotes the sentence stating its answer, whole, with the number and
    its unit, and cuts no sentence, though the fact lies past the first 300 characters."""
    document = policies.get(doc_id)
    assert document is not None
    assert document.text.index(fact) > 300
    hit = policies.search(question, 1)[0]
    assert hit.doc == doc_id
    assert _sentence_of(fact, policies, doc_id) in hit.text
    assert len(hit.text) <= 300
    _assert_whole_sentences(hit.text, policies, doc_id)


def test_every_hit_is_whole_sentences_within_its_size(policies: Corpus) -> None:
    """Whatever the query and the size (room for the longest sentence, 180 characters), a hit's
    text is whole sentences of its passage."""
    for question, _, _ in ASKED:
        for size in (190, 250, 300, 500):
            for hit in policies.search(question, 5, size=size):
                assert len(hit.text) <= size
                _assert_whole_sentences(hit.text, policies, hit.doc)


def test_an_abbreviation_does_not_end_a_sentence(policies: Corpus) -> None:
    """ "e.g. a gift card" stays inside its sentence: the hit does not start at "a gift card"."""
    hit = policies.search("refund paid to card gift", 1, size=150)[0]
    assert (
        "Refunds are paid to the card or account that was used for the purchase, e.g. a gift"
        in (hit.text)
    )


def test_a_sentence_too_long_to_show_is_cut_around_the_query_never_inside_a_quantity(
    tmp_path: Path,
) -> None:
    """Only a sentence longer than the size is cut, at spaces, never between "60" and "days"."""
    filler = " ".join(f"word{i}" for i in range(80))
    _write(tmp_path, "long.txt", f"{filler} claims within 60 days {filler}.")
    corpus = Corpus.from_folder(tmp_path)
    for size in range(60, 200, 3):
        (hit,) = corpus.search("claims deadline", size=size)
        assert len(hit.text) <= size
        assert hit.text.startswith("…")
        assert hit.text.endswith("…")
        assert "60" not in hit.text.replace("60 days", "")


def test_search_can_be_limited_to_some_documents(policies: Corpus) -> None:
    """`docs=` keeps only hits from those documents, however well others match."""
    assert len({h.doc for h in policies.search("employees", 5)}) > 2
    limited = policies.search("employees", 5, docs={"travel", "leave"})
    assert {h.doc for h in limited} == {"travel", "leave"}


async def test_a_read_is_cited_with_its_opening_sentences_whole(policies: Corpus) -> None:
    """read_doc's evidence excerpt ends at a sentence end, not mid-word at 300 characters."""
    result = await _through_toolbox(policies, "read_doc", doc="refunds")
    assert result.ok
    (evidence,) = result.evidence
    assert evidence.excerpt.endswith(".…")
    assert len(evidence.excerpt) <= 300
    _assert_whole_sentences(evidence.excerpt, policies, "refunds")


async def test_search_docs_shows_the_model_the_sentence_with_the_fact(policies: Corpus) -> None:
    """What the model is shown for a question holds the fact's sentence whole."""
    model = ScriptedModel(
        [
            call("search_docs", query="how long to file a refund claim"),
            reply("Within 60 days [refunds]."),
        ]
    )
    await Executor(model, tools=research_tools(policies)).run("Refund deadline?")
    model.assert_complete()
    shown = model.requests[1].messages[-1]
    assert shown.role == "tool"
    assert "Claims must be filed within 60 days of the purchase." in (shown.content or "")
