"""A new name bound to a value changes behaviour where a line reads it, and a list of what a
module exports reads every name it lists without computing anything: it is not that line."""

from agent.models.changes import where_used

ADDED = [
    (14, "const TASK = String.raw`(?:\\/(?<task>[a-z0-9-]+))?`;"),
    (15, "const NOTE = String.raw`\\s+(?<note>.*)`;"),
    (22, "module.exports = { DATE, SPAN, TASK, NOTE, ENTRY };"),
]


def test_an_export_list_is_not_where_a_new_name_is_used():
    line, text = where_used(14, ADDED[0][1], ADDED, [])
    assert line == 14, (line, text)


def test_a_line_that_computes_with_the_new_name_is():
    added = [*ADDED[:2], (16, "const ENTRY = new RegExp(DATE + SPAN + TASK + NOTE);"), ADDED[2]]
    assert where_used(14, ADDED[0][1], added, [])[0] == 16
