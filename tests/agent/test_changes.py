"""Which change explains a crash: the rules, one small history each."""

from datetime import UTC, datetime

from agent import stacktrace
from agent.models.changes import Crash, code_of, pick, release_line


def frame(path: str, line: int, function: str, context: str | None = None) -> stacktrace.Frame:
    return stacktrace.Frame(
        filename=path,
        abs_path=path,
        module=None,
        function=function,
        lineno=line,
        in_app=True,
        context_line=context,
        context=[],
    )


def commit(sha: str, date: str, *files: tuple[str, list[dict]]) -> dict:
    return {
        "sha": sha,
        "author": "Dev",
        "date": date,
        "summary": f"commit {sha}",
        "files": [{"path": p, "hunks": h} for p, h in files],
    }


def hunk(
    start: int,
    added: list[tuple[int, str]],
    removed: list[tuple[int, str]] = (),
    context: list[tuple[int, str]] = (),
    old_start: int | None = None,
) -> dict:
    return {
        "header": "@@",
        "function": "",
        "old_start": start if old_start is None else old_start,
        "old_lines": max(1, len(removed)),
        "new_start": start,
        "new_lines": len(added) + len(context),
        "added": [list(a) for a in added],
        "removed": [list(r) for r in removed],
        "context": [list(c) for c in context],
    }


def crash(**kw) -> Crash:
    base = dict(
        path="app/totals.py",
        line=13,
        function="line_total",
        exc_type="KeyError",
        exc_value="'price'",
        code="return item['price'] * item['qty']",
        nearby=["def line_total(item):", "return item['price'] * item['qty']"],
        first_seen=datetime(2026, 11, 28, 9, tzinfo=UTC),
    )
    return Crash(**(base | kw))


def test_the_commit_that_wrote_the_crash_line_is_the_fault():
    c = crash()
    history = [
        commit(
            "b",
            "2026-11-27T10:00:00Z",
            (
                "app/totals.py",
                [
                    hunk(
                        13,
                        [(13, "    return item['price'] * item['qty']")],
                        [(13, "    return item.get('price', 0) * item['qty']")],
                    )
                ],
            ),
        )
    ]
    change = pick(c, history)
    assert change is not None and change.sha == "b" and change.on_crash_line


def test_a_change_after_the_errors_began_is_not_their_cause():
    c = crash()
    history = [
        commit(
            "late",
            "2026-11-28T12:00:00Z",
            (
                "app/totals.py",
                [
                    hunk(
                        13, [(13, "    return item['price'] * item['qty']")], [(13, "    return 0")]
                    )
                ],
            ),
        )
    ]
    assert pick(c, history) is None


def test_a_comment_only_change_is_never_the_fault():
    c = crash(code="return item['price'] * item['qty']  # in cents")
    history = [
        commit(
            "comment",
            "2026-11-27T12:00:00Z",
            (
                "app/totals.py",
                [
                    hunk(
                        13,
                        [(13, "    return item['price'] * item['qty']  # in cents")],
                        [(13, "    return item['price'] * item['qty']")],
                    )
                ],
            ),
        ),
        commit(
            "fault",
            "2026-11-26T12:00:00Z",
            (
                "app/totals.py",
                [
                    hunk(
                        13,
                        [(13, "    return item['price'] * item['qty']")],
                        [(13, "    return item.get('price', 0) * item['qty']")],
                    )
                ],
            ),
        ),
    ]
    change = pick(c, history)
    assert change is not None and change.sha == "fault"


def test_a_producer_that_renamed_the_key_read_near_the_crash_is_the_fault():
    c = crash(stack=[(frame("app/totals.py", 13, "line_total"), "app/totals.py")])
    history = [
        commit(
            "p",
            "2026-11-27T10:00:00Z",
            (
                "app/orders.py",
                [
                    hunk(
                        30,
                        [(31, "        'unit_price': prices[i.sku],")],
                        [(31, "        'price': prices[i.sku],")],
                    )
                ],
            ),
        )
    ]
    change = pick(c, history)
    assert change is not None and change.path == "app/orders.py" and change.line == 31


def test_a_function_the_crash_line_calls_that_now_returns_null():
    c = crash(
        exc_type="AttributeError",
        exc_value="'NoneType' object has no attribute 'rate'",
        code="return tariff(country).rate * amount",
        nearby=["def tax(country, amount):", "return tariff(country).rate * amount"],
    )
    history = [
        commit(
            "t",
            "2026-11-27T10:00:00Z",
            (
                "app/tariffs.py",
                [
                    hunk(
                        20,
                        [(21, "    return TABLE.get(country)")],
                        [(21, "    return TABLE.get(country, DEFAULT)")],
                        context=[(20, "def tariff(country):")],
                    )
                ],
            ),
        )
    ]
    change = pick(c, history)
    assert change is not None and change.path == "app/tariffs.py" and change.line == 21


def test_lines_of_an_older_commit_are_mapped_to_the_release_by_their_text():
    c = crash()
    history = [
        commit("newer", "2026-11-27T12:00:00Z", ("app/orders.py", [hunk(1, [(1, "import os")])])),
        commit(
            "older",
            "2026-11-26T12:00:00Z",
            (
                "app/orders.py",
                [
                    hunk(
                        10,
                        [(10, "        'unit_price': prices[i.sku],")],
                        [(10, "        'price': x,")],
                    )
                ],
            ),
        ),
    ]
    change = pick(c, history)
    assert change is not None and change.sha == "older" and not change.newest_for_path
    release = "\n".join(["# header"] * 14 + ["        'unit_price': prices[i.sku],"])
    assert release_line(change, release) == 15
    assert release_line(change, None) is None


def test_code_of_drops_comments_but_not_strings():
    assert code_of("x = 1  # the count") == "x = 1"
    assert code_of("    // a comment") == ""
    assert code_of('url = "http://example.com/#top"') == 'url = "http://example.com/#top"'
