"""A setting now written as the very value the exception names, in a configuration file off
the stack (YAML's unquoted keys too, a value named in brackets at the message's end), is where
that value comes from: it beats a change beside the crash that raises nothing."""

from agent.models.changes import rank
from tests.agent.test_changes import commit, crash, hunk


def test_a_yaml_parameter_set_to_the_value_the_message_names_wins():
    source = [
        "final class ReminderPolicy",
        "{",
        "    public function __construct(",
        "        private readonly string $leadTime,",
        "    ) {}",
        "",
        "    public function dueAt(\\DateTimeImmutable $start): \\DateTimeImmutable",
        "    {",
        "        return $start->sub(new \\DateInterval($this->leadTime));",
        "    }",
        "}",
    ]
    c = crash(
        path="src/Reminders/ReminderPolicy.php",
        line=9,
        function="App\\Reminders\\ReminderPolicy::dueAt",
        exc_type="DateMalformedIntervalStringException",
        exc_value="Unknown or bad format (P36H)",
        code=source[8].strip(),
        nearby=source[6:],
        source=source,
    )
    beside = hunk(
        4,
        [(4, "        private readonly string $leadTime,")],
        [(4, "        private string $leadTime,")],
        [(3, "    public function __construct("), (5, "    ) {}")],
    )
    config = hunk(
        5,
        [(5, "    reminders.lead_time: 'P36H'")],
        [(5, "    reminders.lead_time: 'P1D'")],
        [(4, "parameters:"), (6, "    reminders.channel: sms")],
    )
    ranked = rank(
        c,
        [
            commit(
                "readonly", "2026-11-28T08:30:00Z", ("src/Reminders/ReminderPolicy.php", [beside])
            ),
            commit("lead", "2026-11-28T08:00:00Z", ("config/services.yaml", [config])),
        ],
    )
    assert ranked and ranked[0].sha == "lead", [(r.sha, r.score, r.reasons) for r in ranked]
    assert ranked[0].line == 5
    assert any("the value the exception quotes" in r for r in ranked[0].reasons)


def test_a_mapping_the_crashing_file_imports_now_maps_its_keys_to_other_names():
    source = [
        "const codes = require('./codes.json');",
        "const RULES = require('./rules');",
        "",
        "function apply(shipment, event) {",
        "  const next = codes[event.code];",
        "  const rule = RULES[next];",
        "  if (rule.rank <= RULES[shipment.status].rank) {",
        "    return 'ignored';",
        "  }",
        "  return next;",
        "}",
    ]
    c = crash(
        path="src/tracking/apply.js",
        line=7,
        function="apply",
        exc_type="TypeError",
        exc_value="Cannot read properties of undefined (reading 'rank')",
        code=source[6].strip(),
        nearby=source[3:],
        source=source,
    )
    mapping = hunk(
        3,
        [(3, '  "30": "delivery_failed",'), (4, '  "31": "delivery_failed",')],
        [(3, '  "30": "failed_attempt",'), (4, '  "31": "failed_attempt",')],
        [(2, '  "20": "in_transit",'), (5, '  "40": "delivered"')],
    )
    ranked = rank(
        c, [commit("names", "2026-11-28T08:00:00Z", ("src/tracking/codes.json", [mapping]))]
    )
    assert ranked and ranked[0].sha == "names"
    assert ranked[0].fits and ranked[0].line == 3, (ranked[0].line, ranked[0].reasons)
    # The same lines with the same names: nothing renamed.
    same = hunk(3, [(3, '  "30": "failed_attempt",')], [(3, '  "30": "failed_attempt", ')])
    again = rank(c, [commit("tidy", "2026-11-28T08:00:00Z", ("src/tracking/codes.json", [same]))])
    assert not any(r.fits for r in again)


def test_a_string_an_expression_only_uses_is_not_the_value_it_sets():
    source = [
        "def enrich(orders, stores):",
        '    ids = sorted(orders.loc[orders["region"].isna(), "store_id"].unique())',
        '    log.info("%d unknown stores", len(ids))',
        '    return orders.merge(stores[["store_id", "region"]], on="store_id", how="left")',
    ]
    c = crash(
        path="etl/transforms.py",
        line=4,
        function="enrich",
        exc_type="ValueError",
        exc_value="You are trying to merge on object and int64 columns for key 'store_id'.",
        code=source[3].strip(),
        nearby=source,
        source=source,
    )
    logged = hunk(2, [(2, source[1]), (3, source[2])], context=[(1, source[0]), (4, source[3])])
    logged["function"] = source[0]
    ranked = rank(c, [commit("log", "2026-11-28T08:00:00Z", ("etl/transforms.py", [logged]))])
    assert ranked, "a change beside the crash is a candidate"
    assert not any("the value the exception quotes" in r for x in ranked for r in x.reasons)
