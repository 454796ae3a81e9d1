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
CASES = {
    "java-parse": JAVA_PARSE,
    "python-parse": PYTHON_PARSE,
    "kotlin-empty": KOTLIN_EMPTY,
    "python-empty": PYTHON_EMPTY,
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
    assert not ranked or ranked[0].sha == "near" or not ranked[0].fits


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
