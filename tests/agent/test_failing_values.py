"""Which values of the failing line failed: the operands of the operator a type error names,
the index a new bound test should have stopped, a PHP variable followed through what bound
it, and the argument a message quotes when a rewrite hands the raising call others."""

from agent.models import through
from agent.models.changes import data_path, operands_of, rank, walk_back
from tests.agent.test_changes import commit, crash, hunk


def test_the_operands_of_the_named_operator_are_the_failing_values():
    message = "'<' not supported between instances of 'NoneType' and 'datetime.date'"
    line = "if mov.amount >= 0 or mov.booked < period_start:"
    assert operands_of(message, line) == "mov.booked period_start"
    assert operands_of("unsupported operand type(s) for +: 'int' and 'str'", "t = a + b") == "a b"
    # Not named, or named twice: the whole line.
    assert operands_of("division by zero", line) == line
    assert operands_of("'<' not supported between", "a < b or c < d") == "a < b or c < d"


def test_a_value_beside_the_named_operator_is_not_on_the_path():
    source = [
        "def reconcile(movements, period_start):",
        "    for mov in movements:",
        "        if mov.amount >= 0 or mov.booked < period_start:",
    ]
    c = crash(
        path="ledger/reconcile.py",
        line=3,
        function="reconcile",
        exc_type="TypeError",
        exc_value="'<' not supported between instances of 'NoneType' and 'datetime.date'",
        code=source[2].strip(),
        nearby=source,
        source=source,
    )
    names = data_path(c, operands_of(c.exc_value, c.code), source)
    assert "booked" in names and "amount" not in names
    report = hunk(
        18,
        [(18, '    row = [claim, f"{amount:.2f}", account]')],
        [(18, "    row = [claim, amount, account]")],
    )
    ranked = rank(c, [commit("report", "2026-11-28T08:00:00Z", ("ledger/report.py", [report]))])
    assert all("amount" not in " ".join(x.reasons) for x in ranked)


def test_the_new_bound_test_above_the_index_is_the_suspect_line():
    path = "internal/sheet/sheet.go"
    source = [
        "func renderSheet(pdf *fpdf.Fpdf, sheet []Item) {",
        "\tfor row := 0; row < rows; row++ {",
        "\t\tfor col := 0; col < cols; col++ {",
        "\t\t\ti := row*cols + col",
        "\t\t\tif i > len(sheet) {",
        "\t\t\t\treturn",
        "\t\t\t}",
        "\t\t\trenderLabel(pdf, sheet[i])",
    ]
    c = crash(
        path=path,
        line=8,
        function="renderSheet",
        exc_type="runtime.Error",
        exc_value="runtime error: index out of range [21] with length 21",
        code=source[7].strip(),
        nearby=source,
        source=source,
        blamed="rows",
    )
    rewrite = hunk(
        2,
        [(n, source[n - 1]) for n in range(2, 9)],
        [(2, "\tfor i, it := range sheet {"), (3, "\t\trenderLabel(pdf, it)")],
    )
    ranked = rank(c, [commit("rows", "2026-11-28T08:00:00Z", (path, [rewrite]))])
    assert ranked and (ranked[0].sha, ranked[0].line) == ("rows", 5)


def test_a_php_variable_is_followed_through_what_bound_it():
    body = ["        $template = sprintf('sms/ship.%s.txt.twig', $message->locale);"]
    names = {"$template": 0, "render": 0}
    walk_back(body, names, (1, 2))
    assert "locale" in names and "$message" in names


def test_a_rewrite_that_makes_the_quoted_argument_as_before_hands_the_call_nothing_new():
    message = 'Unable to find template "sms/ship.es_ES.txt.twig" (looked into: /app/templates).'
    old = ["$text = $this->twig->render('sms/ship.'.$message->locale.'.txt.twig', ['s' => $s]);"]
    new = "$text = $this->twig->render($template, ['s' => $s, 'url' => $s->getUrl()]);"
    bound = {"template": "sprintf('sms/ship.%s.txt.twig', $message->locale)"}
    assert through.rehanded(new, old, "render", message, bound) is None
    # The template's name itself made otherwise: that is what the call failed on.
    other = {"template": "sprintf('sms/%s/ship.txt.twig', $message->locale)"}
    assert through.rehanded(new, old, "render", 'template "sms/es_ES/ship.txt.twig"', other)
    # No quoted value to go by: any argument handed otherwise counts.
    assert through.rehanded(new, old, "render") == "render"
