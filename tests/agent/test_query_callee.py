"""A repository function the failing code calls runs a query kept beside it in a constant: a
change that narrows that query (an outer join made inner, another condition) can leave the
function with no row to return, and the caller fails on the missing value."""

import difflib

import pytest

from agent.models.changes import narrows, rank
from tests.agent.test_changes import commit, crash, frame


def whole_hunk(old: list[str], new: list[str]) -> dict:
    """One hunk over the whole file, as git would give it with a wide context."""
    added, removed, context = [], [], []
    matcher = difflib.SequenceMatcher(a=old, b=new, autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            context += [[j + 1, new[j]] for j in range(j1, j2)]
            continue
        removed += [[i + 1, old[i]] for i in range(i1, i2)]
        added += [[j + 1, new[j]] for j in range(j1, j2)]
    return {
        "header": "@@",
        "function": "",
        "old_start": 1,
        "old_lines": len(old),
        "new_start": 1,
        "new_lines": len(new),
        "added": added,
        "removed": removed,
        "context": context,
    }


JS_REPO = [
    "const { pool } = require('./pool');",
    "",
    "const SQL_RECEIPT = `",
    "  SELECT o.id, COALESCE(o.guest_email, c.email) AS email",
    "    FROM orders o",
    "    LEFT JOIN customers c ON c.id = o.customer_id",
    "   WHERE o.id = $1`;",
    "",
    "async function forReceipt(id) {",
    "  const { rows } = await pool.query(SQL_RECEIPT, [id]);",
    "  return rows[0];",
    "}",
]
PY_REPO = [
    "from app.db import db",
    "",
    'SQL = """',
    "SELECT o.id, c.email",
    "FROM orders o",
    "LEFT JOIN customers c ON c.id = o.customer_id",
    "WHERE o.id = %s",
    '"""',
    "",
    "",
    "def for_receipt(order_id):",
    "    return db.fetchone(SQL, (order_id,))",
]
JAVA_REPO = [
    "public class OrderRepository {",
    '    private static final String BY_ID = "SELECT o.id, c.email FROM orders o "',
    '        + "WHERE o.id = ?";',
    "",
    "    public Order byId(long id) {",
    "        return jdbc.query(BY_ID, mapper, id).stream().findFirst().orElse(null);",
    "    }",
    "}",
]


def narrowed(lines: list[str], before: str, after: str) -> list[str]:
    return [after if t == before else t for t in lines]


CASES = [
    (  # JavaScript: a LEFT JOIN made an inner one; the job destructures undefined
        "src/db/orders.js",
        JS_REPO,
        narrowed(
            JS_REPO,
            "    LEFT JOIN customers c ON c.id = o.customer_id",
            "    JOIN customers c ON c.id = o.customer_id",
        ),
        6,
        "src/jobs/receipt.js",
        [
            "const orders = require('../db/orders');",
            "async function sendReceipt(job) {",
            "  const { email, id } = await orders.forReceipt(job.data.orderId);",
        ],
        "TypeError",
        "Cannot destructure property 'email' of '(intermediate value)' as it is undefined.",
    ),
    (  # Python: the same in a triple-quoted query; the caller subscripts None
        "app/orders.py",
        PY_REPO,
        narrowed(
            PY_REPO,
            "LEFT JOIN customers c ON c.id = o.customer_id",
            "JOIN customers c ON c.id = o.customer_id",
        ),
        6,
        "app/receipts.py",
        [
            "from app import orders",
            "def send_receipt(order_id):",
            "    email = orders.for_receipt(order_id)['email']",
        ],
        "TypeError",
        "'NoneType' object is not subscriptable",
    ),
    (  # Java: another condition; the caller dereferences null
        "src/main/java/shop/OrderRepository.java",
        JAVA_REPO,
        narrowed(
            JAVA_REPO,
            '        + "WHERE o.id = ?";',
            '        + "WHERE o.id = ? AND o.customer_id IS NOT NULL";',
        ),
        3,
        "src/main/java/shop/ReceiptJob.java",
        [
            "public class ReceiptJob {",
            "    void send(long id) {",
            "        String email = orderRepository.byId(id).email();",
        ],
        "java.lang.NullPointerException",
        'Cannot invoke "shop.Order.email()" because the return value of '
        '"shop.OrderRepository.byId(long)" is null',
    ),
]


@pytest.mark.parametrize(("path", "old", "new", "fault", "at", "source", "kind", "msg"), CASES)
def test_a_narrowed_query_in_the_callees_constant_is_the_fault(
    path, old, new, fault, at, source, kind, msg
):
    c = crash(
        path=at,
        line=3,
        function=source[1].split("(")[0].split()[-1],
        exc_type=kind,
        exc_value=msg,
        code=source[2].strip(),
        nearby=source,
        source=source,
        stack=[(frame(at, 3, "send", source[2]), at)],
    )
    # The same commit tidies a template that names the same fields: no query, no row lost.
    template = {
        "header": "@@",
        "function": "",
        "old_start": 4,
        "old_lines": 1,
        "new_start": 4,
        "new_lines": 1,
        "added": [[4, "  <p>{{ email }} {{ id }}</p>"]],
        "removed": [[4, "  <p>{{ email }}</p>"]],
        "context": [],
    }
    history = [
        commit(
            "fix",
            "2026-11-27T10:00:00Z",
            ("templates/receipt.html", [template]),
            (path, [whole_hunk(old, new)]),
        )
    ]
    ranked = rank(c, history)
    assert ranked and (ranked[0].path, ranked[0].line) == (path, fault), ranked[:2]
    assert ranked[0].fits and any("returns the failing value" in r for r in ranked[0].reasons)


def test_a_query_widened_or_reworded_does_not_narrow():
    assert narrows(["JOIN a ON a.id = o.a_id"], ["LEFT JOIN a ON a.id = o.a_id"]) is False
    assert (
        narrows(
            ["SELECT id FROM orders WHERE id = ?"], ["SELECT id, total FROM orders WHERE id = ?"]
        )
        is False
    )
    assert narrows(["total = price * qty"], ["total = price * qty and 1"]) is False  # no query
    assert narrows(["FROM orders o"], ["FROM orders o WHERE o.deleted_at IS NULL"]) is True
