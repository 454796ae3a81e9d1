"""The scenario generator's own correctness: a slice of seeds across languages, fault kinds and
positions builds incidents that are consistent with themselves (not how anyone investigates).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.generator import generate, make_plan
from tests.test_scenarios_fixtures import (
    EVENT_KEYS,
    FRAME_KEYS,
    ISSUE_KEYS,
    SCENARIO_KEYS,
    exception_values,
    frames,
    parse_time,
)


def _slice(size: int = 12) -> list[int]:
    """Seeds that together cover every language, fault kind and position, and the rare shapes."""
    wanted = set()
    chosen: list[int] = []
    for seed in range(400):
        plan, _ = make_plan(seed)
        traits = {("lang", plan.lang), ("kind", plan.kind), ("position", plan.position)}
        traits |= {("entry", plan.entry), ("truncated", plan.truncated), ("chained", plan.chained)}
        if traits - wanted:
            chosen.append(seed)
            wanted |= traits
        if len(chosen) == size:
            break
    return chosen


def _seeds() -> list[int]:
    """GENERATOR_SEEDS=0-199 checks a whole range instead of the slice (slow; by hand)."""
    wanted = os.environ.get("GENERATOR_SEEDS")
    if not wanted:
        return _slice()
    first, _, last = wanted.partition("-")
    return list(range(int(first), int(last or first) + 1))


SEEDS = _seeds()


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout


class Incident:
    def __init__(self, out: Path, clone: Path) -> None:
        self.out, self.clone = out, clone
        self.scenario = self.load("scenario.json")
        self.expected = self.load("expected.json")
        self.meta = self.load("generated.json")
        self.issues = self.load("sentry/issues.json")

    def load(self, name: str):
        return json.loads((self.out / name).read_text(encoding="utf-8"))

    def events(self, issue_id: str) -> list[dict]:
        return self.load(f"sentry/events/{issue_id}.json")

    def release(self, event: dict) -> str:
        version = event["release"]["version"]
        assert version.startswith(self.scenario["release_prefix"]), version
        return version[len(self.scenario["release_prefix"]) :]

    def lines(self, sha: str, path: str) -> list[str]:
        return git(self.clone, "show", f"{sha}:{path}").split("\n")

    def files(self, sha: str) -> list[str]:
        return git(self.clone, "ls-tree", "-r", "--name-only", sha).splitlines()

    def resolve(self, sha: str, frame: dict) -> list[str]:
        """Repository files a frame names: its path suffix, else (JVM) its package + file."""
        names = {
            (frame.get(k) or "").replace("app:///", "").lstrip("./")
            for k in ("filename", "absPath")
        }
        names.discard("")
        files = self.files(sha)
        hits = [
            f
            for f in files
            if any(n == f or n.endswith("/" + f) or f.endswith("/" + n) for n in names)
        ]
        if len(hits) > 1 and frame.get("module"):
            package = frame["module"].rsplit(".", 1)[0].replace(".", "/")
            hits = [f for f in hits if package in f]
        return hits


@pytest.fixture(scope="module", params=SEEDS, ids=lambda s: f"seed{s}")
def incident(request, tmp_path_factory) -> Incident:
    base = tmp_path_factory.mktemp(f"gen{request.param}")
    out = generate(request.param, base / "incident")
    clone = base / "clone"
    subprocess.run(["git", "clone", "-q", str(out / "repo.bundle"), str(clone)], check=True)
    return Incident(out, clone)


def test_the_slice_covers_every_language_kind_and_position() -> None:
    plans = [make_plan(s)[0] for s in _slice()]
    assert {p.lang for p in plans} == {"java", "kt", "py", "js", "ts", "go", "rb", "php"}
    assert {p.position for p in plans} == {
        "crash",
        "above",
        "caller",
        "callee",
        "producer",
        "config",
    }
    assert any(p.truncated for p in plans) and any(p.chained for p in plans)


def test_layout_scenario_and_sentry_shapes(incident: Incident) -> None:
    s = incident.scenario
    assert set(s) >= SCENARIO_KEYS
    assert s["language"] in {"en", "es"} and s["question"].strip()
    assert parse_time(s["since"]) < parse_time(s["now"]) <= parse_time(s["until"])
    now = parse_time(s["now"])
    commits = set(git(incident.clone, "rev-list", "main").split())
    ids = [i["id"] for i in incident.issues]
    assert len(set(ids)) == len(ids) >= 3 and incident.expected["issue_id"] in ids
    for issue in incident.issues:
        assert set(issue) >= ISSUE_KEYS
        assert parse_time(issue["firstSeen"]) <= parse_time(issue["lastSeen"]) <= now
        events = incident.events(issue["id"])
        dates = [parse_time(e["dateCreated"]) for e in events]
        assert events and dates == sorted(dates, reverse=True)
        assert parse_time(issue["firstSeen"]) <= dates[-1] and dates[0] <= parse_time(
            issue["lastSeen"]
        )
        for event in events:
            assert set(event) >= EVENT_KEYS and event["groupID"] == issue["id"]
            assert incident.release(event) in commits
            for value in exception_values(event):
                assert value["type"] and value["value"]
                for frame in value["stacktrace"]["frames"]:
                    assert set(frame) >= FRAME_KEYS


def test_in_app_frames_match_the_code_at_their_release(incident: Incident) -> None:
    checked = 0
    for issue in incident.issues:
        for event in incident.events(issue["id"]):
            sha = incident.release(event)
            for frame in frames(event):
                if not frame["inApp"]:
                    assert not frame["context"]
                    continue
                hits = incident.resolve(sha, frame)
                assert len(hits) == 1, (frame["filename"], hits)
                lines = incident.lines(sha, hits[0])
                assert dict(frame["context"])[frame["lineNo"]].strip()
                for number, text in frame["context"]:
                    assert lines[number - 1] == text, (sha[:7], hits[0], number)
                checked += 1
    assert checked


def test_the_ground_truth_holds_in_the_repository(incident: Incident) -> None:
    exp, meta = incident.expected, incident.meta
    latest = incident.events(exp["issue_id"])[0]
    release = incident.release(latest)
    assert release == meta["running_release"]
    for key in ("fault", "crash"):
        start, end = exp[key]["lines"]
        lines = incident.lines(release, exp[key]["file"])
        assert all(lines[n - 1].strip() for n in range(start, end + 1))
    cause = exception_values(latest)[0]  # the cause first, the exception finally raised last
    crash = [f for f in cause["stacktrace"]["frames"] if f["inApp"]][-1]
    assert incident.resolve(release, crash) == [exp["crash"]["file"]]
    assert crash["lineNo"] == exp["crash"]["lines"][0]
    if meta["position"] == "crash" and not meta["suppressed"]:
        assert exp["fault"] == exp["crash"]
    else:
        assert exp["fault"] != exp["crash"]
    start, _ = exp["fault"]["lines"]
    blame = git(
        incident.clone,
        "blame",
        "-l",
        "-s",
        f"-L{start},{start}",
        release,
        "--",
        exp["fault"]["file"],
    )
    blamed = blame.split()[0].lstrip("^")  # "^" marks a boundary (root) commit
    root = git(incident.clone, "rev-list", "--max-parents=0", "main").split()
    if meta["truncated"]:  # history not available: the squashed import wrote the faulty line
        assert exp["commit"] is None and any(r.startswith(blamed) for r in root)
        return
    assert blamed == exp["commit"]
    git(incident.clone, "merge-base", "--is-ancestor", exp["commit"], release)
    changed = git(incident.clone, "show", "--format=", "--name-only", exp["commit"]).split()
    assert exp["fault"]["file"] in changed
    # The faulty change really is on the fault line: its parent had another text there.
    before = git(incident.clone, "show", f"{exp['commit']}~1:{exp['fault']['file']}")
    assert incident.lines(release, exp["fault"]["file"])[start - 1] not in before.split("\n")
    doc = exp["contract_doc"]
    assert doc is None or doc in incident.files(release)


def test_noise_is_busier_older_and_of_other_releases(incident: Incident) -> None:
    relevant = next(i for i in incident.issues if i["id"] == incident.expected["issue_id"])
    assert any(int(i["count"]) > int(relevant["count"]) for i in incident.issues)
    since = parse_time(incident.scenario["since"])
    assert any(parse_time(i["firstSeen"]) < since for i in incident.issues)
    releases = {e["release"]["version"] for i in incident.issues for e in incident.events(i["id"])}
    assert len(releases) >= 2


def test_a_seed_always_builds_the_same_incident(tmp_path: Path) -> None:
    seed = SEEDS[0]
    a, b = generate(seed, tmp_path / "a"), generate(seed, tmp_path / "b")
    for name in ("expected.json", "scenario.json", "sentry/issues.json"):
        assert (a / name).read_text() == (b / name).read_text()
