"""A suspect line found by its words inside a call the hunk added whole (an option of a new
formatter, an argument of a new queue call) is reported at the call's first line; a line in
a body (a class, a function) stays where it is, as does a member changed on its own."""

from agent.models.changes import statement_head

FORMATTER = [
    (16, "const shopDay = new Intl.DateTimeFormat('en-GB', {"),
    (17, "  timeZone: 'Europe/London',"),
    (18, "  year: 'numeric',"),
    (19, "  month: '2-digit',"),
    (20, "  day: '2-digit',"),
    (21, "});"),
]


def test_an_option_of_a_new_call_is_reported_at_the_call():
    assert statement_head(20, "day: '2-digit',", FORMATTER) == (FORMATTER[0][0], FORMATTER[0][1])


def test_a_member_changed_alone_stays_itself():
    assert statement_head(20, "day: '2-digit',", [(20, "  day: '2-digit',")]) == (
        20,
        "day: '2-digit',",
    )


def test_a_line_of_a_body_stays_itself():
    body = [
        (8, "enum class Interval(val code: String) {"),
        (9, '    MONTHLY("month"),'),
        (10, '    YEARLY("year"),'),
        (11, "}"),
    ]
    assert statement_head(9, 'MONTHLY("month"),', body) == (9, 'MONTHLY("month"),')
    quoted = [(3, 'log("a (b");'), (4, "x = f(y)")]
    assert statement_head(4, "x = f(y)", quoted) == (4, "x = f(y)")
