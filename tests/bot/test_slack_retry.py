"""The Web API client's retry policy (bot.slack.retry) against the fake Slack over HTTP:
a rate limit is waited out for any call; an unknown outcome re-sends reads and idempotent
writes only, never a post or a modal."""

from __future__ import annotations

from collections.abc import AsyncIterator

import aiohttp
import pytest
from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry.builtin_interval_calculators import FixedValueRetryIntervalCalculator
from slack_sdk.web.async_client import AsyncWebClient

from bot.slack.retry import SlackRetry
from tests.fakes.slack import FakeSlack


@pytest.fixture
async def slack() -> AsyncIterator[FakeSlack]:
    async with FakeSlack() as fake:
        yield fake


def client(slack: FakeSlack) -> AsyncWebClient:
    retry = SlackRetry(interval_calculator=FixedValueRetryIntervalCalculator(0.0))
    return AsyncWebClient(token="xoxb-test", base_url=slack.api_url, retry_handlers=[retry])


async def test_a_post_kept_by_slack_is_not_sent_again_after_a_500(slack):
    slack.fail_after_apply_next("chat.postMessage")
    with pytest.raises(SlackApiError) as exc:
        await client(slack).chat_postMessage(channel="C1", text="once")
    assert exc.value.response.status_code == 500
    assert [m["text"] for m in slack.messages("C1")] == ["once"]
    assert len(slack.calls_to("chat.postMessage")) == 1


@pytest.mark.parametrize("fault", ["drop", "hang then drop", "internal_error"])
async def test_a_post_whose_answer_was_lost_is_not_sent_again(slack, fault):
    if fault == "internal_error":  # Slack's 200 that cannot say whether it posted
        slack.fail_after_apply_next("chat.postMessage", status=200, error="internal_error")
    else:
        slack.hang_then_drop_next("chat.postMessage", delay=0.2 if "hang" in fault else 0)
    with pytest.raises((SlackApiError, aiohttp.ClientError)):
        await client(slack).chat_postMessage(channel="C1", text="once")
    assert len(slack.messages("C1")) == 1 and len(slack.calls_to("chat.postMessage")) == 1


async def test_a_rate_limited_post_is_sent_again_slack_did_nothing(slack):
    slack.fail_next("chat.postMessage", status=429, retry_after=0, count=2)
    await client(slack).chat_postMessage(channel="C1", text="once")
    assert [m["text"] for m in slack.messages("C1")] == ["once"]
    assert len(slack.calls_to("chat.postMessage")) == 3


async def test_a_rate_limit_longer_than_the_longest_wait_is_the_callers(slack):
    slack.fail_next("auth.test", status=429, retry_after=600)
    with pytest.raises(SlackApiError) as exc:
        await client(slack).auth_test()
    assert exc.value.response["error"] == "ratelimited"
    assert len(slack.calls_to("auth.test")) == 1


async def test_a_modal_is_not_opened_again_after_a_500(slack):
    slack.fail_after_apply_next("views.open")
    with pytest.raises(SlackApiError):
        await client(slack).views_open(trigger_id="t.1", view={"type": "modal", "blocks": []})
    assert len(slack.views) == 1 and len(slack.calls_to("views.open")) == 1


async def test_reads_and_idempotent_writes_are_sent_again_on_an_unknown_outcome(slack):
    web = client(slack)
    posted = await web.chat_postMessage(channel="C1", text="v1")
    slack.fail_after_apply_next("chat.update", status=503)
    slack.drop_response_next("conversations.replies")
    slack.fail_next("usergroups.users.list", status=500)
    slack.fail_next("auth.test", status=502)
    slack.fail_after_apply_next("chat.postEphemeral")  # at least once: see bot.slack.retry
    slack.usergroups["S1"] = ["U1"]

    await web.chat_update(channel="C1", ts=posted["ts"], text="v2")
    replies = await web.conversations_replies(channel="C1", ts=posted["ts"])
    members = await web.usergroups_users_list(usergroup="S1")
    me = await web.auth_test()
    await web.chat_postEphemeral(channel="C1", user="U1", text="only you")

    assert [m["text"] for m in slack.messages("C1")] == ["v2"]
    assert [m["text"] for m in replies["messages"]] == ["v2"]
    assert members["users"] == ["U1"] and me["user_id"] == slack.bot_user_id
    for method in ("chat.update", "conversations.replies", "usergroups.users.list", "auth.test"):
        assert len(slack.calls_to(method)) == 2, method
    assert len(slack.ephemerals) == 2  # shown twice rather than lost


async def test_a_timed_out_post_is_not_sent_again_a_timed_out_read_is(slack):
    web = client(slack)
    web.timeout = 0.3  # seconds; the fake answers nothing for 1 s, then drops the connection
    slack.hang_then_drop_next("chat.postMessage", delay=1.0)
    with pytest.raises(TimeoutError):
        await web.chat_postMessage(channel="C1", text="once")
    slack.hang_then_drop_next("conversations.history", delay=1.0)
    history = await web.conversations_history(channel="C1")
    assert [m["text"] for m in history["messages"]] == ["once"]
    assert len(slack.calls_to("chat.postMessage")) == 1
    assert len(slack.calls_to("conversations.history")) == 2


async def test_an_unknown_outcome_is_retried_three_times_a_rate_limit_five(slack):
    web = client(slack)
    slack.fail_next("auth.test", status=500, count=10)
    with pytest.raises(SlackApiError):
        await web.auth_test()
    slack.clear_faults()
    slack.fail_next("chat.postMessage", status=429, retry_after=0, count=10)
    with pytest.raises(SlackApiError):
        await web.chat_postMessage(channel="C1", text="x")
    assert len(slack.calls_to("auth.test")) == 4
    assert len(slack.calls_to("chat.postMessage")) == 6
