"""A chained exception lists the wrapper raised in the crashing function's own handler: that
frame is no caller and no other frame of the stack, and a new line binding only a name for a
log (`messageId`) computes nothing the failing call uses."""

from agent.models.changes import rank
from tests.agent.test_changes import commit, crash, frame, hunk

PATH = "billing/listener/PaymentCapturedListener.java"
SOURCE = [
    "    public void onMessage(Message message) {",
    "        String messageId = message.getMessageProperties().getMessageId();",
    '        log.debug("payments.captured {}", messageId);',
    "        PaymentCaptured event;",
    "        try {",
    "            event = mapper.readValue(message.getBody(), PaymentCaptured.class);",
    "        } catch (IOException e) {",
    '            throw new Rejected("unreadable message " + messageId, e);',
    "        }",
    "        invoices.issueFor(event);",
    "    }",
]


def test_the_handlers_wrapper_frame_and_a_log_binding_do_not_outweigh_the_retyped_field():
    c = crash(
        path=PATH,
        line=6,
        function="onMessage",
        exc_type="InvalidFormatException",
        exc_value='Cannot deserialize value of type `events.PaymentMethod` from String "bizum": '
        "not one of the values accepted for Enum class: [transfer, card, paypal]",
        code=SOURCE[5].strip(),
        nearby=SOURCE[2:6],
        source=SOURCE,
        stack=[
            (frame(PATH, 6, "onMessage", SOURCE[5]), PATH),
            (frame(PATH, 8, "onMessage", SOURCE[7]), PATH),  # the wrapper, raised in the handler
        ],
    )
    logs = hunk(
        2,
        [(2, SOURCE[1]), (3, SOURCE[2]), (8, SOURCE[7])],
        [(7, '            throw new Rejected("unreadable message", e);')],
    )
    logs["old_lines"], logs["new_lines"] = 7, 9
    retyped = hunk(
        11,
        [(11, "        PaymentMethod method,")],
        [(11, "        String method,")],
        context=[(7, "public record PaymentCaptured("), (10, "        String currency,")],
    )
    history = [
        commit("logs", "2026-11-25T16:30:00Z", (PATH, [logs])),
        commit("typed", "2026-11-24T15:45:00Z", ("events/PaymentCaptured.java", [retyped])),
    ]
    ranked = rank(c, history)
    assert ranked and ranked[0].sha == "typed", [(x.sha, x.score, x.reasons) for x in ranked]
    lead = next((x for x in ranked if x.sha == "logs"), None)
    assert lead is None or not any(
        "on the stack" in r or "around the crash" in r for r in lead.reasons
    )
