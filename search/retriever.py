"""`agent.ports.Retriever` over the docs index: at most 5 passages, with provenance and score."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from pathlib import Path

from agent.ports import Passage
from search.chunks import Chunk, chunk_docs
from search.corpus import load_docs, resolve_revision
from search.index import DocsIndex

MAX_PASSAGES = 5
# Windows of one section overlap, so fetch extra hits to still have `limit` sections after
# deduplication.
_OVERFETCH = 4


class DocsRetriever:
    """Searches the chunked docs of one revision. Implements `agent.ports.Retriever`."""

    def __init__(
        self, chunks: Iterable[Chunk], *, language: str = "en", directory: Path | None = None
    ) -> None:
        self._index = DocsIndex.build(chunks, language=language, directory=directory)

    @classmethod
    def from_index(cls, index: DocsIndex) -> DocsRetriever:
        """A retriever over an index built before (e.g. `DocsIndex.open(directory)`)."""
        retriever = cls.__new__(cls)
        retriever._index = index
        return retriever

    @classmethod
    async def from_repo(
        cls,
        repo_dir: Path,
        revision: str,
        language: str = "en",
        *,
        directory: Path | None = None,
    ) -> DocsRetriever:
        """Index `docs/` of `repo_dir` at `revision`; passages cite the full commit SHA.

        Raises `search.corpus.CorpusError` when the repository or the revision is unusable.
        """
        sha = await resolve_revision(repo_dir, revision)
        docs = await load_docs(repo_dir, sha)
        chunks = chunk_docs(docs, sha)
        return await asyncio.to_thread(lambda: cls(chunks, language=language, directory=directory))

    @property
    def index(self) -> DocsIndex:
        return self._index

    async def search(self, query: str, limit: int = 5) -> list[Passage]:
        limit = min(limit, MAX_PASSAGES)
        if limit < 1 or not query.strip():
            return []
        hits = await asyncio.to_thread(self._index.search, query, limit * _OVERFETCH)
        passages: list[Passage] = []
        seen: set[tuple[str, int]] = set()
        for hit in hits:  # best first, so the first window of a section is its best
            chunk = hit.chunk
            key = (chunk.path, chunk.section_start)
            if key in seen:
                continue
            seen.add(key)
            passages.append(
                Passage(
                    path=chunk.path,
                    heading=chunk.heading,
                    line_start=chunk.line_start,
                    line_end=chunk.line_end,
                    revision=chunk.revision,
                    text=chunk.text,
                    score=hit.score,
                )
            )
            if len(passages) == limit:
                break
        return passages
