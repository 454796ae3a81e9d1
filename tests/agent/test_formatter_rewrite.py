"""A formatter's rewrite of the crash line (php-cs-fixer, black, prettier, rubocop) runs the
same code: it is no change, so the filter a day older above the crash line stays the fault."""

import pytest

from agent.models.changes import rank, tidy
from tests.agent.test_changes import commit, crash, hunk

CASES = [
    (  # PHP: php-cs-fixer qualifies a global function
        "src/Report.php",
        [
            "    public function share(array $courts, int $booked): float {",
            "        $courts = array_filter($courts, fn ($c) => 'open' === $c->state());",
            "        return $booked / (\\count($courts) * 7);",
        ],
        "        $courts = array_filter($courts, fn ($c) => 'open' === $c->state());",
        ["        return $booked / (count($courts) * 7);"],
        "DivisionByZeroError",
        "Division by zero",
    ),
    (  # Python: black splits a call and adds a trailing comma
        "app/report.py",
        [
            "def share(courts, booked):",
            "    courts = [c for c in courts if c.state == 'open']",
            "    return ratio(booked, len(courts) * 7,)",
        ],
        "    courts = [c for c in courts if c.state == 'open']",
        ["    return ratio(booked,", "                 len(courts) * 7)"],
        "ZeroDivisionError",
        "division by zero",
    ),
    (  # Ruby: rubocop's double quotes for a plain string
        "lib/report.rb",
        [
            "  def share(courts, booked)",
            "    courts = courts.select { |c| c.state == 'open' }",
            '    booked / (courts.fetch("size") * 7)',
        ],
        "    courts = courts.select { |c| c.state == 'open' }",
        ["    booked / (courts.fetch('size') * 7)"],
        "ZeroDivisionError",
        "divided by 0",
    ),
]


@pytest.mark.parametrize(("path", "source", "fault", "before", "kind", "msg"), CASES)
def test_a_formatter_rewrite_of_the_crash_line_is_no_change(path, source, fault, before, kind, msg):
    c = crash(
        path=path,
        line=3,
        function="share",
        exc_type=kind,
        exc_value=msg,
        code=source[2].strip(),
        nearby=source,
        source=source,
    )
    formatted = hunk(3, [(3, source[2])], [(3 + i, t) for i, t in enumerate(before)])
    formatted["old_lines"] = len(before)
    filtered = hunk(2, [(2, fault)], context=[(1, source[0]), (3, before[0])])
    filtered["old_lines"] = 0
    history = [
        commit("fmt", "2026-11-27T09:00:00Z", (path, [formatted])),
        commit("filter", "2026-11-26T18:00:00Z", (path, [filtered])),
    ]
    ranked = rank(c, history)
    assert ranked and (ranked[0].sha, ranked[0].line) == ("filter", 2)
    assert all(x.sha != "fmt" for x in ranked)


def test_tidy_keeps_what_changes_meaning():
    assert tidy("x = count($a)") == tidy("x = \\count($a)")
    assert tidy("f(a,\n b,\n)") == tidy("f(a, b)")
    assert tidy("x = a / b") != tidy("x = a // b")
    assert tidy("fmt = '%Y %m'") != tidy("fmt = '%Y%m'")  # a string's spaces are its value
    assert tidy('s = "a,)"') == 's="a,)"'
    assert tidy("App\\Foo::bar()") == "App\\Foo::bar()"  # a namespace separator stays
    assert tidy("fetch('store')") == tidy('fetch("store")')
    assert tidy("x = '#{a}'") != tidy('x = "#{a}"')  # Ruby interpolates in double quotes only
    assert tidy("x = '$a'") != tidy('x = "$a"')  # and PHP
