"""An error handed to Sentry by hand (Go's `hub.CaptureException(fmt.Errorf("…: %v", err))`)
has its stack where it was reported: the statement that set the error is what failed, and
a newer rewrite of the error branch (how it is reported, redelivery) ran after it failed."""

from datetime import UTC, datetime

from agent.models.changes import Crash, failing_lines, rank
from tests.agent.test_changes import commit, hunk

SOURCE = [
    "func (c *Consumer) handle(ctx context.Context, msg jetstream.Msg) {",
    "\tm, err := manifest.Decode(msg.Data())",
    "\tif err == nil {",
    "\t\tc.warnMissingLots(m)",
    "\t}",
    "\tif err != nil {",
    "\t\t// An unreadable manifest will not read better on redelivery.",
    "\t\tmeta, _ := msg.Metadata()",
    '\t\tc.hub.CaptureException(fmt.Errorf("manifest %d rejected: %v", meta.Seq, err))',
    "\t\t_ = msg.Term()",
    "\t\treturn",
    "\t}",
    "\t_ = msg.Ack()",
    "}",
]


def crash() -> Crash:
    return Crash(
        path="internal/consumer/consumer.go",
        line=9,
        function="(*Consumer).handle",
        exc_type="*errors.errorString",
        exc_value='manifest 1884 rejected: line 3: weight: strconv.ParseInt: parsing "96.25": '
        "invalid syntax",
        code=SOURCE[8].strip(),
        nearby=SOURCE[5:9],
        first_seen=datetime(2026, 12, 1, 9, tzinfo=UTC),
        source=SOURCE,
        blamed="report",
    )


def test_the_statement_that_set_the_error_is_what_failed():
    code, _, rethrow = failing_lines(crash())
    assert rethrow and code.strip() == "m, err := manifest.Decode(msg.Data())"


def test_the_decoder_change_wins_over_the_rewritten_error_branch():
    report = hunk(
        7,
        [(7, SOURCE[6]), (8, SOURCE[7]), (9, SOURCE[8]), (10, SOURCE[9])],
        [
            (7, '\t\tc.hub.CaptureException(fmt.Errorf("manifest rejected: %v", err))'),
            (8, "\t\t_ = msg.Nak()"),
        ],
        context=[(6, SOURCE[5]), (11, SOURCE[10])],
    )
    report["old_lines"], report["new_lines"] = 4, 6
    decoder = hunk(
        41,
        [(41, "\tgrams, err := strconv.ParseInt(f[2], 10, 64)")],
        [(41, "\tkg, err := strconv.ParseFloat(f[2], 64)")],
        context=[
            (42, "\tif err != nil {"),
            (43, '\t\treturn Pallet{}, fmt.Errorf("weight: %w", err)'),
        ],
    )
    decoder["function"] = "func parsePallet(line string) (Pallet, error) {"
    decode = hunk(
        10,
        [
            (10, "func Decode(raw []byte) (*Manifest, error) {"),
            (11, "\tp, err := parsePallet(string(raw))"),
            (12, "\treturn &Manifest{Pallets: []Pallet{p}}, err"),
            (13, "}"),
        ],
        old_start=0,
    )
    root = commit("root", "2026-04-21T09:00:00Z", ("internal/manifest/decode.go", [decode]))
    root["parents"] = []
    history = [
        commit("report", "2026-12-01T08:20:00Z", ("internal/consumer/consumer.go", [report])),
        commit("weights", "2026-11-30T15:45:00Z", ("internal/manifest/decode.go", [decoder])),
        root,
    ]
    ranked = rank(crash(), history)
    assert ranked and (ranked[0].sha, ranked[0].line) == ("weights", 41), [
        (c.sha, c.score, c.reasons) for c in ranked
    ]
    assert all(c.sha != "report" for c in ranked)
