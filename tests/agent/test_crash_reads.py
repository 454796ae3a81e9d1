"""What the failing statement reads, beyond its own line's calls: the condition a raise on
purpose stands under, the bare methods of its own object in a statement spread over lines,
the value a message ends on, a Go import block; and what it calls after the operation that
failed, which is not where the value came from."""

from agent.models.changes import exception_kinds, imported, rank
from tests.agent.test_changes import commit, crash, hunk


def test_a_raise_on_purpose_reads_its_condition():
    source = [
        "import re",
        "",
        '_WEIGHT = re.compile(r"(\\d+(?:\\.\\d+)?)\\s*(kg|g)", re.I)',
        "",
        "",
        "def parse_weight(text):",
        "    match = _WEIGHT.fullmatch(text.strip())",
        "    if not match:",
        '        raise ValueError(f"unreadable weight: {text!r}")',
    ]
    c = crash(
        path="shipping/weights.py",
        line=9,
        function="parse_weight",
        exc_type="ValueError",
        exc_value="unreadable weight: '2,5 kg'",
        code=source[8].strip(),
        nearby=source[6:9],
        source=source,
    )
    stricter = hunk(7, [(7, source[6])], [(7, "    match = _WEIGHT.match(text)")])
    ranked = rank(c, [commit("strict", "2026-11-28T08:00:00Z", (c.path, [stricter]))])
    assert ranked and ranked[0].sha == "strict"
    assert any(r.startswith("changes the crashing function") for r in ranked[0].reasons)


def test_a_bare_method_read_in_a_call_spread_over_lines_is_called():
    source = [
        "module Payouts",
        "  class Transfer",
        "    def call",
        "      transfer = Stripe::Transfer.create(",
        "        {",
        "          amount: amount_cents,",
        '          currency: "eur",',
        "        }",
        "      )",
        "    end",
        "",
        "    def amount_cents",
        "      @payout.net_amount.round(2) * 100",
        "    end",
    ]
    c = crash(
        path="app/services/payouts/transfer.rb",
        line=4,
        function="call",
        exc_type="Stripe::InvalidRequestError",
        exc_value="Invalid integer: 0.3187e4",
        code=source[3].strip(),
        nearby=source[2:4],
        source=source,
    )
    body = hunk(12, [(13, source[12])], [(13, "      @payout.gross_cents - fee_cents")])
    body["function"] = "def amount_cents"
    ranked = rank(c, [commit("net", "2026-11-28T08:00:00Z", (c.path, [body]))])
    assert ranked and ranked[0].sha == "net"
    assert "changes amount_cents, which the failing code calls" in ranked[0].reasons


def test_the_commits_line_that_writes_the_value_the_message_ends_on_is_the_fault():
    path = "app/Http/Controllers/QuoteController.php"
    line = "        $total = Money::zero($currency);"
    c = crash(
        path=path,
        line=30,
        function="App\\Http\\Controllers\\QuoteController::compute",
        exc_type="Brick\\Money\\Exception\\UnknownCurrencyException",
        exc_value="Unknown currency code: eur",
        code=line.strip(),
        nearby=["        $currency = config('shop.currency');", line],
        source=[""] * 28 + ["        $currency = config('shop.currency');", line],
        blamed="config",
    )
    controller = hunk(
        29,
        [(29, "        $currency = config('shop.currency');"), (30, line)],
        [(29, "        $total = Money::zero('EUR');")],
    )
    settings = hunk(
        1,
        [
            (1, "<?php"),
            (3, "return ["),
            (4, "    'currency' => env('SHOP_CURRENCY', 'eur'),"),
            (5, "];"),
        ],
        old_start=0,
    )
    settings["old_lines"] = 0
    history = [
        commit(
            "config", "2026-11-28T08:00:00Z", (path, [controller]), ("config/shop.php", [settings])
        )
    ]
    ranked = rank(c, history)
    assert ranked and ranked[0].path == "config/shop.php" and ranked[0].line == 4
    assert ranked[0].fits


def test_a_go_import_block_is_read():
    source = [
        "package main",
        "",
        "import (",
        '\t"fmt"',
        '\t"strings"',
        "",
        '\tsentry "github.com/getsentry/sentry-go"',
        ")",
    ]
    assert {"fmt", "strings", "sentry"} <= imported(source)


def test_a_value_that_is_not_a_valid_integer_is_of_the_format_kind():
    assert "format" in exception_kinds("Stripe::InvalidRequestError", "Invalid integer: 0.3187e4")


def test_what_the_crash_line_calls_after_its_failing_subscript_is_not_credited():
    path = "src/main/java/es/clinic/agenda/AgendaService.java"
    line = "            days[index].add(visit);"
    c = crash(
        path=path,
        line=35,
        function="AgendaService.week",
        exc_type="java.lang.ArrayIndexOutOfBoundsException",
        exc_value="Index 7 out of bounds for length 7",
        code=line.strip(),
        nearby=["        for (Visit visit : visits) {", line],
        source=[""] * 34 + [line],
    )
    helper = hunk(
        9, [(9, "    void add(Visit visit) {"), (10, "        visits.add(visit);"), (11, "    }")]
    )
    helper["old_start"], helper["old_lines"] = 8, 0
    ranked = rank(
        c,
        [
            commit(
                "sorted",
                "2026-11-28T08:00:00Z",
                ("src/main/java/es/clinic/agenda/Day.java", [helper]),
            )
        ],
    )
    assert all("which the failing code calls" not in " ".join(x.reasons) for x in ranked)
