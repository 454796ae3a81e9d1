"""Data built from a list of the fields to keep (`as_json(only: %w[...])`, `pick(...)`) writes
no `key: value`: the suspect is the line that lists the keys the failing code reads, not the
line that happens to stand where the old key was written."""

from agent.models.changes import rank
from tests.agent.test_changes import commit, crash, hunk


def test_the_line_naming_most_of_the_keys_is_the_one_that_lists_them():
    from agent.models.changes import keys_listed

    added = [
        (24, "  p.amount = Money.new(cents, host.currency)"),
        (
            30,
            "  PayoutJob.perform_async(payout.as_json(only: %w[id host_id amount_cents currency]))",
        ),
    ]
    assert keys_listed(added, {"host_id", "amount_cents", "currency"}) == added[1]
    assert keys_listed(added, {"currency"}) is None  # one key says nothing about the line


def test_a_job_payload_now_built_from_a_field_list_is_blamed_on_that_line():
    source = [
        "class PayoutJob",
        "  include Sidekiq::Job",
        "",
        "  def perform(args)",
        '    host = Host.find(args.fetch("host_id"))',
        '    amount = Money.new(args.fetch("amount_cents"), args.fetch("currency"))',
        "    Bank.transfer(host.iban, amount)",
        "  end",
        "end",
    ]
    c = crash(
        path="app/jobs/payout_job.rb",
        line=6,
        function="PayoutJob#perform",
        exc_type="KeyError",
        exc_value='key not found: "currency"',
        code=source[5].strip(),
        nearby=source[3:6],
        source=source,
        stack=[],
    )
    schedule = hunk(
        23,
        [
            (23, "        payout = host.payouts.create_or_find_by!(week: week_code) do |p|"),
            (24, "          p.amount = Money.new(cents, host.currency)"),
            (25, "        end"),
            (26, "        next unless payout.scheduled?"),
            (27, ""),
            (28, "        # The same keys PayoutJob has always read, plus the payout's id."),
            (
                29,
                "        PayoutJob.perform_async(payout.as_json(only: %w[id host_id amount_cents "
                "currency week]))",
            ),
        ],
        [
            (23, "        PayoutJob.perform_async("),
            (24, '          "host_id" => host.id,'),
            (25, '          "amount_cents" => cents,'),
            (26, '          "currency" => host.currency,'),
            (27, '          "week" => week_code'),
            (28, "        )"),
        ],
    )
    schedule["function"] = "def call"
    history = [
        commit("as-json", "2026-11-27T11:00:00Z", ("app/services/payouts/schedule.rb", [schedule]))
    ]
    ranked = rank(c, history)
    assert ranked and ranked[0].sha == "as-json"
    assert ranked[0].line == 29, (ranked[0].line, ranked[0].text, ranked[0].reasons)
