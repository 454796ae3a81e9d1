"""The message names the value that failed (`Batch of 2000 documents`, `Disk [facturas]`): a
change that now sets a setting to exactly that value made it, wherever the setting is read.
And a rewrite of the crash line that keeps its values cannot change their types."""

from dataclasses import replace

import pytest

from agent.models.changes import rank
from tests.agent.test_changes import commit, crash, frame, hunk

RAISE = "    throw new SearchApiError(res.status, await res.text());"


@pytest.mark.parametrize(
    ("exc_value", "where", "old", "new", "value"),
    [
        (  # TypeScript: a default raised past what the API takes
            '413 {"message":"Batch of 2000 documents exceeds the limit of 1000 per request"}',
            "src/config.ts",
            '  batchSize: int("SYNC_BATCH_SIZE", 500),',
            '  batchSize: int("SYNC_BATCH_SIZE", 2000),',
            "2000",
        ),
        (  # PHP/Laravel: an env default that names a disk nobody configured
            "Disk [facturas] does not have a configured driver.",
            "config/facturas.php",
            "    'disco' => env('FACTURAS_DISCO', 'local'),",
            "    'disco' => env('FACTURAS_DISCO', 'facturas'),",
            "facturas",
        ),
    ],
)
def test_a_setting_now_set_to_the_value_the_message_names_made_it(
    exc_value, where, old, new, value
):
    c = crash(
        path="src/search/client.ts",
        line=3,
        function="send",
        exc_type="SearchApiError",
        exc_value=exc_value,
        code=RAISE.strip(),
        nearby=["  if (!res.ok) {", RAISE],
        source=["async function send(docs) {", "  if (!res.ok) {", RAISE],
    )
    setting = hunk(12, [(12, new)], [(12, old)])
    beside = hunk(2, [(2, "  if (!res.ok && res.status !== 409) {")], [(2, "  if (!res.ok) {")])
    history = [
        commit("beside", "2026-11-28T08:40:00Z", ("src/search/client.ts", [beside])),
        commit("setting", "2026-11-28T08:00:00Z", (where, [setting])),
    ]
    ranked = rank(c, history)
    assert ranked and ranked[0].sha == "setting", [(x.sha, x.score, x.reasons) for x in ranked]
    assert ranked[0].fits and any(f"to {value}" in r for r in ranked[0].reasons)


def test_a_status_code_or_a_value_set_before_is_no_named_value():
    c = crash(
        path="src/search/client.ts",
        line=3,
        function="send",
        exc_type="SearchApiError",
        exc_value='413 {"message":"Batch of 2000 documents exceeds the limit"}',
        code=RAISE.strip(),
        nearby=[RAISE],
        source=["", "", RAISE],
    )
    status = hunk(3, [(3, "  retryOn: 413,")], [(3, "  retryOn: 429,")])
    kept = hunk(12, [(12, '  batchSize: int("BATCH", 2000),')], [(12, "  batchSize: 2000,")])
    history = [commit("s", "2026-11-28T08:00:00Z", ("src/config.ts", [status, kept]))]
    assert not any("the exception quotes" in r for x in rank(c, history) for r in x.reasons)


def test_a_rewrite_of_a_comparison_between_the_same_values_changes_no_types():
    # `can't compare offset-naive and offset-aware`: the loop that replaced the
    # comprehension compares what it compared; the caller now builds a naive cut-off.
    source = [
        "def pendientes(prestamos, limite, hoy):",
        "    elegidos = []",
        "    for prestamo in prestamos:",
        "        if prestamo.vence_en <= limite:",
    ]
    c = crash(
        path="prestamos/avisos.py",
        line=4,
        function="pendientes",
        exc_type="TypeError",
        exc_value="can't compare offset-naive and offset-aware datetimes",
        code=source[3].strip(),
        nearby=source,
        source=source,
    )
    loop = hunk(
        1,
        [(1, source[0]), (2, source[1]), (3, source[2]), (4, source[3])],
        [
            (1, "def pendientes(prestamos, limite):"),
            (2, "    return [p for p in prestamos if p.vence_en <= limite]"),
        ],
    )
    history = [commit("loop", "2026-11-28T08:40:00Z", ("prestamos/avisos.py", [loop]))]
    ranked = rank(c, history)
    assert all("adds the crash line" not in r for x in ranked for r in x.reasons), ranked
    assert any("same values" in r for x in ranked for r in x.reasons)


@pytest.mark.parametrize(
    ("exc_type", "exc_value", "line"),
    [
        ("TypeError", "Cannot read properties of undefined (reading 'title')", "t.title(b.code)"),
        ("AttributeError", "'NoneType' object has no attribute 'title'", "t.title(b.code)"),
    ],
)
def test_the_value_found_missing_is_the_receiver_the_message_names(exc_type, exc_value, line):
    # `t` is what was undefined (the message names `.title`), bound from the catalogue by
    # the locale the middleware sets; the query change that can return no booking makes `b`,
    # which is not what was missing.
    source = [
        "function renderReceipt(b, locale) {",
        "  const t = CATALOG[locale];",
        f"  return {{ title: {line} }};",
    ]
    route = "  const receipt = renderReceipt(booking, ctx.state.locale);"
    c = crash(
        path="src/receipts/render.js",
        line=3,
        function="renderReceipt",
        exc_type=exc_type,
        exc_value=exc_value,
        code=source[2].strip(),
        nearby=source,
        source=source,
        stack=[
            (
                frame("src/receipts/render.js", 3, "renderReceipt", source[2]),
                "src/receipts/render.js",
            ),
            (
                replace(
                    frame("src/routes/receipts.js", 17, "getReceipt", route),
                    context=[(16, "  const booking = await bookingFor(ctx.params.id);")],
                ),
                "src/routes/receipts.js",
            ),
        ],
    )
    query = hunk(
        19,
        [(19, "  const booking = await db.one('SELECT * FROM b WHERE id = $1 AND paid', [id]);")],
        [(19, "  const booking = await db.one('SELECT * FROM b WHERE id = $1', [id]);")],
    )
    query["function"] = "async function bookingFor(id) {"
    locale = hunk(
        19,
        [(19, "    ctx.state.locale = ctx.query.lang || pickLocale(ctx.get('Accept-Language'));")],
        [(19, "    ctx.state.locale = pickLocale(ctx.get('Accept-Language'));")],
    )
    history = [
        commit("query", "2026-11-28T08:30:00Z", ("src/db.js", [query])),
        commit("locale", "2026-11-28T08:00:00Z", ("src/middleware/locale.js", [locale])),
    ]
    ranked = rank(c, history)
    assert ranked and ranked[0].sha == "locale", [(x.sha, x.score, x.reasons) for x in ranked]
    assert not next((x.fits for x in ranked if x.sha == "query"), False)
