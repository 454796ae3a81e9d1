"""A busy repository: after the change that broke the stack's code, many commits elsewhere
landed before the release, so the window's newest commits are all about other files. The
offline investigator reads the stack's own history as deep and still finds the change."""

from __future__ import annotations

import asyncio
import json
import re
import shutil
from datetime import datetime
from pathlib import Path

import pytest

from recorded.build import build_scenario
from tests.bot.offline import investigate

RECIPE = Path(__file__).resolve().parents[1] / "fixtures" / "scenarios" / "python-flask-default-arg"
SHA = re.compile(r"\{\{sha(7?):(\d+)\}\}")


def busier(recipe: Path, out: Path, after: int, count: int) -> Path:
    """`recipe` with `count` commits to files off the stack inserted after commit `after`
    (dated between it and the next one), the templates renumbered to match."""
    shutil.copytree(recipe, out)
    book = json.loads((out / "recipe.json").read_text())
    commits = book["commits"]
    start = datetime.fromisoformat(commits[after]["date"])
    end = datetime.fromisoformat(commits[after + 1]["date"])
    step = (end - start) / (count + 1)
    extra = []
    for n in range(count):
        name = f"catalog/reports/report_{n % 5}.py"
        body = f'"""Report {n % 5}."""\n\n' + "".join(
            f"def total_{i}(rows):\n    return sum(r['n{i}'] for r in rows)\n\n"
            for i in range(n // 5 + 1)
        )
        version = f"busy{n}/{name}"
        (out / "files" / version).parent.mkdir(parents=True, exist_ok=True)
        (out / "files" / version).write_text(body)
        when = start + step * (n + 1)
        extra.append(
            {
                "message": f"reports: total {n // 5} for report {n % 5}",
                "author": "Ana Ruiz",
                "email": "ana.ruiz@example.com",
                "date": when.isoformat(),
                "files": {name: version},
            }
        )
    book["commits"] = [*commits[: after + 1], *extra, *commits[after + 1 :]]
    (out / "recipe.json").write_text(json.dumps(book, indent=2))

    def renumber(m: re.Match[str]) -> str:
        n = int(m.group(2))
        return f"{{{{sha{m.group(1)}:{n + count if n > after else n}}}}}"

    for path in [out / "scenario.json", out / "expected.json", *(out / "sentry").rglob("*.json")]:
        path.write_text(SHA.sub(renumber, path.read_text()))
    return out


@pytest.mark.parametrize("count", [0, 30])
def test_the_fault_is_found_under_many_newer_commits_elsewhere(tmp_path, count):
    expected = json.loads((RECIPE / "expected.json").read_text())
    fault_commit = int(SHA.search(expected["commit"]).group(2))
    recipe = busier(RECIPE, tmp_path / "recipe", fault_commit, count)
    folder = build_scenario(recipe, tmp_path / "scenario")
    doc = asyncio.run(investigate(folder))
    truth = json.loads((folder / "expected.json").read_text())
    suspect = doc["diagnosis"]["suspect"]
    first, last = truth["fault"]["lines"]
    assert (suspect["path"], suspect["commit"]) == (truth["fault"]["file"], truth["commit"])
    assert first - 2 <= suspect["line_start"] <= last + 2
    assert doc["stats"]["tool_calls"] <= 9
    reads = [ev for ev in doc["evidence"] if ev["title"].startswith("changes")]
    # Only a cut window is read again, for the stack's files.
    assert len(reads) == (2 if count else 1), [ev["title"] for ev in reads]
    cited = {e for f in doc["diagnosis"]["facts"] for e in f["evidence"]}
    assert reads[-1]["id"] in cited
