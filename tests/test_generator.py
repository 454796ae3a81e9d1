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
from tests.generator.faults import POSITIONS
from tests.generator.langs import LANGS
from tests.generator.program import BINDING
from tests.test_scenarios_fixtures import (
    EVENT_KEYS,
    FRAME_KEYS,
    ISSUE_KEYS,
    SCENARIO_KEYS,
    exception_values,
    frames,
    parse_time,
)


def _slice(size: int = 20) -> list[int]:
    """Seeds that together cover every language, fault kind and position, and the rare shapes."""
    wanted = set()
    chosen: list[int] = []
    for seed in range(400):
        plan, _ = make_plan(seed)
        traits = {("lang", plan.lang), ("kind", plan.kind), ("position", plan.position)}
        traits |= {("entry", plan.entry), ("truncated", plan.truncated), ("chained", plan.chained)}
        traits |= {("recovered", plan.recovered), ("rewrite", plan.rewrite)}
        if plan.position in ("caller", "above", "binding"):  # with and without a rewrite
            traits.add((plan.position, plan.rewrite))
        if traits - wanted:
            chosen.append(seed)
            wanted |= traits
        if len(chosen) == size:
            break
    return chosen


def _seeds() -> list[int]:
    """GENERATOR_SEEDS=0-199 (or 3,8,20-40) checks those seeds instead of the slice (slow; by
    hand)."""
    wanted = os.environ.get("GENERATOR_SEEDS")
    if not wanted:
        return _slice()
    seeds: list[int] = []
    for part in wanted.split(","):
        first, _, last = part.strip().partition("-")
        seeds += range(int(first), int(last or first) + 1)
    return seeds


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
    assert {p.position for p in plans} == set(POSITIONS)
    assert any(p.truncated for p in plans) and any(p.chained for p in plans)
    assert any(p.recovered for p in plans) and any(p.rewrite for p in plans)


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
    stack = cause["stacktrace"]["frames"]
    if meta["recovered"]:  # the deferred handler's frame tops the runtime's panic frames
        stack = _before_recovery(incident, release, stack)
    crash = [f for f in stack if f["inApp"]][-1]
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


def _before_recovery(incident: Incident, release: str, stack: list[dict]) -> list[dict]:
    """The frames up to the panic: a recovered Go panic is reported from inside the deferred
    handler, whose in-app frame sits above the runtime's (gopanic last among them)."""
    top = stack[-1]
    assert top["inApp"] and not stack[-2]["inApp"] and stack[-2]["function"] == "gopanic"
    [path] = incident.resolve(release, top)
    assert "Recover(err)" in incident.lines(release, path)[top["lineNo"] - 1]
    first_runtime = next(i for i, f in enumerate(stack) if f["module"] == "runtime")
    assert all(not f["inApp"] for f in stack[first_runtime:-1])
    return stack[:first_runtime]


def _newest(incident: Incident, release: str, path: str) -> str:
    return git(incident.clone, "log", "-1", "--format=%H", release, "--", path).strip()


def _is_ancestor(incident: Incident, old: str, new: str) -> bool:
    done = subprocess.run(
        ["git", "-C", str(incident.clone), "merge-base", "--is-ancestor", old, new]
    )
    return done.returncode == 0


def test_the_new_shapes_hold(incident: Incident) -> None:
    """binding, schema and the rewrite decoy are what they claim to be, in the repository."""
    exp, meta = incident.expected, incident.meta
    release = meta["running_release"]
    fault_file, crash_file = exp["fault"]["file"], exp["crash"]["file"]
    fault_text = incident.lines(release, fault_file)[exp["fault"]["lines"][0] - 1]
    crash_no = exp["crash"]["lines"][0]
    latest = incident.events(exp["issue_id"])[0]
    on_stack = {p for f in frames(latest) if f["inApp"] for p in incident.resolve(release, f)}
    if meta["position"] == "binding":
        # The crash line's value is bound a few lines above it by a call into the fault's file.
        assert fault_file != crash_file and fault_file not in on_stack
        called = LANGS[meta["lang"]].fname(BINDING[meta["kind"]][1]) + "("
        fault_no = exp["fault"]["lines"][0]
        defs = [i + 1 for i, ln in enumerate(incident.lines(release, fault_file)) if called in ln]
        assert any(0 < fault_no - d <= 3 for d in defs), (called, defs, fault_no)
        users = [
            path
            for path in incident.files(release)
            if path != fault_file and any(called in ln for ln in incident.lines(release, path))
        ]
        assert len(users) == 1, users
        calc = [f for f in frames(latest) if f["inApp"] and incident.resolve(release, f) == users]
        if not meta["suppressed"]:  # (else only the re-raise's frames are recorded)
            [frame] = calc
            above = incident.lines(release, users[0])[frame["lineNo"] - 8 : frame["lineNo"] - 1]
            assert any(called in ln for ln in above)
        # A newer commit touched the crashing function between the binding and the crash: the
        # crashing code changed later than the fault.
        if exp["commit"]:
            newest = _newest(incident, release, users[0])
            assert newest != exp["commit"] and _is_ancestor(incident, exp["commit"], newest)
            bound = next(
                i + 1 for i, ln in enumerate(incident.lines(release, users[0])) if called in ln
            )
            diff = git(incident.clone, "diff", "-U0", exp["commit"], release, "--", users[0])
            added = [
                int(h.split("+")[1].split(",")[0].split()[0])
                for h in diff.splitlines()
                if h.startswith("@@")
            ]
            assert any(bound < n <= bound + 5 for n in added), (bound, added)
    if meta["position"] == "schema":
        # The fault is a serialized name in a type declaration, off the stack; the payload the
        # events carry still uses the old name, so the decoded field is null.
        assert fault_file not in on_stack and fault_file != crash_file
        assert "customerId" in fault_text and "customer_id" not in fault_text
        # The consumer reads the decoded field by its name inside the application (unless
        # the recorded crash is a re-raise that dropped its cause).
        above = incident.lines(release, crash_file)[max(0, crash_no - 9) : crash_no]
        read = any(name in ln for ln in above for name in ("customer_ref", "customerRef"))
        assert read or meta["suppressed"]
        data = [e["data"] for e in latest["entries"] if e["type"] == "request"]
        payload = data[0]["data"] if data else latest["context"].get("job", {}).get("args", [{}])[0]
        assert not payload or "customer_id" in payload
    if meta["recovered"]:  # hub.Recover reports at level fatal; Sentry's culprit is the top frame
        relevant = next(i for i in incident.issues if i["id"] == exp["issue_id"])
        assert relevant["level"] == "fatal"
        assert {"key": "level", "value": "fatal"} in latest["tags"]
    assert meta["rewrite"] == ("rewrite-of-crash-line" in meta["decoys"])
    if meta["rewrite"] and exp["commit"]:
        # Blame of the crash line names a newer commit than the fault: the rewrite.
        blame = git(
            incident.clone,
            "blame",
            "-l",
            "-s",
            f"-L{crash_no},{crash_no}",
            release,
            "--",
            crash_file,
        )
        blamed = blame.split()[0].lstrip("^")
        assert blamed != exp["commit"] and _is_ancestor(incident, exp["commit"], blamed)
        roles = {c["sha"]: c["role"] for c in meta["commits"]}
        assert roles[blamed] == "decoy"


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
