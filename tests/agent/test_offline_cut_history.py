"""A truncated history: the crash line dates from the root commit, so no diff explains it."""

from datetime import UTC, datetime

from agent.domain import Scope
from agent.models.offline import (
    BLAME,
    CHANGES,
    FIND_FILES,
    SENTRY_DETAILS,
    SENTRY_SEARCH,
    SHOW,
    OfflineInvestigator,
    Result,
    Trail,
)

RUNNING = "b" * 40
ROOT = "r" * 40
CALC = [
    "def last_sku(rec):",
    "    lines = rec['lines']",
    "    last = len(lines)",
    "    return lines[last]['sku']",
]
ENTRY = [
    "import json",
    "",
    "def main(path):",
    "    rec = json.load(open(path))",
    "    print(describe(rec))",
]
SERVICE = ["def describe(rec):", "    return last_sku(rec)"]


def frame(path: str, line: int, function: str) -> dict:
    return {"filename": path, "absPath": path, "function": function, "lineNo": line, "inApp": True}


def added(lines: list[str]) -> dict:
    n = len(lines)
    return {"old_start": 0, "old_lines": 0, "new_start": 1, "new_lines": n, "removed": [],
            "added": [[i, t] for i, t in enumerate(lines, 1)], "context": []}  # fmt: skip


def trail(edited: str = "app/cli.py") -> Trail:
    frames = [
        frame("app/cli.py", 5, "main"),
        frame("app/service.py", 2, "describe"),
        frame("app/calc.py", 4, "last_sku"),
    ]
    value = {"type": "IndexError", "value": "list index out of range"}
    values = [value | {"stacktrace": {"frames": frames}}]
    event = {
        "release": {"version": f"app@{RUNNING}"},
        "entries": [{"type": "exception", "data": {"values": values}}],
    }
    issue = {"id": "1", "shortId": "APP-1", "title": "IndexError", "count": 3}
    issue["firstSeen"] = "2026-11-28T09:00:00Z"
    t = Trail(question="why does the export fail?")

    def add(name: str, arguments: dict, data: dict, content: str = "ok") -> None:
        t.results.setdefault(name, []).append(Result(name, arguments, content, data, "E1", False))

    add(SENTRY_SEARCH, {}, {"issues": [issue]})
    add(SENTRY_DETAILS, {}, {"issue": issue, "event": event, "release": {"commit": RUNNING}})
    add(FIND_FILES, {}, {"entries": ["app/calc.py", "app/cli.py", "app/service.py"]})
    add(SHOW, {"revision": f"{RUNNING}:app/calc.py"}, {}, "\n".join(CALC))
    add(BLAME, {}, {"lines": [{"line": 4, "commit": ROOT, "boundary": False}]})
    # A newer commit, weeks before the errors, edits the CLI line two calls up: a weak lead,
    # of no kind that raises an IndexError.
    edit = {"old_start": 5, "old_lines": 1, "new_start": 5, "new_lines": 1,
            "removed": [[5, "    print(describe(rec), flush=True)"]],
            "added": [[5, "    print(describe(rec))"]], "context": []}  # fmt: skip
    if edited == "app/service.py":  # the same kind of edit, one call up
        edit = {"old_start": 2, "old_lines": 1, "new_start": 2, "new_lines": 1,
                "removed": [[2, "    return last_sku(dict(rec))"]],
                "added": [[2, "    return last_sku(rec)"]], "context": []}  # fmt: skip
    commits = [
        {"sha": "c" * 40, "parents": [ROOT], "author": "Dev", "date": "2026-11-10T10:00:00Z",
         "summary": "Print without flushing", "files": [{"path": edited, "hunks": [edit]}]},
        {"sha": ROOT, "parents": [], "author": "Dev", "date": "2026-10-01T10:00:00Z",
         "summary": "Import from the legacy repository",
         "files": [{"path": "app/calc.py", "hunks": [added(CALC)]},
                   {"path": "app/cli.py", "hunks": [added(ENTRY)]},
                   {"path": "app/service.py", "hunks": [added(SERVICE)]}]},
    ]  # fmt: skip
    add(CHANGES, {"head": RUNNING}, {"commits": commits})
    return t


SCOPE = Scope(
    project_key="app",
    repository="acme/app",
    sentry_organization="acme",
    sentry_project="app",
    release_prefix="app@",
    since=datetime(2026, 11, 1, tzinfo=UTC),
    until=datetime(2026, 12, 1, tzinfo=UTC),
)


def test_the_line_that_makes_the_value_beats_a_weak_lead_and_no_commit_is_claimed():
    bot = OfflineInvestigator(SCOPE)
    t = trail()
    a = bot.analyse(t)
    assert a is not None and a.history_cut
    assert a.suspect() == ("app/calc.py", 3, None)
    args = bot.conclude(t)
    assert args["suspect"]["path"] == "app/calc.py" and "commit" not in args["suspect"]
    assert args["confidence"] == "low"
    assert any("app/calc.py:3" in h for h in args["hypotheses"])


def test_a_lead_in_the_frame_that_called_the_crashing_one_is_kept():
    a = OfflineInvestigator(SCOPE).analyse(trail("app/service.py"))
    assert a is not None and a.history_cut and a.origin is None
    assert a.suspect() == ("app/service.py", 2, "c" * 40)
