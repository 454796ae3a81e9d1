"""The in-RAM docs index keeps its scratch files to itself."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from search.chunks import chunk_docs
from search.corpus import DocFile
from search.index import DocsIndex

REV = "0" * 40


def test_a_ram_index_builds_in_a_scratch_folder_of_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # whoosh alone writes a RAM index's scratch files to <temp>/MAIN.tmp, shared by every
    # process building one, and the first to finish deletes the others' files.
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    shared = tmp_path / "MAIN.tmp"
    shared.mkdir()
    (shared / "another-build.ctmp").write_text("another process's scratch file")
    docs = [
        DocFile(f"docs/{i}.md", f"# Part {i}\n\nThe `limit_{i}` must be positive.\n")
        for i in range(3)
    ]
    index = DocsIndex.build(chunk_docs(docs, REV))
    assert [h.chunk.path for h in index.search("limit_1", 3)][:1] == ["docs/1.md"]
    assert [p.name for p in shared.iterdir()] == ["another-build.ctmp"]  # left alone
    assert [p.name for p in tmp_path.iterdir()] == ["MAIN.tmp"]  # nothing left behind
