"""`incident-bot export-corpus --repo PATH --rev REV --out DIR`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.cli import main
from tests.gitrepo import git
from tests.search.test_export import V1


def test_export_corpus_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    work = tmp_path / "app"
    (work / "docs").mkdir(parents=True)
    (work / "docs" / "components.md").write_text(V1, encoding="utf-8")

    git(work, "init", "-q", "-b", "main")
    git(work, "add", "-A")
    git(work, "commit", "-q", "-m", "docs")
    sha = git(work, "rev-parse", "HEAD")
    (work / "docs" / "components.md").write_text("# changed, not committed\n")

    out = tmp_path / "corpus"
    assert main(["export-corpus", "--repo", str(work), "--rev", "main", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert f"exported 1 file(s) of docs/ at {sha}" in printed
    assert json.loads((out / "manifest.json").read_text())["revision"] == sha
    assert (out / "docs" / "components.md").read_text(encoding="utf-8") == V1

    code = main(["export-corpus", "--repo", str(work), "--rev", "v9", "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("incident-bot: unknown revision 'v9'") and err.count("\n") == 1
