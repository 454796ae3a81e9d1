"""A value given a new name changes nothing until a line reads it; a settings object added
after a helper function is still a change of the settings the failing code reads."""

from agent.models.changes import rank, where_used
from agent.models.equivalent import bound_name, reads
from tests.agent.test_changes import commit, crash, frame, hunk


def test_a_new_constant_is_suspected_where_it_is_used():
    """The layout the exception quotes is bound to a new constant and used by the parse
    call: the parse call is the line that changed what runs."""
    path = "internal/events/timestamp.go"
    layout = '"2006-01-02T15:04:05.000Z07:00"'
    c = crash(
        path="internal/consumer/consumer.go",
        line=62,
        function="(*Consumer).handle",
        exc_type="*time.ParseError",
        exc_value=f'parsing time "2026-12-01T08:51:33+01:00" as {layout}: cannot parse',
        code='return fmt.Errorf("decode: %w", err)',
        nearby=["if err := json.Unmarshal(msg.Value, &scan); err != nil {"],
        source=['import "scanfeed/internal/events"'] + [""] * 60 + ["\treturn err"],
    )
    change = hunk(
        12,
        [
            (12, f"const wireLayout = {layout}"),
            (21, "\tv, err := time.Parse(wireLayout, s)"),
        ],
        [(19, "\tv, err := time.Parse(time.RFC3339Nano, s)")],
        context=[(16, "func (t *Timestamp) UnmarshalJSON(b []byte) error {")],
    )
    ranked = rank(c, [commit("layout", "2026-11-28T08:00:00Z", (path, [change]))])
    assert ranked and (ranked[0].sha, ranked[0].path, ranked[0].line) == ("layout", path, 21)


def test_a_changed_constant_keeps_its_own_line():
    assert bound_name("const limit = 500") == "limit"
    assert reads("  return rows[:limit]", "limit")
    assert not reads("  return rows.limit", "limit")  # a member, not the variable
    assert not reads("const limit = 500", "limit")


def test_settings_added_after_a_helper_are_a_change_of_the_settings():
    """config.js gains a helper and, after it, the chunk size the caller on the stack now
    reads from it: the commit's setting is the suspect, not only the caller that reads it."""
    partner = "src/partner.js"
    source = [
        "async function postChunk(events) {",
        "  const res = await fetch(url, { body: JSON.stringify({ events }) });",
        "  if (!res.ok) {",
        "    throw new PartnerError(res.status, events.length);",
        "  }",
        "}",
        "async function sendAll(events) {",
        "  for (let i = 0; i < events.length; i += config.chunkSize) {",
        "    await postChunk(events.slice(i, i + config.chunkSize));",
    ]
    c = crash(
        path=partner,
        line=4,
        function="postChunk",
        exc_type="PartnerError",
        exc_value="ShipNow answered 413 to 214 events",
        code=source[3].strip(),
        nearby=source[:4],
        source=source,
        stack=[
            (frame(partner, 4, "postChunk", source[3]), partner),
            (frame(partner, 9, "sendAll", source[8]), partner),
        ],
    )
    settings = hunk(
        3,
        [
            (
                3,
                "const num = (k, d) => (process.env[k] ? Number(process.env[k]) : d);",
            ),
            (8, '  chunkSize: num("PARTNER_CHUNK_SIZE", 500),'),
        ],
        [],
        context=[(5, "module.exports = {")],
    )
    settings["old_start"], settings["old_lines"] = 3, 0
    moved = hunk(
        8,
        [(8, source[7]), (9, source[8])],
        [
            (8, "  for (let i = 0; i < events.length; i += CHUNK) {"),
            (9, "    await postChunk(events.slice(i, i + CHUNK));"),
        ],
    )
    history = [
        commit(
            "settings", "2026-11-28T08:00:00Z", ("src/config.js", [settings]), (partner, [moved])
        )
    ]
    ranked = rank(c, history)
    assert ranked and (ranked[0].path, ranked[0].line) == ("src/config.js", 8), [
        (x.path, x.line, x.reasons) for x in ranked
    ]


def _scan_case(fields_after: str) -> list:
    view = "internal/api/views.go"
    code = "Unit:         unitNames[p.Unit],"
    c = crash(
        path=view,
        line=26,
        function="productView",
        exc_type="runtime.boundsError",
        exc_value="runtime error: index out of range [12] with length 4",
        code=code,
        nearby=["func productView(p store.Product) ProductView {", "\treturn ProductView{", code],
        source=[""] * 20
        + ["func productView(p store.Product) ProductView {", "\treturn ProductView{"]
        + [""] * 3
        + ["\t\t" + code],
    )
    scan = hunk(
        36,
        [(36, f"\terr := row.Scan({fields_after})")],
        [(36, "\terr := row.Scan(&p.ID, &p.Name, &p.Unit, &p.OnHand, &p.PriceCents)")],
        context=[(35, "\tvar p Product")],
    )
    history = [commit("cols", "2026-11-28T08:00:00Z", ("internal/store/products.go", [scan]))]
    return rank(c, history)


def test_values_read_into_fields_in_another_order_are_the_fault():
    """A column inserted and two swapped: the field the failing code indexes with gets
    another column's value (Go's `Scan(&p.Unit)` writes the field it is handed)."""
    ranked = _scan_case("&p.ID, &p.Name, &p.OnHand, &p.Unit, &p.Reorder, &p.PriceCents")
    assert ranked and (ranked[0].sha, ranked[0].line) == ("cols", 36)
    assert any("order of what Scan is handed" in r for r in ranked[0].reasons)


def test_a_field_added_at_the_end_moves_nothing():
    ranked = _scan_case("&p.ID, &p.Name, &p.Unit, &p.OnHand, &p.PriceCents, &p.Reorder")
    assert ranked and all("order of" not in " ".join(x.reasons) for x in ranked)


def test_a_value_that_goes_on_over_lines_keeps_its_line():
    """`s := &Service{` opens a literal that the next lines fill: it is the change, and an
    earlier closure's `s` is another variable."""
    added = [
        (24, "\treturn func(s *Service) { s.window = d }"),
        (32, "\ts := &Service{"),
        (33, "\t\trepo:   repo,"),
        (38, "\treturn s"),
    ]
    assert where_used(32, "s := &Service{", added, []) == (32, "s := &Service{")
    const = [(14, 'const wireLayout = "2006"'), (21, "\tv, err := time.Parse(wireLayout, s)")]
    assert where_used(14, const[0][1], const, [])[0] == 21
    assert where_used(14, const[0][1], const, ['const wireLayout = "2007"'])[0] == 14
