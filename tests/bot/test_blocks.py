"""Slack messages and views: valid Block Kit, inside Slack's limits, tool text kept as data."""

import json
from datetime import UTC, datetime
from typing import Any

import pytest
from slack_sdk.models.blocks import Block
from slack_sdk.models.views import View

from agent.domain import Diagnosis, Draft, Fact, Investigation, Scope, State, Suspect
from bot.slack import blocks as B

SHA = "835b04b442dc376f38b62e6ada802c1377f20c3b"
PLANTED = "<!channel> <@U123> <https://evil|click>"
SPANISH = "Investiga los errores al guardar pedidos: ñandú, acción, «comillas» y €"


def scope(**kw: Any) -> Scope:
    base: dict[str, Any] = dict(
        project_key="orders",
        repository="acme/orders",
        sentry_organization="acme",
        sentry_project="orders",
        release_prefix="orders@",
        language="es",
        since=datetime(2026, 11, 28, tzinfo=UTC),
        until=datetime(2026, 11, 29, tzinfo=UTC),
    )
    return Scope(**(base | kw))


def opened(question: str = SPANISH, requester: str | None = "U0123ABC") -> Investigation:
    inv = Investigation.open(question, scope(), requester=requester)
    inv.add_evidence(
        source="sentry",
        tool="sentry__get_issue_details",
        title='ORDERS-2K: NullPointerException: "value" is null',
        link="https://acme.sentry.io/issues/5755875771/",
        content=(
            "# Issue ORDERS-2K in **acme**\n\n**Description**: NullPointerException\n"
            "**Culprit**: POST /orders\n- **Events**: 41\n"
        ),
    )
    inv.add_evidence(
        source="code",
        tool="git__git_show",
        title=f"src/CustomerReference.java @ {SHA[:7]}",
        link=f"https://github.com/acme/orders/blob/{SHA}/src/CustomerReference.java",
        path="src/CustomerReference.java",
        revision=SHA,
        content=(
            "public record CustomerReference(String value) {\n\n"
            "    public CustomerReference {\n        value = value.strip();\n"
            "        if (value.length() > MAX_LENGTH) {\n            throw new X();\n"
            "        }\n    }\n}\n"
        ),
    )
    inv.add_evidence(
        source="docs",
        tool="search_knowledge",
        title="docs/components.md § CustomerReference",
        link=f"https://github.com/acme/orders/blob/{SHA}/docs/components.md#L34-L42",
        content='## CustomerReference\n\nUna referencia ausente debe guardarse como `""`.',
    )
    return inv


def diagnosis(**kw: Any) -> Diagnosis:
    base: dict[str, Any] = dict(
        root_cause="NullPointerException en CustomerReference.java:14, introducido por 835b04b.",
        facts=[
            Fact(text="La incidencia ORDERS-2K tiene 41 eventos.", evidence=["E1"]),
            Fact(text="La línea 14 dice `value = value.strip();`", evidence=["E2", "E3"]),
        ],
        hypotheses=["El commit 835b04b quitó la comprobación de null."],
        uncertainties=["Solo se leyó el evento más reciente."],
        recommended_check="Reproducir con customerReference ausente.",
        suspect=Suspect(path="src/CustomerReference.java", line_start=14, line_end=14, commit=SHA),
        confidence="high",
    )
    return Diagnosis(**(base | kw))


def draft(**kw: Any) -> Draft:
    base: dict[str, Any] = dict(
        repository="acme/orders",
        title="NullPointerException en CustomerReference",
        body=(
            "## Resumen\n\nEl **commit** rompió [la guía](https://example.com/guide).\n\n"
            "- hecho uno (E1)\n- hecho dos (E2)\n\n```java\nvalue = value.strip();\n```\n"
        ),
    )
    return Draft(**(base | kw))


def completed(**kw: Any) -> Investigation:
    inv = opened(**kw)
    inv.start()
    inv.complete(diagnosis(), draft())
    inv.version = 7
    return inv


def stopped(salvage: Diagnosis | None = None, reason: str = "budget exhausted: 8 model calls"):
    inv = opened()
    inv.start()
    inv.stop(reason, salvage)
    inv.version = 5
    return inv


# -- checking helpers -------------------------------------------------------------------------


def texts(node: Any) -> list[tuple[str, str]]:
    """Every (type, text) of the text objects in a payload."""
    found: list[tuple[str, str]] = []
    if isinstance(node, dict):
        if node.get("type") in ("mrkdwn", "plain_text") and isinstance(node.get("text"), str):
            found.append((node["type"], node["text"]))
        for value in node.values():
            found += texts(value)
    elif isinstance(node, list):
        for value in node:
            found += texts(value)
    return found


def mrkdwn(payload: dict[str, Any]) -> str:
    parts = [t for kind, t in texts(payload.get("blocks", [])) if kind == "mrkdwn"]
    return "\n".join([payload.get("text", ""), *parts])


def check_blocks(blocks: list[dict[str, Any]], max_blocks: int) -> None:
    assert 0 < len(blocks) <= max_blocks
    for block in blocks:
        assert Block.parse(block).to_dict() == block  # validates Slack's limits on the way
        if block["type"] == "section":
            if "text" in block:
                assert len(block["text"]["text"]) <= 3000
            for field in block.get("fields", []):
                assert len(field["text"]) <= 2000
        if block["type"] == "header":
            assert len(block["text"]["text"]) <= 150
        for element in block.get("elements", []):
            if element.get("type") == "button":
                assert len(element["text"]["text"]) <= 75
                assert len(element["value"]) <= 2000
                assert len(element["action_id"]) <= 255
    for kind, text in texts(blocks):
        assert text, f"an empty {kind} text"
        assert len(text) <= 3000


def check_message(payload: dict[str, Any]) -> dict[str, Any]:
    assert set(payload) <= {"text", "blocks", "metadata"}
    assert payload["text"] and len(payload["text"]) <= 3000
    check_blocks(payload["blocks"], 50)
    if "metadata" in payload:
        assert payload["metadata"]["event_type"].startswith("incident_bot_")
        assert isinstance(payload["metadata"]["event_payload"], dict)
    json.dumps(payload)
    return payload


def check_view(view: dict[str, Any]) -> dict[str, Any]:
    assert View(**view).to_dict() == view
    check_blocks(view["blocks"], 100)
    return view


def buttons(payload: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {
        e["action_id"]: e
        for b in payload["blocks"]
        if b["type"] == "actions"
        for e in b["elements"]
    }


def every_payload(inv: Investigation) -> list[dict[str, Any]]:
    links = {"E1": "https://acme.slack.com/archives/C1/p1700000000000100"}
    out = [
        B.root_message(inv, "https://acme.slack.com/archives/C1/p1700000000000000"),
        B.diagnosis_message(inv, links),
        B.question_message(inv, inv.pending_question or "¿Qué versión?", inv.requester),
        *(B.evidence_card(inv.id, ev) for ev in inv.evidence),
    ]
    if inv.draft:
        out += [
            B.draft_message(inv),
            B.publishing_message(inv),
            B.published_message(inv, "https://github.com/acme/orders/issues/42", 42),
        ]
    return out


# -- every payload is valid Block Kit -----------------------------------------------------------


@pytest.mark.parametrize("state", list(State))
def test_root_message_for_every_state_is_valid_and_shows_the_state(state: State):
    inv = completed()
    inv.state = state
    inv.stop_reason = "budget exhausted" if state is State.STOPPED else None
    msg = check_message(B.root_message(inv))
    emoji, label = B.STATE_LABELS[state]
    assert f"{emoji} {label}" in mrkdwn(msg)
    assert msg["metadata"]["event_payload"]["state"] == str(state)


def test_every_payload_of_a_completed_and_a_stopped_investigation_is_valid():
    for inv in (completed(), stopped(), stopped(diagnosis(suspect=None, hypotheses=[]))):
        for payload in every_payload(inv):
            check_message(payload)
    inv = completed()
    check_view(B.edit_modal(inv))
    check_view(B.investigate_modal("errors when saving orders", "C123"))
    check_view(B.home_view([]))
    check_view(B.home_view([(inv.id, inv.question, inv.state, "https://acme.slack.com/x")]))
    check_message(B.error_ephemeral("unknown project `billing`"))


# -- the root message ---------------------------------------------------------------------------


def test_root_message_shows_question_project_requester_budget_and_root_cause():
    inv = completed()
    inv.stats.model_calls, inv.stats.tool_calls, inv.stats.wall_seconds = 6, 8, 12.4
    msg = B.root_message(inv, "https://acme.slack.com/archives/C1/p1")
    text = mrkdwn(msg)
    assert SPANISH in text
    assert "`orders`" in text and "<@U0123ABC>" in text
    assert "6 model calls · 8 tool calls · 12 s" in text
    assert "*Root cause:* NullPointerException en CustomerReference.java:14" in text
    assert "<https://acme.slack.com/archives/C1/p1|Open thread>" in text
    assert msg["metadata"]["event_type"] == "incident_bot_investigation"


def test_root_message_of_a_stopped_run_gives_the_reason_and_a_cli_user_is_no_mention():
    inv = stopped(reason="a source is unavailable: sentry")
    inv.requester = "alice"
    text = mrkdwn(B.root_message(inv))
    assert "*Stopped:* a source is unavailable: sentry" in text
    assert "alice" in text and "<@alice>" not in text
    assert "Root cause" not in text


# -- evidence cards -----------------------------------------------------------------------------


def test_evidence_card_shows_id_source_link_excerpt_and_metadata():
    inv = opened()
    code = inv.evidence[1]
    msg = check_message(B.evidence_card(inv.id, code))
    text = mrkdwn(msg)
    assert "*E2* · :computer: Code · <https://github.com/acme/orders/blob/" in text
    assert "```\npublic record CustomerReference(String value) {" in text
    assert "value.length() &gt; MAX_LENGTH" in text  # escaped, and shown as ">" by Slack
    assert "<!date^" in text and f"@ `{SHA[:7]}`" in text
    assert msg["metadata"] == {
        "event_type": "incident_bot_evidence",
        "event_payload": {
            "investigation_id": inv.id,
            "evidence_id": "E2",
            "content_hash": code.content_hash,
        },
    }
    sentry = mrkdwn(B.evidence_card(inv.id, inv.evidence[0]))
    assert ":rotating_light: Sentry" in sentry and "> *Issue ORDERS-2K in acme*" in sentry
    docs = mrkdwn(B.evidence_card(inv.id, inv.evidence[2]))
    assert ":books: Docs" in docs and "*CustomerReference*" in docs


def test_evidence_card_of_huge_content_is_a_short_excerpt():
    inv = opened()
    for source in ("code", "sentry", "docs", "other"):
        content = "\n".join(f"line {i} " + "x" * 300 for i in range(70)) + "y" * 20_000
        assert len(content) > 20_000
        ev = inv.add_evidence(source=source, tool="t", title="T" * 5000, content=content)
        msg = check_message(B.evidence_card(inv.id, ev))
        excerpt = msg["blocks"][1]["text"]["text"]
        assert len(excerpt) <= 600 + 40  # the fences or quote marks around ≤ 600 characters
        assert excerpt.count("line ") <= 6
        assert "of 70 lines" in mrkdwn(msg)


def test_evidence_without_a_link_or_with_a_strange_one_is_not_linked():
    inv = opened()
    for url in (None, "javascript:alert(1)", "https://ok.example/a b"):
        ev = inv.add_evidence(source="docs", tool="t", title="Guía", content="texto", link=url)
        text = mrkdwn(B.evidence_card(inv.id, ev))
        assert "*E4* · :books: Docs · Guía" in text or f"*{ev.id}* · :books: Docs · Guía" in text
        assert "javascript:" not in text


# -- tool text is data ------------------------------------------------------------------------


def planted_investigation(state: State) -> Investigation:
    inv = Investigation.open(f"why? {PLANTED}", scope(), requester="U0123ABC")
    inv.add_evidence(
        source="sentry",
        tool="sentry__get_issue_details",
        title=f"Error {PLANTED}",
        link="https://acme.sentry.io/issues/1/",
        content=f"**Error**: {PLANTED}\n[click here](https://evil.example/x) @here",
    )
    inv.add_evidence(
        source="code", tool="git__git_show", title="f.py", content=f"raise X({PLANTED!r})"
    )
    inv.start()
    planted = diagnosis(
        root_cause=f"Root {PLANTED}",
        facts=[Fact(text=f"Fact {PLANTED}", evidence=["E1"])],
        hypotheses=[f"Hypothesis {PLANTED}"],
        uncertainties=[f"Uncertain {PLANTED}"],
        recommended_check=f"Check {PLANTED}",
    )
    body = f"## Summary\n\n{PLANTED}\n\n```\n{PLANTED}\n```\n`{PLANTED}`"
    planted_draft = draft(title=f"Title {PLANTED}", body=body)
    if state is State.STOPPED:
        inv.stop(f"stopped {PLANTED}", planted, planted_draft)
    else:
        inv.complete(planted, planted_draft)
    return inv


@pytest.mark.parametrize("state", [State.COMPLETED, State.STOPPED])
def test_planted_mentions_and_links_in_tool_text_are_shown_not_executed(state: State):
    inv = planted_investigation(state)
    payloads = [*every_payload(inv), B.error_ephemeral(f"tool failed: {PLANTED}")]
    payloads.append(B.question_message(inv, f"Which? {PLANTED}", None))
    for payload in payloads:
        check_message(payload)
        text = mrkdwn(payload)
        for bad in ("<!channel>", "<@U123>", "<https://evil", "<https://evil.example"):
            assert bad not in text
        assert "@here" not in text  # defused with a word joiner
    joined = "\n".join(mrkdwn(p) for p in payloads)
    assert "&lt;!channel&gt; &lt;@U123&gt; &lt;https://evil|click&gt;" in joined
    # the tool's Markdown link keeps its address visible instead of hiding it behind a label
    assert "click here (https://evil.example/x)" in joined


def test_plain_text_fields_are_never_mrkdwn():
    inv = planted_investigation(State.COMPLETED)
    for payload in every_payload(inv):
        for block in payload["blocks"]:
            if block["type"] == "header":
                assert block["text"]["type"] == "plain_text"


# -- Spanish text ----------------------------------------------------------------------------------


def test_spanish_text_survives_everywhere():
    inv = completed()
    for payload in every_payload(inv):
        dumped = json.dumps(payload, ensure_ascii=False)
        assert "\\u00" not in dumped
    assert SPANISH in mrkdwn(B.root_message(inv))
    assert "La línea 14 dice `value = value.strip();`" in mrkdwn(B.diagnosis_message(inv, {}))
    assert "acción" in B.investigate_modal(SPANISH, "C1")["blocks"][0]["element"]["initial_value"]


# -- the diagnosis ----------------------------------------------------------------------------


def test_diagnosis_separates_facts_from_what_is_not_established():
    inv = completed()
    links = {"E1": "https://acme.slack.com/archives/C1/p1700000000000100"}
    msg = check_message(B.diagnosis_message(inv, links))
    text = mrkdwn(msg)
    assert "*Root cause*\nNullPointerException en CustomerReference.java:14" in text
    assert "(<https://acme.slack.com/archives/C1/p1700000000000100|E1>)" in text
    assert "(E2, E3)" in text  # no card link known: the plain id
    assert text.index("*Facts*") < text.index("*Hypotheses*") < text.index("*Uncertainties*")
    assert any(b["type"] == "divider" for b in msg["blocks"])
    assert f"<https://github.com/acme/orders/commit/{SHA}|`835b04b`>" in text
    assert (
        f"<https://github.com/acme/orders/blob/{SHA}/src/CustomerReference.java#L14"
        "|`src/CustomerReference.java:14`>" in text
    )
    assert ":large_green_circle: High" in text
    assert not buttons(msg)
    assert msg["metadata"]["event_type"] == "incident_bot_diagnosis"
    assert msg["metadata"]["event_payload"]["investigation_id"] == inv.id


def test_a_short_commit_is_shown_but_not_linked():
    inv = completed()
    assert inv.diagnosis is not None and inv.diagnosis.suspect is not None
    inv.diagnosis.suspect.commit = "835b04b"
    text = mrkdwn(B.diagnosis_message(inv, {}))
    assert "*Commit*\n`835b04b`" in text and "/commit/" not in text


def test_stopped_diagnosis_is_partial_with_a_continue_button():
    inv = stopped(diagnosis(confidence="low"))
    msg = check_message(B.diagnosis_message(inv, {}, extra_calls=6))
    text = mrkdwn(msg)
    assert "Partial result" in text and "budget exhausted: 8 model calls" in text
    assert msg["blocks"][0]["text"]["text"] == ":warning: Partial diagnosis"
    button = buttons(msg)["continue"]
    assert button["text"]["text"] == "Continue (+6 calls)"
    assert json.loads(button["value"]) == {"investigation_id": inv.id, "version": 5}


def test_stopped_without_any_diagnosis_still_offers_to_continue():
    msg = check_message(B.diagnosis_message(stopped(None), {}))
    assert "continue" in buttons(msg)
    assert "No diagnosis yet" in mrkdwn(msg)


def test_huge_diagnosis_stays_inside_the_limits():
    inv = stopped(
        diagnosis(
            root_cause="R" * 10_000,
            facts=[
                Fact(text=f"fact {i} " + "á" * 400, evidence=[f"E{j}" for j in range(1, 30)])
                for i in range(100)
            ],
            hypotheses=["h" * 5000] * 50,
            uncertainties=["u & <b>" * 900] * 50,
            recommended_check="c" * 9000,
        )
    )
    links = {f"E{j}": f"https://acme.slack.com/archives/C1/p{j:016d}" for j in range(1, 30)}
    msg = check_message(B.diagnosis_message(inv, links))
    assert len(msg["blocks"]) <= 50
    text = mrkdwn(msg)
    assert "more facts_" in text and "more hypotheses_" in text
    assert "continue" in buttons(msg)
    # a cut never leaves half an entity or half a link behind
    for _, t in texts(msg["blocks"]):
        assert t.count("<") == t.count(">")
        assert "&l…" not in t and "&am…" not in t


def test_a_hundred_short_facts_are_all_listed():
    facts = [Fact(text=f"fact number {i}", evidence=["E1"]) for i in range(100)]
    inv = completed()
    inv.diagnosis = diagnosis(facts=facts)
    msg = check_message(B.diagnosis_message(inv, {}))
    text = mrkdwn(msg)
    assert "fact number 0 (E1)" in text and "fact number 99 (E1)" in text
    assert "*Facts* (100, each cited)" in text


# -- the draft ----------------------------------------------------------------------------------


def test_draft_buttons_carry_exactly_the_version_and_hash_shown():
    inv = completed()
    dr = inv.edit_draft(version=1, title="NPE al guardar pedidos", body="## Nuevo\n\ncuerpo v2")
    msg = check_message(B.draft_message(inv))
    shown = {"investigation_id": inv.id, "version": 2, "hash": dr.hash}
    found = buttons(msg)
    assert set(found) == {"draft_edit", "draft_approve", "draft_discard"}
    for button in found.values():
        assert json.loads(button["value"]) == shown
    assert found["draft_approve"]["style"] == "primary"
    assert found["draft_approve"]["text"]["text"] == "Approve & publish"
    assert "confirm" in found["draft_approve"]
    assert found["draft_discard"]["style"] == "danger"
    assert f"v2 · {dr.hash[:8]}" in mrkdwn(msg)
    assert msg["metadata"]["event_type"] == "incident_bot_draft"
    assert msg["metadata"]["event_payload"] == shown | {"status": "draft"}


def test_draft_preview_is_mrkdwn():
    msg = B.draft_message(completed())
    text = mrkdwn(msg)
    assert "*Resumen*" in text and "## " not in text
    assert "El *commit* rompió <https://example.com/guide|la guía>." in text
    assert "• hecho uno (E1)" in text
    assert "```\nvalue = value.strip();\n```" in text
    assert "<https://github.com/acme/orders|acme/orders>" in text


def test_a_huge_draft_is_previewed_in_about_1200_characters():
    inv = completed()
    inv.draft = draft(
        title="T" * 1000, body="\n".join(f"- **punto** {i} " + "x" * 90 for i in range(500))
    )
    msg = check_message(B.draft_message(inv))
    preview = msg["blocks"][2]["text"]["text"]
    assert len(preview) < 1400 and preview.endswith("…")
    assert "preview of" in mrkdwn(msg)


def test_publishing_and_published_variants_have_no_buttons():
    inv = completed()
    inv.move_to(State.PUBLISH_QUEUED)
    publishing = check_message(B.publishing_message(inv))
    assert not buttons(publishing) and "publishing to" in mrkdwn(publishing)
    inv.move_to(State.PUBLISH_UNKNOWN)
    assert "unknown" in mrkdwn(B.publishing_message(inv))
    inv.move_to(State.PUBLISHED)
    url = "https://github.com/acme/orders/issues/42"
    published = check_message(B.published_message(inv, url, 42))
    assert not buttons(published)
    assert f"<{url}|acme/orders#42>" in mrkdwn(published)
    assert published["metadata"]["event_payload"]["issue_number"] == 42


def test_a_message_about_a_draft_needs_a_draft():
    with pytest.raises(ValueError, match="no draft"):
        B.draft_message(stopped())


# -- modals and App Home ---------------------------------------------------------------------


def test_edit_modal_prefills_the_draft_and_names_it_in_private_metadata():
    inv = completed()
    assert inv.draft is not None
    view = check_view(B.edit_modal(inv))
    assert view["type"] == "modal" and view["callback_id"] == "draft_edit_submit"
    assert json.loads(view["private_metadata"]) == {
        "investigation_id": inv.id,
        "version": 1,
        "hash": inv.draft.hash,
    }
    assert view["submit"]["text"] == "Save as v2"
    inputs = {b["block_id"]: b["element"] for b in view["blocks"] if b["type"] == "input"}
    assert inputs["title"]["action_id"] == "value"
    assert inputs["title"]["initial_value"] == inv.draft.title
    assert inputs["body"]["action_id"] == "value" and inputs["body"]["multiline"] is True
    assert inputs["body"]["initial_value"] == inv.draft.body
    assert "characters" not in mrkdwn(view)


def test_edit_modal_of_a_long_body_keeps_3000_characters_and_says_so():
    inv = completed()
    inv.draft = draft(body="ñ" * 2000 + "😀" * 2000)
    view = check_view(B.edit_modal(inv))
    body = next(b for b in view["blocks"] if b.get("block_id") == "body")["element"]
    assert len(body["initial_value"].encode("utf-16-le")) <= 2 * 3000
    assert body["initial_value"].startswith("ñ" * 2000)
    assert "The body has 4,000 characters" in mrkdwn(view)


def test_investigate_modal_prefills_the_message_and_carries_the_channel():
    message = "Pedidos fallan &amp; <@U999|ana> vio <https://sentry.io/x|esto> " + "z" * 3000
    view = check_view(B.investigate_modal(message, "C0123", message_ts="1700000000.000100"))
    assert view["callback_id"] == "investigate_submit"
    assert view["title"]["text"] == "Investigate this"
    assert json.loads(view["private_metadata"]) == {
        "channel_id": "C0123",
        "message_ts": "1700000000.000100",
    }
    element = view["blocks"][0]["element"]
    assert view["blocks"][0]["block_id"] == "question" and element["action_id"] == "value"
    assert element["initial_value"].startswith(
        "Pedidos fallan & @ana vio esto (https://sentry.io/x)"
    )
    assert len(element["initial_value"]) == 2000
    assert json.loads(check_view(B.investigate_modal("", "C1"))["private_metadata"]) == {
        "channel_id": "C1"
    }


def test_home_view_lists_recent_investigations_or_says_how_to_start():
    empty = check_view(B.home_view([]))
    assert empty["type"] == "home" and "submit" not in empty
    assert "/investigate [project] &lt;question&gt; [since..until]" in mrkdwn(empty)
    items = [
        (f"{i:032x}", f"pregunta {i} <!here>", State.COMPLETED, f"https://acme.slack.com/p{i}")
        for i in range(30)
    ]
    items[1] = (items[1][0], "sin enlace", State.RUNNING, None)
    view = check_view(B.home_view(items))
    text = mrkdwn(view)
    assert "*<https://acme.slack.com/p0|pregunta 0 &lt;!here&gt;>*" in text
    assert "*sin enlace*\n:mag: Investigating" in text
    assert ":white_check_mark: Completed" in text
    assert "pregunta 25" not in text and "Showing the 20 most recent of 30." in text


# -- errors, help, conversions ---------------------------------------------------------------


def test_error_ephemeral_and_help():
    msg = check_message(B.error_ephemeral("unknown project `billing` <!channel>"))
    assert msg["blocks"][0]["text"]["text"] == (
        ":warning: unknown project `billing` &lt;!channel&gt;"
    )
    assert "metadata" not in msg
    help_ = B.help_text()
    assert "/investigate [project] &lt;question&gt; [since..until]" in help_
    assert "since..until" in help_ and "24 hours" in help_


def test_markdown_to_mrkdwn():
    md = (
        "# Título **grande**\n**negrita** y *cursiva* y ~~tachado~~ y `**código**`\n"
        "[texto](https://example.com/a?b=1&c=2) <https://example.com/auto>\n"
        "* uno\n  - dos\n> cita\n---\nmi__var__x y __fuerte__"
    )
    out = B.md_to_mrkdwn(md)
    assert out.splitlines() == [
        "*Título grande*",
        "*negrita* y _cursiva_ y ~tachado~ y `**código**`",
        "<https://example.com/a?b=1&amp;c=2|texto> <https://example.com/auto|https://example.com/auto>",
        "• uno",
        "    ◦ dos",
        "> cita",
        "mi__var__x y *fuerte*",
    ]
    assert B.md_to_mrkdwn("[x](javascript:alert(1))") == "x"
    assert B.md_to_mrkdwn("[x](https://e.example/)", links=False) == "x (https://e.example/)"
    assert B.md_to_mrkdwn("```\nopen fence") == "```\nopen fence\n```"


def test_clip_mrkdwn_never_breaks_entities_links_or_code_blocks():
    text = "a" * 95 + "&amp;&lt;" + "b" * 100
    assert B.clip_mrkdwn(text, 100).endswith("a…")
    linked = "x" * 90 + "<https://example.com/long|label>"
    assert B.clip_mrkdwn(linked, 100) == "x" * 90 + "…"
    fenced = "```\n" + "c" * 200 + "\n```"
    cut = B.clip_mrkdwn(fenced, 100)
    assert len(cut) <= 100 and cut.count("```") == 2


# -- the draft's later life ---------------------------------------------------------------------


def test_a_continued_run_shows_its_old_diagnosis_as_partial_without_a_button():
    inv = stopped(diagnosis(confidence="low"))
    inv.continue_with(4)
    msg = check_message(B.diagnosis_message(inv, {}))
    assert msg["blocks"][0]["text"]["text"] == ":hourglass_flowing_sand: Partial diagnosis"
    assert "continuing" in mrkdwn(msg) and not buttons(msg)


def test_a_discarded_draft_loses_its_buttons():
    inv = completed()
    inv.discard_draft(1)
    msg = check_message(B.draft_message(inv))
    assert not buttons(msg) and "Discarded" in mrkdwn(msg)
    assert msg["metadata"]["event_payload"]["status"] == "discarded"


def test_a_refused_publication_says_why_and_offers_the_buttons_again():
    inv = completed()
    assert inv.draft is not None
    inv.approve(approver="U0APPROVER", version=1, hash=inv.draft.hash, idempotency_key="k")
    publishing = mrkdwn(check_message(B.publishing_message(inv)))
    assert ":outbox_tray: v1 approved by <@U0APPROVER>: publishing to" in publishing
    inv.publish_refused("422 Validation Failed <!channel>")
    msg = check_message(B.draft_message(inv))
    assert "*Publishing was refused:* 422 Validation Failed &lt;!channel&gt;" in mrkdwn(msg)
    assert set(buttons(msg)) == {"draft_edit", "draft_approve", "draft_discard"}


def test_published_message_names_the_approver():
    inv = completed()
    assert inv.draft is not None
    inv.approve(approver="U0APPROVER", version=1, hash=inv.draft.hash, idempotency_key="k")
    url = "https://github.com/acme/orders/issues/7"
    inv.published(7, url)
    text = mrkdwn(check_message(B.published_message(inv, url, 7)))
    assert f"Published as <{url}|acme/orders#7>, approved by <@U0APPROVER>" in text


def test_help_message_is_not_escaped_twice():
    msg = check_message(B.help_message())
    assert msg["blocks"][0]["text"]["text"] == B.help_text()
    assert "&amp;lt;" not in mrkdwn(msg)


def test_root_message_budget_line_shows_the_tokens_the_model_reported():
    inv = completed()
    inv.stats.model_calls, inv.stats.tool_calls, inv.stats.wall_seconds = 3, 4, 5.0
    inv.stats.add_tokens(12_000, 345, "2026-11-30")
    text = mrkdwn(B.root_message(inv))
    assert "Budget used: 3 model calls · 4 tool calls · 12,345 tokens · 5.0 s" in text
