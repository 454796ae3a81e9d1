"""A table removed in one hunk (`COLUMNS = {"Fat %": "fat_pct", ...}`) mattered where another
hunk of the same file read it: the line that took that read's place is the suspect."""

from agent.models.changes import rank
from tests.agent.test_changes import commit, crash, hunk


def test_the_line_that_stopped_reading_the_removed_table_is_the_suspect():
    source = [
        "def grade(loads):",
        '    fat = loads["fat_pct"].mean()',
        "    return fat",
    ]
    c = crash(
        path="milk/quality.py",
        line=2,
        function="grade",
        exc_type="KeyError",
        exc_value="'fat_pct'",
        code=source[1].strip(),
        nearby=source,
        source=source,
    )
    table = hunk(
        10,
        [(10, 'REQUIRED = ("farm_id", "litres")')],
        [
            (10, "COLUMNS = {"),
            (11, '    "Farm ID": "farm_id",'),
            (12, '    "Fat %": "fat_pct",'),
            (13, "}"),
        ],
    )
    use = hunk(
        30,
        [
            (30, '    frame = pd.read_csv(path, sep=";")'),
            (31, "    frame.columns = [snake(c) for c in frame.columns]"),
        ],
        [
            (33, '    frame = pd.read_csv(path, sep=";", usecols=list(COLUMNS))'),
            (34, "    frame = frame.rename(columns=COLUMNS)"),
        ],
        [(29, "def load(path):"), (32, "    return frame")],
        old_start=32,
    )
    ranked = rank(c, [commit("snake", "2026-11-28T08:00:00Z", ("milk/loaders.py", [table, use]))])
    assert ranked and ranked[0].sha == "snake", [(r.path, r.reasons) for r in ranked]
    assert ranked[0].line == 31, (ranked[0].line, ranked[0].text, ranked[0].reasons)
    assert "stops using COLUMNS there" in ranked[0].reasons
