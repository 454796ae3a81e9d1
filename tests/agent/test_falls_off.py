"""A function rewritten so that one of its paths reaches its end without a return gives None,
undefined or nil to the code that uses its result: that path's branch is the fault, in the
languages where a function can end without a value. And what the message says was read on
the missing value never ran."""

from agent.models import failing
from agent.models.changes import falls_off, rank
from tests.agent.test_changes import commit, crash, hunk


def _python_crash():
    source = [
        "from shop.rates.tiers import tier_for",
        "",
        "",
        "def quote(order, table):",
        "    tier = tier_for(order.total, table)",
        "    return tier.discount(order.kind)",
    ]
    return crash(
        path="shop/rates/quote.py",
        line=6,
        function="quote",
        exc_type="AttributeError",
        exc_value="'NoneType' object has no attribute 'discount'",
        code=source[5].strip(),
        nearby=source[3:],
        source=source,
    )


TIERS = [
    (20, "def tier_for(total, table):"),
    (21, '    """The tier whose bounds hold the total."""'),
    (22, "    i = bisect_right(table.starts, total) - 1"),
    (23, "    if i < 0:"),
    (24, "        return table.lowest"),
    (25, "    tier = table.tiers[i]"),
    (26, "    if total <= tier.upto:"),
    (27, "        return tier"),
    (28, "    if i + 1 < len(table.tiers) and total < table.starts[i + 1]:"),
    (29, "        return table.lowest"),
]
TIERS_BEFORE = [
    (20, "def tier_for(total, table):"),
    (21, '    """The tier whose bounds hold the total."""'),
    (22, "    for tier in table.tiers:"),
    (23, "        if tier.start <= total <= tier.upto:"),
    (24, "            return tier"),
    (25, "    return table.lowest"),
]
AFTER = [(30, ""), (31, ""), (32, "def tiers_of(rows):")]


def test_a_branch_with_no_else_at_the_end_of_a_python_function_is_the_fault():
    c = _python_crash()
    tiers = hunk(20, TIERS, TIERS_BEFORE, AFTER)
    # The newer commit rewrote the crash line (same receiver, another member) and defined the
    # member the message names: that member was never reached.
    rewrite = hunk(6, [(6, "    return tier.discount(order.kind)")], [(6, "    return tier.rate")])
    member = hunk(
        40,
        [(40, "    def discount(self, kind):"), (41, "        return self.by_kind.get(kind, 0)")],
        context=[(39, "class Tier:"), (42, ""), (43, "")],
    )
    ranked = rank(
        c,
        [
            commit(
                "kinds",
                "2026-11-28T08:30:00Z",
                ("shop/rates/quote.py", [rewrite]),
                ("shop/rates/tiers.py", [member]),
            ),
            commit("bisect", "2026-11-28T08:00:00Z", ("shop/rates/tiers.py", [tiers])),
        ],
    )
    assert ranked and ranked[0].sha == "bisect", [(r.sha, r.path, r.reasons) for r in ranked]
    assert ranked[0].line == 28, (ranked[0].line, ranked[0].text)


def test_a_break_out_of_the_switch_a_javascript_function_ends_with_is_the_fault():
    source = [
        "const { rateFor } = require('./rates');",
        "",
        "function dayLine(bike, day) {",
        "  const { name, perDay } = rateFor(bike, day);",
        "  return { name, cents: perDay };",
        "}",
    ]
    c = crash(
        path="src/pricing/lines.js",
        line=4,
        function="dayLine",
        exc_type="TypeError",
        exc_value="Cannot destructure property 'name' of 'rateFor(...)' as it is undefined.",
        code=source[3].strip(),
        nearby=source[2:],
        source=source,
    )
    rates = hunk(
        10,
        [
            (11, "  switch (kindOf(day)) {"),
            (12, "    case 'peak':"),
            (13, "      return bike.rates.peak;"),
            (14, "    case 'weekend':"),
            (15, "      if (bike.rates.weekend) {"),
            (16, "        return bike.rates.weekend;"),
            (17, "      }"),
            (18, "      break;"),
            (19, "    default:"),
            (20, "      return bike.rates.base;"),
            (21, "  }"),
        ],
        [
            (11, "  if (isPeak(day)) {"),
            (12, "    return bike.rates.peak;"),
            (13, "  }"),
            (14, "  return bike.rates.weekend || bike.rates.base;"),
        ],
        [(10, "function rateFor(bike, day) {"), (22, "}"), (23, "")],
    )
    ranked = rank(c, [commit("switch", "2026-11-28T08:00:00Z", ("src/pricing/rates.js", [rates]))])
    assert ranked and ranked[0].sha == "switch"
    assert ranked[0].line == 18, (ranked[0].line, ranked[0].text)
    assert "changes ratefor, which returns the failing value" in ranked[0].reasons


def _hunk(function, lines, after=((90, "end"),)):
    return hunk(10, list(lines), [(10, "old")], [(9, function), *after])


def test_ruby_a_case_with_no_else_ends_in_nil():
    found = falls_off(
        _hunk(
            "  def zone_for(code)",
            [
                (10, "    case code[0]"),
                (11, "    when 'A' then zones.fetch(:north)"),
                (12, "    when 'B' then zones.fetch(:south)"),
                (13, "    end"),
            ],
            [(14, "  end"), (15, ""), (16, "  def other")],
        ),
        "zone_for",
        "app/models/zone.rb",
    )
    assert found == (10, "case code[0]")


def test_no_claim_when_every_path_returns_or_the_language_refuses_it():
    ends_in_return = [
        (10, "    if total > 10:"),
        (11, "        return high"),
        (12, "    return low"),
    ]
    ending = [(13, ""), (14, "def other():")]
    assert falls_off(_hunk("def pick(total):", ends_in_return, ending), "pick", "a.py") is None
    final_else = [
        (10, "  if (total > 10) {"),
        (11, "    return high;"),
        (12, "  } else {"),
        (13, "    return low;"),
        (14, "  }"),
    ]
    assert (
        falls_off(_hunk("function pick(total) {", final_else, [(15, "}")]), "pick", "a.js") is None
    )
    branch = [(10, "  if (total > 10) {"), (11, "    return high;"), (12, "  }")]
    assert falls_off(_hunk("function pick(total) {", branch, [(13, "}")]), "pick", "a.js") == (
        10,
        "if (total > 10) {",
    )
    java = [(10, "    while (true) {"), (11, "      return next();"), (12, "    }")]
    assert falls_off(_hunk("  Item pick() {", java, [(13, "  }")]), "pick", "A.java") is None
    # The end of the function is not in the hunk: nothing to say.
    assert (
        falls_off(hunk(10, branch, [(10, "old")], [(9, "function pick(t) {")]), "pick", "a.js")
        is None
    )


def test_a_missing_value_fails_on_its_receiver_whatever_member_is_read():
    kinds = {"null"}
    value = "'NoneType' object has no attribute 'discount'"
    assert failing.kept(
        kinds, value, "tier.discount(kind)", ["tier.rate"], ["tier.discount(kind)"], set()
    )
    # Only the receiver of the member named was found missing, not every value the line reads.
    assert not failing.new_receivers("tier.discount(order.kind)", ["tier.rate"], set(), value)
    assert failing.new_receivers("tier.discount(order.kind)", ["tier.rate"], set()) == {"order"}
