"""Doing things once: a Slack event redelivered with X-Slack-Retry-Num is taken in once
(real Bolt, signed requests, real SQLite), and a creation idempotency key returns the
investigation it created, or refuses another request under the same key."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import aiohttp
import pytest
from aiohttp import web

from agent.domain import Investigation, Origin, State
from agent.models.groq import GroqModel
from bot import cli
from bot.config import Project, Projects, Settings
from bot.runtime import Runtime
from bot.serve import assemble, slack_client
from bot.usecases.intake import open_once
from recorded.scenario import clone, load_scenario
from storage.db import create_engine, create_schema
from storage.idempotency import KeyReused, SqlIdempotency
from storage.jobs import SqlJobQueue
from storage.store import SqlStore
from tests.conftest import orders_finish
from tests.fakes.chat import FakeChat
from tests.fakes.chat import tool_call as call
from tests.fakes.slack import FakeSlack, signed_headers

SECRET = "once-secret"
KEY = "gsk-once"
CHANNEL = "C0ONCE"
REQUESTER = "U0ALICE"


def finish(folder: Path) -> dict[str, Any]:
    return call("finish_investigation", orders_finish(folder, hypotheses=[], uncertainties=[]))


def keys(slack: FakeSlack) -> list[str]:
    """Our items in the channel, in the order they landed."""
    return [
        str(((m.get("metadata") or {}).get("event_payload") or {}).get("key"))
        for m in slack.messages(CHANNEL)
    ]


def questions(slack: FakeSlack) -> list[str]:
    return [k for k in keys(slack) if k.startswith("q:")]


async def test_a_redelivered_answer_is_taken_once(built_scenarios, tmp_path, db_url):
    """The first answer's event comes again (X-Slack-Retry-Num) while the run waits on its
    second question: it must not answer that question."""
    folder = built_scenarios["orders"]
    scenario = load_scenario(folder)
    project = Project.for_scope(scenario.scope, channels=[CHANNEL])
    engine = create_engine(db_url)
    await create_schema(engine)
    repo = await clone(scenario, tmp_path)
    stop = asyncio.Event()
    async with (
        FakeSlack(start_ts=f"{time.time():.6f}") as slack,
        FakeChat(api_key=KEY) as chat,
        aiohttp.ClientSession() as http,
    ):
        chat.script(
            [
                call("sentry__search_issues", {"query": "is:unresolved"}),
                call("ask_clarification", {"question": "¿Qué release corría?"}),
                call("ask_clarification", {"question": "¿Desde cuándo?"}),
                finish(folder),
            ]
        )
        models: list[GroqModel] = []

        def model(_inv: Investigation) -> GroqModel:
            models.append(GroqModel("llama-test", api_key=KEY, base_url=chat.base_url))
            return models[-1]

        runtime = Runtime.recorded(scenario, repo, model=model)
        await runtime.start()
        client = slack_client(Settings(slack_bot_token="xoxb-test", slack_api_url=slack.api_url))
        bot = assemble(client, engine, runtime, Projects(projects={project.key: project}), SECRET)
        runner = web.AppRunner(bot.web_app())
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        url = f"http://127.0.0.1:{runner.addresses[0][1]}/slack/events"
        tasks = bot.run(stop)

        async def post(body: str, content_type: str, **extra: str) -> None:
            headers = {**signed_headers(body, SECRET, content_type=content_type), **extra}
            async with http.post(url, data=body.encode(), headers=headers) as response:
                assert response.status == 200

        async def reply(event_id: str, text: str, root_ts: str, **headers: str) -> None:
            event = {
                "type": "message",
                "channel": CHANNEL,
                "user": REQUESTER,
                "text": text,
                "ts": f"{time.time():.6f}",
                "thread_ts": root_ts,
            }
            body = {
                "type": "event_callback",
                "team_id": "T0FAKE",
                "api_app_id": "A0APP",
                "event": event,
                "event_id": event_id,
                "event_time": int(time.time()),
            }
            await post(json.dumps(body), "application/json", **headers)

        try:
            await post(
                urlencode(
                    {
                        "command": "/investigate",
                        "text": "errores al guardar pedidos",
                        "user_id": REQUESTER,
                        "channel_id": CHANNEL,
                        "team_id": "T0FAKE",
                        "trigger_id": "trig.once",
                    }
                ),
                "application/x-www-form-urlencoded",
            )
            await slack.wait_for(lambda s: len(questions(s)) == 1, timeout=20)
            root_ts = slack.messages(CHANNEL)[0]["ts"]
            first = f"Ev{time.time_ns()}"
            await reply(first, "orders@1.4.2", root_ts)
            await slack.wait_for(lambda s: len(questions(s)) == 2, timeout=20)

            # Slack thinks the first delivery was lost and sends it again.
            await reply(
                first,
                "orders@1.4.2",
                root_ts,
                **{"X-Slack-Retry-Num": "1", "X-Slack-Retry-Reason": "http_timeout"},
            )
            # Taken in, it would answer the second question and the model be asked again.
            with pytest.raises(TimeoutError):
                async with asyncio.timeout(0.5):
                    while len(chat.requests) < 4:  # noqa: ASYNC110 (a bounded look)
                        await asyncio.sleep(0.02)
            (summary,) = await bot.store.recent(None, 10)
            waiting = await bot.store.load(summary.id)
            assert waiting.state is State.WAITING_FOR_OPERATOR
            assert waiting.pending_question == "¿Desde cuándo?"

            await reply(f"Ev{time.time_ns()}", "desde ayer", root_ts)
            await slack.wait_for(lambda s: "draft" in keys(s), timeout=20)
            done = await bot.store.load(summary.id)
        finally:
            stop.set()
            await asyncio.gather(*tasks, return_exceptions=True)
            await runner.cleanup()
            await runtime.aclose()
            await engine.dispose()
            for m in models:
                await m.aclose()
    assert done.state is State.COMPLETED, done.stop_reason
    answers = [
        m.content for m in done.messages if m.role == "tool" and m.name == "ask_clarification"
    ]
    assert answers == ["orders@1.4.2", "desde ayer"]


@pytest.fixture
async def engine(db_url):
    engine = create_engine(db_url)
    await create_schema(engine)
    yield engine
    await engine.dispose()


async def test_the_same_key_returns_the_investigation_it_created(built_scenarios, engine):
    scope = load_scenario(built_scenarios["orders"]).scope
    store, jobs, keys = SqlStore(engine), SqlJobQueue(engine), SqlIdempotency(engine)
    request = {"question": "why do orders fail?", "user": "U1"}

    first, fresh = await open_once(
        store, jobs, keys, Investigation.open("why do orders fail?", scope), "k1", request
    )
    again, fresh_again = await open_once(
        store, jobs, keys, Investigation.open("why do orders fail?", scope), "k1", request
    )
    assert fresh and not fresh_again and again.id == first.id
    assert [s.id for s in await store.recent(None, 10)] == [first.id]
    assert await jobs.claim("w", 30) is not None and await jobs.claim("w", 30) is None

    other = Investigation.open("something else", scope)
    with pytest.raises(KeyReused, match="already used"):
        await open_once(store, jobs, keys, other, "k1", {"question": "something else"})
    assert [s.id for s in await store.recent(None, 10)] == [first.id]


async def test_a_key_whose_creation_died_half_way_is_finished_by_the_retry(built_scenarios, engine):
    scope = load_scenario(built_scenarios["orders"]).scope
    store, jobs, keys = SqlStore(engine), SqlJobQueue(engine), SqlIdempotency(engine)
    request = {"question": "why?"}
    lost = Investigation.open("why?", scope)
    await keys.claim_key("k2", cli_hash(request), lost.id)  # …and the process died here

    retry = Investigation.open("why?", scope)
    retry.origin = Origin(surface="slack", channel="C1")
    inv, fresh = await open_once(store, jobs, keys, retry, "k2", request)
    assert inv.id == lost.id and not fresh
    assert (await store.load(lost.id)).state is State.QUEUED
    job = await jobs.claim("w", 30)
    assert job is not None and job.investigation_id == lost.id


def cli_hash(request: dict[str, Any]) -> str:
    from bot.usecases.intake import request_hash

    return request_hash(request)


def test_the_cli_runs_a_keyed_request_once(built_scenarios, db_url, monkeypatch, capsys):
    monkeypatch.setenv("DATABASE_URL", db_url)
    run = ["investigate", "--scenario", str(built_scenarios["orders"]), "--offline", "--json"]

    assert cli.main([*run, "--idempotency-key", "deploy-42"]) == 0
    first = json.loads(capsys.readouterr().out)
    assert cli.main([*run, "--idempotency-key", "deploy-42"]) == 0
    again = json.loads(capsys.readouterr().out)
    assert first["status"] == "COMPLETED"
    assert again["investigation_id"] == first["investigation_id"]
    assert again["evidence"] == first["evidence"]  # followed, not run again

    assert cli.main([*run, "--idempotency-key", "deploy-42", "--question", "otra cosa"]) == 2
    assert "already used for a different request" in capsys.readouterr().err
