"""A missing value dereferenced on a rewritten crash line that the old lines dereferenced
the same way: the rewrite did not make it missing, so it does not fit the exception and
blame of the line lends it nothing."""

import pytest

from agent.models.changes import dereference, rank
from tests.agent.test_changes import commit, crash, hunk

CASES = [
    (
        "app/controllers/quotes_controller.rb",
        "NoMethodError",
        "undefined method `open?' for nil",
        "    return if @quote.open?",
        "    redirect_to quote_path(params[:token]) unless @quote.open?",
        "@quote.open?",
    ),
    (
        "src/billing/billing.service.ts",
        "TypeError",
        "Cannot read properties of undefined (reading 'amountMinor')",
        "    const totalMinor = roundHalfEven(price.amountMinor * sub.seats);",
        "    const totalMinor = Math.round(price.amountMinor * sub.seats);",
        "price.amountMinor",
    ),
    (
        "src/Controller/Orders.php",
        "Error",
        "Call to a member function total() on null",
        "        return $this->json(['total' => $order->total()]);",
        "        return new JsonResponse(['total' => $order->total()]);",
        "$order->total",
    ),
]


@pytest.mark.parametrize(("path", "kind", "message", "line", "old", "held"), CASES)
def test_a_rewrite_that_dereferenced_the_same_is_no_fit(path, kind, message, line, old, held):
    c = crash(
        path=path,
        line=27,
        function="f",
        exc_type=kind,
        exc_value=message,
        code=line.strip(),
        nearby=[line],
        source=[""] * 26 + [line],
        blamed="tidy",
    )
    assert dereference(c, line) == held
    rewrite = hunk(27, [(27, line)], [(27, old)])
    ranked = rank(c, [commit("tidy", "2026-11-28T08:00:00Z", (path, [rewrite]))])
    assert ranked and all(not x.fits and not x.blamed for x in ranked)
    assert all("adds the crash line" not in x.reasons for x in ranked)


def test_a_new_dereference_is_still_the_crash_lines_change():
    path = "app/controllers/quotes_controller.rb"
    line = "    return if @quote.open?"
    c = crash(
        path=path,
        line=27,
        function="ensure_open!",
        exc_type="NoMethodError",
        exc_value="undefined method `open?' for nil",
        code=line.strip(),
        nearby=[line],
        source=[""] * 26 + [line],
        blamed="new",
    )
    guard = hunk(27, [(27, line)], [(27, "    return if @quote&.open?")])
    ranked = rank(c, [commit("new", "2026-11-28T08:00:00Z", (path, [guard]))])
    assert ranked and ranked[0].sha == "new" and ranked[0].fits


def test_a_rewrite_that_dereferences_as_before_but_drops_the_null_test_is_the_change():
    path = "src/main/java/dev/example/orders/CustomerReference.java"
    line = "        value = value.strip();"
    c = crash(
        path=path,
        line=14,
        function="CustomerReference.<init>",
        exc_type="java.lang.NullPointerException",
        exc_value='Cannot invoke "String.strip()" because "value" is null',
        code=line.strip(),
        nearby=[line],
        source=[""] * 13 + [line],
        blamed="simplify",
    )
    dropped = hunk(14, [(14, line)], [(14, '        value = value == null ? "" : value.strip();')])
    ranked = rank(c, [commit("simplify", "2026-11-28T08:00:00Z", (path, [dropped]))])
    assert ranked and ranked[0].fits and ranked[0].blamed and not ranked[0].passes
    assert "drops a guard for a missing value" in ranked[0].reasons
