"""Publishing as the Slack thread shows it, end to end: signed requests into the real Bolt
app, the real worker, saga and thread sync, the fake Slack Web API and the fake GitHub
REST API. A rollback shows its compensation log in the thread; a lost answer that no
lookup can settle asks for "Create anyway", which only an approver can use; once
published, the thread has a link and the root message shows it."""

from __future__ import annotations

import json
from typing import Any

from agent.domain import State
from tests.bot.test_slack import (
    APPROVER,
    CHANNEL,
    REQUESTER,
    bot_key,
    button,
    running_bot,
    wait_until,
)
from tests.fakes.slack import FakeSlack


def item(slack: FakeSlack, key: str) -> dict[str, Any] | None:
    """The thread item of ours with that key, as Slack holds it now (updates applied)."""
    return next((m for m in slack.messages(CHANNEL) if bot_key(m) == key), None)


def says(slack: FakeSlack, key: str, *texts: str) -> bool:
    message = item(slack, key)
    return message is not None and all(t in json.dumps(message) for t in texts)


async def test_a_rollback_then_a_lost_answer_then_create_anyway_then_the_link(
    built_scenarios, tmp_path, db_url
):
    async with running_bot(built_scenarios["orders"], tmp_path, [APPROVER], db_url=db_url) as bot:
        await bot.command("errores al guardar pedidos")
        inv = await bot.settled(State.COMPLETED)
        repo = inv.scope.repository
        draft = {"investigation_id": inv.id, "version": 1, "hash": inv.draft.hash}

        # 1. The labels are refused after the issue exists: the saga rolls back.
        bot.github.fail_next("add_labels", status=422)
        await bot.action("draft_approve", draft, APPROVER)
        rolled = await wait_until(
            bot, lambda i: i.state is State.COMPLETED and i.past_approvals, inv.id, timeout=20
        )
        assert rolled.past_approvals[0].outcome == "rolled back"
        (withdrawn,) = bot.github.issues[repo]
        assert withdrawn["state"] == "closed" and withdrawn["state_reason"] == "not_planned"
        await bot.slack.wait_for(
            lambda s: says(s, "publish:0", "rolled back", "undo create_issue", "add_labels"),
            timeout=10,
        )
        # The root follows within the same pass (it is updated after the thread).
        await bot.slack.wait_for(
            lambda s: withdrawn["html_url"] not in json.dumps(item(s, "root")),
            timeout=10,
        )
        log = json.dumps(item(bot.slack, "publish:0"))
        assert log.index("undo create_issue") > log.index("add_labels")

        # 2. Approved again: the create's connection drops and no issue carries the marker.
        bot.github.drop_next("create_issue")
        await bot.action("draft_approve", draft, APPROVER)
        unknown = await bot.settled(State.PUBLISH_UNKNOWN)
        assert unknown.approval.lookup == "nothing"
        await bot.slack.wait_for(lambda s: button(s, "publish_create_anyway"), timeout=10)
        assert says(bot.slack, "publish:1", f"<@{APPROVER}>", "Create anyway")
        value = json.loads(button(bot.slack, "publish_create_anyway"))
        assert value == {**draft, "creates": 1}

        # Only an approver may create anyway (and not the requester: another must approve).
        ephemerals = len(bot.slack.calls_to("chat.postEphemeral"))
        await bot.action("publish_create_anyway", value, "U0MALLORY")
        await bot.action("publish_create_anyway", value, REQUESTER)
        await bot.slack.wait_for(
            lambda s: len(s.calls_to("chat.postEphemeral")) == ephemerals + 2, timeout=5
        )
        assert (await bot.store.load(inv.id)).state is State.PUBLISH_UNKNOWN
        assert len(bot.github.calls_to("create_issue")) == 2  # never a second blind create

        await bot.action("publish_create_anyway", value, APPROVER)
        done = await bot.settled(State.PUBLISHED)
        assert done.approval.confirmed_by == [APPROVER]
        steps = [(e.step, e.outcome) for e in done.approval.log]
        assert steps[-3:] == [
            ("create_issue", "done"),
            ("add_labels", "done"),
            ("slack_link", "done"),
        ]
        issues = bot.github.issues[repo]
        assert [i["state"] for i in issues] == ["closed", "open"]
        url = issues[1]["html_url"]
        assert done.publication.url == url

        # 3. The thread has the link, and the root message shows it.
        await bot.slack.wait_for(
            lambda s: says(s, "publish:1", url, "Published as") and says(s, "root", url),
            timeout=10,
        )
        posted = next(m for m in bot.slack.messages(CHANNEL) if bot_key(m) == "publish:1")
        assert posted.get("thread_ts") == item(bot.slack, "root")["ts"]

        # A stale Create anyway click, and a repeated approval, publish nothing more.
        await bot.action("publish_create_anyway", value, APPROVER)
        await bot.action("draft_approve", draft, APPROVER)
        await bot.slack.wait_for(
            lambda s: any(url in json.dumps(c) for c in s.calls_to("chat.postEphemeral")),
            timeout=5,
        )
        assert len(bot.github.issues[repo]) == 2
        assert len(bot.keys()) == len(set(bot.keys()))  # nothing posted twice
