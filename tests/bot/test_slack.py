"""The Slack app end to end: signed requests to the real Bolt app over HTTP, the real worker
and thread sync, the offline investigator, and fakes of Slack's Web API and GitHub's REST API."""

from __future__ import annotations

import asyncio
import contextlib
import json
import shutil
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import aiohttp
import pytest
from aiohttp import web

from agent.budget import Limits
from agent.domain import State
from agent.publish.github import GitHubIssues
from bot.config import Project, Projects, Settings
from bot.runtime import Runtime
from bot.serve import assemble, slack_client
from recorded.scenario import clone, load_scenario
from storage.db import create_engine, create_schema
from storage.store import SqlStore
from storage.surface import SqlSurfaceMessages
from tests.bot.sentry_faults import outage_on_call
from tests.fakes.github import FakeGitHub
from tests.fakes.slack import FakeSlack, signed_headers

SECRET = "test-signing-secret"
CHANNEL = "C0ORDERS"
REQUESTER = "U0ALICE"
APPROVER = "U0BOB"


@dataclass
class Bot:
    url: str
    slack: FakeSlack
    github: FakeGitHub
    store: SqlStore
    shown: SqlSurfaceMessages
    http: aiohttp.ClientSession
    runtime: Runtime

    async def post(
        self,
        body: str,
        *,
        timestamp: int | None = None,
        secret: str = SECRET,
        content_type: str = "application/x-www-form-urlencoded",
    ) -> aiohttp.ClientResponse:
        headers = signed_headers(body, secret, timestamp=timestamp, content_type=content_type)
        async with self.http.post(self.url, data=body.encode(), headers=headers) as response:
            await response.read()
            return response

    async def command(self, text: str, user: str = REQUESTER, channel: str = CHANNEL):
        return await self.post(
            urlencode(
                {
                    "command": "/investigate",
                    "text": text,
                    "user_id": user,
                    "channel_id": channel,
                    "team_id": "T0FAKE",
                    "trigger_id": "trig.1",
                    "response_url": self.slack.api_url,
                }
            )
        )

    async def action(self, action_id: str, value: dict[str, Any], user: str) -> None:
        payload = {
            "type": "block_actions",
            "user": {"id": user},
            "team": {"id": "T0FAKE"},
            "channel": {"id": CHANNEL},
            "trigger_id": "trig.2",
            "container": {},
            "actions": [
                {
                    "action_id": action_id,
                    "block_id": "b",
                    "value": json.dumps(value),
                    "type": "button",
                }
            ],
        }
        response = await self.post(urlencode({"payload": json.dumps(payload)}))
        assert response.status == 200

    async def submit(
        self, callback_id: str, view: dict[str, Any], values: dict[str, str], user: str
    ) -> None:
        state = {
            "values": {
                block: {"value": {"type": "plain_text_input", "value": text}}
                for block, text in values.items()
            }
        }
        payload = {
            "type": "view_submission",
            "user": {"id": user},
            "team": {"id": "T0FAKE"},
            "view": {**view, "id": "V1", "callback_id": callback_id, "state": state},
        }
        response = await self.post(urlencode({"payload": json.dumps(payload)}))
        assert response.status == 200

    async def reply(self, text: str, thread_ts: str, user: str) -> None:
        event = {
            "type": "message",
            "channel": CHANNEL,
            "user": user,
            "text": text,
            "ts": f"{time.time():.6f}",
            "thread_ts": thread_ts,
        }
        body = json.dumps(
            {
                "type": "event_callback",
                "team_id": "T0FAKE",
                "api_app_id": "A0APP",
                "event": event,
                "event_id": f"Ev{time.time_ns()}",
                "event_time": int(time.time()),
            }
        )
        response = await self.post(body, content_type="application/json")
        assert response.status == 200

    def posts(self) -> list[dict[str, Any]]:
        return self.slack.calls_to("chat.postMessage")

    def keys(self) -> list[str]:
        """The items of ours that Slack holds, in the order they landed."""
        return bot_keys(self.slack)

    async def inv(self):
        (summary,) = await self.store.recent(None, 10)
        return await self.store.load(summary.id)

    async def settled(self, *states: State, timeout: float = 20) -> Any:  # noqa: ASYNC109
        async with asyncio.timeout(timeout):
            while True:
                recent = await self.store.recent(None, 10)
                if recent and recent[0].state in states:
                    return await self.store.load(recent[0].id)
                await asyncio.sleep(0.02)


@contextlib.asynccontextmanager
async def running_bot(
    folder: Path,
    tmp: Path,
    approvers: list[str],
    limits: Limits | None = None,
    approver_group: str | None = None,
    db_url: str | None = None,
) -> AsyncIterator[Bot]:
    scenario = load_scenario(folder)
    s = scenario.scope
    project = Project.for_scope(
        s,
        channels=[CHANNEL],
        approvers=approvers,
        require_other_approver=True,
        approver_group=approver_group,
    )
    projects = Projects(projects={project.key: project})
    engine = create_engine(db_url or f"sqlite+aiosqlite:///{tmp / 'bot.db'}")
    await create_schema(engine)
    repo = await clone(scenario, tmp)
    runtime = Runtime.recorded(scenario, repo, limits=limits)
    stop = asyncio.Event()
    async with (
        FakeSlack(start_ts=f"{time.time():.6f}") as slack,
        FakeGitHub(token="ghs-test", repos=[s.repository]) as gh,
        aiohttp.ClientSession() as http,
    ):
        await runtime.start()
        client = slack_client(Settings(slack_bot_token="xoxb-test", slack_api_url=slack.api_url))
        bot = assemble(
            client,
            engine,
            runtime,
            projects,
            SECRET,
            publisher=GitHubIssues(gh.api_url, "ghs-test"),
        )
        store, shown = bot.store, bot.shown
        runner = web.AppRunner(bot.web_app())
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        port = runner.addresses[0][1]
        tasks = bot.run(stop)
        try:
            yield Bot(
                f"http://127.0.0.1:{port}/slack/events", slack, gh, store, shown, http, runtime
            )
        finally:
            stop.set()
            await asyncio.gather(*tasks, return_exceptions=True)
            await runner.cleanup()
            await runtime.aclose()
            await engine.dispose()


@pytest.fixture
async def bot(built_scenarios, tmp_path, db_url) -> AsyncIterator[Bot]:
    async with running_bot(built_scenarios["orders"], tmp_path, [APPROVER], db_url=db_url) as b:
        yield b


async def test_forged_and_replayed_requests_are_refused(bot):
    body = urlencode(
        {"command": "/investigate", "text": "x", "user_id": REQUESTER, "channel_id": CHANNEL}
    )
    assert (await bot.post(body, secret="not-the-secret")).status == 401
    assert (await bot.post(body, timestamp=int(time.time()) - 600)).status == 401
    assert await bot.store.recent(None, 10) == []


async def test_orders_incident_from_command_to_published_issue(bot):
    bot.slack.fail_next("chat.postMessage", status=429, retry_after=0)  # a rate limit on the way
    started = time.perf_counter()
    response = await bot.command("errores al guardar pedidos")
    assert response.status == 200 and time.perf_counter() - started < 2
    await bot.slack.wait_for(lambda s: any(k == "draft" for k in bot_keys(s)), timeout=20)
    keys = bot.keys()
    assert keys == ["root", "E1", "E2", "E3", "E4", "E5", "E6", "E7", "diagnosis", "draft"]
    messages = bot.slack.messages(CHANNEL)
    root_ts = messages[0]["ts"]
    assert all(m.get("thread_ts") == root_ts for m in messages[1:])  # the rest is in the thread
    inv = await bot.settled(State.COMPLETED)
    assert inv.draft.version == 1
    root = (await bot.shown.all_for(inv.id))["root"]
    await bot.slack.wait_for(
        lambda s: any(
            u.get("ts") == root.ts and "COMPLETED" in json.dumps(u).upper()
            for u in s.calls_to("chat.update")
        ),
        timeout=5,
    )

    v1 = {"investigation_id": inv.id, "version": 1, "hash": inv.draft.hash}
    await bot.action("draft_edit", v1, REQUESTER)
    await bot.slack.wait_for(lambda s: s.calls_to("views.open"), timeout=5)
    modal = bot.slack.calls_to("views.open")[-1]["view"]
    modal = json.loads(modal) if isinstance(modal, str) else modal
    await bot.submit(
        "draft_edit_submit",
        modal,
        {
            "title": "NPE al guardar pedidos sin referencia",
            "body": inv.draft.body + "\n\nEditado por el operador.",
        },
        REQUESTER,
    )
    edited = await wait_until(bot, lambda i: i.draft.version == 2)
    assert edited.draft.hash != inv.draft.hash

    await bot.action("draft_approve", v1, APPROVER)  # the stale v1
    await bot.slack.wait_for(lambda s: s.calls_to("chat.postEphemeral"), timeout=5)
    assert "out of date" in json.dumps(bot.slack.calls_to("chat.postEphemeral")[-1])
    assert (await bot.inv()).state is State.COMPLETED and bot.github.calls == []

    v2 = {"investigation_id": inv.id, "version": 2, "hash": edited.draft.hash}
    await bot.action("draft_approve", v2, REQUESTER)  # the requester may not approve
    await bot.slack.wait_for(lambda s: len(s.calls_to("chat.postEphemeral")) == 2, timeout=5)
    assert (await bot.inv()).state is State.COMPLETED

    await bot.action("draft_approve", v2, APPROVER)
    done = await bot.settled(State.PUBLISHED)
    (issue,) = bot.github.issues[inv.scope.repository]
    assert issue["title"] == "NPE al guardar pedidos sin referencia"
    assert issue["body"].startswith(edited.draft.body)
    assert f"investigation={inv.id}" in issue["body"]
    assert done.publication.url == issue["html_url"]
    await bot.action("draft_approve", v2, APPROVER)  # a second click publishes nothing
    await asyncio.sleep(0.2)
    assert len(bot.github.issues[inv.scope.repository]) == 1
    assert bot.keys().count("E1") == 1 and len(bot.keys()) == len(set(bot.keys()))


async def test_a_lost_slack_answer_is_found_in_the_thread_not_posted_twice(bot):
    bot.slack.fail_next("chat.postMessage", status=429, retry_after=0, count=2)
    bot.slack.drop_response_next("chat.postMessage")  # the root lands, its answer is lost
    await bot.command("errores al guardar pedidos")
    inv = await bot.settled(State.COMPLETED)
    await bot.slack.wait_for(lambda s: "draft" in bot_keys(s), timeout=20)
    keys = bot.keys()
    assert keys == ["root", "E1", "E2", "E3", "E4", "E5", "E6", "E7", "diagnosis", "draft"]
    assert len(bot.slack.messages(CHANNEL)) == len(keys)
    assert inv.evidence[-1].id == "E7"


async def test_bad_requests_get_an_ephemeral_and_store_nothing(bot):
    await bot.command("   ")
    await bot.command("nope errors", channel="C0OTHER")
    await bot.command("x" * 3000)
    await bot.slack.wait_for(lambda s: len(s.calls_to("chat.postEphemeral")) == 3, timeout=5)
    texts = json.dumps(bot.slack.calls_to("chat.postEphemeral"))
    assert "Usage" in texts or "usage" in texts
    assert "not authorized" in texts and "limit is" in texts
    assert await bot.store.recent(None, 10) == []
    assert bot.posts() == []


async def test_a_clarification_round_trip_in_the_thread(built_scenarios, tmp_path):
    folder = tmp_path / "no-release"
    shutil.copytree(built_scenarios["orders"], folder)
    for path in (folder / "sentry" / "events").iterdir():
        events = json.loads(path.read_text())
        for event in events:
            event["release"] = None
            event["tags"] = [t for t in event.get("tags", []) if t["key"] != "release"]
        path.write_text(json.dumps(events))
    commit = json.loads((folder / "expected.json").read_text())["commit"]
    (tmp_path / "run").mkdir()
    async with running_bot(folder, tmp_path / "run", [APPROVER]) as bot:
        await bot.command("errores al guardar pedidos")
        inv = await bot.settled(State.WAITING_FOR_OPERATOR)
        await bot.slack.wait_for(lambda s: any(k.startswith("q:") for k in bot_keys(s)))
        question = next(p for p in bot.posts() if "q:" in json.dumps(p.get("metadata")))
        assert f"<@{REQUESTER}>" in json.dumps(question)
        root = (await bot.shown.all_for(inv.id))["root"]

        # Someone else asks about the same error meanwhile: pointed to the running thread.
        await bot.command("¿por qué fallan los pedidos?", user="U0DAVE")
        await bot.slack.wait_for(lambda s: "duplicate" in bot_keys(s), timeout=10)
        second = next(x for x in await bot.store.recent(None, 10) if x.id != inv.id)
        second = await bot.store.load(second.id)
        assert second.state is State.STOPPED and second.duplicate_of == inv.id
        notice = next(m for m in bot.slack.messages(CHANNEL) if bot_key(m) == "duplicate")
        assert f"p{root.ts.replace('.', '')}" in json.dumps(notice)  # a link to the first thread
        assert (await bot.store.load(inv.id)).state is State.WAITING_FOR_OPERATOR

        await bot.reply("no idea, sorry", root.ts, user="U0CAROL")  # chatter: ignored
        await asyncio.sleep(0.2)
        assert (await bot.store.load(inv.id)).state is State.WAITING_FOR_OPERATOR
        await bot.reply(f"era {commit}", root.ts, user=REQUESTER)
        done = await wait_until(bot, lambda i: i.state is State.COMPLETED, inv.id, timeout=20)
        assert done.diagnosis.suspect.commit == commit


def bot_key(message: dict[str, Any]) -> str | None:
    meta = message.get("metadata") or {}
    return meta["event_payload"]["key"] if meta.get("event_type") == "incident_bot" else None


def bot_keys(slack: FakeSlack) -> list[str]:
    return [k for m in slack.messages(CHANNEL) if (k := bot_key(m)) is not None]


async def wait_until(bot: Bot, check, inv_id: str | None = None, timeout: float = 5):  # noqa: ASYNC109
    async with asyncio.timeout(timeout):
        while True:
            inv = await bot.store.load(inv_id) if inv_id else await bot.inv()
            if check(inv):
                return inv
            await asyncio.sleep(0.02)


async def test_message_shortcut_prefills_a_modal_and_its_submission_investigates(bot):
    payload = {
        "type": "message_action",
        "callback_id": "investigate_this",
        "trigger_id": "trig.3",
        "user": {"id": REQUESTER},
        "team": {"id": "T0FAKE"},
        "channel": {"id": CHANNEL},
        "message": {"type": "message", "ts": "1.2", "text": "ALERT: POST /orders 5xx rate 12%"},
        "message_ts": "1.2",
        "response_url": bot.slack.api_url,
    }
    assert (await bot.post(urlencode({"payload": json.dumps(payload)}))).status == 200
    await bot.slack.wait_for(lambda s: s.calls_to("views.open"), timeout=5)
    view = bot.slack.calls_to("views.open")[-1]["view"]
    view = json.loads(view) if isinstance(view, str) else view
    assert "POST /orders 5xx rate 12%" in json.dumps(view)
    await bot.submit(
        "investigate_submit",
        view,
        {"question": "¿Por qué falla POST /orders al guardar pedidos?"},
        REQUESTER,
    )
    inv = await bot.settled(State.COMPLETED)
    assert inv.origin.channel == CHANNEL and inv.requester == REQUESTER
    assert inv.diagnosis.suspect.path.endswith("CustomerReference.java")
    # The same view submitted again (a redelivery, a double click) is the same request.
    await bot.submit(
        "investigate_submit",
        view,
        {"question": "¿Por qué falla POST /orders al guardar pedidos?"},
        REQUESTER,
    )
    await asyncio.sleep(0.3)  # time for a second investigation to be stored, were it to be
    assert [x.id for x in await bot.store.recent(None, 10)] == [inv.id]


async def test_app_home_lists_the_users_investigations(bot):
    await bot.command("errores al guardar pedidos")
    inv = await bot.settled(State.COMPLETED)
    event = {"type": "app_home_opened", "user": REQUESTER, "channel": "D0HOME", "tab": "home"}
    body = json.dumps(
        {
            "type": "event_callback",
            "team_id": "T0FAKE",
            "api_app_id": "A0APP",
            "event": event,
            "event_id": "EvHOME",
            "event_time": int(time.time()),
        }
    )
    assert (await bot.post(body, content_type="application/json")).status == 200
    await bot.slack.wait_for(lambda s: REQUESTER in s.home_tabs, timeout=5)
    home = json.dumps(bot.slack.home_tabs[REQUESTER])
    assert inv.question in home


async def test_a_run_stopped_by_a_source_outage_continues(bot):
    outage_on_call(bot.runtime)
    if True:
        await bot.command("errores al guardar pedidos")
        stopped = await bot.settled(State.STOPPED)
        assert "Sentry answered 503" in stopped.stop_reason
        assert [f.evidence for f in stopped.diagnosis.facts] == [["E1"]]  # nothing lost
        await bot.slack.wait_for(lambda s: "diagnosis" in bot_keys(s), timeout=10)
        diagnosis = next(m for m in bot.slack.messages(CHANNEL) if bot_key(m) == "diagnosis")
        assert '"continue"' in json.dumps(diagnosis)  # the Continue button
        await bot.action("continue", {"investigation_id": stopped.id, "version": 0}, REQUESTER)
        await bot.slack.wait_for(lambda s: s.calls_to("chat.postEphemeral"), timeout=5)
        assert (await bot.store.load(stopped.id)).state is State.STOPPED  # a stale click
        current = await bot.store.load(stopped.id)
        # The button follows the saved version (a later pass updates the diagnosis).
        await bot.slack.wait_for(
            lambda s: json.loads(button(s, "continue") or "{}").get("version") == current.version,
            timeout=5,
        )
        await bot.action("continue", json.loads(button(bot.slack, "continue")), REQUESTER)
        done = await bot.settled(State.COMPLETED)
        assert done.diagnosis.suspect.path.endswith("CustomerReference.java")
        assert len(bot.keys()) == len(set(bot.keys()))  # nothing posted twice


def button(slack: FakeSlack, action_id: str) -> str | None:
    """The value of the newest button with that action id in the channel, as Slack holds it."""
    found = None
    for message in slack.messages(CHANNEL):
        for block in message.get("blocks") or []:
            for element in block.get("elements") or []:
                if element.get("action_id") == action_id:
                    found = element.get("value")
    return found


async def test_a_member_of_the_approvers_group_may_approve(built_scenarios, tmp_path):
    async with running_bot(
        built_scenarios["orders"], tmp_path, [], approver_group="S0APPROVERS"
    ) as bot:
        bot.slack.usergroups["S0APPROVERS"] = ["U0ERIN"]
        await bot.command("errores al guardar pedidos")
        inv = await bot.settled(State.COMPLETED)
        draft = {"investigation_id": inv.id, "version": 1, "hash": inv.draft.hash}
        await bot.action("draft_approve", draft, "U0MALLORY")  # not in the group
        await bot.slack.wait_for(lambda s: s.calls_to("chat.postEphemeral"), timeout=5)
        assert "approvers" in json.dumps(bot.slack.calls_to("chat.postEphemeral")[-1])
        assert (await bot.store.load(inv.id)).state is State.COMPLETED
        await bot.action("draft_approve", draft, "U0ERIN")
        done = await bot.settled(State.PUBLISHED)
        assert done.approval.approver == "U0ERIN"
