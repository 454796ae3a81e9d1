"""A commit that only renames locals, inlines a variable or extracts a constant runs the same
code: blame of a crash line it rewrote names it, but the fault is an older or other change."""

import pytest

from agent.models.changes import rank
from agent.models.equivalent import same_program
from tests.agent.test_changes import commit, crash, hunk

SAME = [
    (  # Go: locals renamed, an index variable inlined, a comment added
        "internal/agg/daily.go",
        [
            "\tstart := time.Date(d.Year(), d.Month(), d.Day(), 0, 0, 0, 0, d.Location())",
            "\tend := start.AddDate(0, 0, 1)",
            "\tslots := make([]float64, int(end.Sub(start)/Slot))",
            "\t\ti := int(r.At.Sub(start) / Slot)",
            "\t\tslots[i] += r.KWh",
        ],
        [
            "\tmidnight := time.Date(d.Year(), d.Month(), d.Day(), 0, 0, 0, 0, d.Location())",
            "\tnext := midnight.AddDate(0, 0, 1) // 92 or 100 slots when the clocks change",
            "\tslots := make([]float64, int(next.Sub(midnight)/Slot))",
            "\t\tslots[int(r.At.Sub(midnight)/Slot)] += r.KWh",
        ],
    ),
    (  # Python: a value pulled out into a module constant, the docstring reworded
        "app/rules.py",
        [
            '    """Between 26 and 2 hours before."""',
            "    return start - timedelta(hours=26) <= now <= start - timedelta(hours=2)",
        ],
        [
            "LEAD = timedelta(hours=26)",
            "MARGIN = timedelta(hours=2)  # reception phones the late ones",
            '    """Between LEAD and MARGIN before."""',
            "    return start - LEAD <= now <= start - MARGIN",
        ],
    ),
    (  # Java: a local renamed, its type spelled out
        "src/main/java/app/Pager.java",
        [
            "        var n = request.size();",
            "        return items.subList(0, Math.min(n, items.size()));",
        ],
        [
            "        int pageSize = request.size();",
            "        return items.subList(0, Math.min(pageSize, items.size()));",
        ],
    ),
    (  # PHP: a local renamed where it is bound and where an array takes it (`=>`)
        "app/Services/Report.php",
        [
            "        $first = $open[0]['sku'];",
            "        return ['result' => $first, 'id' => $rec['id']];",
        ],
        [
            "        $firstSku = $open[0]['sku'];",
            "        return ['result' => $firstSku, 'id' => $rec['id']];",
        ],
    ),
    (  # JavaScript: a variable extracted, used once; an operator keeps its precedence
        "src/cart.js",
        ["  return total / (items.length - free);"],
        ["  const paid = items.length - free;", "  return total / paid;"],
    ),
]

CHANGED = [
    ("app/a.py", ["    return x / len(items)"], ["    return x / (len(items) - 1)"]),
    ("app/a.py", ["    limit = 10", "    return rows[:limit]"], ["    return rows[:20]"]),
    ("app/a.py", ["    return order.total"], ["    return order.amount"]),  # another member
    ("app/a.py", ["    return parse(s)"], ["    return parse_local(s)"]),  # another call
    ("app/a.py", ['    fmt = "%Y-%m-%d"'], ['    fmt = "%d/%m/%Y"']),  # another literal
    ("src/c.js", ["  return a * (b + c);"], ["  const s = b;", "  return a * s + c;"]),
    # A constant removed at the top of a module: other code may read it.
    ("app/cfg.py", ["LIMIT = 5", "    return rows[:LIMIT]"], ["    return rows[:5]"]),
    # A module constant renamed: its readers elsewhere still use the old name.
    ("app/cfg.py", ["LIMIT = 5", "    return LIMIT * 2"], ["CAP = 5", "    return CAP * 2"]),
    ("app/a.py", ["    x = f(a)", "    return g(x, x)"], ["    return g(f(a), f(a))"]),
    ("app/a.py", [], ["    log.info('x')"]),
    ("app/R.php", ["        $x = $a->total;"], ["        $x = $a->amount;"]),  # a member
    ("app/R.php", ["        $x = A::$total;"], ["        $x = A::$amount;"]),
]


@pytest.mark.parametrize(("path", "removed", "added"), SAME)
def test_a_rewrite_that_computes_the_same_is_no_change(path, removed, added):
    assert same_program(removed, added, path)


@pytest.mark.parametrize(("path", "removed", "added"), CHANGED)
def test_a_change_of_what_is_computed_is_a_change(path, removed, added):
    assert not same_program(removed, added, path)


def test_a_floor_division_in_python_is_no_comment():
    assert not same_program(["    n = a // b"], ["    n = a"], "app/a.py")
    assert same_program(["  n = a // b"], ["  n = a"], "src/a.js")  # a comment in JavaScript


def test_blame_through_an_extracted_constant_names_the_producer_of_the_value():
    """The crash line rewritten to use constants, blamed; the schema that now parses the
    appointment's time without its zone, on the value's data path, is the fault."""
    path = "app/rules.py"
    source = [
        "from app.schemas import Appointment",
        "LEAD = timedelta(hours=26)",
        "def due(appt: Appointment, now):",
        "    return appt.start - LEAD <= now",
    ]
    c = crash(
        path=path,
        line=4,
        function="due",
        exc_type="TypeError",
        exc_value="can't compare offset-naive and offset-aware datetimes",
        code=source[3].strip(),
        nearby=source,
        source=source,
        blamed="consts",
    )
    consts = hunk(
        2,
        [(2, source[1]), (4, source[3])],
        [(2, "    return appt.start - timedelta(hours=26) <= now")],
        context=[(3, source[2])],
    )
    schema = hunk(
        12,
        [(12, "        return datetime.strptime(raw, '%Y-%m-%d %H:%M')")],
        [(12, "        return datetime.fromisoformat(raw)")],
        context=[(11, "    def parse_start(cls, raw):")],
    )
    history = [
        commit("consts", "2026-11-28T08:30:00Z", (path, [consts])),
        commit("schema", "2026-11-28T07:00:00Z", ("app/schemas.py", [schema])),
    ]
    ranked = rank(c, history)
    assert all(x.sha != "consts" for x in ranked)
    assert ranked and ranked[0].sha == "schema"


def test_a_reworded_raise_lends_no_blame_to_the_rest_of_its_commit():
    """Blame names the commit for the crash line only; when that line still raises the same
    error in the same case, the commit's other hunk in the file (the error's message) gets
    no credit from it."""
    path = "src/partner.js"
    source = [
        "class PartnerError extends Error {",
        "  constructor(status, body, count) {",
        "    super(`answered ${status} to ${count} events`);",
        "  }",
        "}",
        "async function post(events) {",
        "  const res = await fetch(url, { body: JSON.stringify(events) });",
        "  if (!res.ok) {",
        "    throw new PartnerError(res.status, await res.text(), events.length);",
        "  }",
        "}",
        "async function sendAll(all) {",
        "  for (let i = 0; i < all.length; i += config.chunkSize) {",
        "    await post(all.slice(i, i + config.chunkSize));",
        "  }",
        "}",
    ]
    c = crash(
        path=path,
        line=9,
        function="post",
        exc_type="PartnerError",
        exc_value="answered 413 to 214 events",
        code=source[8].strip(),
        nearby=source[5:11],
        source=source,
        blamed="message",
    )
    message = commit(
        "message",
        "2026-11-28T08:30:00Z",
        (
            path,
            [
                hunk(
                    2,
                    [(2, source[1]), (3, source[2])],
                    [(2, "  constructor(status, body) {"), (3, "    super(`answered ${status}`);")],
                ),
                hunk(
                    9,
                    [(9, source[8])],
                    [(9, "    throw new PartnerError(res.status, await res.text());")],
                ),
            ],
        ),
    )
    ranked = rank(c, [message])
    assert all(not x.blamed for x in ranked)
    assert all("blame" not in " ".join(x.reasons) for x in ranked)
