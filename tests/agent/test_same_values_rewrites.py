"""Rewrites that pass the same values: a call of the crashing function that now names its
arguments, and a crash line that binds to a name what it used to return. Neither made the
value that failed; the setting that now gives a string did."""

from agent.models import through
from agent.models.changes import rank, same_values
from tests.agent.test_changes import commit, crash, frame, hunk

CALL = "    due = due_date(issued, settings.GRACE_DAYS)"
NAMED = "    due = due_date(issued=issued, days=settings.GRACE_DAYS)"


def test_a_call_that_names_its_arguments_binds_the_same_values():
    params = through.parameters("def due_date(issued: date, days: int) -> date:")
    assert params == ["issued", "days"]
    assert through.same_binding(CALL, NAMED, "due_date", params)
    swapped = "    due = due_date(days=issued, issued=settings.GRACE_DAYS)"
    assert not through.same_binding(CALL, swapped, "due_date", params)
    assert not through.same_binding(CALL, NAMED.replace("due =", "when ="), "due_date", params)
    assert through.parameters("func plan(r Route, n int) []Eta {") == ["r", "n"]
    assert through.parameters("public function at(\\DateTime $start, int $days = 2)") == [
        "start",
        "days",
    ]


def test_a_value_bound_to_a_name_instead_of_returned_is_the_same_value():
    assert same_values(
        "due = issued + timedelta(days=days)", ["return issued + timedelta(days=days)"]
    )
    assert not same_values(
        "due = issued + timedelta(days=1)", ["return issued + timedelta(days=days)"]
    )


def test_the_setting_that_now_gives_a_string_wins_over_both_rewrites():
    source = [
        "from datetime import date, timedelta",
        "",
        "",
        "def due_date(issued: date, days: int) -> date:",
        '    """`issued` plus `days` calendar days; a weekend moves to the Monday."""',
        "    due = issued + timedelta(days=days)",
        "    while due.weekday() >= 5:",
        "        due += timedelta(days=1)",
        "    return due",
    ]
    c = crash(
        path="allot/terms.py",
        line=6,
        function="due_date",
        exc_type="TypeError",
        exc_value="unsupported type for timedelta days component: str",
        code=source[5].strip(),
        nearby=source[3:],
        source=source,
        stack=[
            (frame("allot/bills.py", 25, "issue_bill", NAMED), "allot/bills.py"),
            (frame("allot/terms.py", 6, "due_date", source[5]), "allot/terms.py"),
        ],
    )
    caller = hunk(25, [(25, NAMED)], [(25, CALL)])
    caller["function"] = "def issue_bill(plot, today):"
    weekend = hunk(
        6,
        [(6, source[5]), (7, source[6]), (8, source[7]), (9, source[8])],
        [(6, "    return issued + timedelta(days=days)")],
    )
    weekend["function"] = source[3]
    setting = hunk(
        40,
        [(40, 'GRACE_DAYS = env("GRACE_DAYS", default=15)')],
        [(40, "GRACE_DAYS = 15")],
    )
    ranked = rank(
        c,
        [
            commit("named", "2026-11-28T08:40:00Z", ("allot/bills.py", [caller])),
            commit("weekend", "2026-11-28T08:20:00Z", ("allot/terms.py", [weekend])),
            commit("env", "2026-11-28T08:00:00Z", ("allot_site/settings.py", [setting])),
        ],
    )
    assert ranked and ranked[0].sha == "env", [(r.sha, r.score, r.reasons) for r in ranked]
