"""A crash line rewritten around the operation that raises this kind of exception, written as
before on the same operands, did not make the value fail; nor does a rewrite that is not of
a kind known to raise it explain much. The change that made the value does."""

import pytest

from agent.models import failing
from agent.models.changes import rank
from tests.agent.test_changes import commit, crash, frame, hunk

KEPT = [
    # a nil receiver dereferenced as before; the wrapping call is on a package
    (
        {"null"},
        "runtime error: invalid memory address or nil pointer dereference",
        'fmt.Fprintf(w, "%s\\n", strings.ToUpper(st.Name), day.Format("02/01/2006"))',
        ['fmt.Fprintf(w, "%s\\n", st.Name, day.Format("02/01/2006"))'],
        {"strings", "fmt"},
    ),
    # the same subscript, what is done with its result changed
    (
        {"index"},
        "Index 7 out of bounds for length 7",
        "days[i].add(v);",
        ["days[i].items().add(v);"],
        set(),
    ),
    # the key named by the message read as before; a default around it is no lookup of it
    (
        {"key"},
        "'carrier'",
        'name = CARRIERS.get(summary["carrier"], summary["carrier"].upper())',
        ['name = CARRIERS[summary["carrier"]]'],
        set(),
    ),
    # the same denominator, handed to a division function
    (
        {"zero"},
        "/ by zero",
        "return Math.floorDiv(Math.multiplyExact(line.cents(), 1000L), qty);",
        ["return Math.floorDiv(line.cents() * 1000, qty);"],
        set(),
    ),
    # a check that raises on purpose, with the same message and bounds
    (
        {"format"},
        "character at 3 is not in set B",
        "require(ch in ' '..'~') { \"character at $index is not in set B\" }",
        [
            "if (ch < ' ' || ch > '~') {",
            'throw IllegalArgumentException("character at $index is not in set B")',
        ],
        set(),
    ),
]

CHANGED = [
    ({"null"}, "nil", "name = user.name", ['name = user.name if user else ""'], set()),
    ({"null"}, "nil", "name = user.name", ["name = user?.name"], set()),
    ({"index"}, "index out of range", "x = xs[i + 1]", ["x = xs[i]"], set()),
    ({"zero"}, "division by zero", "avg = total / (count - 1)", ["avg = total / count"], set()),
    ({"key"}, "'a'", 'v = d["a"]', ['v = d.get("a")'], set()),
    # the message kept, a bound of the check changed
    (
        {"format"},
        "too long",
        'require(name.length <= 20) { "name is too long for a label" }',
        ['require(name.length <= 40) { "name is too long for a label" }'],
        set(),
    ),
    # no operation of a kind one can point at: a type error
    ({"type"}, "unsupported operand", "t = a + b", ["t = a + b  "], set()),
]


@pytest.mark.parametrize(("kinds", "message", "line", "removed", "modules"), KEPT)
def test_the_failing_operation_is_kept(kinds, message, line, removed, modules):
    assert failing.kept(kinds, message, line, removed, [line], modules)


@pytest.mark.parametrize(("kinds", "message", "line", "removed", "modules"), CHANGED)
def test_the_failing_operation_changed(kinds, message, line, removed, modules):
    assert not failing.kept(kinds, message, line, removed, [line], modules)


def go_crash(**kw):
    line = '\tfmt.Fprintf(w, "%s\\n", strings.ToUpper(st.Name))'
    source = ["package main", "", "import (", '\t"fmt"', '\t"strings"', ")", ""]
    source += ["func render(tt *Timetable, id string) error {", "\tst := tt.Stops[id]", line]
    base = dict(
        path="cmd/signs/main.go",
        line=len(source),
        function="render",
        exc_type="runtime.Error",
        exc_value="runtime error: invalid memory address or nil pointer dereference",
        code=line.strip(),
        nearby=source[-2:],
        source=source,
        blamed="upper",
    )
    return crash(**(base | kw))


def test_a_rewrite_that_keeps_the_dereference_loses_to_what_made_the_value():
    c = go_crash()
    rewrite = hunk(c.line, [(c.line, c.code)], [(c.line, '\tfmt.Fprintf(w, "%s\\n", st.Name)')])
    loader = hunk(
        30,
        [(30, "\t\tid := strings.ToUpper(strings.TrimSpace(rec[0]))")],
        [(30, "\t\tid := strings.TrimSpace(rec[0])")],
    )
    loader["function"] = "func Load(r io.Reader) (*Timetable, error) {"
    history = [
        commit("upper", "2026-11-28T07:40:00Z", (c.path, [rewrite])),
        commit("ids", "2026-11-28T07:15:00Z", ("feed/load.go", [loader])),
    ]
    ranked = rank(c, history)
    top = next(x for x in ranked if x.sha == "upper")
    assert top.passes and not top.blamed
    assert "adds the crash line" not in top.reasons


def test_a_new_dereference_on_the_crash_line_is_still_its_change():
    c = go_crash(code='fmt.Fprintf(w, "%s\\n", st.Name, st.Route.Name)')
    new = hunk(c.line, [(c.line, "\t" + c.code)], [(c.line, '\tfmt.Fprintf(w, "%s\\n", st.Name)')])
    ranked = rank(c, [commit("upper", "2026-11-28T07:40:00Z", (c.path, [new]))])
    assert ranked and ranked[0].sha == "upper" and not ranked[0].passes
    assert "adds the crash line" in ranked[0].reasons and ranked[0].fits


def test_the_same_receiver_read_for_another_member_is_kept():
    c = go_crash(code='fmt.Fprintf(w, "%s\\n", st.Name, st.Code)')
    new = hunk(c.line, [(c.line, "\t" + c.code)], [(c.line, '\tfmt.Fprintf(w, "%s\\n", st.Name)')])
    ranked = rank(c, [commit("upper", "2026-11-28T07:40:00Z", (c.path, [new]))])
    assert ranked and ranked[0].passes and not ranked[0].blamed


def test_a_rewrite_not_of_the_exceptions_kind_loses_to_a_producer_that_is():
    # A log line reworded around the same `toISOString()`; the option it reads is parsed
    # otherwise elsewhere: that parse made the invalid date.
    path = "lib/pull.js"
    line = "    log(`[${id}] ${n} file(s) since ${opts.since.toISOString()} in ${dir}`);"
    source = ["async function pull(opts, log) {", "  for (const id of opts.ids) {", line]
    c = crash(
        path=path,
        line=3,
        function="pull",
        exc_type="RangeError",
        exc_value="Invalid time value",
        code=line.strip(),
        nearby=source,
        source=source,
        blamed="log",
    )
    reworded = hunk(
        3, [(3, line)], [(3, "    log(`${id}: ${n} file(s) since ${opts.since.toISOString()}`);")]
    )
    parser = hunk(
        7,
        [(7, "  const since = new Date(Date.now() - parseFloat(values.since) * 3600e3);")],
        [(7, "  const since = new Date(Date.now() - parseInt(values.since, 10) * 3600e3);")],
    )
    history = [
        commit("log", "2026-11-28T08:30:00Z", (path, [reworded])),
        commit("args", "2026-11-28T08:00:00Z", ("lib/args.js", [parser])),
    ]
    ranked = rank(c, history)
    assert ranked[0].sha == "args", [(x.sha, x.score, x.reasons) for x in ranked]
    log = next(x for x in ranked if x.sha == "log")
    # It still reads `opts.since.toISOString()` as before: the same values.
    assert "rewrites the crash line, but reads the same values as before" in log.reasons
    assert not log.blamed


def test_blame_of_a_crash_line_rewritten_to_compute_the_same_lends_nothing():
    # `r.PathValue("id")` pulled out into `id`: the line blame names runs as before; the
    # middleware that now lets a request through without an account made the nil.
    path, auth = "internal/reports/handler.go", "internal/httpx/auth.go"
    line = "\trep, err := h.store.Report(r.Context(), acct.ID, id)"
    source = [
        "func (h *Handler) Get(w http.ResponseWriter, r *http.Request) {",
        "\tacct := httpx.AccountFrom(r.Context())",
        '\tid := r.PathValue("id")',
        line,
    ]
    c = crash(
        path=path,
        line=4,
        function="(*Handler).Get",
        exc_type="runtime.Error",
        exc_value="runtime error: invalid memory address or nil pointer dereference",
        code=line.strip(),
        nearby=source[1:],
        source=source,
        blamed="tidy",
        stack=[
            (frame(path, 4, "(*Handler).Get", line), path),
            (frame(auth, 48, "Auth.func1", "\t\tnext.ServeHTTP(w, r)"), auth),
        ],
    )
    tidy = hunk(
        3,
        [(3, source[2]), (4, line), (9, '\thub.Scope().SetTag("report", id)')],
        [(3, '\trep, err := h.store.Report(r.Context(), acct.ID, r.PathValue("id"))')],
    )
    public = hunk(
        46,
        [(46, '\t\tif strings.HasPrefix(r.URL.Path, "/reports") {')],
        [(46, '\t\tif r.URL.Path == "/reports/public" {')],
    )
    history = [
        commit("tidy", "2026-11-28T08:30:00Z", (path, [tidy])),
        commit("auth", "2026-11-28T08:00:00Z", (auth, [public])),
    ]
    ranked = rank(c, history)
    assert ranked and ranked[0].sha == "auth", [(x.sha, x.score, x.reasons) for x in ranked]
    assert all(not x.blamed for x in ranked)


def test_a_change_beside_the_crash_of_no_fitting_kind_loses_to_one_that_fits():
    # A cache touched beside the line that failed; the middleware on the stack now hands the
    # service a date string where it handed a Date: that fits "Invalid time value".
    path, middleware = "src/services/bookings.ts", "src/middleware/range.ts"
    source = [
        "export async function week(range: Range) {",
        "  await cache.touch(range.key);",
        "  const from = range.from.toISOString();",
    ]
    c = crash(
        path=path,
        line=3,
        function="week",
        exc_type="RangeError",
        exc_value="Invalid time value",
        code=source[2].strip(),
        nearby=source,
        source=source,
        stack=[
            (frame(path, 3, "week", source[2]), path),
            (frame(middleware, 18, "range", "  req.range = { from, to };"), middleware),
        ],
    )
    touch = hunk(2, [(2, source[1])])
    touch["old_lines"] = 0
    parse = hunk(
        17,
        [(17, "  const from = String(req.query.from);")],
        [(17, "  const from = new Date(String(req.query.from));")],
    )
    history = [
        commit("touch", "2026-11-28T08:30:00Z", (path, [touch])),
        commit("range", "2026-11-28T08:00:00Z", (middleware, [parse])),
    ]
    ranked = rank(c, history)
    assert ranked and ranked[0].sha == "range", [(x.sha, x.score, x.reasons) for x in ranked]
    touched = next(x for x in ranked if x.sha == "touch")
    assert "though not in a way known to raise this exception" in touched.reasons


def test_a_change_up_the_stack_of_no_fitting_kind_loses_to_a_producer_that_fits():
    # The job logs the seller before calling the service; the service's amount is now a
    # decimal where Stripe wants an integer: a change of type, which fits.
    job, service = "app/jobs/payout_job.rb", "app/services/payouts/amount.rb"
    line = "      Stripe::Transfer.create(amount: Payouts::Amount.cents(@payout), currency: 'eur')"
    c = crash(
        path="app/services/payouts/transfer.rb",
        line=5,
        function="call",
        exc_type="Stripe::InvalidRequestError",
        exc_value="Invalid integer: 3187.5",
        code=line.strip(),
        nearby=[line],
        source=[""] * 4 + [line],
        stack=[
            (
                frame("app/services/payouts/transfer.rb", 5, "call", line),
                "app/services/payouts/transfer.rb",
            ),
            (frame(job, 12, "perform", "    Payouts::Transfer.new(payout).call"), job),
        ],
    )
    log = hunk(11, [(11, '    Rails.logger.info("payout #{payout.id} for #{payout.seller_id}")')])
    log["old_lines"] = 0
    cents = hunk(
        4,
        [(4, "      payout.net_amount * 100")],
        [(4, "      (payout.net_amount * 100).round")],
    )
    cents["function"] = "def self.cents(payout)"
    history = [
        commit("log", "2026-11-28T08:30:00Z", (job, [log])),
        commit("cents", "2026-11-28T08:00:00Z", (service, [cents])),
    ]
    ranked = rank(c, history)
    assert ranked and ranked[0].sha == "cents", [(x.sha, x.score, x.reasons) for x in ranked]
    logged = next((x for x in ranked if x.sha == "log"), None)
    assert logged is None or "though not in a way known to raise this exception" in logged.reasons
