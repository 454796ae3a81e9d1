"""A message that reports the symptom ("payouts stuck in submitting: 3") has no stack to
follow: the error that first appeared in the question's window is where it breaks."""

from datetime import UTC, datetime

from agent.domain import Scope
from agent.models.offline import FINISH, OfflineInvestigator, Trail

SCOPE = Scope(
    project_key="payouts",
    repository="acme/payouts",
    sentry_organization="acme",
    sentry_project="payouts",
    since=datetime(2026, 11, 26, tzinfo=UTC),
    until=datetime(2026, 11, 28, tzinfo=UTC),
    asked_at=datetime(2026, 11, 27, 9, 40, tzinfo=UTC),
)


def issue(i: str, title: str, level: str, first: str) -> dict:
    return {"id": i, "shortId": f"P-{i}", "title": title, "level": level, "firstSeen": first,
            "lastSeen": "2026-11-27T09:30:00Z", "count": 10}  # fmt: skip


def choose(issues: list[dict], question: str) -> dict | str:
    return OfflineInvestigator(SCOPE).choose_issue(Trail(question=question), issues)


def test_a_symptom_message_leads_to_the_error_that_began_in_the_window():
    warning = issue("1", "payouts stuck in submitting for more than 30 minutes: 3", "warning",
                    "2026-11-26T21:30:00Z")  # fmt: skip
    error = issue("2", "IllegalArgumentException: Cannot coerce value to an empty range", "error",
                  "2026-11-27T02:41:00Z")  # fmt: skip
    old = issue("3", "BankException: bank refused transfer: 409 Conflict", "error",
                "2026-10-15T09:03:00Z")  # fmt: skip
    question = "Some driver payouts have been stuck since last night, can someone take a look?"
    assert choose([warning, old, error], question)["id"] == "2"
    # Only errors older than the window: the message stays, nothing better to follow.
    assert choose([warning, old], question)["id"] == "1"


def test_a_message_with_no_stack_leads_to_the_code_error_active_in_the_window():
    # The warning shares the question's words but carries no exception; two errors are
    # older than the window and still active in it: the fault of the code, not the timeout.
    from agent.models.offline import FIND_FILES, SENTRY_DETAILS, SENTRY_SEARCH, Result

    warning = issue("1", "slot 88412 has 2 pending holds", "warning", "2026-10-02T08:30:00Z")
    timeout = issue("2", "ReadTimeout: HTTPSConnectionPool(host='his'): Read timed out.", "error",
                    "2026-09-10T07:15:00Z")  # fmt: skip
    fault = issue("3", "AttributeError: 'NoneType' object has no attribute 'id'", "error",
                  "2026-09-02T14:10:00Z")  # fmt: skip
    issues = [warning, timeout, fault]
    trail = Trail(question="Holds on slots are not released since yesterday, can you look?")
    trail.results[SENTRY_SEARCH] = [Result(SENTRY_SEARCH, {}, "", {"issues": issues}, "E1", False)]
    message = {"message": "slot 88412 has 2 pending holds", "entries": [], "tags": []}
    trail.results[SENTRY_DETAILS] = [
        Result(
            SENTRY_DETAILS,
            {"issueId": "P-1"},
            "",
            {"issue": warning, "event": message},
            "E2",
            False,
        )
    ]
    bot = OfflineInvestigator(SCOPE)
    offered = {SENTRY_SEARCH, SENTRY_DETAILS, FIND_FILES, FINISH}
    assert bot.decide(trail, offered) == (
        SENTRY_DETAILS,
        {"organizationSlug": "acme", "issueId": "P-3"},
    )
    # With a stack, the issue chosen stays.
    frames = {"frames": [{"filename": "app/x.py", "lineNo": 3, "function": "f", "inApp": True}]}
    raised = {"type": "exception", "data": {"values": [{"type": "E", "stacktrace": frames}]}}
    trail.results[SENTRY_DETAILS][0].data["event"] = {"entries": [raised], "tags": []}
    assert bot.behind(trail, warning, issues) is None
