"""Never twice, also when Slack keeps a post and its answer is lost: the fake Slack stores
the message (visible with its metadata) and then answers 500, drops the connection, or
hangs and drops it. Real Bolt over HTTP with a signed command, the real worker and thread
sync, the client as serve builds it (bot.serve.slack_client)."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest

from agent.domain import Investigation, Origin, State
from bot.config import Settings
from bot.serve import slack_client
from bot.slack.sync import SlackSync
from recorded.scenario import load_scenario
from storage.db import create_engine, create_schema
from storage.store import SqlStore
from storage.surface import SqlSurfaceMessages
from tests.bot.test_slack import APPROVER, CHANNEL, Bot, bot_key, bot_keys, running_bot
from tests.fakes.slack import FakeSlack

COMPLETE = ["root", "E1", "E2", "E3", "E4", "E5", "E6", "E7", "diagnosis", "draft"]


@pytest.fixture
async def bot(built_scenarios, tmp_path) -> AsyncIterator[Bot]:
    async with running_bot(built_scenarios["orders"], tmp_path, [APPROVER]) as b:
        yield b


def posted_keys(slack: Any) -> list[str]:
    """The item of each chat.postMessage the fake received, in order (retries included)."""
    return [str(p["metadata"]["event_payload"]["key"]) for p in slack.calls_to("chat.postMessage")]


def approve_buttons(slack: Any) -> int:
    return json.dumps(slack.messages(CHANNEL)).count('"action_id": "draft_approve"')


async def complete_thread(bot: Bot) -> None:
    """The run completed and its thread holds each item once, the root in its final state."""
    inv = await bot.settled(State.COMPLETED)
    await bot.slack.wait_for(
        lambda s: (
            "draft" in bot_keys(s) and "COMPLETED" in json.dumps(s.messages(CHANNEL)[0]).upper()
        ),
        timeout=20,
    )
    assert bot.keys() == COMPLETE
    assert len(bot.slack.messages(CHANNEL)) == len(COMPLETE)  # no orphan, nothing else
    root = bot.slack.messages(CHANNEL)[0]
    assert bot_key(root) == "root" and "QUEUED" not in json.dumps(root).upper()
    assert approve_buttons(bot.slack) == 1
    assert [e.id for e in inv.evidence] == COMPLETE[1:-2]


async def test_a_root_kept_by_slack_despite_a_500_is_found_not_posted_again(bot):
    bot.slack.fail_after_apply_next("chat.postMessage")
    assert (await bot.command("errores al guardar pedidos")).status == 200
    await complete_thread(bot)
    assert posted_keys(bot.slack)[0] == "root"


async def test_a_card_kept_by_slack_despite_a_500_is_found_not_posted_again(bot):
    bot.slack.fail_after_apply_next("chat.postMessage", after=2)  # root, E1, then E2
    await bot.command("errores al guardar pedidos")
    await complete_thread(bot)
    assert posted_keys(bot.slack)[2] == "E2"


@pytest.mark.parametrize("fault", ["500", "drop", "hang then drop"])
async def test_a_draft_whose_answer_was_lost_is_shown_once_with_one_approve_button(bot, fault):
    after = len(COMPLETE) - 1
    if fault == "500":
        bot.slack.fail_after_apply_next("chat.postMessage", after=after)
    else:
        delay = 0.3 if fault == "hang then drop" else 0.0
        bot.slack.hang_then_drop_next("chat.postMessage", delay=delay, after=after)
    await bot.command("errores al guardar pedidos")
    await complete_thread(bot)
    assert posted_keys(bot.slack)[after] == "draft"


async def test_three_answers_lost_in_a_row_leave_one_root_and_one_of_each_card(bot):
    bot.slack.fail_after_apply_next("chat.postMessage", count=3)  # root, E1, E2
    await bot.command("errores al guardar pedidos")
    await complete_thread(bot)
    assert posted_keys(bot.slack) == COMPLETE  # each posted once: found, never re-sent


async def test_the_publish_link_kept_by_slack_despite_a_500_is_shown_once(bot):
    await bot.command("errores al guardar pedidos")
    await complete_thread(bot)
    inv = await bot.inv()
    bot.slack.fail_after_apply_next("chat.postMessage")  # the next post: the issue's link
    draft = {"investigation_id": inv.id, "version": 1, "hash": inv.draft.hash}
    await bot.action("draft_approve", draft, APPROVER)
    done = await bot.settled(State.PUBLISHED)
    url = done.publication.url
    await bot.slack.wait_for(lambda s: url in json.dumps(s.messages(CHANNEL)[0]), timeout=10)
    assert bot.keys() == [*COMPLETE, "publish:0"]
    assert posted_keys(bot.slack)[-1] == "publish:0"
    assert len(bot.github.issues[inv.scope.repository]) == 1


async def test_a_card_post_that_timed_out_is_found_in_the_thread(built_scenarios, tmp_path):
    """The thread sync alone, its client timing out while Slack keeps the card."""
    scope = load_scenario(built_scenarios["orders"]).scope
    inv = Investigation.open("¿por qué fallan los pedidos?", scope, requester="U0ALICE")
    inv.origin = Origin(surface="slack", channel=CHANNEL, user="U0ALICE")
    for n in range(1, 4):
        inv.add_evidence(source="sentry", tool=f"sentry__t{n}", title=f"issue {n}", content=f"{n}")
    engine = create_engine(f"sqlite+aiosqlite:///{tmp_path / 'bot.db'}")
    await create_schema(engine)
    await SqlStore(engine).create(inv)
    try:
        async with FakeSlack(start_ts=f"{time.time():.6f}") as slack:
            web = slack_client(Settings(slack_bot_token="xoxb-test", slack_api_url=slack.api_url))
            web.timeout = 0.3  # seconds
            slack.hang_then_drop_next("chat.postMessage", delay=1.0, after=2)  # E2
            await SlackSync(web, SqlStore(engine), SqlSurfaceMessages(engine)).sync(inv.id)
            assert bot_keys(slack) == ["root", "E1", "E2", "E3"]
            assert posted_keys(slack) == ["root", "E1", "E2", "E3"]
    finally:
        await engine.dispose()
