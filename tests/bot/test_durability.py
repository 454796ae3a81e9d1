"""Durable work across processes: `incident-bot worker` and `serve` killed with SIGKILL in the
middle of an investigation (the model call outstanding, a Slack post whose answer never came),
then started again on the same database: the run finishes from what was saved and the thread
ends complete, no card twice and none missing.

The kill lands deterministically: the chat-completions fake holds the model's next answer and
the Slack fake holds the answer of one chat.postMessage, and the process is killed only once
both are being held."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import socket
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import aiohttp
from slack_sdk.web.async_client import AsyncWebClient

from agent.domain import Investigation, Origin, State
from bot.slack.sync import SlackSync, ThreadBusy
from recorded.scenario import load_scenario
from storage.db import create_engine, create_schema
from storage.leases import SqlLeases
from storage.store import SqlStore
from storage.surface import SqlSurfaceMessages
from tests.conftest import orders_finish
from tests.fakes.chat import HOLD, FakeChat, tool_call
from tests.fakes.github import FakeGitHub
from tests.fakes.slack import FakeSlack, signed_headers

BIN = Path(sys.executable).with_name("incident-bot")
SECRET = "durable-secret"
KEY = "gsk-durable"
CHANNEL = "C0DURABLE"
LEASE = "0.5"  # seconds: a dead process's job and thread are taken over this soon


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def keys(slack: FakeSlack) -> list[str]:
    """Our items in the channel, in the order they landed (roots and replies)."""
    out = []
    for message in slack.messages(CHANNEL):
        meta = message.get("metadata") or {}
        if meta.get("event_type") == "incident_bot":
            out.append(meta["event_payload"]["key"])
    return out


def root_says(slack: FakeSlack, state: str) -> bool:
    roots = [
        m for m in slack.messages(CHANNEL) if not m.get("thread_ts") or m["thread_ts"] == m["ts"]
    ]
    return bool(roots) and state in json.dumps(roots[0]).upper()


def script(folder: Path) -> list[Any]:
    """Tool calls (each an evidence card), with the model's answer held twice: after the
    third call and after the fourth. Whoever holds the run then is killed; the process
    that takes it over gets the rest of the script."""
    finish = orders_finish(folder)
    return [
        tool_call("sentry__search_issues", {"query": "is:unresolved"}),
        tool_call("search_knowledge", {"query": "customer reference"}),
        tool_call("sentry__search_issues", {"query": "NullPointerException"}),
        HOLD,
        tool_call("search_knowledge", {"query": "orders reference null"}),
        HOLD,
        tool_call("finish_investigation", finish),
    ]


def environment(slack: FakeSlack, db: str, **extra: str) -> dict[str, str]:
    """The child's environment: ours without credentials, the fakes', and `extra`."""
    drop = ("GITHUB_", "GROQ_", "SLACK_APP_TOKEN")
    env = {k: v for k, v in os.environ.items() if not k.startswith(drop)}
    env.update(
        SLACK_BOT_TOKEN="xoxb-test",
        SLACK_SIGNING_SECRET=SECRET,
        SLACK_API_URL=slack.api_url,
        DATABASE_URL=db,
        INCIDENT_BOT_LEASE_SECONDS=LEASE,
        **extra,
    )
    return env


@contextlib.asynccontextmanager
async def process(env: dict[str, str], *args: str) -> AsyncIterator[asyncio.subprocess.Process]:
    """incident-bot as a child process; stopped with SIGTERM at the end unless killed."""
    proc = await asyncio.create_subprocess_exec(
        str(BIN),
        *args,
        env=env,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        yield proc
    finally:
        if proc.returncode is None:
            proc.send_signal(signal.SIGTERM)
        _, err = await asyncio.wait_for(proc.communicate(), 20)
        if proc.returncode != -signal.SIGKILL:
            assert proc.returncode == 0, err.decode()[-3000:]


async def kill(proc: asyncio.subprocess.Process) -> None:
    proc.kill()  # SIGKILL: no cleanup, no goodbye
    await proc.wait()
    assert proc.returncode == -signal.SIGKILL


async def mid_run(slack: FakeSlack, chat: FakeChat, held: int) -> None:
    """Until the model's next answer and a card's post answer are both being held."""
    await slack.wait_for(lambda s: len(s.held) >= held, timeout=60)
    await chat.wait_held(held, timeout=60)


async def check_thread(slack: FakeSlack, db: str, inv_id: str | None = None) -> Investigation:
    """The run completed, and the thread holds each of its items exactly once, in order."""
    engine = create_engine(db)
    try:
        store = SqlStore(engine)
        if inv_id is None:
            (summary,) = await store.recent(None, 10)
            inv_id = summary.id
        inv = await store.load(inv_id)
    finally:
        await engine.dispose()
    assert inv.state is State.COMPLETED, inv.stop_reason
    assert len(inv.evidence) >= 3
    expected = ["root", *(ev.id for ev in inv.evidence), "diagnosis", "draft"]
    assert keys(slack) == expected
    assert len(slack.messages(CHANNEL)) == len(expected)  # nothing else was posted
    root_ts = slack.messages(CHANNEL)[0]["ts"]
    assert all(m.get("thread_ts") == root_ts for m in slack.messages(CHANNEL)[1:])
    return inv


def command(trigger: str, text: str = "errores al guardar pedidos") -> str:
    return urlencode(
        {
            "command": "/investigate",
            "text": text,
            "user_id": "U0ALICE",
            "channel_id": CHANNEL,
            "team_id": "T0FAKE",
            "trigger_id": trigger,
            "response_url": "http://127.0.0.1:9/unused",
        }
    )


async def post(http: aiohttp.ClientSession, url: str, body: str) -> int:
    """A signed request; retried until the server listens."""
    async with asyncio.timeout(60):
        while True:
            with contextlib.suppress(aiohttp.ClientConnectionError):
                async with http.post(url, data=body, headers=signed_headers(body, SECRET)) as r:
                    return r.status
            await asyncio.sleep(0.05)


async def test_killed_serve_and_worker_processes_are_taken_over_and_the_thread_completed(
    built_scenarios, db_url
):
    """serve takes the command and is killed mid-run; a worker process takes the run over
    and is killed mid-run too; serve, started again on the same database, finishes it."""
    folder = built_scenarios["orders"]
    db = db_url
    serve = ("serve", "--scenario", str(folder), "--http", "--port")
    async with (
        FakeSlack(start_ts=f"{time.time():.6f}") as slack,
        FakeChat(api_key=KEY) as chat,
        aiohttp.ClientSession() as http,
    ):
        chat.script(script(folder))
        slack.hold_next("chat.postMessage", after=2)  # root and E1 answered, E2's answer held
        env = environment(slack, db, GROQ_API_KEY=KEY, GROQ_BASE_URL=chat.base_url)
        port = free_port()
        async with process(env, *serve, str(port)) as first:
            url = f"http://127.0.0.1:{port}/slack/events"
            assert await post(http, url, command("trig.1")) == 200
            await mid_run(slack, chat, held=1)
            assert keys(slack) == ["root", "E1", "E2"]  # E2 landed; its ts never came back
            await kill(first)

        slack.hold_next("chat.postMessage", after=1)  # the next card lands, the one after hangs
        async with process(env, "worker", "--scenario", str(folder)) as second:
            await mid_run(slack, chat, held=2)
            assert keys(slack)[:4] == ["root", "E1", "E2", "E3"]  # E2 was found, not reposted
            await kill(second)

        port = free_port()
        async with process(env, *serve, str(port)):
            url = f"http://127.0.0.1:{port}/slack/events"
            # Slack's own key: the same invocation again is the same investigation…
            assert await post(http, url, command("trig.1")) == 200
            # …and the same key with other words is refused, with nothing stored.
            assert await post(http, url, command("trig.1", "otra pregunta")) == 200
            await slack.wait_for(lambda s: bool(s.calls_to("chat.postEphemeral")), timeout=10)
            await slack.wait_for(
                lambda s: "draft" in keys(s) and root_says(s, "COMPLETED"), timeout=60
            )
        assert "already used" in json.dumps(slack.calls_to("chat.postEphemeral"))
        assert chat.remaining == 0 and chat.problems == []
        done = await check_thread(slack, db)
    assert done.stats.model_calls == 5  # held calls were never answered, so never counted


async def test_two_processes_bringing_one_thread_up_to_date_post_each_card_once(
    built_scenarios, db_url
):
    """Each process has its own thread sync (a web front, workers): on one database they take
    turns per thread, so concurrent passes never post the same card twice."""
    scope = load_scenario(built_scenarios["orders"]).scope
    inv = Investigation.open("¿por qué fallan los pedidos?", scope, requester="U0ALICE")
    inv.origin = Origin(surface="slack", channel=CHANNEL, user="U0ALICE")
    for n in range(1, 6):
        inv.add_evidence(source="sentry", tool=f"sentry__t{n}", title=f"issue {n}", content=f"{n}")
    engine = create_engine(db_url)
    await create_schema(engine)
    await SqlStore(engine).create(inv)
    async with FakeSlack(start_ts=f"{time.time():.6f}") as slack:
        client = AsyncWebClient(token="xoxb-test", base_url=slack.api_url)

        async def one_process() -> None:
            sync = SlackSync(
                client, SqlStore(engine), SqlSurfaceMessages(engine), leases=SqlLeases(engine)
            )
            while True:
                try:
                    return await sync.sync(inv.id)
                except ThreadBusy:
                    await asyncio.sleep(0.01)  # the other process has the thread

        try:
            await asyncio.gather(one_process(), one_process(), one_process())
        finally:
            await engine.dispose()
    assert keys(slack) == ["root", "E1", "E2", "E3", "E4", "E5"]
    assert len(slack.calls_to("chat.postMessage")) == 6


def button_value(slack: FakeSlack, action_id: str) -> dict[str, Any] | None:
    """The value of our button with that action id, wherever it sits in the channel."""

    def walk(node: Any) -> Any:
        if isinstance(node, dict):
            if node.get("action_id") == action_id:
                return json.loads(node["value"])
            node = list(node.values())
        if isinstance(node, list):
            for child in node:
                found = walk(child)
                if found is not None:
                    return found
        return None

    return walk(slack.messages(CHANNEL))


def approve(value: dict[str, Any], user: str) -> str:
    payload = {
        "type": "block_actions",
        "user": {"id": user},
        "team": {"id": "T0FAKE"},
        "channel": {"id": CHANNEL},
        "trigger_id": "trig.approve",
        "container": {},
        "actions": [
            {
                "action_id": "draft_approve",
                "block_id": "b",
                "value": json.dumps(value),
                "type": "button",
            }
        ],
    }
    return urlencode({"payload": json.dumps(payload)})


async def test_serve_killed_while_github_holds_the_create_answer_publishes_once(
    built_scenarios, db_url
):
    """The issue exists but its answer never reached the process that asked: the worker that
    takes the job over finds it by its marker and adopts it instead of creating another."""
    folder = built_scenarios["orders"]
    repo = load_scenario(folder).scope.repository
    db = db_url
    async with (
        FakeSlack(start_ts=f"{time.time():.6f}") as slack,
        FakeGitHub(repos=[repo], token="ghs-durable") as github,
        aiohttp.ClientSession() as http,
    ):
        env = environment(slack, db, GITHUB_API_URL=github.api_url, GITHUB_TOKEN="ghs-durable")
        github.timeout_after_apply_next("create_issue", delay=120)
        port = free_port()
        serve = ("serve", "--scenario", str(folder), "--offline", "--http", "--port", str(port))
        async with process(env, *serve) as first:
            url = f"http://127.0.0.1:{port}/slack/events"
            assert await post(http, url, command("trig.publish")) == 200
            await slack.wait_for(lambda s: button_value(s, "draft_approve") is not None, 60)
            value = button_value(slack, "draft_approve")
            assert value is not None
            assert await post(http, url, approve(value, "U0BOB")) == 200
            await github.wait_for(lambda g: len(g.issues[repo]) == 1, timeout=30)
            await kill(first)  # the issue exists; the answer to the create is still held

        async with process(env, "worker", "--scenario", str(folder), "--offline"):
            await slack.wait_for(lambda s: root_says(s, "PUBLISHED"), timeout=60)

    (issue,) = github.issues[repo]
    assert len(github.calls_to("create_issue")) == 1  # adopted, never created twice
    (lookup,) = github.calls_to("list_issues")  # by creator and since, not the search API
    assert lookup.query.get("creator") and lookup.query.get("since")
    engine = create_engine(db)
    try:
        inv = await SqlStore(engine).load(value["investigation_id"])
    finally:
        await engine.dispose()
    assert inv.state is State.PUBLISHED and inv.publication is not None
    assert inv.publication.number == issue["number"]
    assert inv.draft is not None and inv.draft.hash == value["hash"]
    assert issue["title"] == inv.draft.title
    assert issue["body"].startswith(inv.draft.body)  # then the hidden marker
    assert keys(slack).count("publish:0") == 1
