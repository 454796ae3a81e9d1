"""The holdout incidents (tests/fixtures/holdout) build, and their ground truth holds.

They are measured by benchmarks/holdout.py and kept apart from tuning; these checks only say
that each recipe is a well-formed incident whose expected.json is true of its repository.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from recorded.build import build_scenario
from tests.test_scenarios_fixtures import Built, exception_values, git, parse_time, resolve

ROOT = Path(__file__).resolve().parents[1]
HOLDOUT = ROOT / "tests" / "fixtures" / "holdout"
RECIPES = sorted(p for p in HOLDOUT.iterdir() if (p / "recipe.json").is_file())


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


GO_PANIC = ("gopanic", "sigpanic", "panicmem", "goPanic")


def crash_frame(event: dict) -> dict:
    """The innermost in-app frame of the first exception with any (Sentry lists the cause first).

    A recovered Go panic's stack goes on past the crash into the runtime and the recover
    handler; the crash is the frame before the runtime's panic frames.
    """
    for value in exception_values(event):
        frames = (value.get("stacktrace") or {}).get("frames") or []
        panic = [
            i
            for i, f in enumerate(frames)
            if f.get("module") == "runtime" and f["function"].startswith(GO_PANIC)
        ]
        in_app = [f for f in frames[: panic[0] if panic else None] if f["inApp"]]
        if in_app:
            return in_app[-1]
    raise AssertionError("the event has no in-app frame")


def release_of(b: Built) -> str:
    return b.release_sha(b.events(b.expected["issue_id"])[0])


def test_there_are_ten_holdout_incidents() -> None:
    assert len(RECIPES) >= 10


def test_expected_lines_exist_at_the_running_release(built: Built) -> None:
    exp, release = built.expected, release_of(built)
    assert set(exp) == {"fault", "crash", "commit", "contract_doc", "issue_id"}
    for key in ("fault", "crash"):
        start, end = exp[key]["lines"]
        assert exp[key]["file"] in built.files(release), (key, exp[key]["file"])
        lines = built.lines(release, exp[key]["file"])
        assert 1 <= start <= end <= len(lines), (key, exp[key])
        assert all(lines[n - 1].strip() for n in range(start, end + 1)), (key, "blank line")
    doc = exp["contract_doc"]
    assert doc is None or (doc.startswith("docs/") and doc in built.files(release))


def test_the_commit_introduced_the_fault_lines(built: Built) -> None:
    exp, release = built.expected, release_of(built)
    start, end = exp["fault"]["lines"]
    blame = git(
        built.clone,
        "blame",
        "--root",
        "-l",
        "-s",
        f"-L{start},{end}",
        release,
        "--",
        exp["fault"]["file"],
    )
    blamed = {line.split()[0] for line in blame.splitlines()}
    history = git(built.clone, "rev-list", release).split()
    if exp["commit"] is None:
        # A cut history: the fault came with the first (squashed) commit, which no one can name.
        assert blamed == {history[-1]}, "with no commit, the fault lines must date from the root"
    else:
        assert exp["commit"] in history, "the commit is not in the running release's history"
        assert exp["commit"] != history[-1], "a fault from the root commit has no commit to name"
        assert exp["commit"] in blamed, "the fault lines were not written by the commit"


def test_the_issue_and_its_crash_frame(built: Built) -> None:
    exp = built.expected
    assert exp["issue_id"] in {i["id"] for i in built.issues}
    release = release_of(built)
    frame = crash_frame(built.events(exp["issue_id"])[0])
    assert resolve(built, release, frame) == [exp["crash"]["file"]], frame["filename"]
    first, last = exp["crash"]["lines"]
    assert first <= frame["lineNo"] <= last, (frame["lineNo"], exp["crash"])


def test_every_in_app_frame_matches_the_code_at_its_release(built: Built) -> None:
    for issue in built.issues:
        events = built.events(issue["id"])
        assert events and all(e["groupID"] == issue["id"] for e in events)
        dates = [parse_time(e["dateCreated"]) for e in events]
        assert dates == sorted(dates, reverse=True), "events must be newest first"
        assert dates[0] <= parse_time(issue["lastSeen"]) <= parse_time(built.scenario["now"])
        for event in events:
            sha = built.release_sha(event)
            for value in exception_values(event):
                for frame in (value.get("stacktrace") or {}).get("frames") or []:
                    if not frame["inApp"] or not frame["context"]:
                        continue
                    hits = resolve(built, sha, frame)
                    assert len(hits) == 1, (frame["filename"], hits)
                    lines = built.lines(sha, hits[0])
                    assert dict(frame["context"])[frame["lineNo"]] == lines[frame["lineNo"] - 1]
                    for number, text in frame["context"]:
                        assert lines[number - 1] == text, (sha[:7], hits[0], number, text)


def test_the_noise_is_there(built: Built) -> None:
    """A busier issue, an older one, a warning, and events of more than one release."""
    relevant = next(i for i in built.issues if i["id"] == built.expected["issue_id"])
    others = [i for i in built.issues if i is not relevant]
    since = parse_time(built.scenario["since"])
    assert any(int(i["count"]) > int(relevant["count"]) for i in others)
    assert any(parse_time(i["firstSeen"]) < since for i in others)
    assert any(i["level"] == "warning" for i in others)
    releases = {e["release"]["version"] for i in built.issues for e in built.events(i["id"])}
    assert len(releases) >= 2
    assert 5 <= len(git(built.clone, "rev-list", "main").split()) <= 8
