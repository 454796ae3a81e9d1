"""When a block of lines is rewritten one for one (every entry of an enum gains a field), the
suspect line is the entry that lost what the exception quotes, not the block's first line."""

import pytest

from agent.models.changes import rank
from tests.agent.test_changes import commit, crash, frame

CASES = [
    (
        "src/main/kotlin/shop/Interval.kt",
        [
            "enum class Interval(val code: String) {",
            '    MONTHLY("month"),',
            '    QUARTERLY("quarter"),',
            '    YEARLY("year");',
        ],
        [
            "enum class Interval(val code: String, val label: String) {",
            '    MONTHLY("month", "Monthly"),',
            '    QUARTERLY("quarter", "Quarterly"),',
            '    YEARLY("annual", "Yearly");',
        ],
        "IllegalArgumentException",
        "unknown billing interval 'year'",
    ),
    (
        "src/billing/intervals.ts",
        [
            "export const INTERVALS = {",
            "  month: { code: 'month' },",
            "  quarter: { code: 'quarter' },",
            "  year: { code: 'year' },",
        ],
        [
            "export const INTERVALS = {",
            "  month: { code: 'month', label: 'Monthly' },",
            "  quarter: { code: 'quarter', label: 'Quarterly' },",
            "  year: { code: 'annual', label: 'Yearly' },",
        ],
        "Error",
        "unknown billing interval 'year'",
    ),
]


@pytest.mark.parametrize(("path", "old", "new", "kind", "msg"), CASES)
def test_the_entry_that_lost_the_quoted_value_is_the_suspect_line(path, old, new, kind, msg):
    changed = [i for i, (a, b) in enumerate(zip(old, new, strict=True)) if a != b]
    block = {
        "header": "@@",
        "function": "",
        "old_start": 3,
        "old_lines": len(old),
        "new_start": 3,
        "new_lines": len(new),
        "removed": [[3 + i, old[i]] for i in changed],
        "added": [[3 + i, new[i]] for i in changed],
        "context": [[3 + i, new[i]] for i in range(len(new)) if i not in changed],
    }
    source = ["fun parse(raw: String): Interval =", "    fromCode(raw) ?: throw bad(raw)"]
    c = crash(
        path="src/webhook/Parser.kt",
        line=2,
        function="parse",
        exc_type=kind,
        exc_value=msg,
        code=source[1].strip(),
        nearby=source,
        source=source,
        stack=[(frame("src/webhook/Parser.kt", 2, "parse", source[1]), "src/webhook/Parser.kt")],
    )
    ranked = rank(c, [commit("labels", "2026-11-27T10:00:00Z", (path, [block]))])
    assert ranked and ranked[0].path == path and ranked[0].line == 6
    assert "annual" in ranked[0].text
