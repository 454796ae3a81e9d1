"""The docs of a repository at a revision: configurable paths, the README, symlinks that
stay inside the repository, one index per revision kept on disk."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from search.repo import RepoDocs, load_paths
from tests.gitrepo import git


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    git(tmp_path, "init", "-q", "-b", "main", str(work))
    (work / "docs").mkdir()
    (work / "handbook" / "ops").mkdir(parents=True)
    (work / "README.md").write_text("# Orders\n\nThe orders service stores customer orders.\n")
    (work / "docs" / "api.md").write_text("# API\n\nPOST /orders needs a customerReference.\n")
    (work / "handbook" / "runbook.md").write_text("# Runbook\n\nRestart the reconciler first.\n")
    (work / "handbook" / "ops" / "alerts.md").write_text("# Alerts\n\nPage on saturation.\n")
    (work / "notes.txt").write_text("not markdown\n")
    os.symlink("../handbook/runbook.md", work / "docs" / "runbook.md")  # a file inside
    os.symlink("../handbook/ops", work / "docs" / "ops")  # a folder inside
    os.symlink("/etc/passwd", work / "docs" / "outside.md")  # outside: never read
    os.symlink("../../secret.md", work / "docs" / "escape.md")
    os.symlink("loop.md", work / "docs" / "loop.md")
    git(work, "add", "-A")
    git(work, "commit", "-q", "-m", "docs")
    return work


async def test_docs_and_the_readme_follow_symlinks_inside_the_repository(repo: Path) -> None:
    docs = await load_paths(repo, "HEAD")
    assert [d.path for d in docs] == [
        "README.md",
        "docs/api.md",
        "handbook/ops/alerts.md",
        "handbook/runbook.md",
    ]
    only_docs = await load_paths(repo, "HEAD", ["docs/"])
    assert "README.md" not in [d.path for d in only_docs]
    handbook = await load_paths(repo, "HEAD", ["handbook"])
    assert [d.path for d in handbook] == ["handbook/ops/alerts.md", "handbook/runbook.md"]


async def test_only_the_paths_asked_for_and_their_links_are_listed(repo: Path, monkeypatch) -> None:
    # A large repository's tree is not listed: what is read is bounded by the docs paths.
    import search.repo

    listed: list[tuple[str, ...]] = []
    real = search.repo._git

    async def spy(repo_dir, *args, **kw):
        if args and args[0] == "ls-tree":
            listed.append(args[args.index("--") + 1 :] if "--" in args else ("<all>",))
        return await real(repo_dir, *args, **kw)

    monkeypatch.setattr(search.repo, "_git", spy)
    docs = await load_paths(repo, "HEAD")
    assert "handbook/runbook.md" in [d.path for d in docs]
    assert listed[0] == (":(literal)docs", ":(literal)README.md")
    assert ("<all>",) not in listed  # the links' targets were listed on their own
    assert any(":(literal)handbook/runbook.md" in call for call in listed[1:])


async def test_one_index_per_revision_is_kept_on_disk_and_reopened(
    repo: Path, tmp_path: Path
) -> None:
    index_dir = tmp_path / "indexes"
    first = RepoDocs(repo, index_dir=index_dir)
    hits = await first.search("reconciler restart")
    assert hits and hits[0].path == "handbook/runbook.md"
    head = git(repo, "rev-parse", "HEAD")
    assert hits[0].revision == head and (index_dir / head).is_dir()
    await first.search("customerReference")
    assert first.builds == 1  # once per revision

    (repo / "docs" / "api.md").write_text("# API\n\nPOST /orders needs a tenantId now.\n")
    git(repo, "commit", "-qam", "tenant")
    assert [p.path for p in await first.search("tenantId")] == ["docs/api.md"]
    assert first.builds == 2  # HEAD moved: its revision gets its own index
    old = await first.search("customerReference", revision=head)
    assert old and old[0].revision == head

    again = RepoDocs(repo, index_dir=index_dir)  # a restart
    assert (await again.search("tenantId"))[0].path == "docs/api.md"
    assert again.builds == 0
