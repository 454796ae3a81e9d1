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


def release(bounds: bool) -> dict:
    # As bot/releases.py hands it on: whether the previous release bounds the window is its
    # call (tests/bot/test_releases.py), read here as `window_base`.
    return {"commit": RUNNING, "previous": PREVIOUS, "window_base": PREVIOUS if bounds else None}


def test_only_a_previous_release_that_bounds_the_window_is_its_base():
    assert window_base({"release": release(True)}) == PREVIOUS
    assert window_base({"release": release(False)}) is None
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
    assert changes_call(release(True)) == {
        "base": PREVIOUS,
        "head": RUNNING,
        "max_commits": 15,
    }
    # Without a release boundary, the recent history of the running release.
    assert changes_call(release(False)) == {"head": RUNNING, "max_commits": 15}
    assert changes_call(None) == {"head": RUNNING, "max_commits": 15}
