"""Publishing as the Slack thread shows it, end to end: signed requests into the real Bolt
app, the real worker, saga and thread sync, the fake Slack Web API and the fake GitHub
REST API. A refused create says so on the draft; a lost answer that no lookup can settle
asks for "Create anyway", which only an approver can use; once published, the thread has
a link and the root message shows it. Side steps that fail after the issue exists leave
it published, the thread says which, and approving again finishes them."""

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
    built_scenarios, tmp_path
):
    async with running_bot(built_scenarios["orders"], tmp_path, [APPROVER]) as bot:
        await bot.command("errores al guardar pedidos")
        inv = await bot.settled(State.COMPLETED)
        repo = inv.scope.repository
        draft = {"investigation_id": inv.id, "version": 1, "hash": inv.draft.hash}

        # 1. GitHub refuses the create (the pivot): nothing exists, the draft is approvable.
        bot.github.fail_next("create_issue", status=422)
        await bot.action("draft_approve", draft, APPROVER)
        refused = await wait_until(
            bot, lambda i: i.state is State.COMPLETED and i.past_approvals, inv.id, timeout=20
        )
        assert refused.past_approvals[0].outcome == "refused"
        assert bot.github.issues[repo] == []
        await bot.slack.wait_for(lambda s: says(s, "draft", "Publishing was refused"), timeout=10)

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
        (issue,) = bot.github.issues[repo]
        assert issue["state"] == "open"
        url = issue["html_url"]
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
        assert len(bot.github.issues[repo]) == 1
        assert len(bot.keys()) == len(set(bot.keys()))  # nothing posted twice


async def test_labels_and_the_slack_link_that_fail_leave_the_issue_published_until_approved_again(
    built_scenarios, tmp_path
):
    async with running_bot(built_scenarios["orders"], tmp_path, [APPROVER]) as bot:
        await bot.command("errores al guardar pedidos")
        inv = await bot.settled(State.COMPLETED)
        repo = inv.scope.repository
        draft = {"investigation_id": inv.id, "version": 1, "hash": inv.draft.hash}
        await bot.slack.wait_for(lambda s: item(s, "draft") is not None, timeout=10)

        # GitHub refuses the labels and Slack refuses every update of the thread.
        bot.github.fail_next("add_labels", status=422)
        for method in ("chat.update", "chat.postMessage"):
            bot.slack.fail_next(method, error="not_in_channel", count=1000)
        await bot.action("draft_approve", draft, APPROVER)
        done = await bot.settled(State.PUBLISHED)
        a = done.approval
        assert [s.name for s in a.not_done()] == ["add_labels", "slack_link"]
        assert "not_in_channel" in a.steps["slack_link"].detail
        assert a.reason.startswith("published; the label could not be added: add labels: ")
        (issue,) = bot.github.issues[repo]
        assert issue["state"] == "open" and issue["labels"] == []
        assert bot.github.comments.get((repo, issue["number"]), []) == []  # never withdrawn
        assert bot.github.calls_to("update_issue") == []

        # Slack is back: the thread catches up by itself and says what was not done.
        bot.slack.clear_faults()
        url = issue["html_url"]
        await bot.slack.wait_for(
            lambda s: (
                says(s, "publish:0", url, "the label could not be added")
                and says(s, "draft", "Published as", "the label could not be added")
                and says(s, "root", url)
            ),
            timeout=10,
        )

        # The thread's Retry (an approval of the same draft) finishes the side steps, once.
        retry = json.loads(button(bot.slack, "draft_approve"))
        assert retry == draft
        await bot.action("draft_approve", retry, APPROVER)
        finished = await wait_until(bot, lambda i: i.approval.not_done() == [], inv.id, timeout=10)
        assert finished.state is State.PUBLISHED and finished.approval.reason is None
        assert [x["name"] for x in bot.github.issues[repo][0]["labels"]] == ["incident-bot"]
        assert len(bot.github.calls_to("create_issue")) == 1
        await bot.slack.wait_for(
            lambda s: (
                says(s, "publish:0", url)
                and "not everything" not in json.dumps(item(s, "publish:0"))
                and "not everything" not in json.dumps(item(s, "draft"))
            ),
            timeout=10,
        )
        assert len(bot.keys()) == len(set(bot.keys()))  # nothing posted twice
