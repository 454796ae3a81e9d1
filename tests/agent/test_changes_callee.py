"""A failing value returned by a function of the repository that the failing code calls: on
the crash line, or in the binding of a variable the crash line uses. A change to that
function's body of the exception's kind is the fault, not a change beside the crash."""

from datetime import UTC, datetime

import pytest

from agent import stacktrace
from agent.models.changes import Crash, rank

FIRST_ERROR = datetime(2026, 11, 28, 9, tzinfo=UTC)


def frame(path: str, line: int, function: str) -> stacktrace.Frame:
    return stacktrace.Frame(
        filename=path,
        abs_path=path,
        module=None,
        function=function,
        lineno=line,
        in_app=True,
        context_line=None,
        context=[],
    )


def commit(sha: str, date: str, path: str, hunks: list[dict]) -> dict:
    return {
        "sha": sha,
        "author": "Dev",
        "date": date,
        "summary": f"commit {sha}",
        "parents": ["p"],
        "files": [{"path": path, "hunks": hunks}],
    }


def hunk(
    function: str,
    start: int,
    context: list[tuple[int, str]],
    added: list[tuple[int, str]],
    removed: list[tuple[int, str]] = (),
    old_start: int | None = None,
) -> dict:
    """A hunk whose line numbers are the caller's; old_lines and new_lines follow from them."""
    return {
        "header": "@@",
        "function": function,
        "old_start": start if old_start is None else old_start,
        "old_lines": len(context) + len(removed),
        "new_start": start,
        "new_lines": len(context) + len(added),
        "added": [list(a) for a in added],
        "removed": [list(r) for r in removed],
        "context": [list(c) for c in context],
    }


def crash_at(path: str, source: str, line: int, function: str, exc: tuple[str, str]) -> Crash:
    lines = source.splitlines()
    return Crash(
        path=path,
        line=line,
        function=function,
        exc_type=exc[0],
        exc_value=exc[1],
        code=lines[line - 1].strip(),
        nearby=lines[max(0, line - 4) : line],
        stack=[(frame(path, line, function), path)],
        first_seen=FIRST_ERROR,
        source=lines,
    )


# A parse error: the crash line parses what a formatting function of another file returns;
# the newest commit edited the lines just above it, which make another argument.
JAVA_PARSE = {
    "path": "src/main/java/com/acme/money/AmountReader.java",
    "source": """package com.acme.money;

import java.math.BigDecimal;

public class AmountReader {
    public Money read(Map<String, String> fields) {
        String text = fields.get("amount");
        String currency = fields.getOrDefault("currency", "EUR").trim();
        return Money.of(new BigDecimal(AmountFormat.clean(text)), currency);
    }
}""",
    "line": 9,
    "function": "read",
    "exc": ("NumberFormatException", "Character , is neither a decimal digit number"),
    "near": (
        "src/main/java/com/acme/money/AmountReader.java",
        hunk(
            "public class AmountReader {",
            7,
            [(7, '        String text = fields.get("amount");')],
            [
                (
                    8,
                    '        String currency = fields.getOrDefault("currency", "EUR").trim();',
                )
            ],
            [(8, '        String currency = fields.get("currency");')],
        ),
    ),
    "fault": (
        "src/main/java/com/acme/money/AmountFormat.java",
        hunk(
            "public final class AmountFormat {",
            5,
            [
                (5, "    public static String clean(String text) {"),
                (6, '        String digits = text.replaceAll("[^0-9,.]", "");'),
                (8, "    }"),
            ],
            [(7, '        return digits.replaceAll("[.](?=\\\\d{3})", "");')],
            [(7, '        return digits.replace(".", "").replace(",", ".");')],
        ),
    ),
    "callee": "clean",
}
PYTHON_PARSE = {
    "path": "billing/invoices.py",
    "source": """from decimal import Decimal

from billing.amounts import normalize


def invoice_total(row):
    raw = row["total"]
    label = row.get("label", "").strip().title()
    return {"label": label, "total": Decimal(normalize(raw))}
""",
    "line": 9,
    "function": "invoice_total",
    "exc": ("decimal.InvalidOperation", "[<class 'decimal.ConversionSyntax'>]: could not parse"),
    "near": (
        "billing/invoices.py",
        hunk(
            "def invoice_total(row):",
            7,
            [(7, '    raw = row["total"]')],
            [(8, '    label = row.get("label", "").strip().title()')],
            [(8, '    label = row["label"]')],
        ),
    ),
    "fault": (
        "billing/amounts.py",
        hunk(
            "",
            4,
            [(4, "def normalize(text):"), (5, "    digits = text.strip()")],
            [(6, '    return digits.replace(" ", "")')],
            [(6, '    return digits.replace(" ", "").replace(",", ".")')],
        ),
    ),
    "callee": "normalize",
}
# An empty collection: the crash takes the first element of a list bound above from a
# repository method whose filter a commit tightened; a newer commit logged the list.
KOTLIN_EMPTY = {
    "path": "src/main/kotlin/com/shop/reco/PickService.kt",
    "source": """package com.shop.reco

import com.shop.catalog.ShelfRepository

class PickService(private val shelf: ShelfRepository) {

    fun pick(category: String): Product {
        val offers = shelf.inStock(category)
        log.info("offers for {}: {}", category, offers.size)
        return offers
            .sortedBy { it.price }
            .first()
    }
}""",
    "line": 12,
    "function": "pick",
    "exc": ("java.util.NoSuchElementException", "List is empty."),
    "near": (
        "src/main/kotlin/com/shop/reco/PickService.kt",
        hunk(
            "class PickService(private val shelf: ShelfRepository) {",
            8,
            [(8, "        val offers = shelf.inStock(category)"), (10, "        return offers")],
            [(9, '        log.info("offers for {}: {}", category, offers.size)')],
        ),
    ),
    "fault": (
        "src/main/kotlin/com/shop/catalog/ShelfRepository.kt",
        hunk(
            "class ShelfRepository(private val client: ShelfClient) {",
            6,
            [
                (6, "    fun inStock(category: String): List<Product> ="),
                (7, "        cache.getOrPut(category) { client.products(category) }"),
            ],
            [(8, "            .filter { it.stock >= MIN_STOCK }")],
            [(8, "            .filter { it.stock > 0 }")],
        ),
    ),
    "callee": "instock",
}
PYTHON_EMPTY = {
    "path": "shipping/labels.py",
    "source": """class LabelPrinter:
    def __init__(self, db):
        self.parcels = ParcelStore(db)

    def heaviest(self, order_id):
        parcels = self.parcels.open_for(order_id)
        print("parcels", len(parcels))
        return max(parcels, key=lambda p: p.weight)
""",
    "line": 8,
    "function": "heaviest",
    "exc": ("ValueError", "max() arg is an empty sequence"),
    "near": (
        "shipping/labels.py",
        hunk(
            "class LabelPrinter:",
            6,
            [(6, "        parcels = self.parcels.open_for(order_id)")],
            [(7, '        print("parcels", len(parcels))')],
        ),
    ),
    "fault": (
        "shipping/parcel_store.py",
        hunk(
            "class ParcelStore:",
            10,
            [(10, "    def open_for(self, order_id):")],
            [(11, '        return [p for p in self.rows(order_id) if p.status == "ready"]')],
            [(11, '        return [p for p in self.rows(order_id) if p.status != "void"]')],
        ),
    ),
    "callee": "open_for",
}
# A null: the crash dereferences what a lookup of another class returns; the lookup's
# default was dropped (a ternary in Java, Kotlin's `?:`).
JAVA_NULL = {
    "path": "src/main/java/com/acme/routing/Router.java",
    "source": """package com.acme.routing;

public class Router {
    private final RegionCodes codes;

    public Route route(Order order) {
        String label = order.label().trim();
        String key = codes.regionKey(order).toUpperCase();
        return new Route(key, label);
    }
}""",
    "line": 8,
    "function": "route",
    "exc": (
        "NullPointerException",
        'Cannot invoke "String.toUpperCase()" because the return value is null',
    ),
    "near": (
        "src/main/java/com/acme/routing/Router.java",
        hunk(
            "public class Router {",
            6,
            [(6, "    public Route route(Order order) {")],
            [(7, "        String label = order.label().trim();")],
            [(7, "        String label = order.label();")],
        ),
    ),
    "fault": (
        "src/main/java/com/acme/routing/RegionCodes.java",
        hunk(
            "public class RegionCodes {",
            4,
            [(4, "    public String regionKey(Order order) {"), (6, "    }")],
            [(5, "        return order.region();")],
            [(5, '        return order.region() != null ? order.region() : "US";')],
        ),
    ),
    "callee": "regionkey",
}
KOTLIN_NULL = {
    "path": "src/main/kotlin/com/acme/routing/Router.kt",
    "source": """package com.acme.routing

class Router(private val codes: RegionCodes) {
    fun route(order: Order): Route {
        val label = order.label.trim()
        val key = codes.regionKey(order)!!.uppercase()
        return Route(key, label)
    }
}""",
    "line": 6,
    "function": "route",
    "exc": ("java.lang.NullPointerException", ""),
    "near": (
        "src/main/kotlin/com/acme/routing/Router.kt",
        hunk(
            "class Router(private val codes: RegionCodes) {",
            4,
            [(4, "    fun route(order: Order): Route {")],
            [(5, "        val label = order.label.trim()")],
            [(5, "        val label = order.label")],
        ),
    ),
    "fault": (
        "src/main/kotlin/com/acme/routing/RegionCodes.kt",
        hunk(
            "class RegionCodes(private val defaultRegion: String) {",
            4,
            [(4, "    fun regionKey(order: Order): String? =")],
            [(5, "        order.region")],
            [(5, "        order.region ?: defaultRegion")],
        ),
    ),
    "callee": "regionkey",
}
# The default dropped from what a helper returns (`region or "US"` → `region`), and a field
# renamed in the object a helper returns, read off the call on the crash line.
PYTHON_NULL = {
    "path": "claims/calculations.py",
    "source": """from claims.helpers import resolve_region


def region_key(rec):
    label = rec["label"].strip()
    region = rec.get("region")
    key = resolve_region(region).upper()
    return {"key": key, "label": label}
""",
    "line": 7,
    "function": "region_key",
    "exc": ("AttributeError", "'NoneType' object has no attribute 'upper'"),
    "near": (
        "claims/calculations.py",
        hunk(
            "def region_key(rec):",
            5,
            [(6, '    region = rec.get("region")')],
            [(5, '    label = rec["label"].strip()')],
            [(5, '    label = rec["label"]')],
        ),
    ),
    "fault": (
        "claims/helpers.py",
        hunk(
            "",
            10,
            [(10, "def resolve_region(region):"), (11, '    """The routing region."""')],
            [(12, "    return region")],
            [(12, '    return region or "US"')],
        ),
    ),
    "callee": "resolve_region",
}
NODE_FIELD = {
    "path": "src/payments/calculations.js",
    "source": """const { customerRef } = require("./helpers");

function payoutCustomer(rec) {
  const note = (rec.note || "").trim();
  const customer = customerRef(rec.customerId).customer_id.trim();
  return { customer, note };
}""",
    "line": 5,
    "function": "payoutCustomer",
    "exc": ("TypeError", "Cannot read properties of undefined (reading 'trim')"),
    "near": (
        "src/payments/calculations.js",
        hunk(
            "function payoutCustomer(rec) {",
            4,
            [],
            [(4, '  const note = (rec.note || "").trim();')],
            [(4, "  const note = rec.note;")],
        ),
    ),
    "fault": (
        "src/payments/helpers.js",
        hunk(
            "",
            7,
            [(7, "function customerRef(customerId) {"), (9, "}")],
            [(8, '  return { customerId: customerId, source: "api" };')],
            [(8, '  return { customer_id: customerId, source: "api" };')],
        ),
    ),
    "callee": "customerref",
}
CASES = {
    "java-parse": JAVA_PARSE,
    "python-parse": PYTHON_PARSE,
    "kotlin-empty": KOTLIN_EMPTY,
    "python-empty": PYTHON_EMPTY,
    "java-null": JAVA_NULL,
    "kotlin-null": KOTLIN_NULL,
    "python-null": PYTHON_NULL,
    "node-field": NODE_FIELD,
}


def history(case: dict, fault: tuple[str, dict] | None = None) -> list[dict]:
    """Newest first: the edit beside the crash a day before the errors, the fault before it."""
    path, fault_hunk = fault or case["fault"]
    return [
        commit("near", "2026-11-27T10:00:00Z", *_one(case["near"])),
        commit("fault", "2026-11-26T10:00:00Z", path, [fault_hunk]),
    ]


def _one(pair: tuple[str, dict]) -> tuple[str, list[dict]]:
    return pair[0], [pair[1]]


def crash_of(case: dict) -> Crash:
    return crash_at(case["path"], case["source"], case["line"], case["function"], case["exc"])


@pytest.mark.parametrize("name", CASES)
def test_a_change_of_the_exceptions_kind_in_the_function_returning_the_value_wins(name):
    case = CASES[name]
    ranked = rank(crash_of(case), history(case))
    top = ranked[0]
    assert (top.sha, top.path) == ("fault", case["fault"][0])
    assert top.returns == case["callee"] and top.fits and top.producer
    assert any("returns the failing value" in r for r in top.reasons)
    near = next((c for c in ranked if c.sha == "near"), None)
    assert near is None or near.score < top.score


@pytest.mark.parametrize("name", CASES)
def test_a_function_of_that_name_in_a_file_the_call_does_not_name_is_not_it(name):
    case = CASES[name]
    path, fault_hunk = case["fault"]
    elsewhere = path.rsplit("/", 1)[0] + "/reports/WeeklyDigest" + path[path.rfind(".") :]
    ranked = rank(crash_of(case), history(case, (elsewhere, fault_hunk)))
    assert all(not c.returns for c in ranked)
    there = next(c for c in rank(crash_of(case), history(case)) if c.sha == "fault")
    assert all(c.score < there.score for c in ranked if c.sha == "fault")


@pytest.mark.parametrize("name", CASES)
def test_a_change_there_of_no_kind_that_raises_it_is_not_it(name):
    case = CASES[name]
    path, fault_hunk = case["fault"]
    # The same function, with only a renamed local variable's use in a new debug line.
    quiet = dict(fault_hunk, removed=[], added=[[fault_hunk["added"][0][0], "        pass"]])
    ranked = rank(crash_of(case), history(case, (path, quiet)))
    assert all(not c.returns for c in ranked)


def test_a_change_that_fits_on_the_crash_line_stays_above_the_callee():
    case = PYTHON_PARSE
    crash_line = (
        "billing/invoices.py",
        hunk(
            "def invoice_total(row):",
            9,
            [],
            [(9, '    return {"label": label, "total": Decimal(normalize(raw))}')],
            [(9, '    return {"label": label, "total": float(normalize(raw))}')],
        ),
    )
    history = [
        commit("crashline", "2026-11-27T10:00:00Z", *_one(crash_line)),
        commit("fault", "2026-11-26T10:00:00Z", case["fault"][0], [case["fault"][1]]),
    ]
    ranked = rank(crash_of(case), history)
    assert [c.sha for c in ranked[:2]] == ["crashline", "fault"]
    assert ranked[0].on_crash_line and ranked[0].fits


def test_a_function_called_inside_the_callee_is_followed_when_a_re_raise_hides_its_frames():
    """The cause was dropped (`throw new Error(... err.message)`): the stack ends at the
    re-raise, and the hunks of the history show what the guarded call's function calls."""
    source = """import { refundDueDate } from "./refund.calculations";

export function processRefund(rec: Refund, settings: Settings): unknown {
  try {
    return refundDueDate(rec, settings);
  } catch (err) {
    throw new Error(`could not process refund ${rec.id}: ${(err as Error).message}`);
  }
}"""
    c = crash_at(
        "src/returns/refund.service.ts",
        source,
        7,
        "processRefund",
        ("Error", "could not process refund R-1: Invalid time value"),
    )
    outer = hunk(
        "",
        3,
        [
            (3, "export function refundDueDate(rec: Refund, settings: Settings): unknown {"),
            (4, "  const due = new Date(dueDateText(rec.issuedAt)).toISOString();"),
            (6, "}"),
        ],
        [(5, "  return { result: due, id: rec.id };")],
        [(5, "  return { value: due, id: rec.id };")],
    )
    inner = hunk(
        "",
        8,
        [(8, "export function dueDateText(issuedAt: string): unknown {"), (10, "}")],
        [(9, '  return new Date(issuedAt).toLocaleDateString("en-GB");')],
        [(9, "  return new Date(issuedAt).toISOString().slice(0, 10);")],
    )
    ranked = rank(
        c,
        [
            commit("outer", "2026-11-27T10:00:00Z", "src/returns/refund.calculations.ts", [outer]),
            commit("inner", "2026-11-26T10:00:00Z", "src/returns/refund.helpers.ts", [inner]),
        ],
    )
    assert ranked[0].sha == "inner" and ranked[0].returns == "duedatetext" and ranked[0].fits
    assert not next(r for r in ranked if r.sha == "outer").returns
