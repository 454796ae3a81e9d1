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
