"""A whoosh index of doc chunks: language-stemmed prose plus exact technical identifiers."""

from __future__ import annotations

import re
import shutil
import tempfile
import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from whoosh import index as whoosh_index
from whoosh import lang as whoosh_lang
from whoosh.analysis import (
    Analyzer,
    CharsetFilter,
    Filter,
    LanguageAnalyzer,
    LowercaseFilter,
    RegexTokenizer,
    StemmingAnalyzer,
    Token,
)
from whoosh.codec.whoosh3 import W3Codec
from whoosh.fields import ID, STORED, TEXT, Schema
from whoosh.filedb.filestore import FileStorage, RamStorage
from whoosh.qparser import MultifieldPlugin, OrGroup, QueryParser
from whoosh.support.charset import accent_map

from search.chunks import Chunk

HEADING_BOOST = 2.0
SEARCH_FIELDS = ("heading", "body", "identifiers")
# An investigator's query is a bag of words; past this it is a pasted log, not a question.
MAX_QUERY_CHARS = 2000

# Code in prose: inline spans (`x`, ``x``) and fence lines (``` or ~~~).
_CODE_SPAN = re.compile(r"(`+)([^`]+?)\1")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
# A prose word shaped like code: snake_case, camelCase, ACRONYM, dotted.name, /path, mixed
# digits (ADR-002, utf8, v2).
_IDENTIFIER_SHAPE = re.compile(r"_|[a-z][A-Z]|[A-Z]{2}|\w[.:/#]\w|^/\w|\d[A-Za-z]|[A-Za-z]-?\d")
# Parts of one identifier: "HTTPServerError" -> HTTP, Server, Error; "customerReference" ->
# customer, Reference; digits stand alone.
_IDENTIFIER_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")


class IdentifierPartsFilter(Filter):
    """Emit each token whole, then its snake_case/camelCase parts as extra tokens.

    So `customerReference` is found by `customerReference`, by `customerreference` and by
    `customer reference`; `due_in_days` by itself and by `due days`. Must run before lowercasing.
    """

    def __call__(self, tokens: Iterator[Token]) -> Iterator[Token]:
        for token in tokens:
            whole = token.text
            yield token
            parts = [p for piece in whole.split("_") for p in _IDENTIFIER_PART.findall(piece)]
            # Only when the parts spell the whole token: letters the ASCII pattern does not know
            # (Cyrillic, unfolded accents) must not leave fragments behind.
            if parts != [whole] and "".join(parts) == whole.replace("_", ""):
                for part in parts:
                    token.text = part
                    yield token


def identifier_text(heading: str, text: str) -> str:
    """What the identifiers field indexes: the heading, code, and code-shaped prose words.

    Plain prose words are left to the stemmed body field; indexing them here too would double
    their weight and (whoosh's BM25 idf never reaching 0) make every common word score.
    """
    pieces = [heading]
    prose_lines = []
    in_fence = False
    for line in text.split("\n"):
        if _FENCE.match(line):
            in_fence = not in_fence
        elif in_fence:
            pieces.append(line)
        else:
            prose_lines.append(line)
    prose = "\n".join(prose_lines)
    pieces.extend(m.group(2) for m in _CODE_SPAN.finditer(prose))  # a span may wrap lines
    pieces.extend(w for w in _CODE_SPAN.sub(" ", prose).split() if _IDENTIFIER_SHAPE.search(w))
    return "\n".join(pieces)


def identifier_analyzer() -> Analyzer:
    """Lowercased words split on whitespace and punctuation except `_`, plus identifier parts.

    No stemming and no stop words (identifiers must match as written); accents folded so
    `descripcion` finds `descripción`.
    """
    return (
        RegexTokenizer(r"\w+")
        | CharsetFilter(accent_map)  # before the parts: their pattern is ASCII, case kept
        | IdentifierPartsFilter()
        | LowercaseFilter()
    )


def _language_code(language: str) -> str | None:
    """'es', 'es-ES', 'es_ES', 'spanish' -> 'es'; None when whoosh does not know it."""
    name = language.strip().lower().replace("_", "-")
    return whoosh_lang.two_letter_code(name) or whoosh_lang.two_letter_code(name.split("-")[0])


def prose_analyzer(language: str = "en") -> Analyzer:
    """Stemming for the docs' language (Spanish for 'es'); English stemming when unknown."""
    code = _language_code(language)
    if code and whoosh_lang.has_stemmer(code):
        return LanguageAnalyzer(code)
    return StemmingAnalyzer()


def make_schema(language: str = "en") -> Schema:
    prose = prose_analyzer(language)
    return Schema(
        path=ID(stored=True),
        heading=TEXT(stored=True, analyzer=prose, field_boost=HEADING_BOOST),
        body=TEXT(stored=True, analyzer=prose),
        identifiers=TEXT(analyzer=identifier_analyzer(), phrase=False),
        line_start=STORED(),
        line_end=STORED(),
        revision=STORED(),
        section_start=STORED(),
    )


class _PrivateRamStorage(RamStorage):
    """RAM storage whose scratch files go to a folder of its own.

    whoosh names the scratch folder of a RAM index after the index ("MAIN.tmp" in the system
    temp folder), so every process building one at the same time shares it, and the first
    to finish deletes the others' files (FileNotFoundError mid-build)."""

    def __init__(self) -> None:
        super().__init__()
        self.scratch: list[str] = []

    def temp_storage(self, name: str | None = None) -> FileStorage:
        self.scratch.append(tempfile.mkdtemp(prefix="docs-index-"))
        return FileStorage(self.scratch[-1]).create()

    def clean(self) -> None:
        for folder in self.scratch:
            shutil.rmtree(folder, ignore_errors=True)


@dataclass(frozen=True, slots=True)
class Hit:
    chunk: Chunk
    score: float


class DocsIndex:
    """Chunks indexed with whoosh, in RAM unless a directory is given.

    Searches are OR queries over heading, body and identifiers, scored with BM25F.
    """

    def __init__(self, ix: whoosh_index.Index) -> None:
        self._ix = ix
        # No query syntax at all: only the whitespace plugin (always added) and the multifield
        # one. `:` `(` `"` `*` `AND` in user text are plain characters for the field analyzers,
        # which is safer than escaping them.
        self._parser = QueryParser(
            None, ix.schema, plugins=[MultifieldPlugin(list(SEARCH_FIELDS))], group=OrGroup
        )
        # whoosh's stemming cache (lfu_cache) is not thread-safe; searches run in worker threads.
        self._lock = threading.Lock()

    @classmethod
    def build(
        cls, chunks: Iterable[Chunk], language: str = "en", directory: Path | None = None
    ) -> DocsIndex:
        schema = make_schema(language)
        ram: _PrivateRamStorage | None = None
        if directory is None:
            ram = _PrivateRamStorage()
            ix = ram.create_index(schema)
            # In RAM neither compressing posting blocks nor packing files into one pays off;
            # skipping both cuts build time by about a fifth.
            writer = ix.writer(codec=W3Codec(compression=0), compound=False)
        else:
            directory.mkdir(parents=True, exist_ok=True)
            ix = whoosh_index.create_in(str(directory), schema)  # replaces any index there
            writer = ix.writer()
        for chunk in chunks:
            writer.add_document(
                path=chunk.path,
                heading=chunk.heading,
                body=chunk.text,
                identifiers=identifier_text(chunk.heading, chunk.text),
                line_start=chunk.line_start,
                line_end=chunk.line_end,
                revision=chunk.revision,
                section_start=chunk.section_start,
            )
        try:
            writer.commit()
        finally:
            if ram is not None:
                ram.clean()
        return cls(ix)

    @classmethod
    def open(cls, directory: Path) -> DocsIndex:
        """An index built earlier with `build(..., directory=...)`."""
        return cls(whoosh_index.open_dir(str(directory)))

    @property
    def doc_count(self) -> int:
        return self._ix.doc_count()

    def search(self, query: str, limit: int) -> list[Hit]:
        """The best `limit` chunks for `query`, best first; [] when nothing in it is searchable."""
        text = query[:MAX_QUERY_CHARS].strip()
        if not text or limit < 1:
            return []
        with self._lock:
            parsed = self._parser.parse(text)
            with self._ix.searcher() as searcher:
                return [
                    Hit(
                        Chunk(
                            path=hit["path"],
                            heading=hit["heading"],
                            line_start=hit["line_start"],
                            line_end=hit["line_end"],
                            revision=hit["revision"],
                            text=hit["body"],
                            section_start=hit["section_start"],
                        ),
                        float(hit.score or 0.0),
                    )
                    for hit in searcher.search(parsed, limit=limit)
                ]
