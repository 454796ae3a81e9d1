"""A lookup by name that missed (a key, an enum constant, a constant): the change that stopped
defining exactly the name the message says is missing is where it went, in any language,
ahead of a change to a frame of the stack that only hands the name on."""

import pytest

from agent.models.changes import exception_kinds, rank
from tests.agent.test_changes import commit, crash, hunk


@pytest.mark.parametrize(
    ("exc_type", "exc_value"),
    [
        ("IllegalArgumentException", "No enum constant com.shop.PaymentMethod.SEPA_DEBIT"),
        ("NameError", "uninitialized constant Billing::SEPA_DEBIT"),
        ("ValueError", "'sepa_debit' is not a valid enum member of PaymentMethod"),
        ("Error", "unknown variant `sepa_debit`, expected one of `card`, `sepa`"),
    ],
)
def test_a_name_lookup_that_missed_is_of_the_key_kind(exc_type, exc_value):
    assert "key" in exception_kinds(exc_type, exc_value)


def test_the_enum_constant_the_message_says_is_missing_was_renamed_where_it_is_defined():
    enum_path = "shared/src/main/java/com/shop/payments/PaymentMethod.java"
    mapper_path = "invoicing/src/main/java/com/shop/invoices/DraftMapper.java"
    source = [
        "package com.shop.payments;",
        "",
        "public enum PaymentMethod {",
        "    CARD, SEPA, TRANSFER;",
        "",
        "    public static PaymentMethod fromWire(String wire) {",
        "        return valueOf(wire.toUpperCase(java.util.Locale.ROOT));",
        "    }",
        "}",
    ]
    c = crash(
        path=enum_path,
        line=7,
        function="com.shop.payments.PaymentMethod.fromWire",
        exc_type="IllegalArgumentException",
        exc_value="No enum constant com.shop.payments.PaymentMethod.SEPA_DEBIT",
        code=source[6].strip(),
        nearby=source[5:8],
        source=source,
        stack=[],
    )
    renamed = hunk(4, [(4, "    CARD, SEPA, TRANSFER;")], [(4, "    CARD, SEPA_DEBIT, TRANSFER;")])
    mapper = hunk(
        22,
        [(22, "        draft.setMethod(PaymentMethod.fromWire(event.method()));")],
        [(22, "        draft.setMethod(PaymentMethod.fromWire(event.getMethod()));")],
    )
    mapper["function"] = "public InvoiceDraft toDraft(PaymentEvent event) {"
    history = [
        commit("mapper", "2026-06-16T13:05:00Z", (mapper_path, [mapper])),
        commit("enum", "2026-06-15T17:40:00Z", (enum_path, [renamed])),
    ]
    ranked = rank(c, history)
    assert ranked[0].sha == "enum", [(x.sha, x.score, x.reasons) for x in ranked]
    assert ranked[0].fits


def test_of_one_commit_the_type_the_message_names_is_where_the_name_went():
    """A rename in a shared enum, followed by its users in the same commit: the users only
    follow it; the type the message says the constant is missing from lost it."""
    enum_path = "events/src/main/kotlin/shop/events/ParcelStatus.kt"
    user_path = "tracking/src/main/kotlin/shop/tracking/ReminderScheduler.kt"
    source = [
        "package shop.notifier",
        "",
        "object Templates {",
        "    fun forStatus(wire: String): String {",
        "        val status = ParcelStatus.valueOf(wire)",
        "        return TEXTS.getValue(status)",
        "    }",
        "}",
    ]
    c = crash(
        path="notifier/src/main/kotlin/shop/notifier/Templates.kt",
        line=5,
        function="shop.notifier.Templates.forStatus",
        exc_type="IllegalArgumentException",
        exc_value="No enum constant shop.events.ParcelStatus.AWAITING_COLLECTION",
        code=source[4].strip(),
        nearby=source[3:5],
        source=source,
        stack=[],
    )
    enum = hunk(
        5,
        [(5, "    READY_FOR_PICKUP,")],
        [(5, "    AWAITING_COLLECTION,")],
    )
    user = hunk(
        23,
        [(23, "        val status = ParcelStatus.READY_FOR_PICKUP.name")],
        [(23, "        val status = ParcelStatus.AWAITING_COLLECTION.name")],
    )
    user["function"] = "fun schedule(parcel: Parcel) {"
    history = [commit("rename", "2026-11-27T15:45:00Z", (user_path, [user]), (enum_path, [enum]))]
    ranked = rank(c, history)
    assert ranked[0].path == enum_path, [(x.path, x.score, x.reasons) for x in ranked]
