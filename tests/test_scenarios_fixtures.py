"""Every scenario recipe (the shipped demo and the test fixtures) builds into a valid scenario.

The checks are about the fixtures' own consistency (layout, Sentry shapes, frames against the
code at the release, expected.json against the repository), not about how anyone investigates.
"""

from __future__ import annotations

import json
import re
import subprocess
from datetime import datetime
from functools import cache
from pathlib import Path

import pytest

from recorded.build import build_scenario

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = sorted(
    p
    for p in (ROOT / "tests" / "fixtures" / "scenarios").iterdir()
    if (p / "recipe.json").is_file()
)
RECIPES = [ROOT / "bot" / "demo" / "orders", *FIXTURES]
SCENARIO_KEYS = {
    "project_key",
    "question",
    "language",
    "repository",
    "sentry",
    "release_prefix",
    "since",
    "until",
    "now",
}
ISSUE_KEYS = {"id", "shortId", "title", "culprit", "level", "count", "firstSeen", "lastSeen"}
ISSUE_KEYS |= {"permalink", "metadata"}
EVENT_KEYS = {"eventID", "groupID", "title", "message", "dateCreated", "platform", "release"}
EVENT_KEYS |= {"tags", "entries"}
FRAME_KEYS = {"filename", "absPath", "module", "function", "lineNo", "inApp", "context"}


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout


class Built:
    def __init__(self, recipe: Path, out: Path, clone: Path) -> None:
        self.recipe, self.out, self.clone = recipe, out, clone
        self.scenario = self.load("scenario.json")
        self.expected = self.load("expected.json")
        self.issues = self.load("sentry/issues.json")

    def load(self, name: str):
        return json.loads((self.out / name).read_text(encoding="utf-8"))

    def events(self, issue_id: str) -> list[dict]:
        return self.load(f"sentry/events/{issue_id}.json")

    def files(self, sha: str) -> list[str]:
        return _ls_tree(self.clone, sha)

    def lines(self, sha: str, path: str) -> list[str]:
        return _show(self.clone, sha, path).split("\n")

    def release_sha(self, event: dict) -> str:
        version = event["release"]["version"]
        prefix = self.scenario["release_prefix"]
        assert version.startswith(prefix), version
        return version[len(prefix) :]


@cache
def _ls_tree(clone: Path, sha: str) -> list[str]:
    return git(clone, "ls-tree", "-r", "--name-only", sha).splitlines()


@cache
def _show(clone: Path, sha: str, path: str) -> str:
    return git(clone, "show", f"{sha}:{path}")


@pytest.fixture(scope="module", params=RECIPES, ids=lambda p: p.name)
def built(request, tmp_path_factory) -> Built:
    recipe = request.param
    base = tmp_path_factory.mktemp(recipe.name)
    out = build_scenario(recipe, base / "scenario")
    subprocess.run(
        ["git", "clone", "-q", str(out / "repo.bundle"), str(base / "clone"), "-b", "main"],
        check=True,
        capture_output=True,
    )
    return Built(recipe, out, base / "clone")


def exception_values(event: dict) -> list[dict]:
    return [v for e in event["entries"] if e["type"] == "exception" for v in e["data"]["values"]]


def frames(event: dict) -> list[dict]:
    return [
        f
        for v in exception_values(event)
        for f in ((v.get("stacktrace") or {}).get("frames") or [])
    ]


def resolve(b: Built, sha: str, frame: dict) -> list[str]:
    """Repository files a frame may refer to (by path suffix, then by module for bare names)."""
    names = {
        re.sub(r"^[a-z]+://", "", frame.get(k) or "").lstrip("/") for k in ("filename", "absPath")
    }
    names.discard("")
    hits = [f for f in b.files(sha) if any(n == f or n.endswith("/" + f) for n in names)]
    hits = hits or [f for f in b.files(sha) if any(f.endswith("/" + n) for n in names)]
    if len(hits) > 1 and frame.get("module"):
        package = frame["module"].rsplit(".", 1)[0].replace(".", "/")
        hits = [f for f in hits if package in f]
    return hits


def parse_time(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


def test_layout_and_scenario_json(built: Built) -> None:
    for name in ("scenario.json", "expected.json", "repo.bundle", "sentry/issues.json"):
        assert (built.out / name).is_file(), name
    for path in built.out.rglob("*.json"):
        assert "{{" not in path.read_text(encoding="utf-8"), f"unrendered template in {path}"
    s = built.scenario
    assert set(s) >= SCENARIO_KEYS, SCENARIO_KEYS - set(s)
    assert set(s["sentry"]) == {"organization", "project"}
    assert s["language"] in {"en", "es"} and s["question"].strip()
    assert parse_time(s["since"]) < parse_time(s["now"]) <= parse_time(s["until"])
    assert git(built.clone, "rev-parse", "--abbrev-ref", "HEAD").strip() == "main"
    assert any(f.startswith("docs/") and f.endswith(".md") for f in built.files("main"))


def test_issues_and_events(built: Built) -> None:
    issues = built.issues
    assert isinstance(issues, list) and issues
    assert len({i["id"] for i in issues}) == len(issues)
    assert built.expected["issue_id"] in {i["id"] for i in issues}
    commits = set(git(built.clone, "rev-list", "main").split())
    for issue in issues:
        assert set(issue) >= ISSUE_KEYS, ISSUE_KEYS - set(issue)
        assert int(issue["count"]) >= 1
        assert parse_time(issue["firstSeen"]) <= parse_time(issue["lastSeen"])
        events = built.events(issue["id"])
        assert events, issue["id"]
        dates = [parse_time(e["dateCreated"]) for e in events]
        assert dates == sorted(dates, reverse=True), "events must be newest first"
        assert dates[0] <= parse_time(issue["lastSeen"])
        assert dates[-1] >= parse_time(issue["firstSeen"])
        for event in events:
            assert set(event) >= EVENT_KEYS, EVENT_KEYS - set(event)
            assert event["groupID"] == issue["id"]
            assert built.release_sha(event) in commits
            assert all(set(t) == {"key", "value"} for t in event["tags"])
            for value in exception_values(event):
                assert value["type"] and "value" in value
                for frame in (value.get("stacktrace") or {}).get("frames") or []:
                    assert set(frame) >= FRAME_KEYS, FRAME_KEYS - set(frame)


def test_in_app_frames_match_the_code_at_the_release(built: Built) -> None:
    checked = 0
    for issue in built.issues:
        for event in built.events(issue["id"]):
            sha = built.release_sha(event)
            for frame in frames(event):
                if not frame["inApp"]:
                    continue
                hits = resolve(built, sha, frame)
                if not frame["context"] and not hits:
                    continue  # generated code (e.g. Go "<autogenerated>"): nothing to compare
                assert len(hits) == 1, (frame["filename"], hits)
                lines = built.lines(sha, hits[0])
                assert 1 <= frame["lineNo"] <= len(lines), (hits[0], frame["lineNo"])
                context = dict(frame["context"])
                assert frame["lineNo"] in context, (hits[0], frame["lineNo"])
                for number, text in frame["context"]:
                    assert lines[number - 1] == text, (sha[:7], hits[0], number, text)
                checked += 1
    assert checked


def test_expected_matches_the_repository(built: Built) -> None:
    exp = built.expected
    assert set(exp) == {"fault", "crash", "commit", "contract_doc", "issue_id"}
    latest = built.events(exp["issue_id"])[0]
    release = built.release_sha(latest)
    for key in ("fault", "crash"):
        start, end = exp[key]["lines"]
        lines = built.lines(release, exp[key]["file"])
        assert 1 <= start <= end <= len(lines), (key, exp[key])
        assert all(lines[n - 1].strip() for n in range(start, end + 1)), (key, "blank line")
    crash_frames = [
        f
        for f in frames(latest)
        if f["inApp"]
        and resolve(built, release, f) == [exp["crash"]["file"]]
        and exp["crash"]["lines"][0] <= f["lineNo"] <= exp["crash"]["lines"][1]
    ]
    assert crash_frames, "the crash location must be an in-app frame of the issue's latest event"
    commit = exp["commit"]
    assert git(built.clone, "cat-file", "-t", commit).strip() == "commit"
    git(built.clone, "merge-base", "--is-ancestor", commit, release)
    changed = git(built.clone, "show", "--format=", "--name-only", commit).split()
    assert exp["fault"]["file"] in changed
    start, end = exp["fault"]["lines"]
    blame = git(
        built.clone, "blame", "-l", "-s", f"-L{start},{end}", release, "--", exp["fault"]["file"]
    )
    assert commit in {line.split()[0] for line in blame.splitlines()}, "fault lines not from commit"
    doc = exp["contract_doc"]
    assert doc is None or (doc.endswith(".md") and doc in built.files(release))


def test_nothing_happens_after_the_question_was_asked(built: Built) -> None:
    now = parse_time(built.scenario["now"])
    for issue in built.issues:
        assert parse_time(issue["lastSeen"]) <= now, issue["id"]
        assert all(parse_time(e["dateCreated"]) <= now for e in built.events(issue["id"]))


def test_fixtures_are_not_trivial(built: Built) -> None:
    """Noise to see through: a busier unrelated issue, an older one, an earlier release."""
    if built.recipe not in FIXTURES:
        pytest.skip("the shipped demo is the recorded incident as it was")
    relevant = next(i for i in built.issues if i["id"] == built.expected["issue_id"])
    assert len(built.issues) >= 3
    assert any(int(i["count"]) > int(relevant["count"]) for i in built.issues)
    since = parse_time(built.scenario["since"])
    assert any(parse_time(i["firstSeen"]) < since for i in built.issues)
    releases = {e["release"]["version"] for i in built.issues for e in built.events(i["id"])}
    assert len(releases) >= 2


def test_building_twice_gives_the_same_shas(built: Built, tmp_path: Path) -> None:
    again = build_scenario(built.recipe, tmp_path / "again")
    assert (again / "expected.json").read_text() == (built.out / "expected.json").read_text()
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(again / "repo.bundle"), str(clone)], check=True)
    assert git(clone, "rev-list", "main") == git(built.clone, "rev-list", "main")


def _recipe(tmp_path: Path, commits) -> Path:
    recipe = tmp_path / "recipe"
    (recipe / "files").mkdir(parents=True)
    (recipe / "sentry").mkdir()
    (recipe / "files" / "a.txt").write_text("a\n")
    (recipe / "recipe.json").write_text(json.dumps({"commits": commits}))
    (recipe / "scenario.json").write_text('{"release_prefix": "x@{{sha:0}}"}')
    (recipe / "expected.json").write_text('{"commit": "{{sha7:0}}"}')
    (recipe / "sentry" / "issues.json").write_text("[]")
    return recipe


COMMIT = {"message": "m", "author": "A", "email": "a@x", "date": "2026-01-01T00:00:00+01:00"}


def test_builder_renders_short_and_full_shas(tmp_path: Path) -> None:
    out = build_scenario(
        _recipe(tmp_path, [{**COMMIT, "files": {"a.txt": "a.txt"}}]), tmp_path / "o"
    )
    full = json.loads((out / "scenario.json").read_text())["release_prefix"][2:]
    assert re.fullmatch(r"[0-9a-f]{40}", full)
    assert json.loads((out / "expected.json").read_text())["commit"] == full[:7]


@pytest.mark.parametrize(
    "commits",
    [
        [],
        [{**COMMIT, "files": {"a.txt": "missing.txt"}}],
        [{**COMMIT, "date": "2026-01-01T00:00:00", "files": {"a.txt": "a.txt"}}],
        [{**COMMIT, "files": {"../a.txt": "a.txt"}}],
        [{**COMMIT, "files": {"a.txt": None}}],
        [{**COMMIT, "author": "", "files": {}}],
    ],
    ids=["no-commits", "missing-file", "naive-date", "escaping-path", "delete-absent", "no-author"],
)
def test_builder_rejects_malformed_recipes(tmp_path: Path, commits) -> None:
    with pytest.raises(ValueError):
        build_scenario(_recipe(tmp_path, commits), tmp_path / "o")


def test_builder_rejects_a_template_naming_a_missing_commit(tmp_path: Path) -> None:
    recipe = _recipe(tmp_path, [{**COMMIT, "files": {"a.txt": "a.txt"}}])
    (recipe / "expected.json").write_text('{"commit": "{{sha:3}}"}')
    with pytest.raises(ValueError, match="sha:3"):
        build_scenario(recipe, tmp_path / "o")
