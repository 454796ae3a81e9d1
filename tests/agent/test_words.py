"""The offline investigator's sentences fit the incident: a command line tool, a worker's
job or a web request, and the kind of exception it raised."""

from __future__ import annotations

from typing import Any

import pytest

from agent import stacktrace
from agent.models import changes
from agent.models.offline import Analysis
from agent.models.words import words_for

WEB = {"entries": [{"type": "request", "data": {"method": "POST", "url": "https://x/orders"}}]}
JOB = {"contexts": {"celery-job": {"task_name": "shop.tasks.remind", "args": [7]}}}
CLI = {"extra": {"sys.argv": ["ledgerctl", "import", "--file", "june.csv"]}}


def analysis(
    event: dict[str, Any],
    exc_type: str = "ZeroDivisionError",
    exc_value: str = "division by zero",
    code: str = "per_part = total / parts",
    change: changes.Change | None = None,
) -> Analysis:
    exc = stacktrace.ExceptionInfo(type=exc_type, value=exc_value, module=None)
    frame = stacktrace.Frame("calc.py", "calc.py", None, "split_total", 12, True, code)
    a = Analysis(issue={}, event=event, exc=exc, frame=frame, path="app/calc.py")
    a.revision, a.crash_code, a.change = "a" * 40, code, change
    if change is not None:
        a.change_line = change.line
    return a


def change() -> changes.Change:
    return changes.Change(
        sha="b" * 40,
        summary="Split over the lines",
        author="Dev",
        date="2026-11-20T10:00:00Z",
        path="app/calc.py",
        hunk={"removed": [(11, "parts = max(1, len(lines))")], "added": []},
        line=11,
        text="parts = len(lines)",
        score=12.0,
        newest_for_path=True,
        reasons=["changes the denominator"],
    )


@pytest.mark.parametrize(
    ("event", "en", "es"),
    [
        (WEB, "the failing requests", "las peticiones fallidas"),
        (JOB, "the failing jobs", "los trabajos fallidos"),
        (CLI, "the failing command", "el comando fallido"),
    ],
)
def test_the_hypothesis_and_the_check_name_what_failed(event, en, es) -> None:
    for words, what in ((words_for("en"), en), (words_for("es"), es)):
        for a in (analysis(event), analysis(event, change=change())):
            assert what in words.hypothesis(a)
        check = words.check(analysis(event), None)
        if event is not WEB:
            assert "request" not in check and "petici" not in check
    hypothesis = words_for("en").hypothesis(analysis(event, change=change()))
    assert f"is raised at app/calc.py:12 for {en}." in hypothesis  # one verb for one or many


@pytest.mark.parametrize(
    ("exc_type", "exc_value", "says"),
    [
        (
            "ZeroDivisionError",
            "division by zero",
            "a divisor on `per_part = total / parts` is zero",
        ),
        ("AttributeError", "'NoneType' object has no attribute 'upper'", "is missing (null)"),
        ("KeyError", "'customer_id'", "a key or an entry"),
        ("IndexError", "list index out of range", "an index on"),
        ("ValueError", "time data '20/11/2026' does not match format '%Y-%m-%d'", "the format"),
        ("RuntimeError", "boom", "meets input or state that it does not handle"),
    ],
)
def test_with_no_change_the_hypothesis_says_what_the_line_met(exc_type, exc_value, says) -> None:
    text = words_for("en").hypothesis(analysis(JOB, exc_type, exc_value))
    assert says in text and "no change read explains it" in text


def test_no_sentence_claims_a_change_was_found_when_none_was() -> None:
    for language in ("en", "es"):
        words = words_for(language)
        assert "change was found" not in words.no_previous_release
        assert "el cambio se buscó" not in words.no_previous_release
