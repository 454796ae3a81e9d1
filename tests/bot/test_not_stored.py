"""No silent loss: when storing fails after the ack, the person who asked is told.

A real SQLite database opened read-only refuses every write; a signed `/investigate`
is acked (200) as always, and then an ephemeral says the request was not stored."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import time
from typing import Any
from urllib.parse import urlencode

import aiohttp
from aiohttp import web
from sqlalchemy.exc import OperationalError

from agent.domain import State, utcnow
from bot.config import Project, Projects, Settings
from bot.serve import assemble, slack_client
from bot.slack import blocks
from storage.db import create_engine, create_schema
from storage.store import SqlStore
from tests.bot.test_authorization import TEAM, click, snapshot, submit_edit
from tests.bot.test_slack import APPROVER, REQUESTER, running_bot
from tests.fakes.slack import FakeSlack, signed_headers

SECRET = "test-signing-secret"
CHANNEL = "C0ORDERS"


async def test_a_refused_write_after_the_ack_is_told_to_the_user(tmp_path):
    path = tmp_path / "bot.db"
    writable = create_engine(f"sqlite+aiosqlite:///{path}")
    await create_schema(writable)
    await writable.dispose()
    read_only = create_engine(f"sqlite+aiosqlite:///file:{path}?mode=ro&uri=true")
    now = utcnow()
    project = Project(
        key="orders",
        repository="acme/orders",
        sentry_organization="acme",
        sentry_project="orders",
        channels=[CHANNEL],
    )
    async with (
        FakeSlack(start_ts=f"{now.timestamp():.6f}") as slack,
        aiohttp.ClientSession() as http,
    ):
        client = slack_client(Settings(slack_bot_token="xoxb-test", slack_api_url=slack.api_url))
        bot = assemble(
            client, read_only, None, Projects(projects={"orders": project}), SECRET, workers=0
        )
        runner = web.AppRunner(bot.app.web_app())
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        url = f"http://127.0.0.1:{runner.addresses[0][1]}/slack/events"
        stop = asyncio.Event()
        tasks = bot.run(stop)
        try:
            body = urlencode(
                {
                    "command": "/investigate",
                    "text": "errors when saving orders",
                    "user_id": "U0ALICE",
                    "channel_id": CHANNEL,
                    "team_id": "T0FAKE",
                    "trigger_id": "trig.ro",
                }
            )
            headers = signed_headers(body, SECRET, timestamp=int(time.time()))
            async with http.post(url, data=body.encode(), headers=headers) as response:
                assert response.status == 200
            await slack.wait_for(lambda s: s.ephemerals, timeout=5)
            (told,) = slack.ephemerals
            assert (told["channel"], told["user"]) == (CHANNEL, "U0ALICE")
            text = json.dumps(told)
            assert "could not be stored" in text and "try again" in text
            assert slack.calls_to("chat.postMessage") == []  # no thread for what is not stored
        finally:
            stop.set()
            await asyncio.gather(*tasks, return_exceptions=True)
            await bot.acks.finish()
            await runner.cleanup()
            await read_only.dispose()
    check = create_engine(f"sqlite+aiosqlite:///{path}")
    try:
        assert await SqlStore(check).recent(None, 10) == []
    finally:
        await check.dispose()


async def test_a_refused_save_of_a_click_or_an_edit_is_told(built_scenarios, tmp_path):
    """The same for a button (after its ack: an ephemeral) and for the Edit modal (answered
    inline: the modal stays open with the error, so nothing typed is lost)."""
    async with running_bot(built_scenarios["orders"], tmp_path, [APPROVER]) as bot:
        await bot.command("errores al guardar pedidos")
        inv = await bot.settled(State.COMPLETED)
        before = snapshot(await bot.store.load(inv.id))

        async def refuse(_inv: Any) -> None:
            cause = sqlite3.OperationalError("attempt to write a readonly database")
            raise OperationalError("UPDATE investigations …", {}, cause)

        bot.store.save = refuse  # type: ignore[method-assign]
        ref = blocks.draft_ref(inv)
        await click(bot, blocks.ACTION_DRAFT_DISCARD, ref, APPROVER, TEAM, CHANNEL)
        await bot.slack.wait_for(lambda s: s.ephemerals, timeout=5)
        assert "could not be stored" in json.dumps(bot.slack.ephemerals[-1])
        modal = blocks.edit_modal(inv, channel=CHANNEL)
        answer = await submit_edit(bot, modal, "A new title", "A new body.", REQUESTER, TEAM)
        assert answer["response_action"] == "errors"
        assert "Not saved" in answer["errors"]["title"]
        assert snapshot(await bot.store.load(inv.id)) == before
