"""The change window of the offline investigator: previous release..running when it is known."""

from datetime import UTC, datetime

from agent.domain import Scope
from agent.models.offline import (
    CHANGES,
    FIND_FILES,
    SENTRY_DETAILS,
    SENTRY_SEARCH,
    OfflineInvestigator,
    Result,
    Trail,
    window_base,
)

RUNNING = "b" * 40
PREVIOUS = "a" * 40


def release(via: str) -> dict:
    return {"commit": RUNNING, "previous": PREVIOUS, "previous_via": via}


def test_only_a_previous_tag_bounds_the_window():
    assert window_base({"release": release("tag v1.4.0")}) == PREVIOUS
    # An earlier release among the issue's events already failed: the fault is older than it.
    assert window_base({"release": release("release app@1.5.0 among the issue's events")}) is None
    assert window_base({"release": release("parent commit")}) is None  # no release boundary
    assert window_base({"release": None}) is None and window_base(None) is None


def trail(release_data: dict | None) -> Trail:
    frame = {"filename": "app/calc.py", "absPath": "app/calc.py", "function": "total"}
    frame |= {"lineNo": 3, "inApp": True, "module": "app.calc"}
    event = {
        "release": {"version": f"app@{RUNNING}"},
        "entries": [
            {
                "type": "exception",
                "data": {
                    "values": [
                        {"type": "KeyError", "value": "'x'", "stacktrace": {"frames": [frame]}}
                    ]
                },
            }
        ],
    }
    issue = {"id": "1", "shortId": "APP-1", "title": "KeyError: 'x'", "count": 3}
    t = Trail(question="why does total fail?")

    def add(name: str, data: dict) -> None:
        t.results.setdefault(name, []).append(Result(name, {}, "ok", data, "E1", False))

    add(SENTRY_SEARCH, {"issues": [issue]})
    add(SENTRY_DETAILS, {"issue": issue, "event": event, "release": release_data})
    add(FIND_FILES, {"entries": ["app/calc.py"]})
    return t


def changes_call(release_data: dict | None) -> dict:
    scope = Scope(
        project_key="app",
        repository="acme/app",
        sentry_organization="acme",
        sentry_project="app",
        release_prefix="app@",
        since=datetime(2026, 11, 1, tzinfo=UTC),
        until=datetime(2026, 12, 1, tzinfo=UTC),
    )
    actions = OfflineInvestigator(scope).decide(
        trail(release_data), {CHANGES, SENTRY_SEARCH, SENTRY_DETAILS, FIND_FILES}
    )
    assert isinstance(actions, list)
    return next(args for name, args in actions if name == CHANGES)


def test_the_history_is_read_from_the_previous_tag_to_the_running_release():
    assert changes_call(release("tag v1.4.0")) == {
        "base": PREVIOUS,
        "head": RUNNING,
        "max_commits": 15,
    }
    # Without a release boundary, the recent history of the running release.
    assert changes_call(release("parent commit")) == {"head": RUNNING, "max_commits": 15}
    assert changes_call(None) == {"head": RUNNING, "max_commits": 15}
