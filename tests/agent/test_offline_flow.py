"""Values that come from a caller or from a type's declaration (issue 12).

Three classes, each built here in several languages:
- a panic recovered by a deferred handler: the crash is the frame the panic left, not the
  handler that reported it;
- a field's name on the wire changed where its type is declared: the decoder leaves it
  empty and the failure shows where the empty value is used, in another file;
- the crash line rewritten around the failing call, handing it the same arguments: the
  caller's change to the expression bound to them is the fault, though blame names the
  rewrite.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from agent import stacktrace
from agent.models.changes import Crash, rank

FIRST_ERROR = datetime(2026, 11, 28, 9, tzinfo=UTC)


def frame(
    path: str, line: int, function: str, context: str | None = None, **kw: Any
) -> stacktrace.Frame:
    return stacktrace.Frame(
        filename=path,
        abs_path=path,
        module=kw.get("module"),
        function=function,
        lineno=line,
        in_app=kw.get("in_app", True),
        context_line=context,
        context=kw.get("around", []),
    )


def commit(sha: str, date: str, *files: tuple[str, list[dict]]) -> dict:
    return {
        "sha": sha,
        "author": "Dev",
        "date": date,
        "summary": f"commit {sha}",
        "parents": ["p"],
        "files": [{"path": p, "hunks": h} for p, h in files],
    }


def hunk(
    start: int,
    added: list[tuple[int, str]],
    removed: list[tuple[int, str]] = (),
    context: list[tuple[int, str]] = (),
    function: str = "",
) -> dict:
    return {
        "header": "@@",
        "function": function,
        "old_start": start,
        "old_lines": len(removed) + len(context),
        "new_start": start,
        "new_lines": len(added) + len(context),
        "added": [list(a) for a in added],
        "removed": [list(r) for r in removed],
        "context": [list(c) for c in context],
    }


# -- a panic recovered by a deferred handler ------------------------------------------


def raw(filename: str, function: str, line: int, in_app: bool, module: str | None = None) -> dict:
    return {
        "filename": filename,
        "absPath": filename,
        "module": module,
        "function": function,
        "lineNo": line,
        "inApp": in_app,
    }


def event(frames: list[dict], platform: str) -> dict:
    value = {"type": "panic", "value": "boom", "stacktrace": {"frames": frames}}
    return {"platform": platform, "entries": [{"type": "exception", "data": {"values": [value]}}]}


GO_RECOVERED = [
    raw("internal/worker/consumer.go", "(*Consumer).handle", 29, True),
    raw("internal/worker/reservations.go", "(*Reservations).Apply", 24, True),
    raw("runtime/signal_unix.go", "sigpanic", 917, False, "runtime"),
    raw("runtime/panic.go", "panicmem", 261, False, "runtime"),
    raw("runtime/panic.go", "gopanic", 770, False, "runtime"),
    raw("internal/worker/consumer.go", "(*Consumer).recoverPanic", 37, True),
]
# An explicit panic(): the runtime's gopanic alone, then the deferred handler.
GO_EXPLICIT = [
    raw("cmd/api/main.go", "serve", 40, True),
    raw("internal/cart/cart.go", "(*Cart).Total", 57, True),
    raw("/usr/local/go/src/runtime/panic.go", "runtime.gopanic", 770, False),
    raw("internal/httpx/recover.go", "Recoverer.func1", 18, True),
]
# Rust: the panic hook that reports it runs inside the panic machinery.
RUST_HOOK = [
    raw("src/main.rs", "app::main", 12, True),
    raw("src/ledger.rs", "app::ledger::post", 88, True),
    raw("library/core/src/panicking.rs", "core::panicking::panic_fmt", 72, False),
    raw("library/std/src/panicking.rs", "std::panicking::rust_panic_with_hook", 770, False),
    raw("src/telemetry.rs", "app::telemetry::install::{{closure}}", 30, True),
]


@pytest.mark.parametrize(
    ("frames", "platform", "files", "crash"),
    [
        (
            GO_RECOVERED,
            "go",
            ["internal/worker/consumer.go", "internal/worker/reservations.go"],
            ("internal/worker/reservations.go", 24),
        ),
        (
            GO_EXPLICIT,
            "go",
            ["cmd/api/main.go", "internal/cart/cart.go", "internal/httpx/recover.go"],
            ("internal/cart/cart.go", 57),
        ),
        (
            RUST_HOOK,
            "rust",
            ["src/main.rs", "src/ledger.rs", "src/telemetry.rs"],
            ("src/ledger.rs", 88),
        ),
    ],
)
def test_a_recovered_panic_crashed_where_it_left_the_code_not_in_its_handler(
    frames: list[dict], platform: str, files: list[str], crash: tuple[str, int]
) -> None:
    excs = stacktrace.exceptions(event(frames, platform))
    found = stacktrace.crash_frame(excs, files)
    assert found is not None
    assert (found[2], found[1].lineno) == crash
    # The handler is no frame of the failing path.
    paths = [(p, f.lineno) for f, p in stacktrace.stack_paths(excs[0], files)]
    assert paths[0] == crash and len(paths) == 2


def test_a_panic_with_nothing_after_the_runtime_keeps_every_frame() -> None:
    frames = GO_RECOVERED[:5]
    excs = stacktrace.exceptions(event(frames, "go"))
    assert len(excs[0].frames) == 5


# -- a field's name on the wire changed in its type's declaration ----------------------


def consumer_crash(case: dict) -> Crash:
    path, source, line, caller = case["crash"]
    return Crash(
        path=path,
        line=line,
        function="apply",
        exc_type=case["exc"][0],
        exc_value=case["exc"][1],
        code=source[line - 1].strip(),
        nearby=source[max(0, line - 4) : line],
        stack=[
            (frame(path, line, "apply"), path),
            (frame(caller[0], caller[1], "handle", caller[2]), caller[0]),
        ],
        first_seen=FIRST_ERROR,
        source=source,
    )


WIRE_CASES = {
    "go": dict(
        crash=(
            "internal/worker/reservations.go",
            [
                "package worker",
                "",
                "func (r *Reservations) Apply(ev events.Reserved) {",
                "\torder := r.store.Pending(ev.OrderID)",
                "\treservedTotal.WithLabelValues(ev.WarehouseID).Add(float64(ev.Qty))",
                "\torder.Reserved += ev.Qty",
                "}",
            ],
            6,
            ("internal/worker/consumer.go", 29, "\tc.reservations.Apply(ev)"),
        ),
        exc=("runtime.Error", "runtime error: invalid memory address or nil pointer dereference"),
        decl="internal/events/events.go",
        hunk=hunk(
            3,
            [
                (4, '\tOrderID     string `json:"orderId"`'),
                (5, '\tQty         int    `json:"qty"`'),
            ],
            [(4, '\tOrderID string `json:"order_id"`'), (5, '\tQty     int    `json:"qty"`')],
            [(3, "type Reserved struct {"), (6, "}")],
        ),
        fault=4,
    ),
    "java": dict(
        crash=(
            "src/main/java/shop/stock/Reservations.java",
            [
                "class Reservations {",
                "  void apply(ReservedEvent ev) {",
                "    Order order = store.pending(ev.getOrderId());",
                '    metrics.counter("reserved", ev.getWarehouseId()).increment(ev.getQty());',
                "    order.reserve(ev.getQty());",
                "  }",
                "}",
            ],
            5,
            ("src/main/java/shop/stock/Consumer.java", 31, "reservations.apply(ev);"),
        ),
        exc=("java.lang.NullPointerException", 'Cannot invoke "Order.reserve(int)"'),
        decl="src/main/java/shop/events/ReservedEvent.java",
        hunk=hunk(
            8,
            [(9, '  @JsonProperty("orderId")')],
            [(9, '  @JsonProperty("order_id")')],
            [(8, "public class ReservedEvent {"), (10, "  private String orderId;")],
        ),
        fault=9,
    ),
    "kotlin": dict(
        crash=(
            "src/main/kotlin/shop/stock/Reservations.kt",
            [
                "class Reservations(private val store: Store) {",
                "    fun apply(ev: ReservedEvent) {",
                "        val order = store.pending(ev.orderId)",
                "        reservedUnits.labels(ev.warehouseId).inc(ev.qty.toDouble())",
                "        order!!.reserve(ev.qty)",
                "    }",
                "}",
            ],
            5,
            ("src/main/kotlin/shop/stock/Consumer.kt", 22, "reservations.apply(ev)"),
        ),
        exc=("java.lang.NullPointerException", ""),
        decl="src/main/kotlin/shop/events/ReservedEvent.kt",
        hunk=hunk(
            4,
            [(5, '    @SerialName("orderId") val orderId: String? = null,')],
            [(5, '    @SerialName("order_id") val orderId: String? = null,')],
            [(4, "data class ReservedEvent("), (6, "    val qty: Int,")],
        ),
        fault=5,
    ),
    "python": dict(
        crash=(
            "stock/reservations.py",
            [
                "def apply(store, ev: ReservedEvent) -> None:",
                "    order = store.pending(ev.order_id)",
                "    UNITS.labels(ev.warehouse_id).inc(ev.qty)",
                "    order.reserved += ev.qty",
            ],
            4,
            ("stock/consumer.py", 40, "    apply(self.store, ReservedEvent.model_validate(body))"),
        ),
        exc=("AttributeError", "'NoneType' object has no attribute 'reserved'"),
        decl="stock/events.py",
        hunk=hunk(
            6,
            [(7, '    order_id: str | None = Field(default=None, alias="orderId")')],
            [(7, '    order_id: str | None = Field(default=None, alias="order_id")')],
            [(6, "class ReservedEvent(BaseModel):"), (8, "    qty: int")],
        ),
        fault=7,
    ),
    # The name dropped with a rename of the field: the decoder now reads its own name.
    "kotlin-dropped": dict(
        crash=(
            "src/main/kotlin/shop/stock/Reservations.kt",
            [
                "class Reservations(private val store: Store) {",
                "    fun apply(ev: ReservedEvent) {",
                "        val order = store.pending(ev.orderId)",
                "        reservedUnits.labels(ev.warehouseId).inc(ev.qty.toDouble())",
                "        order!!.reserve(ev.qty)",
                "    }",
                "}",
            ],
            5,
            ("src/main/kotlin/shop/stock/Consumer.kt", 22, "reservations.apply(ev)"),
        ),
        exc=("java.lang.NullPointerException", ""),
        decl="src/main/kotlin/shop/events/ReservedEvent.kt",
        hunk=hunk(
            4,
            [(5, "    val orderId: String?,")],
            [(5, '    @JsonProperty("order_id") val orderNo: String?,')],
            [(4, "data class ReservedEvent("), (6, "    val qty: Int,")],
        ),
        fault=5,
    ),
    # A decoding map: the key a decoder reads the field from.
    "typescript": dict(
        crash=(
            "src/stock/reservations.ts",
            [
                "export function apply(store: Store, ev: Reserved): void {",
                "  const order = store.pending(ev.orderId);",
                "  reservedUnits.inc({ warehouse: ev.warehouseId }, ev.qty);",
                "  order.reserved += ev.qty;",
                "}",
            ],
            4,
            ("src/stock/consumer.ts", 18, "    apply(this.store, toReserved(JSON.parse(msg)));"),
        ),
        exc=("TypeError", "Cannot read properties of undefined (reading 'reserved')"),
        decl="src/stock/events.ts",
        hunk=hunk(
            8,
            [(9, '    orderId: raw["orderId"],')],
            [(9, '    orderId: raw["order_id"],')],
            [(8, "  return {"), (10, '    qty: Number(raw["qty"]),')],
            function="export function toReserved(raw: Record<string, unknown>): Reserved {",
        ),
        fault=9,
    ),
    # A dataclass built from a dict: the key its constructor reads.
    "python-dataclass": dict(
        crash=(
            "stock/reservations.py",
            [
                "def apply(store, ev: Reserved) -> None:",
                "    order = store.pending(ev.order_id)",
                "    UNITS.labels(ev.warehouse_id).inc(ev.qty)",
                "    order.reserved += ev.qty",
            ],
            4,
            ("stock/consumer.py", 40, "    apply(self.store, Reserved.from_dict(body))"),
        ),
        exc=("AttributeError", "'NoneType' object has no attribute 'reserved'"),
        decl="stock/events.py",
        hunk=hunk(
            14,
            [(15, '            order_id=data.get("orderId"),')],
            [(15, '            order_id=data.get("order_id"),')],
            [(14, "        return cls("), (16, '            qty=int(data["qty"]),')],
            function="class Reserved:",
        ),
        fault=15,
    ),
}


def wire_history(case: dict) -> list[dict]:
    path, source, line, _ = case["crash"]
    # A newer decoy right above the crash line, in the crashing function: a metrics line
    # that reads the event but binds nothing the crash line uses.
    decoy_line = line - 1
    return [
        commit(
            "decoy",
            "2026-11-27T15:00:00Z",
            (path, [hunk(decoy_line, [(decoy_line, source[decoy_line - 1])])]),
        ),
        commit("rename", "2026-11-27T10:00:00Z", (case["decl"], [case["hunk"]])),
    ]


@pytest.mark.parametrize("language", sorted(WIRE_CASES))
def test_a_field_renamed_on_the_wire_in_its_type_is_the_fault_where_it_is_read(
    language: str,
) -> None:
    case = WIRE_CASES[language]
    ranked = rank(consumer_crash(case), wire_history(case))
    top = ranked[0]
    assert (top.sha, top.path, top.line) == ("rename", case["decl"], case["fault"])
    assert top.fits and top.producer
    assert any("serialized name" in r for r in top.reasons)


@pytest.mark.parametrize("language", sorted(WIRE_CASES))
def test_a_wire_rename_in_a_type_the_failing_code_does_not_name_is_no_fit(language: str) -> None:
    case = WIRE_CASES[language]
    other = dict(case["hunk"])
    other["context"] = [[n, t.replace("Reserved", "Shipped")] for n, t in case["hunk"]["context"]]
    other["function"] = other["function"].replace("Reserved", "Shipped")
    ranked = rank(consumer_crash(case), wire_history(case | {"hunk": other}))
    assert all(not any("serialized name" in r for r in c.reasons) for c in ranked)


# -- the crash line rewritten around a call that gets the same arguments ----------------


PASS_CASES = {
    "typescript": dict(
        crash_path="src/pricing/format.ts",
        source=[
            "const cache = new Map<string, Intl.NumberFormat>();",
            "",
            "export function formatPrice(cents: number, currency: string, locale: string) {",
            "  const key = `${locale}|${currency}`;",
            "  const fmt = cache.get(key) ?? new Intl.NumberFormat(locale, { ...opts, currency });",
            "  cache.set(key, fmt);",
            "  return fmt.format(cents / 100);",
            "}",
        ],
        line=5,
        exc=("RangeError", "Invalid currency code : €"),
        callee="new NumberFormat",
        removed="  const fmt = new Intl.NumberFormat(locale, { ...opts, currency });",
        caller=(
            "src/routes/cart.ts",
            15,
            "    price: formatPrice(line.cents, currency, market.locale),",
        ),
        caller_hunk=hunk(
            10,
            [(10, "  const currency = market.currency.symbol;")],
            [(10, "  const currency = market.currency.code;")],
        ),
        changed_args=(
            "  const fmt = new Intl.NumberFormat(locale, { ...opts, currency: currency.trim() });"
        ),
    ),
    "java": dict(
        crash_path="src/main/java/shop/pricing/Prices.java",
        source=[
            "class Prices {",
            "  static String format(long cents, String code, Locale locale) {",
            "    Currency currency = CACHE.computeIfAbsent(code, k -> Currency.getInstance(code));",
            "    return NumberFormat.getCurrencyInstance(locale).format(cents / 100.0);",
            "  }",
            "}",
        ],
        line=3,
        exc=("java.lang.IllegalArgumentException", "Invalid currency code: €"),
        callee="java.util.Currency.getInstance",
        removed="    Currency currency = Currency.getInstance(code);",
        caller=(
            "src/main/java/shop/web/CartController.java",
            44,
            "    String label = Prices.format(line.cents(), code, market.locale());",
        ),
        caller_hunk=hunk(
            41,
            [(41, "    String code = market.currency().symbol();")],
            [(41, "    String code = market.currency().code();")],
        ),
        changed_args="    Currency currency = Currency.getInstance(code.toUpperCase());",
    ),
    # `datetime.strptime` hands the parsing to `_strptime._strptime_datetime`, which raises.
    "python": dict(
        crash_path="shop/dates.py",
        source=[
            "def delivery_day(value, fmt):",
            "    parsed = datetime.strptime(value, fmt).date()",
            "    return parsed.isoformat()",
        ],
        line=2,
        exc=("ValueError", "time data '27/11/2026' does not match format '%Y-%m-%d'"),
        callee="_strptime_datetime",
        removed="    parsed = datetime.strptime(value, fmt)",
        caller=("shop/views.py", 30, "    day = delivery_day(form.day, fmt)"),
        caller_hunk=hunk(
            27,
            [(27, "    fmt = settings.display_format")],
            [(27, "    fmt = settings.date_format")],
        ),
        changed_args="    parsed = datetime.strptime(value.strip(), fmt)",
    ),
}


def pass_crash(case: dict) -> Crash:
    line, source, caller, path = case["line"], case["source"], case["caller"], case["crash_path"]
    crashed = frame(path, line, "format")
    raised = frame("<library>", 0, case["callee"], in_app=False)
    exc = stacktrace.ExceptionInfo(*case["exc"], None, [crashed, raised])
    return Crash(
        path=path,
        line=line,
        function="format",
        exc_type=case["exc"][0],
        exc_value=case["exc"][1],
        code=source[line - 1].strip(),
        nearby=source[max(0, line - 4) : line],
        stack=[(crashed, path), (frame(caller[0], caller[1], "page", caller[2]), caller[0])],
        first_seen=FIRST_ERROR,
        blamed="rewrite",
        source=source,
        callee=stacktrace.callee(exc, crashed),
    )


def pass_history(case: dict, removed: str) -> list[dict]:
    line, source = case["line"], case["source"]
    return [
        commit(
            "rewrite",
            "2026-11-27T13:00:00Z",
            (case["crash_path"], [hunk(line, [(line, source[line - 1])], [(line, removed)])]),
        ),
        commit("caller", "2026-11-27T11:00:00Z", (case["caller"][0], [case["caller_hunk"]])),
    ]


@pytest.mark.parametrize("language", sorted(PASS_CASES))
def test_a_rewrite_that_hands_the_failing_call_the_same_arguments_gives_way_to_the_caller(
    language: str,
) -> None:
    case = PASS_CASES[language]
    ranked = rank(pass_crash(case), pass_history(case, case["removed"]))
    top = ranked[0]
    assert (top.sha, top.path) == ("caller", case["caller"][0])
    rewrite = next(c for c in ranked if c.sha == "rewrite")
    assert rewrite.passes and not rewrite.fits and not rewrite.blamed


@pytest.mark.parametrize("language", sorted(PASS_CASES))
def test_a_rewrite_that_changes_the_failing_calls_arguments_still_wrote_the_crash(
    language: str,
) -> None:
    case = PASS_CASES[language]
    ranked = rank(pass_crash(case), pass_history(case, case["changed_args"]))
    rewrite = next(c for c in ranked if c.sha == "rewrite")
    assert not rewrite.passes and rewrite.on_crash_line and rewrite.blamed
    assert "adds the crash line" in rewrite.reasons


def test_a_rewrite_of_a_line_that_failed_on_its_own_operation_still_wrote_the_crash() -> None:
    # An index past the end: no library frame, so no call of the line is known to have
    # raised; `len(lines)` handed the same argument says nothing about the index.
    source = [
        "def last_sku(rec):",
        "    lines = rec.get('lines') or []",
        "    return lines[len(lines)]['sku']",
    ]
    c = Crash(
        path="app/calc.py",
        line=3,
        function="last_sku",
        exc_type="IndexError",
        exc_value="list index out of range",
        code=source[2].strip(),
        nearby=source,
        stack=[(frame("app/calc.py", 3, "last_sku"), "app/calc.py")],
        first_seen=FIRST_ERROR,
        blamed="rewrite",
        source=source,
    )
    history = [
        commit(
            "rewrite",
            "2026-11-27T13:00:00Z",
            (
                "app/calc.py",
                [hunk(3, [(3, source[2])], [(3, "    return lines[len(lines) - 1]['sku']")])],
            ),
        )
    ]
    top = rank(c, history)[0]
    assert not top.passes and top.on_crash_line and top.fits and top.blamed


def test_the_callee_is_the_library_frame_the_exception_left_from() -> None:
    app = frame("src/pricing/format.ts", 6, "formatPrice")
    lib = frame("<anonymous>", 0, "new NumberFormat", in_app=False)
    exc = stacktrace.ExceptionInfo("RangeError", "Invalid currency code : €", None, [app, lib])
    assert stacktrace.callee(exc, app) == "NumberFormat"
    assert stacktrace.callee(exc, lib) == ""


def test_a_field_renamed_where_nothing_names_it_on_the_wire_is_no_wire_rename() -> None:
    from agent.models.wire import renamed

    plain = hunk(
        4,
        [(5, "    val orderId: String?,")],
        [(5, "    val orderNo: String?,")],
        [(4, "data class ReservedEvent("), (6, "    val qty: Int,")],
    )
    assert renamed(plain) == []


def test_a_decoded_field_named_like_the_key_plain_data_code_reads_is_found() -> None:
    # PHP: the calculation reads an array (`$rec['customer_ref']`) and names no type; the
    # payload's decoder now reads `customerId` into the field of the same name.
    source = [
        "    public static function customerKey($rec): mixed",
        "    {",
        "        $customerRef = $rec['customer_ref'] ?? null;",
        "        $customerKey = strtoupper($customerRef);",
        "        return $customerKey;",
        "    }",
    ]
    c = Crash(
        path="app/Services/OrderCalculator.php",
        line=4,
        function="customerKey",
        exc_type="TypeError",
        exc_value="strtoupper(): Argument #1 ($string) must be of type string, null given",
        code=source[3].strip(),
        nearby=source[:4],
        stack=[
            (
                frame("app/Services/OrderCalculator.php", 4, "customerKey"),
                "app/Services/OrderCalculator.php",
            )
        ],
        first_seen=FIRST_ERROR,
        source=source,
    )
    decoder = hunk(
        21,
        [(23, "            customerRef: $data['customerId'] ?? null,")],
        [(23, "            customerRef: $data['customer_id'] ?? null,")],
        [(21, "        return new self("), (22, "            id: (string) $data['id'],")],
        function="final class OrderPayload",
    )
    history = [commit("rename", "2026-11-27T10:00:00Z", ("app/Models/OrderPayload.php", [decoder]))]
    top = rank(c, history)[0]
    assert (top.path, top.line) == ("app/Models/OrderPayload.php", 23)
    assert any("serialized name" in r for r in top.reasons)
