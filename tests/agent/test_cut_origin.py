"""In a cut history, a parse that fails on a piece the crash line cut from its input: the
crash line made the value, not the loader that happens to bind a variable of the same name."""

import pytest

from agent.models.changes import origin
from tests.agent.test_changes import commit, crash, frame, hunk

CASES = [
    (  # Python
        "app/backups.py",
        [
            "def taken_at(name):",
            '    return datetime.strptime(name.split("-")[1], STAMP)',
        ],
        "ValueError",
        "time data 'eu' does not match format '%Y%m%dT%H%M'",
        "strptime",
        ("app/settings.py", "    name: Policy(days=int(p['days'])) for name, p in raw.items()"),
    ),
    (  # Go
        "internal/backup/names.go",
        [
            "func takenAt(name string) (time.Time, error) {",
            '\treturn time.Parse(stamp, strings.Split(name, "-")[1])',
        ],
        "*time.ParseError",
        'parsing time "eu" as "20060102T1504": cannot parse "eu" as "2006"',
        "Parse",
        ("internal/config/config.go", '\tname := strings.TrimSpace(raw["name"])'),
    ),
    (  # JavaScript
        "src/backups/names.js",
        [
            "function takenAt(name) {",
            "  return parseStamp(name.slice(name.indexOf('-') + 1, -5));",
        ],
        "RangeError",
        "Invalid time value 'eu-20261128'",
        "parseStamp",
        ("src/config.js", "  const name = process.env.BUCKET_NAME || 'snapshots';"),
    ),
]


@pytest.mark.parametrize(("path", "source", "kind", "message", "callee", "other"), CASES)
def test_a_piece_cut_on_the_crash_line_is_the_origin(path, source, kind, message, callee, other):
    other_path, other_line = other
    root = commit(
        "root",
        "2026-09-15T09:00:00Z",
        (path, [hunk(1, list(enumerate(source, 1)), old_start=0)]),
        (other_path, [hunk(1, [(1, "# settings"), (2, other_line)], old_start=0)]),
    )
    root["parents"] = []
    c = crash(
        path=path,
        line=2,
        function=source[0].split("(")[0].split()[-1],
        exc_type=kind,
        exc_value=message,
        code=source[1].strip(),
        nearby=source,
        source=source,
        blamed="root",
        callee=callee,
        stack=[(frame(path, 2, "takenAt", source[1]), path)],
    )
    found = origin(c, [root])
    assert found is not None and (found.path, found.line) == (path, 2)
    assert found.sha == "root" and found.on_crash_line


def test_a_crash_line_that_only_uses_a_value_made_elsewhere_is_still_no_origin():
    # `total / count`: nothing is cut on the crash line, so the line that made `count` wins.
    source = ["def mean(rows):", "    count = len(rows) - 1", "    return total(rows) / count"]
    root = commit(
        "root",
        "2026-09-15T09:00:00Z",
        ("app/stats.py", [hunk(1, list(enumerate(source, 1)), old_start=0)]),
    )
    root["parents"] = []
    c = crash(
        path="app/stats.py",
        line=3,
        function="mean",
        exc_type="ZeroDivisionError",
        exc_value="division by zero",
        code=source[2].strip(),
        nearby=source,
        source=source,
        blamed="root",
    )
    found = origin(c, [root])
    assert found is not None and found.line == 2
