"""Which change explains a crash: the rules, one small history each."""

from dataclasses import replace
from datetime import UTC, datetime

from agent import stacktrace
from agent.models.changes import Crash, code_of, origin, pick, rank, release_line


def frame(path: str, line: int, function: str, context: str | None = None) -> stacktrace.Frame:
    return stacktrace.Frame(
        filename=path,
        abs_path=path,
        module=None,
        function=function,
        lineno=line,
        in_app=True,
        context_line=context,
        context=[],
    )


def commit(sha: str, date: str, *files: tuple[str, list[dict]]) -> dict:
    return {
        "sha": sha,
        "author": "Dev",
        "date": date,
        "summary": f"commit {sha}",
        "files": [{"path": p, "hunks": h} for p, h in files],
    }


def hunk(
    start: int,
    added: list[tuple[int, str]],
    removed: list[tuple[int, str]] = (),
    context: list[tuple[int, str]] = (),
    old_start: int | None = None,
) -> dict:
    return {
        "header": "@@",
        "function": "",
        "old_start": start if old_start is None else old_start,
        "old_lines": max(1, len(removed)),
        "new_start": start,
        "new_lines": len(added) + len(context),
        "added": [list(a) for a in added],
        "removed": [list(r) for r in removed],
        "context": [list(c) for c in context],
    }


def crash(**kw) -> Crash:
    base = dict(
        path="app/totals.py",
        line=13,
        function="line_total",
        exc_type="KeyError",
        exc_value="'price'",
        code="return item['price'] * item['qty']",
        nearby=["def line_total(item):", "return item['price'] * item['qty']"],
        first_seen=datetime(2026, 11, 28, 9, tzinfo=UTC),
    )
    return Crash(**(base | kw))


def test_the_commit_that_wrote_the_crash_line_is_the_fault():
    c = crash()
    history = [
        commit(
            "b",
            "2026-11-27T10:00:00Z",
            (
                "app/totals.py",
                [
                    hunk(
                        13,
                        [(13, "    return item['price'] * item['qty']")],
                        [(13, "    return item.get('price', 0) * item['qty']")],
                    )
                ],
            ),
        )
    ]
    change = pick(c, history)
    assert change is not None and change.sha == "b" and change.on_crash_line


def test_a_change_after_the_errors_began_is_not_their_cause():
    c = crash()
    history = [
        commit(
            "late",
            "2026-11-28T12:00:00Z",
            (
                "app/totals.py",
                [
                    hunk(
                        13, [(13, "    return item['price'] * item['qty']")], [(13, "    return 0")]
                    )
                ],
            ),
        )
    ]
    assert pick(c, history) is None


def test_a_comment_only_change_is_never_the_fault():
    c = crash(code="return item['price'] * item['qty']  # in cents")
    history = [
        commit(
            "comment",
            "2026-11-27T12:00:00Z",
            (
                "app/totals.py",
                [
                    hunk(
                        13,
                        [(13, "    return item['price'] * item['qty']  # in cents")],
                        [(13, "    return item['price'] * item['qty']")],
                    )
                ],
            ),
        ),
        commit(
            "fault",
            "2026-11-26T12:00:00Z",
            (
                "app/totals.py",
                [
                    hunk(
                        13,
                        [(13, "    return item['price'] * item['qty']")],
                        [(13, "    return item.get('price', 0) * item['qty']")],
                    )
                ],
            ),
        ),
    ]
    change = pick(c, history)
    assert change is not None and change.sha == "fault"


def test_a_producer_that_renamed_the_key_read_near_the_crash_is_the_fault():
    c = crash(stack=[(frame("app/totals.py", 13, "line_total"), "app/totals.py")])
    history = [
        commit(
            "p",
            "2026-11-27T10:00:00Z",
            (
                "app/orders.py",
                [
                    hunk(
                        30,
                        [(31, "        'unit_price': prices[i.sku],")],
                        [(31, "        'price': prices[i.sku],")],
                    )
                ],
            ),
        )
    ]
    change = pick(c, history)
    assert change is not None and change.path == "app/orders.py" and change.line == 31


def test_a_function_the_crash_line_calls_that_now_returns_null():
    c = crash(
        exc_type="AttributeError",
        exc_value="'NoneType' object has no attribute 'rate'",
        code="return tariff(country).rate * amount",
        nearby=["def tax(country, amount):", "return tariff(country).rate * amount"],
    )
    history = [
        commit(
            "t",
            "2026-11-27T10:00:00Z",
            (
                "app/tariffs.py",
                [
                    hunk(
                        20,
                        [(21, "    return TABLE.get(country)")],
                        [(21, "    return TABLE.get(country, DEFAULT)")],
                        context=[(20, "def tariff(country):")],
                    )
                ],
            ),
        )
    ]
    change = pick(c, history)
    assert change is not None and change.path == "app/tariffs.py" and change.line == 21


def test_lines_of_an_older_commit_are_mapped_to_the_release_through_the_newer_hunks():
    c = crash()
    newer = hunk(1, [(1, "import os")], context=[(2, "import re"), (3, ""), (4, "")])
    newer["old_lines"], newer["new_lines"] = 3, 4
    history = [
        commit("newer", "2026-11-27T12:00:00Z", ("app/orders.py", [newer])),
        commit(
            "older",
            "2026-11-26T12:00:00Z",
            (
                "app/orders.py",
                [
                    hunk(
                        10,
                        [(10, "        'unit_price': prices[i.sku],")],
                        [(10, "        'price': x,")],
                    )
                ],
            ),
        ),
    ]
    change = pick(c, history)
    assert change is not None and change.sha == "older"
    assert change.newest_for_path and change.line == 11  # one line inserted above it
    # When the newer hunks cannot be followed, the line is found at the release by its text.
    unmapped = replace(change, newest_for_path=False, line=10)
    release = "\n".join(["# header"] * 14 + ["        'unit_price': prices[i.sku],"])
    assert release_line(unmapped, release) == 15
    assert release_line(unmapped, None) is None


def test_code_of_drops_comments_but_not_strings():
    assert code_of("x = 1  # the count") == "x = 1"
    assert code_of("    // a comment") == ""
    assert code_of('url = "http://example.com/#top"') == 'url = "http://example.com/#top"'


# -- the classes of misses: each rule stated for a class, checked on one small history ----


def test_a_one_line_change_above_the_crash_line_beats_an_older_change_up_the_stack():
    source = [
        "def average(rows):",
        "    kept = [r for r in rows if r.ok]",
        "    total = sum(r.value for r in kept)",
        "    return total / len(kept)",
    ]
    c = crash(
        path="app/stats.py",
        line=4,
        function="average",
        exc_type="ZeroDivisionError",
        exc_value="division by zero",
        code="return total / len(kept)",
        nearby=source[1:4],
        source=source,
        stack=[
            (frame("app/stats.py", 4, "average"), "app/stats.py"),
            (frame("app/report.py", 20, "build", "avg = average(rows)"), "app/report.py"),
        ],
    )
    history = [
        commit(
            "filter",
            "2026-11-27T10:00:00Z",
            (
                "app/stats.py",
                [hunk(2, [(2, "    kept = [r for r in rows if r.ok]")], [(2, "    kept = rows")])],
            ),
        ),
        commit(
            "older",
            "2026-11-20T10:00:00Z",
            (
                "app/report.py",
                [hunk(20, [(20, "    avg = average(rows)")], [(20, "    avg = mean(rows)")])],
            ),
        ),
    ]
    ranked = rank(c, history)
    # The older caller change fits no kind of its own: being on the stack is all it has.
    assert [ch.sha for ch in ranked][:2] in (["filter", "older"], ["filter"])
    assert ranked[0].line == 2 and ranked[0].fits
    assert any("crashing function" in r for r in ranked[0].reasons)


def test_the_file_of_the_same_commit_that_builds_the_value_is_named_not_the_stack_file():
    source = ["def show(order):", "    label = order.currency_label", "    return label.upper()"]
    c = crash(
        path="app/views.py",
        line=3,
        function="show",
        exc_type="AttributeError",
        exc_value="'NoneType' object has no attribute 'upper'",
        code="return label.upper()",
        nearby=source,
        source=source,
        stack=[
            (frame("app/views.py", 3, "show"), "app/views.py"),
            (frame("app/routes.py", 8, "get", "return show(load(order_id))"), "app/routes.py"),
        ],
    )
    history = [
        commit(
            "both",
            "2026-11-27T10:00:00Z",
            (
                "app/routes.py",
                [hunk(8, [(8, "    return show(load(order_id))")], [(8, "    return show(o)")])],
            ),
            (
                "app/models.py",
                [
                    hunk(
                        30,
                        [(31, "        self.currency_label = LABELS.get(code)")],
                        [(31, "        self.currency_label = LABELS.get(code, code)")],
                    )
                ],
            ),
        )
    ]
    top = rank(c, history)[0]
    assert top.path == "app/models.py" and top.line == 31 and top.producer


def test_a_type_changed_where_a_config_value_is_produced_is_found_where_it_is_consumed():
    source = [
        "def batches(items, settings):",
        "    size = settings['batch_size']",
        "    return [items[i : i + size] for i in range(0, len(items), size)]",
    ]
    c = crash(
        path="app/jobs.py",
        line=3,
        function="batches",
        exc_type="TypeError",
        exc_value="'str' object cannot be interpreted as an integer",
        code=source[2].strip(),
        nearby=source,
        source=source,
        stack=[(frame("app/jobs.py", 3, "batches"), "app/jobs.py")],
    )
    history = [
        commit(
            "decoy",
            "2026-11-27T12:00:00Z",
            ("app/jobs.py", [hunk(40, [(40, "    log.info('done')")], [(40, "    pass")])]),
        ),
        commit(
            "loader",
            "2026-11-27T10:00:00Z",
            (
                "app/config.py",
                [
                    hunk(
                        12,
                        [(12, "        'batch_size': env.get('BATCH_SIZE', '50'),")],
                        [(12, "        'batch_size': int(env.get('BATCH_SIZE', 50)),")],
                    )
                ],
            ),
        ),
    ]
    top = rank(c, history)[0]
    assert (top.sha, top.path, top.line) == ("loader", "app/config.py", 12)
    assert top.fits


def test_a_docstring_edit_in_the_release_commit_is_not_the_fault_and_blame_is_heard():
    c = crash(blamed="fault")
    history = [
        commit(
            "release",
            "2026-11-27T18:00:00Z",
            (
                "app/totals.py",
                [
                    hunk(
                        11,
                        [(11, "    Prices are read from the item as stored.")],
                        [(11, "    Prices come from the item.")],
                    )
                ],
            ),
        ),
        commit(
            "fault",
            "2026-11-26T12:00:00Z",
            (
                "app/totals.py",
                [
                    hunk(
                        13,
                        [(13, "    return item['price'] * item['qty']")],
                        [(13, "    return item.get('price', 0) * item['qty']")],
                    )
                ],
            ),
        ),
    ]
    ranked = rank(c, history)
    assert [ch.sha for ch in ranked] == ["fault"] and ranked[0].blamed


def test_a_re_raise_points_at_the_guarded_statement_and_the_message_names_the_key():
    source = [
        "def timeout(settings):",
        "    try:",
        "        return int(settings['timeout_ms'])",
        "    except (KeyError, ValueError):",
        "        raise ConfigError(f'cannot parse timeout_ms: {settings!r}') from None",
    ]
    c = crash(
        path="app/settings.py",
        line=5,
        function="timeout",
        exc_type="ConfigError",
        exc_value="cannot parse 'timeout_ms': '1,5s'",
        code=source[4].strip(),
        nearby=source[1:5],
        source=source,
        stack=[(frame("app/settings.py", 5, "timeout"), "app/settings.py")],
    )
    history = [
        commit(
            "reraise",
            "2026-11-27T12:00:00Z",
            (
                "app/settings.py",
                [
                    hunk(
                        5,
                        [(5, source[4])],
                        [(5, "        raise ConfigError('cannot parse timeout_ms')")],
                    )
                ],
            ),
        ),
        commit(
            "value",
            "2026-11-26T12:00:00Z",
            (
                "deploy/settings.yaml",
                [hunk(3, [(3, "timeout_ms: '1,5s'")], [(3, "timeout_ms: 1500")])],
            ),
        ),
    ]
    top = rank(c, history)[0]
    assert (top.sha, top.path) == ("value", "deploy/settings.yaml")


def test_the_root_commit_of_a_truncated_history_is_never_a_candidate():
    c = crash(blamed="root")
    root = commit(
        "root",
        "2026-11-20T10:00:00Z",
        ("app/totals.py", [hunk(1, [(13, "    return item['price'] * item['qty']")])]),
    )
    root["parents"] = []
    assert rank(c, [root]) == []


def test_renaming_the_variable_the_crash_line_assigns_is_not_a_change():
    c = crash(
        exc_type="ZeroDivisionError",
        exc_value="division by zero",
        code="per_way = round(total / ways, 2)",
        blamed="rename",
    )
    rename = commit(
        "rename",
        "2026-11-27T10:00:00Z",
        (
            "app/totals.py",
            [
                hunk(
                    13,
                    [(13, "    per_way = round(total / ways, 2)")],
                    [(13, "    computed = round(total / ways, 2)")],
                )
            ],
        ),
    )
    assert rank(c, [rename]) == []


def test_each_hunk_of_an_older_commit_is_mapped_to_the_release_on_its_own():
    # An older commit with two hunks; a newer one inserted a line between them. The second
    # hunk's lines move down by one; the first hunk following cleanly says nothing about it.
    source = ["import x", "import y", "def last(items):", "    # note", "    n = len(items)"]
    source.append("    return items[n]")
    c = crash(
        path="app/calc.py",
        line=6,
        function="last",
        exc_type="IndexError",
        exc_value="list index out of range",
        code="    return items[n]",
        nearby=source[2:6],
        source=source,
    )
    top = hunk(1, [(2, "import y")], context=[(1, "import x")])
    top["old_lines"], top["new_lines"] = 1, 2
    bound = hunk(4, [(4, "    n = len(items)")], [(3, "    n = len(items) - 1")], old_start=3)
    note = hunk(4, [(4, "    # note")], old_start=3)
    note["old_lines"] = 0
    history = [
        commit("note", "2026-11-27T12:00:00Z", ("app/calc.py", [note])),
        commit("bound", "2026-11-27T10:00:00Z", ("app/calc.py", [top, bound])),
    ]
    change = pick(c, history)
    assert change is not None and change.sha == "bound"
    assert change.line == 5 and change.text == "n = len(items)"


def test_type_arguments_and_arrows_are_not_comparisons():
    from agent.models.changes import comparisons

    assert comparisons("List<Map<String, Object>> rows = load(rec)") == []
    assert comparisons("$total = $row->amount; fn($x) => $x") == []
    assert comparisons("if (i < n && j >= m) {") == ["<", ">="]


def test_a_changed_position_the_crash_line_reads_at_fits_an_undefined():
    # JavaScript reads past the end of an array as undefined: a bound changed where the
    # index is computed explains "Cannot read properties of undefined" on the line using it.
    source = [
        "function lastName(rec) {",
        "  const names = rec.names;",
        "  const i = names.length;",
        "  return names[i].trim();",
        "}",
    ]
    c = crash(
        path="src/names.js",
        line=4,
        function="lastName",
        exc_type="TypeError",
        exc_value="Cannot read properties of undefined (reading 'trim')",
        code="  return names[i].trim();",
        nearby=source[1:4],
        source=source,
    )
    history = [
        commit(
            "bound",
            "2026-11-27T10:00:00Z",
            (
                "src/names.js",
                [
                    hunk(
                        3,
                        [(3, "  const i = names.length;")],
                        [(3, "  const i = names.length - 1;")],
                    )
                ],
            ),
        ),
    ]
    change = pick(c, history)
    assert change is not None and change.fits and change.line == 3
    assert any("position the failing line reads at" in r for r in change.reasons)


def test_a_change_below_the_crash_line_is_not_around_it_and_quoted_words_match_whole():
    source = [
        "def last_sku(rec):",
        "    lines = rec['lines']",
        "    sku = lines[-1]['sku']",
        "    return {'result': sku, 'id': rec['id']}",
    ]
    c = crash(
        path="app/calc.py",
        line=3,
        function="last_sku",
        exc_type="KeyError",
        exc_value="'sku'",
        code="    sku = lines[-1]['sku']",
        nearby=source[0:3],
        source=source,
    )
    below = hunk(
        4,
        [(4, "    return {'result': last_sku_value, 'id': rec['id']}")],
        [(4, "    return {'value': last_sku_value, 'id': rec['id']}")],
    )
    change = pick(c, [commit("below", "2026-11-27T10:00:00Z", ("app/calc.py", [below]))])
    reasons = change.reasons if change is not None else []
    assert not any("around the crash line" in r for r in reasons)
    assert not any("which the exception names" in r for r in reasons)


def test_a_setting_read_from_a_renamed_variable_in_a_loader_off_the_stack_is_the_fault():
    # The failing code reads the `zone` setting; the loader, in a file off the stack, still
    # writes `zone` but from another environment variable: the old one is set, the new not.
    source = [
        "def zone_key(settings):",
        "    zone = settings.get('zone')",
        "    return zone.upper()",
    ]
    c = crash(
        path="app/routing.py",
        line=3,
        function="zone_key",
        exc_type="AttributeError",
        exc_value="'NoneType' object has no attribute 'upper'",
        code="    return zone.upper()",
        nearby=source,
        source=source,
    )
    loader = hunk(
        6,
        [(6, "    out.put('zone', env.get('DELIVERY_ZONE_CODE'))")],
        [(6, "    out.put('zone', env.get('DELIVERY_ZONE'))")],
    )
    decoy = hunk(
        1,
        [(1, "def zone_label(s):"), (2, "    return s.get('label')"), (3, "")],
        context=[(4, "def zone_key(settings):")],
    )
    history = [
        commit("loader", "2026-11-27T10:00:00Z", ("app/settings_loader.py", [loader])),
        commit("decoy", "2026-11-26T10:00:00Z", ("app/routing.py", [decoy])),
    ]
    ranked = rank(c, history)
    assert ranked[0].sha == "loader" and ranked[0].producer and ranked[0].fits
    assert ranked[0].path == "app/settings_loader.py" and ranked[0].line == 6
    assert all("drops a guard" not in r for ch in ranked for r in ch.reasons)


def test_a_default_that_became_zero_where_the_setting_is_built_explains_a_division():
    source = [
        "def share(total, settings):",
        "    parts = settings['parts']",
        "    return total / parts",
    ]
    c = crash(
        path="app/split.py",
        line=3,
        function="share",
        exc_type="ZeroDivisionError",
        exc_value="division by zero",
        code="    return total / parts",
        nearby=source,
        source=source,
    )
    config = hunk(
        4,
        [(4, "    'parts': int(env.get('PARTS', 0)),")],
        [(4, "    'parts': int(env.get('PARTS', 2)),")],
    )
    change = pick(c, [commit("cfg", "2026-11-27T10:00:00Z", ("app/config.py", [config]))])
    assert change is not None and change.path == "app/config.py" and change.fits
    assert any("value of parts" in r for r in change.reasons)


def test_a_key_moved_in_the_config_explains_a_division_by_the_empty_value_read():
    source = [
        "public function average($total) {",
        "    $days = (int) config('report.window_days');",
        "    return intdiv($total, $days);",
    ]
    c = crash(
        path="app/Report.php",
        line=3,
        function="average",
        exc_type="DivisionByZeroError",
        exc_value="Division by zero",
        code="    return intdiv($total, $days);",
        nearby=source,
        source=source,
    )
    config = hunk(
        4,
        [
            (4, "    'window' => ["),
            (5, "        'days' => (int) env('WINDOW_DAYS', 7),"),
            (6, "    ],"),
        ],
        [(4, "    'window_days' => (int) env('WINDOW_DAYS', 7),")],
    )
    change = pick(c, [commit("cfg", "2026-11-27T10:00:00Z", ("config/report.php", [config]))])
    assert change is not None and change.path == "config/report.php" and change.fits


def test_what_a_commit_changed_below_the_crash_line_does_not_make_it_fit():
    source = [
        "function build($rows) {",
        "    $started = hrtime(true);",
        "    $avg = intdiv(array_sum($rows), count($rows));",
        "    log('built', (hrtime(true) - $started) / 1e6);",
        "    return $avg;",
        "}",
    ]
    c = crash(
        path="app/Build.php",
        line=3,
        function="build",
        exc_type="DivisionByZeroError",
        exc_value="Division by zero",
        code=source[2],
        nearby=source[:3],
        source=source,
    )
    timing = hunk(
        2,
        [(2, source[1]), (4, source[3])],
        context=[(1, source[0]), (3, source[2]), (5, source[4])],
        old_start=1,
    )
    timing["old_lines"], timing["new_lines"] = 3, 5
    change = pick(c, [commit("timing", "2026-11-27T10:00:00Z", ("app/Build.php", [timing]))])
    assert change is None or not change.fits


def test_a_filter_kept_with_another_condition_fits_a_lookup_that_finds_nothing():
    source = ["function firstOpen(rows) {", "  return openRows(rows)[0].id;", "}"]
    c = crash(
        path="src/calc.js",
        line=2,
        function="firstOpen",
        exc_type="TypeError",
        exc_value="Cannot read properties of undefined (reading 'id')",
        code=source[1],
        nearby=source[:2],
        source=source,
    )
    helper = hunk(
        6,
        [(6, '  return rows.filter((r) => r.state === "open");')],
        [(6, '  return rows.filter((r) => r.state !== "void");')],
    )
    helper["function"] = "function openRows(rows) {"
    change = pick(c, [commit("filter", "2026-11-27T10:00:00Z", ("src/helpers.js", [helper]))])
    assert change is not None and change.fits and "filter" in " ".join(change.reasons)


def test_the_value_is_followed_through_the_caller_loop_to_the_function_that_produces_it():
    # The row that fails to unpack is a parameter; the caller hands it on from a loop over
    # load_rows(); the commit that changed the separator load_rows parses with is the fault,
    # not the newer commit that changed the command on the stack (its signature and the
    # line after the call).
    source = [
        "def parse(line: list[str], owner: str):",
        "    day, label, amount = line",
        "    return day",
        "",
        "def run(file: str, owner: str, *, quiet: bool = False):",
        "    out = []",
        "    for line in load_rows(file):",
        "        out.append(parse(line, owner))",
        "    if not quiet:",
        "        print(out)",
    ]
    c = crash(
        path="app/importer.py",
        line=2,
        function="parse",
        exc_type="ValueError",
        exc_value="not enough values to unpack (expected 3, got 1)",
        code=source[1],
        nearby=source[:2],
        source=source,
        stack=[
            (frame("app/importer.py", 2, "parse", source[1]), "app/importer.py"),
            (frame("app/importer.py", 8, "run", source[7]), "app/importer.py"),
        ],
    )
    reader = hunk(
        4,
        [(4, "    return csv.reader(handle)")],
        [(4, "    return csv.reader(handle, delimiter=';')")],
    )
    reader["function"] = "def load_rows(path: str):"
    command = hunk(
        5,
        [(5, source[4]), (9, source[8]), (10, source[9])],
        [(5, "def run(file: str, owner: str):"), (8, "    print(out)")],
        context=[(6, source[5]), (7, source[6]), (8, source[7])],
    )
    command["old_lines"], command["new_lines"] = 4, 6
    history = [
        commit("command", "2026-11-27T12:00:00Z", ("app/importer.py", [command])),
        commit("reader", "2026-11-27T10:00:00Z", ("app/reader.py", [reader])),
    ]
    ranked = rank(c, history)
    assert ranked[0].sha == "reader" and ranked[0].fits and ranked[0].path == "app/reader.py"


def test_parameters_and_the_arguments_handed_to_them():
    from agent.models.changes import arguments_for, parameters

    assert parameters("def parse(self, row: list[str], owner='x'):") == ["row", "owner"]
    assert parameters("public static Object f(Map<String, Object> rec, int n) {") == ["rec", "n"]
    assert parameters("func (s *Svc) Apply(rec map[string]any, n int) error {") == ["rec", "n"]
    assert parameters("function f($rec, array $settings)") == ["rec", "settings"]
    assert arguments_for("rows[i], owner=me", ["row", "owner"], [0]) == "rows[i]"
    assert arguments_for("a, b, c", ["row"], [0]) is None  # they do not line up


def test_the_bound_of_the_loop_around_the_crash_leads_to_the_function_that_computes_it():
    # The crash indexes inside a loop; how many times the loop runs comes from pages(). The
    # newer commit only added a log line just above the crash line: it reads, changes nothing.
    source = [
        "def fetch(first):",
        "    out = []",
        "    for n in range(1, pages(first.total, first.size) + 1):",
        "        page = load(n)",
        "        log.info('page %d: %d', n, len(page.items))",
        "        last = page.items[len(page.items) - 1]",
        "        out.append(last)",
    ]
    c = crash(
        path="app/fetch.py",
        line=6,
        function="fetch",
        exc_type="IndexError",
        exc_value="list index out of range",
        code=source[5],
        nearby=source[2:6],
        source=source,
    )
    logging = hunk(5, [(5, source[4])], context=[(4, source[3]), (6, source[5])], old_start=4)
    logging["old_lines"], logging["new_lines"] = 2, 3
    count = hunk(
        3, [(3, "    return total // size + 1")], [(3, "    return (total + size - 1) // size")]
    )
    count["function"] = "def pages(total, size):"
    history = [
        commit("logging", "2026-11-27T12:00:00Z", ("app/fetch.py", [logging])),
        commit("count", "2026-11-27T10:00:00Z", ("app/paging.py", [count])),
    ]
    ranked = rank(c, history)
    assert ranked[0].sha == "count" and ranked[0].fits
    assert all(not ch.fits for ch in ranked if ch.sha == "logging")


def test_a_commit_of_the_day_with_no_reason_of_its_own_is_no_candidate():
    # A new helper and the export line of the crash file, just before the errors: recent,
    # in the right file, and still nothing the failing run executed.
    source = ["function last(rec) {", "  return rec.lines[rec.lines.length].sku;", "}"]
    c = crash(
        path="src/calc.js",
        line=2,
        function="last",
        exc_type="TypeError",
        exc_value="Cannot read properties of undefined (reading 'sku')",
        code=source[1],
        nearby=source[:2],
        source=source,
    )
    exports = hunk(
        5,
        [
            (5, "function isClosed(rec) {"),
            (6, "  return rec.closed;"),
            (7, "}"),
            (9, "module.exports = { isClosed, last };"),
        ],
        [(5, "module.exports = { last };")],
    )
    assert pick(c, [commit("helper", "2026-11-28T08:00:00Z", ("src/calc.js", [exports]))]) is None


def test_floor_division_is_code_and_a_changed_default_in_a_caller_signature_is_found():
    assert code_of("    return -(-total // per_page)") == "    return -(-total // per_page)"
    assert code_of("  const x = 1; // keep the rules") == "  const x = 1;"
    source = ["def page_count(total, size):", "    return -(-total // size)"]
    c = crash(
        path="app/paging.py",
        line=2,
        function="page_count",
        exc_type="ZeroDivisionError",
        exc_value="integer division or modulo by zero",
        code=source[1],
        nearby=source,
        source=source,
        stack=[
            (frame("app/paging.py", 2, "page_count", source[1]), "app/paging.py"),
            (
                frame("app/listing.py", 12, "listing", "    return page_count(n, size)"),
                "app/listing.py",
            ),
        ],
    )
    signature = hunk(
        9,
        [(9, "def listing(slug: str, size: int = 0) -> dict:")],
        [(9, "def listing(slug: str, size: int = 25) -> dict:")],
    )
    change = pick(c, [commit("default", "2026-11-27T10:00:00Z", ("app/listing.py", [signature]))])
    assert change is not None and change.line == 9 and change.fits


def test_a_value_now_taken_from_another_member_fits_an_invalid_value_error():
    from agent.models.changes import exception_kinds, fits_kind

    kinds = exception_kinds("RangeError", "Invalid currency code : $")
    assert "format" in kinds
    why = fits_kind(
        kinds,
        ["  const currency = market.money.code;"],
        ["  const currency = market.money.sign;"],
        uses=frozenset({"currency"}),
    )
    assert why is not None and "sign instead of code" in why
    # A rewritten expression is not "another member" of the same value.
    assert (
        fits_kind(
            {"null"},
            ["  const f = new Fmt(locale).run(x);"],
            ["  const f = cache.get(key) ?? new Fmt(locale);"],
            uses=frozenset({"f"}),
        )
        is None
    )


def test_the_line_that_replaced_the_key_the_exception_quotes_is_named():
    # A re-raise names the key it could not find; the commit renamed that key in a table off
    # the stack and added a new function above it: the table's line is the suspect.
    source = [
        "def dispatch(event):",
        "    kind = event['type']",
        "    try:",
        "        handler = HANDLERS[kind]",
        "    except KeyError:",
        "        raise Unsupported(f'unsupported event type: {kind!r}') from None",
    ]
    c = crash(
        path="app/events.py",
        line=6,
        function="dispatch",
        exc_type="Unsupported",
        exc_value="unsupported event type: 'order.paid'",
        code=source[5],
        nearby=source[2:6],
        source=source,
    )
    table = hunk(
        10,
        [
            (10, "def shipped(o):"),
            (11, "    notify(o)"),
            (12, ""),
            (15, "    'payment.done': settle,"),
        ],
        [(12, "    'order.paid': paid,")],
        context=[(13, ""), (14, "HANDLERS = {")],
    )
    table["old_lines"], table["new_lines"] = 3, 6
    change = pick(c, [commit("rename", "2026-11-27T10:00:00Z", ("app/handlers.py", [table]))])
    assert change is not None and change.line == 15


def test_a_new_ruby_predicate_on_the_stack_is_a_change_the_run_executed():
    # `valid_in_country?` is the crashing function, newly added: the `?` of its frame's name
    # does not hide that the failing run executed it.
    source = ["  def valid?(coupon)", "    coupon.region.upcase == @country", "  end"]
    c = crash(
        path="app/coupons.rb",
        line=2,
        function="valid?",
        exc_type="NoMethodError",
        exc_value="undefined method `upcase' for nil:NilClass",
        code=source[1],
        nearby=source[:2],
        source=source,
        stack=[(frame("app/coupons.rb", 2, "valid?", source[1]), "app/coupons.rb")],
    )
    new = hunk(1, [(1, source[0]), (2, source[1]), (3, source[2])])
    new["old_lines"] = 0
    change = pick(c, [commit("new", "2026-11-27T10:00:00Z", ("app/coupons.rb", [new]))])
    assert change is not None and change.on_crash_line


def test_in_a_cut_history_the_line_that_makes_the_failing_value_is_the_origin():
    # The crash line's commit is the root of a truncated history: no diff shows a change,
    # so the line that computes the index it reads at is named, followed to the release
    # through a newer commit that added a line above it; and no commit is claimed.
    source = [
        "def last_sku(rec):",
        "    lines = rec['lines']",
        "    last = len(lines)",
        "    return lines[last]['sku']",
    ]
    root = commit(
        "root",
        "2026-10-01T10:00:00Z",
        ("app/skus.py", [hunk(1, list(enumerate(source, 1)), old_start=0)]),
        ("app/views.py", [hunk(1, [(1, "def show(rec):"), (2, "    return last_sku(rec)")])]),
    )
    root["parents"] = []
    newer = commit(
        "docs",
        "2026-11-20T10:00:00Z",
        ("app/skus.py", [hunk(1, [(1, '"""SKU helpers."""')], old_start=0)]),
    )
    newer["parents"] = ["root"]
    newer["files"][0]["hunks"][0]["old_lines"] = 0  # `@@ -0,0 +1 @@`: one line inserted on top
    c = crash(
        path="app/skus.py",
        line=5,
        function="last_sku",
        exc_type="IndexError",
        exc_value="list index out of range",
        code="return lines[last]['sku']",
        nearby=source[1:],
        source=['"""SKU helpers."""', *source],
        blamed="root",
    )
    found = origin(c, [newer, root])
    assert found is not None
    assert (found.path, found.line, found.text) == ("app/skus.py", 4, "last = len(lines)")
    assert rank(c, [newer, root]) == []  # the root itself is never a candidate change
    # A history that reaches the crash line's commit has a diff to read: no static search.
    assert origin(replace(c, blamed="docs"), [newer, root]) is None


def test_a_lookup_by_a_quoted_key_is_no_index_or_bound():
    from agent.models.changes import exception_kinds, fits_kind

    kinds = exception_kinds("IndexOutOfBoundsException", "Index 3 out of bounds for length 3")
    # A new log helper reads `rec["id"]`; the index expression itself stayed as it was.
    removed = ['    return mapOf("value" to total, "id" to rec["id"])']
    added = [
        "    fun label(rec: Map<String, Any?>): Any? {",
        '        return "label: ${rec["id"]}"',
        "    }",
        '    return mapOf("result" to total, "id" to rec["id"])',
    ]
    assert fits_kind(kinds, removed, added) is None
    for before, after in [
        ("x = rows[len(rows) - 1]", "x = rows[len(rows)]"),  # Python
        ("$x = $rows[count($rows) - 1];", "$x = $rows[count($rows)];"),  # PHP
        ("x := rows[0]", "x := rows[1]"),  # Go
    ]:
        assert fits_kind(kinds | {"index"}, [before], [after]) == "changes an index or a bound"
