from datetime import UTC, datetime

from agent.models.relevance import concepts, onset_window, rank

SINCE = datetime(2026, 11, 28, tzinfo=UTC)
ASKED = datetime(2026, 11, 28, 18, 0, tzinfo=UTC)


def issue(id_: str, title: str, culprit: str, count: int, first_seen: str, level="error"):
    return {
        "id": id_,
        "shortId": id_,
        "title": title,
        "culprit": culprit,
        "count": count,
        "firstSeen": first_seen,
        "lastSeen": "2026-11-28T17:00:00Z",
        "level": level,
        "metadata": {},
    }


def test_spanish_and_english_words_meet_the_codes_words():
    assert concepts("Investiga los errores al guardar pedidos") == {"sav", "order"}
    assert "coupon" in concepts("discount codes stopped working")
    assert "invoic" in concepts("no consigue emitir facturas")


def test_relevance_beats_event_count():
    busy = issue(
        "A", "QueryTimeoutException: timeout", "GET /reports/search", 5000, "2026-11-28T01:00:00Z"
    )
    relevant = issue(
        "B", "NullPointerException in OrderService", "POST /orders", 12, "2026-11-28T09:00:00Z"
    )
    assert rank("errors when saving orders", [busy, relevant], SINCE)[0][2]["id"] == "B"


def test_a_new_error_wins_over_a_recurring_one_when_the_words_tie():
    old = issue("OLD", "ValueError in export", "/api/export", 40, "2026-10-01T00:00:00Z")
    new = issue("NEW", "KeyError in export", "/api/export", 3, "2026-11-28T08:00:00Z")
    assert rank("the export is broken since this morning", [old, new], SINCE)[0][2]["id"] == "NEW"


def test_when_the_trouble_began_tells_two_new_errors_apart():
    morning = issue("M", "TimeoutError", "POST /shipments", 600, "2026-11-28T06:00:00Z")
    evening = issue("E", "ZeroDivisionError", "POST /shipments", 10, "2026-11-27T19:30:00Z")
    since = datetime(2026, 11, 27, tzinfo=UTC)
    ranked = rank("shipments fail since yesterday evening", [morning, evening], since, ASKED)
    assert ranked[0][2]["id"] == "E"


def test_onset_phrases_in_both_languages():
    assert onset_window("desde esta mañana", ASKED) == (
        datetime(2026, 11, 28, 5, tzinfo=UTC),
        datetime(2026, 11, 28, 12, tzinfo=UTC),
    )
    assert onset_window("since yesterday afternoon", ASKED)[0] == datetime(
        2026, 11, 27, 12, tzinfo=UTC
    )
    assert onset_window("since the last deploy", ASKED) is None
    assert onset_window("this endpoint fails", ASKED) is None


def test_a_question_about_a_failure_is_not_about_a_warning_that_shares_its_words():
    slow = issue(
        "W",
        "Slow invoice export: 16.2 s for 563 records",
        "invoices export",
        25,
        "2026-11-28T08:00:00Z",
        level="warning",
    )
    crash = issue(
        "E", "IndexError: list index out of range", "first_open_line", 52, "2026-11-28T09:00:00Z"
    )
    for question in (
        "The export-invoices command crashes on last night's file. What's wrong?",
        "El comando export-invoices falla con el fichero de anoche.",
    ):
        assert rank(question, [slow, crash], SINCE, ASKED)[0][2]["id"] == "E"
    assert rank("why is the invoice export slow?", [slow, crash], SINCE, ASKED)[0][2]["id"] == "W"


def test_an_issue_listed_without_a_level_is_judged_by_its_title():
    from agent.models.relevance import level_of_title

    for title in (
        "runtime.Error: runtime error: invalid memory address or nil pointer dereference",
        "*errors.errorString: nats: timeout",
        "ShippingQuotes::Unavailable: no shipping quote for cart 771203",
        "NoSuchElementException: List is empty.",
        "Payment failed for order 12",  # a message that speaks of failing
    ):
        assert level_of_title(title) == "error", title
    for title in ("Slow message on stock.reserved: 1.2s", "Retrying export batch 3"):
        assert level_of_title(title) == "info", title
    issues = [
        {"id": "1", "title": "Slow message on stock.reserved: 1.2s", "count": 900},
        {"id": "2", "title": "runtime.Error: invalid memory address", "count": 12},
    ]
    ranked = rank("stock keeps panicking on stock.reserved and fails, why?", issues)
    assert ranked[0][2]["id"] == "2"
