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
