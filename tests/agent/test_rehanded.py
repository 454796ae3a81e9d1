"""A task, a job or a handler on the stack fails on what it was handed: the change elsewhere
that now hands it other arguments (another number of them, another order) is the fault, even
across a queue, where no frame shows the caller."""

import pytest

from agent.models.changes import rank
from tests.agent.test_changes import commit, crash, frame, hunk

CASES = [
    (  # Celery: one more positional argument, the reason where the amount went
        "shop/returns/services.py",
        ["        lambda: refund_order.delay(ret.order_id, ret.amount_cents)"],
        [
            "        lambda: refund_order.delay(",
            "            ret.order_id, ret.reason, ret.amount_cents",
            "        )",
        ],
        "shop/payments/tasks.py",
        "refund_order",
        "    client.refund(order_id, amount_cents)",
    ),
    (  # Sidekiq: two arguments swapped
        "app/services/returns.rb",
        ["    RefundJob.perform_async(ret.order_id, ret.amount_cents)"],
        ["    RefundJob.perform_async(ret.amount_cents, ret.order_id)"],
        "app/jobs/refund_job.rb",
        "RefundJob#perform",
        "    Gateway.refund(order_id, amount_cents)",
    ),
]


@pytest.mark.parametrize(("path", "old", "new", "at", "function", "code"), CASES)
def test_a_call_that_hands_a_stack_function_other_arguments_is_the_fault(
    path, old, new, at, function, code
):
    # The gateway client raises on what the task handed it; the task is one frame up.
    gateway = "lib/gateway.py"
    raising = "    raise GatewayError(answer)"
    c = crash(
        path=gateway,
        line=40,
        function="refund",
        exc_type="GatewayError",
        exc_value="400 parameter_invalid_integer: Invalid integer: late_delivery",
        code=raising.strip(),
        nearby=[raising],
        source=[""] * 39 + [raising],
        stack=[
            (frame(gateway, 40, "refund", raising), gateway),
            (frame(at, 5, function, code), at),
        ],
    )
    call = hunk(
        20, [(20 + i, t) for i, t in enumerate(new)], [(20 + i, t) for i, t in enumerate(old)]
    )
    beside = hunk(5, [(5, code.replace(")", ", key=idem)"))], [(5, code)])
    history = [
        commit("idem", "2026-11-27T17:40:00Z", (at, [beside])),
        commit("args", "2026-11-26T11:20:00Z", (path, [call])),
    ]
    ranked = rank(c, history)
    assert ranked and ranked[0].sha == "args", [(x.sha, x.score, x.reasons) for x in ranked]
    assert any("arguments handed to" in r for r in ranked[0].reasons)


def test_a_test_that_calls_the_stack_function_otherwise_never_ran_in_production():
    code = "    client.refund(order_id, amount_cents)"
    c = crash(
        path="shop/payments/tasks.py",
        line=5,
        function="refund_order",
        exc_type="GatewayError",
        exc_value="400 Invalid integer: late_delivery",
        code=code.strip(),
        nearby=[code],
        source=["", "", "", "", code],
        stack=[
            (frame("shop/payments/tasks.py", 5, "refund_order", code), "shop/payments/tasks.py")
        ],
    )
    in_test = hunk(
        27, [(27, "    refund_order(1, 'late', 500)")], [(27, "    refund_order(1, 500)")]
    )
    history = [commit("t", "2026-11-26T11:20:00Z", ("tests/test_refunds.py", [in_test]))]
    assert rank(c, history) == []


@pytest.mark.parametrize(
    ("at", "function", "old", "new"),
    [
        (  # Sidekiq: the frame names the method only; the class is the file's
            "app/jobs/reminder_job.rb",
            "perform",
            ["    ReminderJob.perform_at(starts - LEAD, @visit.id)"],
            [
                "    ReminderJob.perform_async(@visit.patient_id, 'moved')",
                "    ReminderJob.perform_at(starts - LEAD, @visit.id)",
            ],
        ),
        (  # PHP: a queued job dispatched beside the old one, by its class
            "app/Jobs/SendReminder.php",
            "handle",
            ["        SendReminder::dispatch($visit->id);"],
            [
                "        SendReminder::dispatch($visit->patient_id);",
                "        SendReminder::dispatch($visit->id);",
            ],
        ),
    ],
)
def test_a_new_call_beside_the_old_one_that_hands_the_job_another_value_is_the_fault(
    at, function, old, new
):
    """Where the run began is a job; its callers are never on the stack. The old call kept
    as it was hands nothing new; the one added beside it hands another id."""
    code = (
        "    visit = Visit.find(visit_id)"
        if at.endswith(".rb")
        else "        $v = Visit::findOrFail($visitId);"
    )
    c = crash(
        path=at,
        line=5,
        function=function,
        exc_type="RecordNotFound",
        exc_value="Couldn't find Visit with 'id'=20931",
        code=code.strip(),
        nearby=[code],
        source=["", "", "", "", code],
        stack=[(frame(at, 5, function, code), at)],
    )
    service = "app/services/reschedule.rb" if at.endswith(".rb") else "app/Services/Reschedule.php"
    call = hunk(
        20, [(20 + i, t) for i, t in enumerate(new)], [(20 + i, t) for i, t in enumerate(old)]
    )
    history = [commit("moved", "2026-11-26T11:20:00Z", (service, [call]))]
    ranked = rank(c, history)
    assert ranked and (ranked[0].sha, ranked[0].line) == ("moved", 20), [
        (x.sha, x.line, x.reasons) for x in ranked
    ]
    assert any("arguments handed to" in r for r in ranked[0].reasons)
