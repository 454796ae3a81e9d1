"""A re-raise that drops its cause: only the guarded call and the message are known. The
change that fits the message in a function that call reaches outweighs a change of the called
function that cannot raise it."""

from datetime import UTC, datetime

import pytest

from agent.models.changes import Crash, rank
from tests.agent.test_changes import commit, hunk

CASES = {
    "node": dict(
        service=(
            "src/orders/service.js",
            [
                "function processOrder(rec) {",
                "  try {",
                "    return grossAmount(rec);",
                "  } catch (err) {",
                "    throw new Error(`could not process order ${rec.id}: ${err.message}`);",
                "  }",
                "}",
            ],
        ),
        message="could not process order A-1: net(...).toFixed is not a function",
        exc_type="Error",
        # the called function: a local renamed and its result key renamed, nothing that raises
        decoy=(
            "src/orders/calculations.js",
            "function grossAmount(rec) {",
            ["  const computed = (net(rec.net)).toFixed(2);", "  return { value: computed };"],
            ["  const gross = (net(rec.net)).toFixed(2);", "  return { result: gross };"],
        ),
        # what it calls now returns a string
        fault=(
            "src/orders/helpers.js",
            "function net(value) {",
            ["  return Number(value);"],
            ["  return Number(value).toFixed(2);"],
        ),
    ),
    "python": dict(
        service=(
            "app/orders/service.py",
            [
                "def process_order(rec):",
                "    try:",
                "        return gross_amount(rec)",
                "    except (KeyError, IndexError) as exc:",
                "        raise OrderError(f'could not process {rec}: {exc}') from None",
            ],
        ),
        message="could not process order A-1: list index out of range",
        exc_type="OrderError",
        decoy=(
            "app/orders/calculations.py",
            "def gross_amount(rec):",
            ["    computed = last_line(rec['lines'])['price']", "    return {'value': computed}"],
            ["    price = last_line(rec['lines'])['price']", "    return {'result': price}"],
        ),
        fault=(
            "app/orders/helpers.py",
            "def last_line(lines):",
            ["    return lines[len(lines) - 1]"],
            ["    return lines[len(lines)]"],
        ),
    ),
}


def body_hunk(header: str, removed: list[str], added: list[str], start: int = 10) -> dict:
    h = hunk(
        start + 1,
        [(start + 1 + i, t) for i, t in enumerate(added)],
        [(start + 1 + i, t) for i, t in enumerate(removed)],
        context=[(start, header)],
    )
    h["new_start"] = start
    return h


@pytest.mark.parametrize("lang", sorted(CASES))
def test_the_change_under_the_guarded_call_that_fits_the_message_wins(lang):
    case = CASES[lang]
    path, source = case["service"]
    crash = Crash(
        path=path,
        line=5,
        function=source[0].split("(")[0].split()[-1],
        exc_type=case["exc_type"],
        exc_value=case["message"],
        code=source[4].strip(),
        nearby=source[1:5],
        first_seen=datetime(2026, 11, 28, 9, tzinfo=UTC),
        source=source,
    )
    d_path, d_header, d_old, d_new = case["decoy"]
    f_path, f_header, f_old, f_new = case["fault"]
    history = [
        commit("fault", "2026-11-26T10:00:00Z", (f_path, [body_hunk(f_header, f_old, f_new)])),
        commit("decoy", "2026-11-20T10:00:00Z", (d_path, [body_hunk(d_header, d_old, d_new)])),
    ]
    ranked = rank(crash, history)
    assert ranked and ranked[0].sha == "fault", [(c.sha, c.score, c.reasons) for c in ranked]
    assert any("which the guarded call reaches" in r for r in ranked[0].reasons)
    # With the cause's own frames in hand (no re-raise) nothing here reaches the helper.
    plain = Crash(**{**crash.__dict__, "code": source[2].strip(), "line": 3, "source": source})
    assert not any("guarded call reaches" in r for c in rank(plain, history) for r in c.reasons)


def test_a_method_level_rescue_guards_the_whole_method_and_says_what_it_caught():
    from agent.models.changes import caught_kinds, failing_lines

    source = [
        "  def options",
        "    Rails.cache.fetch(key) do",
        "      response = @client.quote(to: @cart.zip)",
        "      CarrierQuote.from_response(response)",
        "    end",
        "  rescue CarrierClient::Error, KeyError => e",
        '    raise Unavailable, "no quote for cart #{@cart.id}", cause: nil',
        "  end",
    ]
    crash = Crash(
        path="app/services/shipping_quotes.rb",
        line=7,
        function="options",
        exc_type="ShippingQuotes::Unavailable",
        exc_value="no quote for cart 12",
        code=source[6].strip(),
        nearby=source[3:7],
        source=source,
    )
    code, _, rethrow = failing_lines(crash)
    assert rethrow and code.strip() == "CarrierQuote.from_response(response)"
    assert "key" in caught_kinds(crash)


def test_behind_a_reraise_the_setting_the_called_function_reads_is_followed():
    source = [
        "  def self.process_claim(rec, settings)",
        "    ClaimCalculator.region_key(rec, settings)",
        "  rescue NoMethodError => e",
        '    raise ClaimError, "could not process claim #{rec["id"]}: #{e.message}"',
        "  end",
    ]
    crash = Crash(
        path="app/services/claim_service.rb",
        line=4,
        function="process_claim",
        exc_type="ClaimError",
        exc_value="could not process claim C-1: undefined method `upcase' for nil",
        code=source[3].strip(),
        nearby=source[1:4],
        first_seen=datetime(2026, 11, 28, 9, tzinfo=UTC),
        source=source,
    )
    history = [
        commit(
            "settings",
            "2026-11-26T10:00:00Z",
            (
                "app/lib/app_settings.rb",
                [
                    body_hunk(
                        "  def self.load",
                        ['    "region" => raw["BILLING_REGION"],'],
                        ['    "region" => raw["BILLING_REGION_CODE"],'],
                    )
                ],
            ),
        ),
        commit(
            "rename",
            "2026-11-20T10:00:00Z",
            (
                "app/services/claim_calculator.rb",
                [
                    body_hunk(
                        "  def self.region_key(rec, settings)",
                        ['    region = settings["region"]', "    computed = region.upcase"],
                        ['    region = settings["region"]', "    region_key = region.upcase"],
                    )
                ],
            ),
        ),
    ]
    ranked = rank(crash, history)
    assert ranked and ranked[0].sha == "settings", [(c.sha, c.score, c.reasons) for c in ranked]
