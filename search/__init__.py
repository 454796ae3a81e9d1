"""The documentation corpus of the investigated application: export, chunking, index, retrieval.

`search` implements `agent.ports.Retriever`; it imports only from `agent.ports`/`agent.domain`.
"""

from search.chunks import Chunk, chunk_docs, split_markdown
from search.corpus import CorpusError, DocFile, load_docs, resolve_revision
from search.index import DocsIndex
from search.retriever import DocsRetriever

__all__ = [
    "Chunk",
    "CorpusError",
    "DocFile",
    "DocsIndex",
    "DocsRetriever",
    "chunk_docs",
    "load_docs",
    "resolve_revision",
    "split_markdown",
]
