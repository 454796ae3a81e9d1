"""A request that timed out: the timeout was set somewhere, and where it is now set otherwise
(its number, its unit, the setting it is read from) explains it better than a rewrite of
the call that waited, which was made before too."""

import pytest

from agent.models.changes import exception_kinds, fits_kind, rank
from tests.agent.test_changes import commit, crash, frame, hunk

CASES = [
    (  # Go: a millisecond count made a Duration with no unit: nanoseconds
        "internal/config/config.go",
        [
            '\tif v := os.Getenv("BANK_TIMEOUT"); v != "" {',
            "\t\tcfg.BankTimeout, _ = time.ParseDuration(v)",
        ],
        [
            '\tif v := os.Getenv("BANK_TIMEOUT_MS"); v != "" {',
            "\t\tms, _ := strconv.Atoi(v)",
            "\t\tcfg.BankTimeout = time.Duration(ms)",
        ],
        3,
        "internal/bank/client.go",
        "\tres, err := c.http.Do(req)",
        "\tres, err := c.http.Do(req.WithContext(ctx))",
        "*url.Error",
        'Post "https://bank.example/v2": context deadline exceeded (Client.Timeout exceeded)',
    ),
    (  # Ruby: the loader now reads a key the YAML does not have, and falls back
        "app/services/warehouse/config.rb",
        ['        read_timeout: data.fetch("read_timeout")'],
        ['        read_timeout: Integer(ENV.fetch("WH_READ_TIMEOUT", data["timeout_read"] || 8))'],
        1,
        "app/services/warehouse/client.rb",
        '      response = @http.post("/v2/orders", body(order))',
        '      response = @http.post("/v2/orders", body(order), "X-Order" => order.id.to_s)',
        "Faraday::TimeoutError",
        "Net::ReadTimeout with #<TCPSocket:(closed)>",
    ),
]


@pytest.mark.parametrize(
    ("path", "old", "new", "fault", "at", "before", "code", "kind", "msg"), CASES
)
def test_where_the_timeout_is_set_beats_a_rewrite_of_the_call_that_waited(
    path, old, new, fault, at, before, code, kind, msg
):
    c = crash(
        path=at,
        line=5,
        function="submit",
        exc_type=kind,
        exc_value=msg,
        code=code.strip(),
        nearby=[code],
        source=["", "", "", "", code],
        stack=[(frame(at, 5, "submit", code), at)],
        blamed="call",
    )
    setting = hunk(
        20, [(20 + i, t) for i, t in enumerate(new)], [(20 + i, t) for i, t in enumerate(old)]
    )
    call = hunk(5, [(5, code)], [(5, before)])
    history = [
        commit("call", "2026-11-28T15:45:00Z", (at, [call])),
        commit("setting", "2026-11-27T12:10:00Z", (path, [setting])),
    ]
    ranked = rank(c, history)
    assert ranked and (ranked[0].sha, ranked[0].path) == ("setting", path), [
        (x.sha, x.score, x.reasons) for x in ranked
    ]
    assert ranked[0].line == 19 + fault and ranked[0].fits
    call_lead = next((x for x in ranked if x.sha == "call"), None)
    assert call_lead is None or ("adds the crash line" not in call_lead.reasons)
    assert call_lead is None or not call_lead.blamed


def test_a_timeout_changed_fits_only_a_timeout():
    kinds = exception_kinds("ReadTimeout", "HTTPSConnectionPool: Read timed out. (read timeout=2)")
    assert "timeout" in kinds
    assert fits_kind(kinds, ["TIMEOUT = 30"], ["TIMEOUT = 3"])
    assert fits_kind(kinds, ["retries = 3"], ["retries = 1"]) is None
    assert (
        fits_kind(exception_kinds("KeyError", "'price'"), ["TIMEOUT = 30"], ["TIMEOUT = 3"]) is None
    )
