""" "Investigate this" on Sentry's own Slack message, and skipped runs in App Home: signed
requests into the real Bolt app."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import urlencode

import pytest

from agent.domain import Investigation, State
from bot.slack.sentry_message import sentry_alert
from tests.bot.test_slack import APPROVER, CHANNEL, REQUESTER, Bot, running_bot


@pytest.fixture
async def bot(built_scenarios, tmp_path) -> AsyncIterator[Bot]:
    async with running_bot(built_scenarios["orders"], tmp_path, [APPROVER]) as b:
        yield b


SENTRY_MESSAGE = {
    "type": "message",
    "subtype": "bot_message",
    "ts": "1764320000.000100",
    "bot_id": "B0SENTRY",
    "bot_profile": {"id": "B0SENTRY", "name": "Sentry"},
    "text": "",
    "attachments": [
        {
            "title": 'NullPointerException: Cannot invoke "String.strip()" because "value" is null',
            "title_link": "https://acme.sentry.io/issues/5755875771/?referrer=slack",
            "text": "POST /orders",
            "fallback": "[orders-incident-demo] NullPointerException",
        }
    ],
}


def shortcut(message: dict[str, Any], user: str = REQUESTER, channel: str = CHANNEL) -> str:
    payload = {
        "type": "message_action",
        "callback_id": "investigate_this",
        "trigger_id": f"trig.{time.time_ns()}",
        "user": {"id": user},
        "team": {"id": "T0FAKE"},
        "channel": {"id": channel},
        "message": message,
        "message_ts": message["ts"],
        "response_url": "http://127.0.0.1:9/",
    }
    return urlencode({"payload": json.dumps(payload)})


def test_sentry_messages_are_recognised_by_their_sender_and_issue_link():
    alert = sentry_alert(SENTRY_MESSAGE)
    assert alert is not None and alert.issue_id == "5755875771"
    assert alert.title.startswith("NullPointerException")
    in_blocks = {
        "ts": "1.1",
        "bot_profile": {"name": "Sentry"},
        "text": "<https://sentry.io/organizations/acme/issues/42/|*KeyError: 'sku'*>",
    }
    found = sentry_alert(in_blocks)
    assert found is not None and found.issue_id == "42" and found.title == "KeyError: 'sku'"
    # A person pasting a Sentry link is not Sentry's alert: the usual form opens.
    assert sentry_alert({"ts": "1.2", "user": "U1", "text": in_blocks["text"]}) is None
    other_bot = {**SENTRY_MESSAGE, "bot_profile": {"name": "Datadog"}}
    assert sentry_alert(other_bot) is None
    no_link = {**SENTRY_MESSAGE, "attachments": [{"title": "x", "title_link": "https://x.io/"}]}
    assert sentry_alert(no_link) is None


async def test_investigate_this_on_a_sentry_alert_investigates_that_issue(bot: Bot):
    response = await bot.post(shortcut(SENTRY_MESSAGE))
    assert response.status == 200
    inv = await bot.settled(State.COMPLETED)
    assert bot.slack.calls_to("views.open") == []  # no form: the issue is known
    assert inv.subject == "sentry:5755875771" and inv.requester == REQUESTER
    assert inv.origin.channel == CHANNEL
    assert "5755875771" in json.dumps(inv.evidence[0].model_dump(mode="json"))
    assert inv.diagnosis is not None
    assert inv.diagnosis.suspect is not None
    assert inv.diagnosis.suspect.path.endswith("CustomerReference.java")
    # Elsewhere than a channel of the project: refused, nothing stored.
    await bot.post(shortcut(SENTRY_MESSAGE, channel="C0ELSEWHERE"))
    await bot.slack.wait_for(lambda s: s.calls_to("chat.postEphemeral"), timeout=5)
    assert "not authorized" in json.dumps(bot.slack.calls_to("chat.postEphemeral")[-1])
    assert [x.id for x in await bot.store.recent(None, 10)] == [inv.id]


async def test_app_home_shows_what_the_gates_skipped_with_the_reason(bot: Bot):
    skipped = Investigation.open("Why does Sentry issue ORD-7 happen?", (await started(bot)).scope)
    skipped.skip("the concurrency cap is reached (3 of 3 at work across projects)")
    await bot.store.create(skipped)
    event = {"type": "app_home_opened", "user": "U0SOMEONE", "channel": "D0HOME", "tab": "home"}
    body = json.dumps(
        {
            "type": "event_callback",
            "team_id": "T0FAKE",
            "api_app_id": "A0APP",
            "event": event,
            "event_id": "EvHOME2",
            "event_time": int(time.time()),
        }
    )
    assert (await bot.post(body, content_type="application/json")).status == 200
    await bot.slack.wait_for(lambda s: "U0SOMEONE" in s.home_tabs, timeout=5)
    home = json.dumps(bot.slack.home_tabs["U0SOMEONE"])
    assert "Skipped" in home and "ORD-7" in home and "3 of 3 at work" in home


async def started(bot: Bot) -> Investigation:
    await bot.command("errores al guardar pedidos")
    return await bot.settled(State.COMPLETED)
