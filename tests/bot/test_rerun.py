"""Re-run: the root message's button, through signed requests into the real Bolt app.

A finished or stopped investigation can be run again by an approver or its requester, from
its own channel and workspace; the new run answers in the same thread, and the old report
is marked superseded (its draft can no longer be approved).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import urlencode

import pytest

from agent.domain import State
from bot.slack import blocks
from tests.bot.sentry_faults import outage_on_call
from tests.bot.test_authorization import TEAM, WRONG, click, ephemerals_to, expect_refusal, post
from tests.bot.test_slack import (
    APPROVER,
    CHANNEL,
    REQUESTER,
    Bot,
    bot_key,
    running_bot,
    wait_until,
)


@pytest.fixture
async def served(built_scenarios, tmp_path) -> AsyncIterator[Bot]:
    async with running_bot(built_scenarios["orders"], tmp_path, [APPROVER]) as bot:
        yield bot


def rerun_value(bot: Bot, inv_id: str) -> dict[str, Any] | None:
    """The Re-run button of that investigation's root message, as Slack holds it."""
    for message in bot.slack.messages(CHANNEL):
        for block in message.get("blocks") or []:
            for element in block.get("elements") or []:
                if element.get("action_id") == blocks.ACTION_RERUN:
                    value = json.loads(element["value"])
                    if value["investigation_id"] == inv_id:
                        return value
    return None


def items_of(bot: Bot, inv_id: str) -> list[dict[str, Any]]:
    return [
        m
        for m in bot.slack.messages(CHANNEL)
        if (m.get("metadata") or {}).get("event_payload", {}).get("investigation_id") == inv_id
    ]


async def test_rerun_of_a_finished_investigation_in_its_own_thread(served):
    bot = served
    await bot.command("errores al guardar pedidos")
    old = await bot.settled(State.COMPLETED)
    await bot.slack.wait_for(lambda s: rerun_value(bot, old.id) is not None, timeout=10)
    value = rerun_value(bot, old.id)
    for user, team, channel, word in WRONG:
        await expect_refusal(
            bot,
            old.id,
            user,
            word,
            lambda u=user, t=team, c=channel: click(bot, blocks.ACTION_RERUN, value, u, t, c),
        )
    assert len(await bot.store.recent(None, 10)) == 1  # nothing was started
    root_ts = (await bot.shown.all_for(old.id))["root"].ts

    await click(bot, blocks.ACTION_RERUN, value, REQUESTER, TEAM, CHANNEL)
    old = await wait_until(bot, lambda i: i.superseded_by is not None, old.id)
    new = await wait_until(bot, lambda i: i.state is State.COMPLETED, old.superseded_by)
    assert new.rerun_of == old.id and new.question == old.question
    assert new.requester == REQUESTER and new.origin.thread_of == old.id
    assert old.state is State.COMPLETED  # a finished report is kept, marked superseded
    await bot.slack.wait_for(lambda s: any(bot_key(m) == "draft" for m in items_of(bot, new.id)))
    mine = items_of(bot, new.id)
    assert [bot_key(m) for m in mine][:2] == ["root", "E1"]
    assert all(m.get("thread_ts") == root_ts for m in mine)  # all of it in the old thread
    # The old root and draft say so and lose their buttons.
    await bot.slack.wait_for(
        lambda s: any(
            "Superseded" in json.dumps(m) and bot_key(m) == "draft" for m in items_of(bot, old.id)
        ),
        timeout=5,
    )
    old_messages = json.dumps(items_of(bot, old.id))
    assert blocks.ACTION_DRAFT_APPROVE not in old_messages
    assert rerun_value(bot, old.id) is None

    # The old draft can no longer be approved, even with its button's value.
    ref = {"investigation_id": old.id, "version": old.draft.version, "hash": old.draft.hash}
    seen = ephemerals_to(bot, APPROVER)
    await click(bot, blocks.ACTION_DRAFT_APPROVE, ref, APPROVER, TEAM, CHANNEL)
    await bot.slack.wait_for(lambda s: ephemerals_to(bot, APPROVER) > seen, timeout=5)
    assert "superseded" in json.dumps(bot.slack.ephemerals[-1])
    assert (await bot.store.load(old.id)).state is State.COMPLETED
    assert bot.github.calls == []

    # A second click on the old Re-run button starts nothing more.
    seen = ephemerals_to(bot, REQUESTER)
    await click(bot, blocks.ACTION_RERUN, value, REQUESTER, TEAM, CHANNEL)
    await bot.slack.wait_for(lambda s: ephemerals_to(bot, REQUESTER) > seen, timeout=5)
    assert "already re-run" in json.dumps(bot.slack.ephemerals[-1])
    assert len(await bot.store.recent(None, 10)) == 2

    # The new run's draft is the one that publishes.
    await click(
        bot,
        blocks.ACTION_DRAFT_APPROVE,
        {"investigation_id": new.id, "version": new.draft.version, "hash": new.draft.hash},
        APPROVER,
        TEAM,
        CHANNEL,
    )
    await wait_until(bot, lambda i: i.state is State.PUBLISHED, new.id, timeout=10)


async def test_an_approver_reruns_a_stopped_run_in_the_language_of_the_click(served):
    bot = served
    outage_on_call(bot.runtime)
    await bot.command("errores al guardar pedidos")
    stopped = await bot.settled(State.STOPPED)
    assert stopped.scope.language != "en"
    await bot.slack.wait_for(lambda s: rerun_value(bot, stopped.id) is not None, timeout=10)
    payload_user = {"id": APPROVER, "team_id": TEAM, "locale": "en-US"}
    body = {
        "type": "block_actions",
        "user": payload_user,
        "team": {"id": TEAM},
        "channel": {"id": CHANNEL},
        "trigger_id": "trig.rerun",
        "container": {"type": "message", "channel_id": CHANNEL},
        "actions": [
            {
                "action_id": blocks.ACTION_RERUN,
                "block_id": "b",
                "value": json.dumps(rerun_value(bot, stopped.id)),
                "type": "button",
            }
        ],
    }
    await post(bot, urlencode({"payload": json.dumps(body)}))
    old = await wait_until(bot, lambda i: i.superseded_by is not None, stopped.id)
    new = await wait_until(bot, lambda i: i.state is State.COMPLETED, old.superseded_by, 20)
    assert new.scope.language == "en" and new.origin.user == APPROVER
    assert new.requester == REQUESTER  # still the one who asked
    assert old.state is State.STOPPED and old.stop_reason == stopped.stop_reason
