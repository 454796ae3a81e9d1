"""The publication's thread message and the root's link, inside Slack's limits: a long
compensation log, planted mrkdwn in a failure reason, the two questions after a lost
answer, and nothing said while there is nothing to say."""

from __future__ import annotations

import json

from agent.domain import LogEntry, StepRecord
from bot.slack import blocks as B
from tests.bot.test_blocks import buttons, check_message, completed, mrkdwn

URL = "https://github.com/acme/orders/issues/7"


def approved():
    inv = completed()
    assert inv.draft is not None
    inv.approve(approver="U0APPROVER", version=1, hash=inv.draft.hash, idempotency_key="k")
    assert inv.approval is not None
    return inv, inv.approval


def test_nothing_is_said_before_the_issue_exists_then_the_link_in_thread_and_root():
    inv, a = approved()
    assert B.publish_message(inv, a) is None and B.issue_link(inv) is None
    a.issue_number, a.issue_url = 7, URL
    msg = check_message(B.publish_message(inv, a))
    assert f"<{URL}|acme/orders#7>" in mrkdwn(msg) and "<@U0APPROVER>" in mrkdwn(msg)
    assert f"<{URL}|acme/orders#7>" in mrkdwn(check_message(B.root_message(inv)))
    a.rolling_back = True  # the link is withdrawn while the rollback runs
    assert URL not in mrkdwn(check_message(B.root_message(inv)))
    assert "being rolled back" in mrkdwn(check_message(B.publish_message(inv, a)))


def test_a_rollback_shows_its_log_however_long_and_escapes_the_reason():
    inv, a = approved()
    a.issue_number, a.issue_url = 7, URL
    for i in range(200):
        a.log.append(
            LogEntry(step=f"step{i}", action="compensate", outcome="done", detail="x" * 300)
        )
    inv.approval_ended("rolled back", "add_labels failed: <!channel> 422")
    msg = check_message(B.publish_message(inv, inv.past_approvals[0]))
    text = mrkdwn(msg)
    assert "rolled back" in text and "&lt;!channel&gt;" in text and "<!channel>" not in text
    assert "undo step199" in text  # the newest entries are the ones shown
    draft = mrkdwn(check_message(B.draft_message(inv)))
    assert "Publishing was rolled back" in draft
    assert set(buttons(check_message(B.draft_message(inv)))) >= {"draft_approve"}


def test_a_lost_answer_asks_to_look_again_or_to_create_anyway():
    inv, a = approved()
    a.creates_sent, a.lookup = 1, "failed"
    inv.publish_unknown("create the issue: GitHub did not answer")
    looking = check_message(B.publish_message(inv, a))
    assert set(buttons(looking)) == {"draft_approve"}
    a.lookup = "nothing"
    asking = check_message(B.publish_message(inv, a))
    (anyway,) = buttons(asking).values()
    assert anyway["action_id"] == B.ACTION_CREATE_ANYWAY and "confirm" in anyway
    assert '"creates":1' in anyway["value"] and "<@U0APPROVER>" in mrkdwn(asking)


def test_a_published_draft_says_which_side_steps_were_not_done():
    inv, a = approved()
    a.issue_number, a.issue_url = 7, URL
    a.steps = {
        "create_issue": StepRecord(name="create_issue", status="done"),
        "add_labels": StepRecord(
            name="add_labels", status="not_done", detail="add labels: GitHub refused (422) <!here>"
        ),
        "slack_link": StepRecord(name="slack_link", status="not_done", detail="fatal_error"),
        "sentry_note": StepRecord(name="sentry_note", status="not_done", detail="x" * 600),
    }
    inv.published(7, URL)
    draft = mrkdwn(check_message(B.published_message(inv, URL, 7)))
    thread = mrkdwn(check_message(B.publish_message(inv, a)))
    for text in (draft, thread):
        assert "Published as" in text and "not everything was done" in text
        assert "the label could not be added: add labels: GitHub refused (422)" in text
        assert "&lt;!here&gt;" in text and "<!here>" not in text
        assert "the Sentry issue could not be noted" in text
        # The message is in the thread: the Slack link is not reported as missing there.
        assert "Slack thread could not be updated" not in text
    # The thread message has the button that runs them again: an approval of the same draft.
    (retry,) = buttons(check_message(B.publish_message(inv, a))).values()
    assert retry["action_id"] == B.ACTION_DRAFT_APPROVE
    assert json.loads(retry["value"]) == B.draft_ref(inv)
    a.steps["add_labels"] = StepRecord(name="add_labels", status="done")
    a.steps["sentry_note"] = StepRecord(name="sentry_note", status="done")
    assert "not everything" not in mrkdwn(check_message(B.published_message(inv, URL, 7)))
    assert "not everything" not in mrkdwn(check_message(B.publish_message(inv, a)))
    assert buttons(check_message(B.publish_message(inv, a))) == {}
