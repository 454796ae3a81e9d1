"""What is no bound: Go's channel operator is no comparison, and a new file bounds nothing that
ran before, whatever it compares."""

from agent.models.changes import comparisons, fits_kind, rank
from tests.agent.test_changes import commit, crash, hunk


def test_the_channel_operator_is_no_comparison():
    assert comparisons("sem <- struct{}{}") == []
    assert comparisons("defer func() { <-sem; wg.Done() }()") == []
    assert comparisons("if n < -1 {") == ["<"]
    assert (
        fits_kind({"index"}, ["w.handle(ctx, m)"], ["sem <- struct{}{}", "w.handle(ctx, m)"])
        is None
    )


def test_a_new_file_changes_no_bound_of_the_code_that_failed():
    source = [
        "func parse(key string) (Ref, error) {",
        '\tparts := strings.Split(key, "/")',
        "\treturn Ref{Tenant: parts[1], Name: parts[2]}, nil",
        "}",
    ]
    c = crash(
        path="internal/thumbs/key.go",
        line=3,
        function="parse",
        exc_type="runtime.boundsError",
        exc_value="runtime error: index out of range [2] with length 2",
        code=source[2].strip(),
        nearby=source,
        source=source,
    )
    upload = hunk(
        1,
        [
            (1, "package api"),
            (3, "func (s *Server) putLogo(w http.ResponseWriter, r *http.Request) {"),
            (4, '\ttenant := r.PathValue("tenant")'),
            (40, "\tif r.ContentLength > 2<<20 {"),
            (5, '\tkey := fmt.Sprintf("uploads/%s/logo-%d", tenant, time.Now().Unix())'),
            (6, '\t\thttp.Error(w, "too large", http.StatusRequestEntityTooLarge)'),
            (7, "\t}"),
            (8, "}"),
        ],
        old_start=0,
    )
    ranked = rank(c, [commit("logo", "2026-11-28T08:00:00Z", ("internal/api/logo.go", [upload]))])
    assert ranked, "the new file makes the key the failing code splits"
    assert not any(r.fits for r in ranked), [(r.path, r.reasons) for r in ranked]


def test_a_bound_that_had_to_be_positive_is_a_zero_that_came_from_somewhere():
    from agent.models.changes import Signals, exception_kinds

    assert exception_kinds("*errors.errorString", "invalid argument to Int63n") == {"zero"}
    assert "zero" in exception_kinds("ValueError", "empty range for randrange() (0, 0, 0)")
    source = [
        "func (p Policy) Delay(attempt int) time.Duration {",
        "\tspread := int64(float64(p.Base) * p.Jitter)",
        "\treturn p.Base + time.Duration(rand.Int63n(spread))",
        "}",
    ]
    c = crash(
        path="internal/retry/policy.go",
        line=3,
        function="Policy.Delay",
        exc_type="*errors.errorString",
        exc_value="invalid argument to Int63n",
        code=source[2].strip(),
        nearby=source,
        source=source,
        callee="rand.Int63n",
    )
    assert "spread" in Signals.of(c).denominators


def test_a_division_inside_a_new_call_fails_before_the_call_is_made():
    from agent.models import failing

    code = "$kg = self::upToHalf($volume / $this->divisor);"
    old = "$kg = round($volume / $this->divisor, 2);"
    assert failing.divisions(code) == failing.divisions(old)
    assert failing.kept({"zero"}, "Division by zero", code, [old], [code], set())
    source = [
        "    public function chargeable(float $volume): float",
        "    {",
        "        " + code,
        "        return $kg;",
        "    }",
    ]
    c = crash(
        path="app/Shipping/ParcelBuilder.php",
        line=3,
        function="App\\Shipping\\ParcelBuilder::chargeable",
        exc_type="DivisionByZeroError",
        exc_value="Division by zero",
        code=code,
        nearby=source,
        source=source,
    )
    rounding = hunk(
        3,
        [
            (3, "        " + code),
            (8, "    private static function upToHalf(float $kg): float"),
            (9, "    {"),
            (10, "        return ceil($kg * 2) / 2;"),
            (11, "    }"),
        ],
        [(3, "        " + old)],
    )
    rounding["function"] = source[0]
    ranked = rank(
        c, [commit("half", "2026-11-28T08:00:00Z", ("app/Shipping/ParcelBuilder.php", [rounding]))]
    )
    assert ranked and not ranked[0].fits, ranked[0].reasons
    assert not any("returns the failing value" in r for r in ranked[0].reasons)


def test_the_filter_that_binds_the_denominator_beats_a_rounding_of_the_crash_line():
    from agent.models import failing

    # A denominator times a constant other than 0 is 0 exactly when it is.
    new = "rate = (attended * 200 + held.size) / (2 * held.size),"
    assert failing.kept(
        {"zero"}, "/ by zero", new, ["rate = attended * 100 / held.size,"], [], set()
    )
    assert not failing.kept(
        {"zero"}, "/ by zero", new, ["rate = attended * 100 / total,"], [], set()
    )
    source = [
        "    fun build(code: String): Summary {",
        "        val planned = sessions.sessions(code)",
        "        val held = planned.filter { it.startsAt < now && it.cancelledAt == null }",
        "        val students = course.students.map { s ->",
        "            val attended = presentBy[s.id] ?: 0",
        "            Row(s.id, attended, rate = (attended * 200 + held.size) / (2 * held.size))",
        "        }",
        "        return Summary(students)",
        "    }",
    ]
    c = crash(
        path="src/main/kotlin/campus/reports/AttendanceReport.kt",
        line=6,
        function="build",
        exc_type="ArithmeticException",
        exc_value="/ by zero",
        code=source[5].strip(),
        nearby=source,
        source=source,
    )
    rounding = hunk(
        6,
        [(6, source[5])],
        [(6, "            Row(s.id, attended, rate = attended * 100 / held.size)")],
    )
    rounding["function"] = source[0]
    wrong = source[2].replace("== null", "!= null")
    cancelled = hunk(
        3, [(3, wrong)], [(3, "        val held = planned.filter { it.startsAt < now }")]
    )
    cancelled["function"] = source[0]
    path = "src/main/kotlin/campus/reports/AttendanceReport.kt"
    ranked = rank(
        c,
        [
            commit("round", "2026-11-28T08:40:00Z", (path, [rounding])),
            commit("cancel", "2026-11-25T08:00:00Z", (path, [cancelled])),
        ],
    )
    assert ranked and ranked[0].sha == "cancel", [(r.sha, r.score, r.reasons) for r in ranked]
    assert any("the operand of what failed" in r for r in ranked[0].reasons)
