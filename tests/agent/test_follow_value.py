"""Following the failing value back from the crash: through destructuring and several
targets, into the crash file's own helpers, along a call spread over lines, to where a name
it reads stopped being defined or a field it needs stopped being set, and inside the oldest
release that already failed."""

from dataclasses import replace
from datetime import UTC, datetime

import pytest

from agent.models.changes import bindings, rank
from tests.agent.test_changes import commit, crash, frame, hunk


@pytest.mark.parametrize(
    ("line", "targets", "source"),
    [
        ("const { from, to } = previousDays(1);", {"from", "to"}, "previousDays(1);"),
        ("let { data: rows, ...rest } = await q()", {"rows", "rest"}, "await q()"),
        ("const [head, tail] = split(xs)", {"head", "tail"}, "split(xs)"),
        ("start, end = window(1)", {"start", "end"}, "window(1)"),
        ("val (low, high) = bounds()", {"low", "high"}, "bounds()"),
        ("rows, err := repo.List(ctx)", {"rows", "err"}, "repo.List(ctx)"),
        ("Map<String, Order> byId = index(orders);", {"byid"}, "index(orders);"),
        ("var n int = len(xs)", {"n"}, "len(xs)"),
        ("total: Decimal = fee(x)", {"total"}, "fee(x)"),
        ("$rows = $db->query($sql);", {"rows"}, "$db->query($sql);"),
        ("if err := load(); err != nil {", {"err"}, "load(); err != nil {"),
    ],
)
def test_every_name_an_assignment_binds_is_bound(line, targets, source):
    assert bindings(line) == (targets, source)


@pytest.mark.parametrize(
    "line",
    ["if (a == b) {", "self.total = 3", "items[0] = 3", "f(a=1)", "for (int i = 0; i < n; i++) {"],
)
def test_comparisons_member_writes_and_keyword_arguments_bind_no_variable(line):
    assert bindings(line) is None


# (crash file, the function with its crash line, the helper file, its hunk before → after)
DESTRUCTURED = [
    (
        "jobs/daily.js",
        [
            "module.exports = async function daily() {",
            "  const { from, to } = previousDays(1);",
            "  const orders = await ordersBetween(from, to);",
            "  const total = orders.reduce((sum, o) => sum + o.cents, 0);",
            "  const biggest = orders.reduce((a, b) => (b.cents > a.cents ? b : a));",
        ],
        "lib/dates.js",
        "  return { from: today.minus({ days }), to: today };",
        "  return { from: today.minus({ days }), to: today.minus({ days: 1 }) };",
        "function previousDays(days) {",
    ),
    (
        "jobs/daily.py",
        [
            "def daily():",
            "    start, end = previous_days(1)",
            "    orders = orders_between(start, end)",
            "    total = sum(o.cents for o in orders)",
            "    biggest = max(orders, key=lambda o: o.cents)",
        ],
        "lib/dates.py",
        "    return today - timedelta(days=days), today",
        "    return today - timedelta(days=days), today - timedelta(days=1)",
        "def previous_days(days):",
    ),
]


@pytest.mark.parametrize(("path", "body", "helper", "old", "new", "header"), DESTRUCTURED)
def test_a_helper_two_steps_back_through_destructuring_beats_an_edit_of_a_line_aside(
    path, body, helper, old, new, header
):
    # The list is empty because the helper's range now ends a day early; the newer edit
    # above the crash binds `total`, which the failing value is not made of.
    line = len(body)
    c = crash(
        path=path,
        line=line,
        function="daily",
        exc_type="TypeError" if path.endswith(".js") else "ValueError",
        exc_value="Reduce of empty array with no initial value"
        if path.endswith(".js")
        else "max() arg is an empty sequence",
        code=body[-1].strip(),
        nearby=body[-3:],
        source=body,
        stack=[(frame(path, line, "daily", body[-1]), path)],
    )
    aside = hunk(
        4,
        [(4, body[3].replace("o.cents", "o.cents - o.refunded"))],
        [(4, body[3])],
        context=[(3, body[2]), (5, body[4])],
    )
    dates = hunk(8, [(9, new)], [(9, old)], context=[(8, header)])
    dates["function"] = header
    history = [
        commit("aside", "2026-11-28T08:30:00Z", (path, [aside])),
        commit("range", "2026-11-28T08:00:00Z", (helper, [dates])),
    ]
    ranked = rank(c, history)
    assert ranked and ranked[0].sha == "range", [(x.sha, x.score, x.reasons) for x in ranked]
    assert all(
        "around the crash line" not in r for x in ranked if x.sha == "aside" for r in x.reasons
    )


HELPER_SOURCE = [
    "from mercado import money",
    "",
    "def amounts_for(payout):",
    "    gross = money.to_decimal(payout.gross)",
    "    fee = money.apply_rate(gross, payout.rate)",
    "    return Amounts(gross=gross, fee=fee, net=gross - fee)",
    "",
    "def send(client, payout):",
    "    amounts = amounts_for(payout)",
    "    created = client.payouts.create(",
    "        amount=amounts.net,",
    "        currency=payout.currency,",
    "    )",
]


def test_a_function_the_crash_file_calls_leads_to_the_helper_that_makes_the_value():
    # The vendor's model rejects the amount; it is made by `amounts_for` in the same file,
    # which takes the fee from `money.apply_rate`: that is where the rounding changed (a
    # constant swapped inside a call, which is no renamed variable). The arguments of the
    # call run on below the crash line.
    path = "mercado/payouts/service.py"
    c = crash(
        path=path,
        line=10,
        function="send",
        exc_type="ValidationError",
        exc_value="1 validation error for PayoutCreate\namount\n  Decimal input should have "
        "no more than 2 decimal places",
        code="created = client.payouts.create(",
        nearby=HELPER_SOURCE[7:10],
        source=HELPER_SOURCE,
        stack=[(frame(path, 10, "send", HELPER_SOURCE[9]), path)],
    )
    rounding = hunk(
        19,
        [(20, "    return (amount * rate).quantize(PLACES, rounding=ROUND_HALF_UP)")],
        [(20, "    return (amount * rate).quantize(CENT, rounding=ROUND_HALF_UP)")],
        context=[(19, "def apply_rate(amount, rate):")],
    )
    rounding["function"] = "def apply_rate(amount, rate):"
    logging = hunk(14, [(14, "    log.info('sent %s', payout.id)")])
    history = [
        commit("log", "2026-11-28T08:40:00Z", (path, [logging])),
        commit("round", "2026-11-28T08:00:00Z", ("mercado/money.py", [rounding])),
    ]
    ranked = rank(c, history)
    assert ranked and ranked[0].sha == "round", [(x.sha, x.score, x.reasons) for x in ranked]
    assert any("apply_rate" in r for r in ranked[0].reasons)


# (the crash file and its lines, reading through the old name; the exception; the
# definition's file and its line before → after; a file of the same commit that follows the
# rename, and its line before → after)
RENAMES = [
    (  # PHP, Eloquent: the relation renamed in the model, the PDF controller not updated
        "app/Http/Controllers/PdfController.php",
        [
            "use App\\Models\\Invoice;",
            "",
            "    public function show(Invoice $invoice)",
            "    {",
            "        'name' => $invoice->customer->legal_name,",
        ],
        "ErrorException",
        'Attempt to read property "legal_name" on null',
        "app/Models/Invoice.php",
        ("    public function customer(): BelongsTo", "    public function account(): BelongsTo"),
        "app/Http/Resources/InvoiceResource.php",
        (
            "            'customer' => $this->whenLoaded('customer', fn () => [",
            "            'customer' => $this->whenLoaded('account', fn () => [",
        ),
    ),
    (  # TypeScript, Express: the middleware sets another property of the request
        "src/routes/reports.ts",
        [
            "import { tenantContext } from '../middleware/tenant';",
            "",
            "router.get('/r', async (req, res) => {",
            "  const t = req.tenant;",
            "  const rows = await depotNames(req.tenant.id);",
        ],
        "TypeError",
        "Cannot read properties of undefined (reading 'id')",
        "src/middleware/tenant.ts",
        (
            "  req.tenant = await tenants.find(token.tenantId);",
            "  req.account = await tenants.find(token.tenantId);",
        ),
        "src/routes/vehicles.ts",
        (
            "  const list = await vehicles.of(req.tenant.id);",
            "  const list = await vehicles.of(req.account.id);",
        ),
    ),
    (  # Python: the property renamed on the model the view reads
        "shop/views.py",
        [
            "from shop.models import Order",
            "",
            "def receipt(order):",
            "    lines = order.lines",
            "    return order.customer_name.upper()",
        ],
        "AttributeError",
        "'Order' object has no attribute 'customer_name'",
        "shop/models.py",
        ("    def customer_name(self):", "    def buyer_name(self):"),
        "shop/api.py",
        ("        'name': order.customer_name,", "        'name': order.buyer_name,"),
    ),
]


@pytest.mark.parametrize(
    ("path", "source", "exc_type", "exc_value", "model", "definition", "follower", "use"),
    RENAMES,
)
def test_where_a_name_the_failing_code_still_reads_stopped_being_defined_is_the_fault(
    path, source, exc_type, exc_value, model, definition, follower, use
):
    line = len(source)
    c = crash(
        path=path,
        line=line,
        function="show",
        exc_type=exc_type,
        exc_value=exc_value,
        code=source[-1].strip(),
        nearby=source[-2:],
        source=source,
        stack=[(frame(path, line, "show", source[-1]), path)],
    )
    renamed = hunk(17, [(17, definition[1])], [(17, definition[0])])
    followed = hunk(22, [(22, use[1])], [(22, use[0])])
    history = [commit("rename", "2026-11-28T08:00:00Z", (follower, [followed]), (model, [renamed]))]
    ranked = rank(c, history)
    assert ranked and (ranked[0].sha, ranked[0].path) == ("rename", model), [
        (x.path, x.score, x.reasons) for x in ranked
    ]
    assert any("still reads it by that name" in r for r in ranked[0].reasons)


def test_a_rename_of_a_name_the_failing_code_does_not_read_is_no_lost_name():
    path = "app/Http/Controllers/PdfController.php"
    source = [
        "use App\\Models\\Invoice;",
        "    public function show(Invoice $invoice)",
        "        'name' => $invoice->customer->legal_name,",
    ]
    c = crash(
        path=path,
        line=3,
        function="show",
        exc_type="ErrorException",
        exc_value='Attempt to read property "legal_name" on null',
        code=source[-1].strip(),
        nearby=source,
        source=source,
        stack=[(frame(path, 3, "show", source[-1]), path)],
    )
    other = hunk(
        30,
        [(30, "    public function payments(): HasMany")],
        [(30, "    public function settlements(): HasMany")],
    )
    history = [commit("other", "2026-11-28T08:00:00Z", ("app/Models/Invoice.php", [other]))]
    assert not any("still reads it" in r for x in rank(c, history) for r in x.reasons)


def timeout_crash():
    code = 'hub.CaptureException(fmt.Errorf("deliver %s attempt %d: %w", h.ID, h.Attempt, err))'
    path = "internal/worker/worker.go"
    return crash(
        path=path,
        line=89,
        function="(*Worker).handle",
        exc_type="*fmt.wrapError",
        exc_value="deliver wh_1 attempt 2: post: context deadline exceeded",
        code=code,
        nearby=["\tif err := w.d.Deliver(ctx, h); err != nil {", "\t\t" + code],
        source=[""] * 87 + ["\tif err := w.d.Deliver(ctx, h); err != nil {", "\t\t" + code],
        stack=[(frame(path, 89, "(*Worker).handle", code), path)],
    )


def test_a_field_a_refactor_stopped_setting_is_missing_where_the_others_are_set_now():
    # The options moved from main into a constructor, which no longer sets RetryTimeout:
    # zero, so every retry times out at once.
    c = timeout_crash()
    literal = [
        "\td := deliver.New(deliver.Options{",
        "\t\tSecret:       []byte(cfg.SigningSecret),",
        "\t\tFirstTimeout: cfg.FirstTimeout,",
        "\t\tRetryTimeout: cfg.RetryTimeout,",
        "\t})",
    ]
    main = hunk(
        29,
        [(29, "\td := deliver.New(deliver.OptionsFrom(cfg))")],
        [(29 + i, t) for i, t in enumerate(literal)],
    )
    options = hunk(
        1,
        [
            (6, "func OptionsFrom(cfg config.Config) Options {"),
            (7, "\treturn Options{"),
            (8, "\t\tSecret:       []byte(cfg.SigningSecret),"),
            (9, "\t\tFirstTimeout: cfg.FirstTimeout,"),
            (10, "\t}"),
        ],
        old_start=0,
    )
    options["old_lines"] = 0  # a new file
    transport = hunk(40, [(43, "\t\tCloseIdle: true,")], [(43, "\t\tCloseIdle: false,")])
    history = [
        commit("close", "2026-11-28T08:40:00Z", ("internal/deliver/deliverer.go", [transport])),
        commit(
            "move",
            "2026-11-28T08:00:00Z",
            ("cmd/hookd/main.go", [main]),
            ("internal/deliver/options.go", [options]),
        ),
    ]
    ranked = rank(c, history)
    assert ranked and (ranked[0].sha, ranked[0].path, ranked[0].line) == (
        "move",
        "internal/deliver/options.go",
        9,
    ), [(x.path, x.score, x.reasons) for x in ranked]
    assert any("no longer retrytimeout" in r for r in ranked[0].reasons), ranked[0].reasons
    # Every field still set: nothing was lost.
    kept = hunk(1, [*options["added"][:4], (10, "\t\tRetryTimeout: cfg.RetryTimeout,")])
    whole = [
        commit(
            "move",
            "2026-11-28T08:00:00Z",
            ("cmd/hookd/main.go", [main]),
            ("internal/deliver/options.go", [kept]),
        ),
    ]
    assert not any("no longer" in r for x in rank(c, whole) for r in x.reasons)


def test_a_commit_the_oldest_failing_release_held_is_a_cause_whenever_it_landed():
    # The issue is old (first seen in October, another cause); its events in the window
    # come from the release `fault`, which landed after that first event.
    source = ["def report(tenant):", "    return depot_names(tenant.id)"]
    c = crash(
        path="app/reports.py",
        line=2,
        function="report",
        exc_type="AttributeError",
        exc_value="'NoneType' object has no attribute 'id'",
        code=source[1].strip(),
        nearby=source,
        source=source,
        stack=[(frame("app/reports.py", 2, "report", source[1]), "app/reports.py")],
        first_seen=datetime(2026, 10, 8, 2, tzinfo=UTC),
    )
    mw = hunk(
        10, [(10, "    request.account = find(token)")], [(10, "    request.tenant = find(token)")]
    )
    later = hunk(1, [(2, "    return depot_names(tenant.id)  # by name")], [(2, source[1])])
    history = [
        commit("after", "2026-12-01T09:00:00Z", ("app/reports.py", [later])),
        commit("fault", "2026-11-30T11:25:00Z", ("app/middleware.py", [mw])),
    ]
    assert [x.sha for x in rank(c, history)] == []  # both after the first event
    ranked = rank(c, history, errors_in="fault")
    assert [x.sha for x in ranked] == ["fault"], [(x.sha, x.reasons) for x in ranked]


RAISES = [
    (  # Java: the message now says more
        "src/main/java/app/Guard.java",
        [
            "    public void check(Adjustment a) {",
            "        if (a.occurredAt().isAfter(limit)) {",
            "            throw new IllegalStateException(String.format(",
        ],
        ['            throw new IllegalStateException("in the future: " + a.occurredAt());'],
        "IllegalStateException",
        "adjustment ADJ-7 from WH-2 is dated +58886-09-22, more than 5 minutes ahead",
    ),
    (  # Python
        "app/guard.py",
        [
            "def check(a):",
            "    if a.occurred_at > limit:",
            '        raise ValueError(f"{a.id} from {a.warehouse} is dated {a.occurred_at}")',
        ],
        ['        raise ValueError(f"dated in the future: {a.occurred_at}")'],
        "ValueError",
        "ADJ-7 from WH-2 is dated 58886-09-22",
    ),
]


@pytest.mark.parametrize(("path", "source", "before", "exc_type", "exc_value"), RAISES)
def test_a_raise_reworded_still_raises_in_the_same_case_so_the_value_came_from_elsewhere(
    path, source, before, exc_type, exc_value
):
    c = crash(
        path=path,
        line=3,
        function="check",
        exc_type=exc_type,
        exc_value=exc_value,
        code=source[2].strip(),
        nearby=source,
        source=source,
    )
    reworded = hunk(3, [(3, source[2])], [(3, before[0])])
    limit = hunk(1, [(1, "LIMIT = minutes(5)")], [(1, "LIMIT = minutes(10)")])
    history = [
        commit("words", "2026-11-28T08:30:00Z", (path, [reworded])),
        commit("limit", "2026-11-28T08:00:00Z", ("app/limits.py", [limit])),
    ]
    ranked = rank(c, history)
    words = next((x for x in ranked if x.sha == "words"), None)
    assert words is None or (
        not words.fits and any("raises" in r and "same case" in r for r in words.reasons)
    ), words
    assert all("adds the crash line" not in r for x in ranked for r in x.reasons)


def test_the_value_is_followed_up_the_stack_to_the_mapper_that_made_it():
    # guard.check(adjustment) ← service.apply(adjustment) ← listener: `adjustment =
    # mapper.toDomain(event)`; the mapper now reads the epoch milliseconds as seconds.
    guard = "src/main/java/app/domain/Guard.java"
    source = [
        "    public void check(Adjustment adjustment) {",
        "        if (adjustment.occurredAt().isAfter(limit)) {",
        "            throw new IllegalStateException(String.format(",
        '            "adjustment %s is dated %s", adjustment.id(), adjustment.occurredAt()));',
    ]
    service = frame(
        "src/main/java/app/domain/StockService.java", 24, "apply", "guard.check(adjustment);"
    )
    listener = replace(
        frame(
            "src/main/java/app/consumer/Listener.java", 33, "onEvent", "stock.apply(adjustment);"
        ),
        context=[(31, "        Adjustment adjustment = mapper.toDomain(event);"), (32, "try {")],
    )
    c = crash(
        path=guard,
        line=3,
        function="check",
        exc_type="IllegalStateException",
        exc_value="adjustment ADJ-7 is dated +58886-09-22T11:10:00Z, ahead of the clock",
        code=source[2].strip(),
        nearby=source,
        source=source,
        stack=[
            (frame(guard, 3, "check", source[2]), guard),
            (service, "src/main/java/app/domain/StockService.java"),
            (listener, "src/main/java/app/consumer/Listener.java"),
        ],
    )
    mapper = hunk(
        17,
        [(20, "                Instant.ofEpochSecond(event.occurredAt()));")],
        [(20, "                new Date(event.occurredAt()).toInstant());")],
    )
    history = [
        commit(
            "units",
            "2026-11-28T08:00:00Z",
            ("src/main/java/app/mapping/EventMapper.java", [mapper]),
        )
    ]
    ranked = rank(c, history)
    assert [x.sha for x in ranked] == ["units"], ranked
    assert any("occurredat" in r and "data path" in r for r in ranked[0].reasons)


ZEROED = [
    (  # Java: an enum constant's seats went to 0
        "src/main/java/app/plans/Plan.java",
        '    FREE("free", 0, 1, 3),',
        '    FREE("free", 0, 0, 3),',
    ),
    (  # Python: a default in the settings module
        "app/settings.py",
        "BATCH_WORKERS = int(os.environ.get('BATCH_WORKERS', 4))",
        "BATCH_WORKERS = int(os.environ.get('BATCH_WORKERS', 0))",
    ),
]


@pytest.mark.parametrize(("where", "old", "new"), ZEROED)
def test_a_value_a_linked_file_gives_that_became_zero_explains_a_division_by_zero(where, old, new):
    source = [
        "import app.plans.Plan;",
        "import app.settings;",
        "    long perSeat(Plan plan) {",
        "        return plan.fee() / plan.seats();",
    ]
    c = crash(
        path="src/main/java/app/billing/Forecast.java",
        line=4,
        function="perSeat",
        exc_type="ArithmeticException",
        exc_value="/ by zero",
        code=source[3].strip(),
        nearby=source,
        source=source,
    )
    prices = hunk(4, [(4, new)], [(4, old)])
    history = [commit("zero", "2026-11-28T08:00:00Z", (where, [prices]))]
    ranked = rank(c, history)
    assert [x.sha for x in ranked] == ["zero"], ranked
    assert ranked[0].fits and any("now gives 0" in r for r in ranked[0].reasons)
    # Another price, no zero: nothing of the kind.
    other = hunk(4, [(4, old.replace("3", "5"))], [(4, old)])
    again = rank(c, [commit("price", "2026-11-28T08:00:00Z", (where, [other]))])
    assert not any("now gives 0" in r for x in again for r in x.reasons)


def test_fields_moved_to_a_file_that_spells_them_otherwise_are_not_lost():
    # Go's `MaxParts` is `max_parts` in the YAML the table moved to: nothing was left unset.
    code = "\tif parts > route.MaxParts {"
    c = crash(
        path="internal/api/messages.go",
        line=45,
        function="send",
        exc_type="runtime.errorString",
        exc_value="runtime error: invalid memory address or nil pointer dereference",
        code=code.strip(),
        nearby=[code],
        source=[""] * 44 + [code],
    )
    literal = hunk(
        30,
        [(30, '\troutes, err := routing.Load("config/routes.yaml")')],
        [(30, '\t\t"NL": {Provider: "messagebird", SenderID: "ACME", MaxParts: 6},')],
    )
    yaml = hunk(
        1, [(2, "  NL: {provider: messagebird, sender_id: ACME, max_parts: 6}")], old_start=0
    )
    yaml["old_lines"] = 0
    history = [
        commit(
            "move",
            "2026-11-28T08:00:00Z",
            ("cmd/main.go", [literal]),
            ("config/routes.yaml", [yaml]),
        )
    ]
    assert not any("no longer" in r for x in rank(c, history) for r in x.reasons)


def test_a_field_lost_on_the_way_to_a_file_that_spells_them_otherwise_is_found_there():
    # The same move into YAML, but `retry_timeout` did not come along.
    c = timeout_crash()
    literal = [
        "\td := deliver.New(deliver.Options{",
        "\t\tSecret:       []byte(cfg.SigningSecret),",
        "\t\tFirstTimeout: cfg.FirstTimeout,",
        "\t\tRetryTimeout: cfg.RetryTimeout,",
        "\t})",
    ]
    main = hunk(
        29,
        [(29, '\td := deliver.New(deliver.Load("deliver.yaml"))')],
        [(29 + i, t) for i, t in enumerate(literal)],
    )
    yaml = hunk(1, [(1, "secret: ${SIGNING_SECRET}"), (2, "first_timeout: 10s")], old_start=0)
    yaml["old_lines"] = 0
    history = [
        commit(
            "move",
            "2026-11-28T08:00:00Z",
            ("cmd/hookd/main.go", [main]),
            ("config/deliver.yaml", [yaml]),
        )
    ]
    ranked = rank(c, history)
    assert ranked and (ranked[0].path, ranked[0].line) == ("config/deliver.yaml", 2), ranked
    assert any("no longer retrytimeout" in r for r in ranked[0].reasons)


WRITER = [
    "public class BatchWriter implements ItemWriter<Line> {",
    "    public void write(Chunk<? extends Line> lines) {",
    "        for (Line line : lines) {",
    '            String record = String.format("%-2s%-34s%-140s",',
    '                    "02", line.iban(), line.memo());',
    "            if (record.length() != WIDTH) {",
    '                throw new IllegalStateException("record of " + record.length());',
]


def _writer_crash() -> object:
    return crash(
        path="src/main/java/app/batch/BatchWriter.java",
        line=7,
        function="write",
        exc_type="IllegalStateException",
        exc_value="record of 262 positions (258 expected)",
        code=WRITER[6].strip(),
        nearby=WRITER[3:7],
        source=WRITER,
    )


def test_a_binding_spread_over_lines_binds_from_all_of_them():
    """`record` is made from the arguments on the next line too: the mapper that builds the
    memo, off the stack (the framework calls it), is on the failing value's path."""
    memo = hunk(
        25,
        [(25, '        String memo = "PAY " + month + " " + plain(p.holder()) + " " + p.firm();')],
        [(25, '        String memo = trim("PAY " + month + " " + plain(p.firm()), 140);')],
    )
    history = [
        commit("memo", "2026-11-27T10:40:00Z", ("src/main/java/app/batch/PayMapper.java", [memo]))
    ]
    ranked = rank(_writer_crash(), history)
    assert ranked and (ranked[0].sha, ranked[0].line) == ("memo", 25), [
        (x.sha, x.reasons) for x in ranked
    ]
    assert any("memo" in r and "data path" in r for r in ranked[0].reasons)


def test_a_variable_extracted_beside_another_change_adds_nothing_to_the_path():
    """The caller on the stack extracts what it hands the writer into `batch` (the same call,
    now in two lines) and changes a cron string: `batch` gets no data-path credit, and the
    memo builder stays the suspect."""
    step = "src/main/java/app/batch/Step.java"
    extracted = hunk(
        19,
        [
            (19, '    @Scheduled(cron = "0 30 1,6 * * *")'),
            (21, "        var batch = mapper.map(read(day));"),
            (22, "        writer.write(batch);"),
        ],
        [
            (19, '    @Scheduled(cron = "0 30 1 * * *")'),
            (21, "        writer.write(mapper.map(read(day)));"),
        ],
        context=[(20, "    public void run(LocalDate day) throws Exception {")],
    )
    memo = hunk(
        25,
        [(25, '        String memo = "PAY " + month + " " + plain(p.holder()) + " " + p.firm();')],
        [(25, '        String memo = trim("PAY " + month + " " + plain(p.firm()), 140);')],
    )
    c = _writer_crash()
    c.stack = [
        (frame(c.path, 7, "write", WRITER[6]), c.path),
        (frame(step, 22, "run", "        writer.write(batch);"), step),
    ]
    history = [
        commit("cron", "2026-11-28T08:10:00Z", (step, [extracted])),
        commit("memo", "2026-11-27T10:40:00Z", ("src/main/java/app/batch/PayMapper.java", [memo])),
    ]
    ranked = rank(c, history)
    assert ranked and ranked[0].sha == "memo", [(x.sha, x.score, x.reasons) for x in ranked]
    assert all("batch" not in " ".join(x.reasons) for x in ranked)
