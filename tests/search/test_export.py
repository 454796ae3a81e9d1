"""The exported docs corpus: docs/ of a commit with a manifest, checked and indexed at start."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from search.corpus import CorpusError
from search.export import INDEX_DIR, MANIFEST, STAMP, Manifest, export_corpus, open_corpus
from tests.gitrepo import git

PNG = b"\x89PNG\r\n\x1a\n\x00\x00binary\xff"
V1 = "# Componentes\n\n## CustomerReference\n\nUna referencia ausente se guarda vacía.\n"
V2 = "# Componentes\n\n## CustomerReference\n\nUna referencia ausente es un error 400.\n"


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, str]:
    """docs at two commits, and a work tree that differs from both."""
    work = tmp_path_factory.mktemp("export") / "app"
    work.mkdir()
    git(work, "init", "-q", "-b", "main")
    (work / "docs" / "sub").mkdir(parents=True)
    (work / "docs" / "components.md").write_text(V1, encoding="utf-8")
    (work / "docs" / "sub" / "runbook.md").write_text("# Runbook\n\nReinicia `orders`.\n")
    (work / "docs" / "diagram.png").write_bytes(PNG)
    (work / "README.md").write_text("# App\n")
    os.symlink("components.md", work / "docs" / "link.md")
    git(work, "add", "-A")
    git(work, "commit", "-q", "-m", "v1")
    first = git(work, "rev-parse", "HEAD")
    (work / "docs" / "components.md").write_text(V2, encoding="utf-8")
    git(work, "commit", "-q", "-am", "v2")
    second = git(work, "rev-parse", "HEAD")
    # Uncommitted and untracked changes: an export never sees them.
    (work / "docs" / "components.md").write_text("# Borrador sin commit\n", encoding="utf-8")
    (work / "docs" / "untracked.md").write_text("# No está en git\n", encoding="utf-8")
    return work, first, second


async def test_export_copies_the_commit_not_the_work_tree(repo, tmp_path: Path) -> None:
    work, first, _ = repo
    out = tmp_path / "corpus"
    manifest = await export_corpus(work, first[:7], out)
    assert manifest.revision == first  # the full SHA, whatever was asked
    assert set(manifest.files) == {"docs/components.md", "docs/sub/runbook.md", "docs/diagram.png"}
    assert (out / "docs" / "components.md").read_text(encoding="utf-8") == V1
    assert (out / "docs" / "diagram.png").read_bytes() == PNG
    assert not (out / "docs" / "untracked.md").exists() and not (out / "README.md").exists()
    assert not (out / "docs" / "link.md").exists()  # symlinks are not copied
    raw = json.loads((out / MANIFEST).read_text(encoding="utf-8"))
    assert raw["revision"] == first
    for rel, entry in raw["files"].items():
        data = (out / rel).read_bytes()
        assert entry == {"sha256": hashlib.sha256(data).hexdigest(), "size": len(data)}
    assert Manifest.load(out) == manifest
    assert not [p for p in out.iterdir() if p.name.startswith(".export-")]


async def test_index_is_built_once_reused_and_rebuilt_for_a_new_export(repo, tmp_path) -> None:
    work, first, second = repo
    out = tmp_path / "corpus"
    await export_corpus(work, first, out)
    opened = await open_corpus(out, "es")
    assert opened.rebuilt and opened.revision == first
    (hit,) = await opened.search("referencia ausente", limit=1)
    assert (hit.path, hit.revision) == ("docs/components.md", first)
    assert "se guarda vacía" in hit.text

    again = await open_corpus(out, "es")
    assert not again.rebuilt  # same manifest: the index on disk is used as it is
    (hit,) = await again.search("referencia ausente", limit=1)
    assert hit.revision == first

    await export_corpus(work, second, out)
    newer = await open_corpus(out, "es")
    assert newer.rebuilt and newer.revision == second
    (hit,) = await newer.search("referencia ausente", limit=1)
    assert hit.revision == second and "error 400" in hit.text

    # Another language stems differently: that index is rebuilt too.
    assert (await open_corpus(out, "en")).rebuilt


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        ("edit", "docs/components.md was changed on disk"),
        ("add", "docs/extra.md is not in the manifest"),
        ("remove", "docs/sub/runbook.md is missing"),
    ],
)
async def test_files_that_differ_from_the_manifest_are_an_error(
    repo, tmp_path: Path, damage: str, message: str
) -> None:
    work, first, _ = repo
    out = tmp_path / "corpus"
    await export_corpus(work, first, out)
    await open_corpus(out, "es")
    stamp = (out / INDEX_DIR / STAMP).read_bytes()
    if damage == "edit":
        (out / "docs" / "components.md").write_text(V2, encoding="utf-8")
    elif damage == "add":
        (out / "docs" / "extra.md").write_text("# Extra\n", encoding="utf-8")
    else:
        (out / "docs" / "sub" / "runbook.md").unlink()
    with pytest.raises(CorpusError, match=message) as caught:
        await open_corpus(out, "es")
    assert "export-corpus" in str(caught.value)  # says how to fix it
    assert (out / INDEX_DIR / STAMP).read_bytes() == stamp  # no silent reindex


async def test_bad_input_is_a_clear_error(repo, tmp_path: Path) -> None:
    work, first, _ = repo
    with pytest.raises(CorpusError, match="unknown revision 'nope'"):
        await export_corpus(work, "nope", tmp_path / "a")
    with pytest.raises(CorpusError, match="not a git repository"):
        await export_corpus(tmp_path, "HEAD", tmp_path / "b")
    with pytest.raises(CorpusError, match="no files under missing/"):
        await export_corpus(work, first, tmp_path / "c", docs_dir="missing")
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("mine")
    with pytest.raises(CorpusError, match="holds no earlier export"):
        await export_corpus(work, first, foreign)
    assert [p.name for p in foreign.iterdir()] == ["notes.txt"]
    with pytest.raises(CorpusError, match=r"no manifest\.json"):
        await open_corpus(foreign)
    entry = {"sha256": "0" * 64, "size": 1}
    manifest = {"format": 1, "revision": first, "files": {"docs/../../etc/passwd": entry}}
    (foreign / MANIFEST).write_text(json.dumps(manifest))
    with pytest.raises(CorpusError, match="refusing the path"):
        await open_corpus(foreign)
    (foreign / MANIFEST).write_text('{"format": 1, "files": {}}')
    with pytest.raises(CorpusError, match="is not a docs manifest"):
        await open_corpus(foreign)
