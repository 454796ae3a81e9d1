"""Who may act on an investigation, and from where: signed requests into the real Bolt app.

Every action (Edit, the Edit modal's submission, Approve, Discard, Continue, Create
anyway, an answer in the thread) is tried by someone who may not do it, from another
channel and from another workspace; each is refused with an ephemeral (or the modal's
error) and the stored investigation is exactly as it was. Then the allowed path works.
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest

from agent.domain import Investigation, State
from bot.slack import blocks
from tests.bot.sentry_faults import outage_on_call
from tests.bot.test_slack import (
    APPROVER,
    CHANNEL,
    REQUESTER,
    Bot,
    bot_keys,
    button,
    running_bot,
    wait_until,
)
from tests.fakes.slack import signed_headers

TEAM = "T0FAKE"  # the workspace of every investigation started here
MALLORY = "U0MALLORY"  # neither the requester nor an approver
# (user, team, channel) of each refused attempt, and a word its refusal must say
STRANGER = (MALLORY, TEAM, CHANNEL, "approvers")
ELSEWHERE = (APPROVER, TEAM, "C0ELSEWHERE", "another channel")
OTHER_TEAM = (APPROVER, "T0OTHER", CHANNEL, "another workspace")
WRONG = [STRANGER, ELSEWHERE, OTHER_TEAM]


@pytest.fixture
async def served(built_scenarios, tmp_path) -> AsyncIterator[Bot]:
    async with running_bot(built_scenarios["orders"], tmp_path, [APPROVER]) as bot:
        yield bot


async def post(bot: Bot, body: str, content_type: str = "application/x-www-form-urlencoded"):
    headers = signed_headers(body, "test-signing-secret", content_type=content_type)
    async with bot.http.post(bot.url, data=body.encode(), headers=headers) as response:
        assert response.status == 200
        text = await response.text()
        return json.loads(text) if text.strip().startswith("{") else {}


async def click(
    bot: Bot, action_id: str, value: dict[str, Any], user: str, team: str, channel: str
) -> None:
    payload = {
        "type": "block_actions",
        "user": {"id": user, "team_id": team},
        "team": {"id": team},
        "channel": {"id": channel},
        "trigger_id": f"trig.{time.time_ns()}",
        "container": {"type": "message", "channel_id": channel},
        "actions": [
            {"action_id": action_id, "block_id": "b", "value": json.dumps(value), "type": "button"}
        ],
    }
    await post(bot, urlencode({"payload": json.dumps(payload)}))


async def submit_edit(
    bot: Bot, modal: dict[str, Any], title: str, body: str, user: str, team: str
) -> dict[str, Any]:
    """The Edit modal submitted; Bolt's JSON answer ({} when it closes the modal)."""
    state = {
        "values": {
            block: {blocks.INPUT_ACTION: {"type": "plain_text_input", "value": text}}
            for block, text in (("title", title), ("body", body))
        }
    }
    payload = {
        "type": "view_submission",
        "user": {"id": user, "team_id": team},
        "team": {"id": team},
        "view": {**modal, "id": "V1", "state": state},
    }
    return await post(bot, urlencode({"payload": json.dumps(payload)}))


async def reply(bot: Bot, text: str, thread_ts: str, user: str, team: str, channel: str) -> None:
    event = {
        "type": "message",
        "channel": channel,
        "user": user,
        "text": text,
        "ts": f"{time.time():.6f}",
        "thread_ts": thread_ts,
    }
    body = {
        "type": "event_callback",
        "team_id": team,
        "api_app_id": "A0APP",
        "event": event,
        "event_id": f"Ev{time.time_ns()}",
        "event_time": int(time.time()),
    }
    await post(bot, json.dumps(body), content_type="application/json")


def snapshot(inv: Investigation) -> tuple[Any, ...]:
    return (inv.version, inv.state, inv.draft, inv.discarded, inv.approval, inv.messages)


def ephemerals_to(bot: Bot, user: str) -> int:
    return sum(1 for e in bot.slack.ephemerals if e["user"] == user)


async def expect_refusal(bot: Bot, inv_id: str, user: str, word: str, attempt) -> None:
    before = snapshot(await bot.store.load(inv_id))
    seen = ephemerals_to(bot, user)
    await attempt()
    await bot.slack.wait_for(lambda s: ephemerals_to(bot, user) > seen, timeout=5)
    last = [e for e in bot.slack.ephemerals if e["user"] == user][-1]
    assert word in json.dumps(last)
    assert snapshot(await bot.store.load(inv_id)) == before


async def test_edit_approve_and_discard_only_by_whom_and_from_where_allowed(
    built_scenarios, tmp_path
):
    async with running_bot(built_scenarios["orders"], tmp_path, [APPROVER]) as bot:
        await bot.command("errores al guardar pedidos")
        inv = await bot.settled(State.COMPLETED)
        assert (inv.origin.team, inv.origin.channel) == (TEAM, CHANNEL)
        v1 = blocks.draft_ref(inv)
        # A modal as Slack would hand it back for a click in the thread.
        modal = blocks.edit_modal(inv, channel=CHANNEL)
        for user, team, channel, word in WRONG:
            for action in (
                blocks.ACTION_DRAFT_EDIT,
                blocks.ACTION_DRAFT_APPROVE,
                blocks.ACTION_DRAFT_DISCARD,
            ):
                await expect_refusal(
                    bot,
                    inv.id,
                    user,
                    word,
                    lambda a=action, u=user, t=team, c=channel: click(bot, a, v1, u, t, c),
                )
        assert bot.slack.calls_to("views.open") == []  # no Edit modal was opened
        assert bot.github.calls == []

        # The Edit modal's submission: refused in the modal, nothing saved.
        before = snapshot(await bot.store.load(inv.id))
        elsewhere = blocks.edit_modal(inv, channel="C0ELSEWHERE")
        for view, user, team, word in (
            (modal, MALLORY, TEAM, "approvers"),
            (elsewhere, APPROVER, TEAM, "another channel"),
            (modal, REQUESTER, "T0OTHER", "another workspace"),
        ):
            answer = await submit_edit(bot, view, "Mine now", "Rewritten.", user, team)
            assert answer["response_action"] == "errors"
            assert word in answer["errors"]["title"]
            assert snapshot(await bot.store.load(inv.id)) == before

        # The requester may edit (not approve); an approver approves from the thread.
        await click(bot, blocks.ACTION_DRAFT_EDIT, v1, REQUESTER, TEAM, CHANNEL)
        await bot.slack.wait_for(lambda s: s.calls_to("views.open"), timeout=5)
        opened = bot.slack.calls_to("views.open")[-1]["view"]
        opened = json.loads(opened) if isinstance(opened, str) else opened
        answer = await submit_edit(bot, opened, "NPE al guardar", inv.draft.body, REQUESTER, TEAM)
        assert answer == {}
        edited = await wait_until(bot, lambda i: i.draft.version == 2, inv.id)
        v2 = blocks.draft_ref(edited)
        await expect_refusal(
            bot,
            inv.id,
            REQUESTER,
            "approvers can publish",
            lambda: click(bot, blocks.ACTION_DRAFT_APPROVE, v2, REQUESTER, TEAM, CHANNEL),
        )
        await click(bot, blocks.ACTION_DRAFT_APPROVE, v2, APPROVER, TEAM, CHANNEL)
        done = await bot.settled(State.PUBLISHED)
        assert done.approval.approver == APPROVER
        (issue,) = bot.github.issues[inv.scope.repository]
        assert issue["title"] == "NPE al guardar"


async def test_discard_takes_an_approver_in_the_thread(built_scenarios, tmp_path):
    async with running_bot(built_scenarios["orders"], tmp_path, [APPROVER]) as bot:
        await bot.command("errores al guardar pedidos")
        inv = await bot.settled(State.COMPLETED)
        ref = blocks.draft_ref(inv)
        await expect_refusal(
            bot,
            inv.id,
            REQUESTER,
            "approvers",
            lambda: click(bot, blocks.ACTION_DRAFT_DISCARD, ref, REQUESTER, TEAM, CHANNEL),
        )
        await click(bot, blocks.ACTION_DRAFT_DISCARD, ref, APPROVER, TEAM, CHANNEL)
        discarded = await wait_until(bot, lambda i: i.discarded, inv.id)
        assert discarded.state is State.COMPLETED


async def test_continue_by_the_requester_from_the_thread_only(served):
    bot = served
    outage_on_call(bot.runtime)
    await bot.command("errores al guardar pedidos")
    stopped = await bot.settled(State.STOPPED)
    await bot.slack.wait_for(lambda s: "diagnosis" in bot_keys(s), timeout=10)
    current = await bot.store.load(stopped.id)
    await bot.slack.wait_for(
        lambda s: json.loads(button(s, "continue") or "{}").get("version") == current.version,
        timeout=5,
    )
    value = json.loads(button(bot.slack, blocks.ACTION_CONTINUE))
    for user, team, channel, word in WRONG:
        await expect_refusal(
            bot,
            stopped.id,
            user,
            word,
            lambda u=user, t=team, c=channel: click(bot, blocks.ACTION_CONTINUE, value, u, t, c),
        )
    await click(bot, blocks.ACTION_CONTINUE, value, REQUESTER, TEAM, CHANNEL)
    done = await bot.settled(State.COMPLETED)
    assert done.id == stopped.id


async def test_create_anyway_by_an_approver_from_the_thread_only(served):
    bot = served
    await bot.command("errores al guardar pedidos")
    inv = await bot.settled(State.COMPLETED)
    bot.github.drop_next("create_issue")
    await click(bot, blocks.ACTION_DRAFT_APPROVE, blocks.draft_ref(inv), APPROVER, TEAM, CHANNEL)
    await bot.settled(State.PUBLISH_UNKNOWN)
    await bot.slack.wait_for(lambda s: button(s, blocks.ACTION_CREATE_ANYWAY), timeout=10)
    value = json.loads(button(bot.slack, blocks.ACTION_CREATE_ANYWAY))
    for user, team, channel, word in WRONG:
        await expect_refusal(
            bot,
            inv.id,
            user,
            word,
            lambda u=user, t=team, c=channel: click(
                bot, blocks.ACTION_CREATE_ANYWAY, value, u, t, c
            ),
        )
    assert len(bot.github.calls_to("create_issue")) == 1
    await click(bot, blocks.ACTION_CREATE_ANYWAY, value, APPROVER, TEAM, CHANNEL)
    done = await bot.settled(State.PUBLISHED)
    assert done.approval.confirmed_by == [APPROVER]


def without_releases(folder: Path, tmp_path: Path) -> Path:
    """The orders incident with no release on its events: the run has to ask for it."""
    copy = tmp_path / "no-release"
    shutil.copytree(folder, copy)
    for path in (copy / "sentry" / "events").iterdir():
        events = json.loads(path.read_text())
        for event in events:
            event["release"] = None
            event["tags"] = [t for t in event.get("tags", []) if t["key"] != "release"]
        path.write_text(json.dumps(events))
    return copy


async def test_an_answer_counts_from_the_requester_in_the_thread_only(built_scenarios, tmp_path):
    folder = without_releases(built_scenarios["orders"], tmp_path)
    commit = json.loads((folder / "expected.json").read_text())["commit"]
    (tmp_path / "run").mkdir()
    async with running_bot(folder, tmp_path / "run", [APPROVER]) as bot:
        await bot.command("errores al guardar pedidos")
        inv = await bot.settled(State.WAITING_FOR_OPERATOR)
        root = (await bot.shown.all_for(inv.id))["root"]
        answer = f"era {commit}"
        await expect_refusal(
            bot,
            inv.id,
            MALLORY,
            "approvers or the requester",
            lambda: reply(bot, answer, root.ts, MALLORY, TEAM, CHANNEL),
        )
        await expect_refusal(
            bot,
            inv.id,
            REQUESTER,
            "another workspace",
            lambda: reply(bot, answer, root.ts, REQUESTER, "T0OTHER", CHANNEL),
        )
        # The same thread ts in another channel is not our thread: nothing happens.
        before = snapshot(await bot.store.load(inv.id))
        await reply(bot, answer, root.ts, REQUESTER, TEAM, "C0ELSEWHERE")
        await reply(bot, answer, root.ts, REQUESTER, TEAM, CHANNEL)
        done = await wait_until(bot, lambda i: i.state is State.COMPLETED, inv.id, timeout=20)
        assert done.diagnosis.suspect.commit == commit
        assert before[0] < done.version
        answers = [m.content for m in done.messages if m.name == "ask_clarification"]
        assert answers == [answer]  # the refused replies were never taken in
