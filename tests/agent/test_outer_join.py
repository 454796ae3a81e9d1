"""A column the failing code reads, now taken from an outer join, is null whenever the join
finds nothing: the join is the suspect, wherever the query is kept."""

import pytest

from agent.models.changes import outer_column, rank
from tests.agent.test_changes import commit, crash, frame, hunk

JAVA_NPE = (
    "java.lang.NullPointerException",
    'Cannot invoke "String.toLowerCase()" because the return value of '
    '"shop.Shipment.recipientEmail()" is null',
)
PY_NONE = ("AttributeError", "'NoneType' object has no attribute 'lower'")

CASES = [
    (
        "src/main/java/shop/ShipmentRepository.java",
        [
            "            SELECT s.id, r.name AS recipient_name,",
            "                   c.value AS recipient_email",
            "              FROM shipments s",
            "              JOIN recipients r ON r.id = s.recipient_id",
            "     LEFT JOIN recipient_contacts c ON c.recipient_id = r.id AND c.kind = 'EMAIL'",
        ],
        JAVA_NPE,
        "        String email = shipment.recipientEmail().toLowerCase();",
    ),
    (
        "app/repo.py",
        [
            "    SELECT o.id, u.email AS email",
            "    FROM orders o",
            "    LEFT OUTER JOIN users u ON u.id = o.user_id",
        ],
        PY_NONE,
        "    email = row['email'].lower()",
    ),
]


@pytest.mark.parametrize(("path", "query", "exc", "code"), CASES)
def test_a_read_column_taken_from_an_outer_join_names_the_join(path, query, exc, code):
    source = ["def notify(row):", code]
    c = crash(
        path="app/notify.py",
        line=2,
        function="notify",
        exc_type=exc[0],
        exc_value=exc[1],
        code=code.strip(),
        nearby=source,
        source=source,
        stack=[(frame("app/notify.py", 2, "notify", code), "app/notify.py")],
    )
    change = hunk(20, [(20 + i, t) for i, t in enumerate(query)])
    ranked = rank(c, [commit("join", "2026-11-27T10:00:00Z", (path, [change]))])
    assert ranked and ranked[0].path == path
    assert ranked[0].line == 20 + len(query) - 1 and "JOIN" in ranked[0].text.upper()
    assert ranked[0].fits


def test_an_inner_join_or_a_column_nobody_reads_is_no_outer_null():
    inner = hunk(1, [(1, "SELECT c.value AS email"), (2, "JOIN contacts c ON c.id = o.c_id")])
    assert outer_column(inner, {"email"}) is None
    outer = hunk(1, [(1, "SELECT c.value AS phone"), (2, "LEFT JOIN contacts c ON c.id = o.c_id")])
    assert outer_column(outer, {"email"}) is None
    assert outer_column(outer, {"phone"}) == (2, "LEFT JOIN contacts c ON c.id = o.c_id", "phone")


def test_a_call_beside_the_statement_the_npe_names_is_not_what_failed():
    # Java names the call whose result was null; `codes.next()` two lines up feeds `code`,
    # which the failing statement does not use: a change to next() is not in it.
    source = [
        "    void resend(long id) {",
        "        Shipment shipment = shipments.findById(id);",
        "        String code = codes.next();",
        "        String email = shipment.recipientEmail().toLowerCase();",
    ]
    c = crash(
        path="src/main/java/shop/Resend.java",
        line=4,
        function="resend",
        exc_type=JAVA_NPE[0],
        exc_value=JAVA_NPE[1],
        code=source[3].strip(),
        nearby=source,
        source=source,
        stack=[(frame("src/main/java/shop/Resend.java", 4, "resend", source[3]), "x")],
    )
    codes = hunk(5, [(6, "        return random(12);")], [(6, "        return random(8);")])
    codes["function"] = "public String next() {"
    ranked = rank(
        c, [commit("codes", "2026-11-27T10:00:00Z", ("src/main/java/shop/Codes.java", [codes]))]
    )
    assert all("which the failing code calls" not in r for x in ranked for r in x.reasons)
