"""The network-edge fakes, driven by the real clients: slack_sdk's AsyncWebClient and aiohttp."""

from __future__ import annotations

import asyncio
import json
import types
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import aiohttp
import pytest
from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry import builtin_async_handlers
from slack_sdk.http_retry.async_handler import AsyncRetryHandler
from slack_sdk.http_retry.builtin_async_handlers import (
    AsyncConnectionErrorRetryHandler,
    AsyncRateLimitErrorRetryHandler,
    AsyncServerErrorRetryHandler,
)
from slack_sdk.http_retry.builtin_interval_calculators import FixedValueRetryIntervalCalculator
from slack_sdk.web.async_client import AsyncWebClient

from tests.fakes.github import FakeGitHub
from tests.fakes.slack import FakeSlack

NO_WAIT = FixedValueRetryIntervalCalculator(0.0)


@pytest.fixture
async def slack() -> AsyncIterator[FakeSlack]:
    async with FakeSlack() as fake:
        yield fake


@pytest.fixture
def no_jitter(monkeypatch: pytest.MonkeyPatch) -> None:
    """AsyncRateLimitErrorRetryHandler sleeps Retry-After + random.random(); drop the jitter."""
    monkeypatch.setattr(builtin_async_handlers, "random", types.SimpleNamespace(random=lambda: 0.0))


def web_client(
    slack: FakeSlack, *, token: str | None = "xoxb-test", handlers: list[AsyncRetryHandler]
) -> AsyncWebClient:
    return AsyncWebClient(token=token, base_url=slack.api_url, retry_handlers=handlers)


# ---------------------------------------------------------------------------------- Slack


async def test_rate_limited_post_is_retried_and_stored_once(slack: FakeSlack, no_jitter) -> None:
    slack.fail_next("chat.postMessage", status=429, retry_after=0)
    client = web_client(slack, handlers=[AsyncRateLimitErrorRetryHandler(max_retry_count=1)])

    resp = await client.chat_postMessage(channel="C1", text="hello")

    assert resp["ok"] is True
    assert resp["channel"] == "C1"
    assert [m["text"] for m in slack.messages("C1")] == ["hello"]
    assert [c.method for c in slack.calls] == ["chat.postMessage", "chat.postMessage"]


async def test_rate_limit_answer_has_the_real_shape(slack: FakeSlack) -> None:
    slack.fail_next("chat.postMessage", retry_after=7)
    client = web_client(slack, handlers=[])

    with pytest.raises(SlackApiError) as exc:
        await client.chat_postMessage(channel="C1", text="hello")

    assert exc.value.response.status_code == 429
    assert exc.value.response.headers["Retry-After"] == "7"
    assert exc.value.response["error"] == "ratelimited"
    assert slack.messages("C1") == []


async def test_server_error_is_retried(slack: FakeSlack) -> None:
    slack.fail_next("chat.postMessage", status=500)
    handler = AsyncServerErrorRetryHandler(max_retry_count=1, interval_calculator=NO_WAIT)
    client = web_client(slack, handlers=[handler])

    resp = await client.chat_postMessage(channel="C1", text="hello")

    assert resp["ok"] is True
    assert len(slack.messages("C1")) == 1
    assert len(slack.calls_to("chat.postMessage")) == 2


async def test_error_fault_answers_200_not_ok_and_applies_nothing(slack: FakeSlack) -> None:
    slack.fail_next("chat.postMessage", error="channel_not_found", count=2)
    client = web_client(slack, handlers=[])

    for _ in range(2):
        with pytest.raises(SlackApiError) as exc:
            await client.chat_postMessage(channel="C1", text="hello")
        assert exc.value.response.status_code == 200
        assert exc.value.response["error"] == "channel_not_found"
    await client.chat_postMessage(channel="C1", text="hello")
    assert len(slack.messages("C1")) == 1


async def test_wrong_or_missing_token(slack: FakeSlack) -> None:
    with pytest.raises(SlackApiError) as exc:
        await web_client(slack, token="xoxb-wrong", handlers=[]).auth_test()
    assert exc.value.response["error"] == "invalid_auth"

    with pytest.raises(SlackApiError) as exc:
        await web_client(slack, token=None, handlers=[]).chat_postMessage(channel="C1", text="x")
    assert exc.value.response["error"] == "not_authed"
    assert slack.messages("C1") == []


async def test_auth_test_shape(slack: FakeSlack) -> None:
    resp = await web_client(slack, handlers=[]).auth_test()
    assert resp["user_id"] == slack.bot_user_id
    assert resp["bot_id"] == slack.bot_id
    assert resp["team_id"] == slack.team_id


async def test_thread_with_metadata_and_pagination(slack: FakeSlack) -> None:
    client = web_client(slack, handlers=[])
    root = await client.chat_postMessage(
        channel="C1",
        text="incident",
        blocks=[{"type": "section", "text": {"type": "mrkdwn", "text": "*incident*"}}],
        metadata={"event_type": "incident_opened", "event_payload": {"id": "inc-1"}},
    )
    replies = []
    for i in range(3):
        r = await client.chat_postMessage(
            channel="C1",
            thread_ts=root["ts"],
            text=f"update {i}",
            metadata={"event_type": "incident_update", "event_payload": {"n": i}},
            reply_broadcast=(i == 2),
        )
        replies.append(r)

    tss = [root["ts"], *(r["ts"] for r in replies)]
    assert tss == sorted(tss, key=float) and len(set(tss)) == 4
    assert replies[0]["message"]["thread_ts"] == root["ts"]

    full = await client.conversations_replies(
        channel="C1", ts=root["ts"], include_all_metadata=True
    )
    messages = full["messages"]
    assert [m["ts"] for m in messages] == tss
    assert messages[0]["metadata"] == {
        "event_type": "incident_opened",
        "event_payload": {"id": "inc-1"},
    }
    assert messages[0]["reply_count"] == 3
    assert messages[0]["blocks"][0]["type"] == "section"
    assert [m["metadata"]["event_payload"]["n"] for m in messages[1:]] == [0, 1, 2]
    assert messages[3]["subtype"] == "thread_broadcast"
    assert full["has_more"] is False

    plain = await client.conversations_replies(channel="C1", ts=replies[1]["ts"])
    assert [m["ts"] for m in plain["messages"]] == tss  # a reply's ts resolves to its thread
    assert all("metadata" not in m for m in plain["messages"])

    pages = []
    async for page in await client.conversations_replies(channel="C1", ts=root["ts"], limit=3):
        pages.append([m["ts"] for m in page["messages"]])
    assert pages == [tss[:3], tss[3:]]
    assert [m["ts"] for m in slack.thread("C1", root["ts"])] == tss

    with pytest.raises(SlackApiError) as exc:
        await client.conversations_replies(channel="C1", ts="1.000000")
    assert exc.value.response["error"] == "thread_not_found"


async def test_dropped_response_is_applied(slack: FakeSlack) -> None:
    client = web_client(slack, handlers=[])
    root = await client.chat_postMessage(channel="C1", text="root")
    slack.drop_response_next("chat.postMessage")

    with pytest.raises(aiohttp.ServerDisconnectedError):
        await client.chat_postMessage(channel="C1", thread_ts=root["ts"], text="lost answer")

    assert [m["text"] for m in slack.thread("C1", root["ts"])] == ["root", "lost answer"]


async def test_a_post_stored_then_failed_is_in_the_thread_with_its_metadata(
    slack: FakeSlack,
) -> None:
    client = web_client(slack, handlers=[])
    root = await client.chat_postMessage(channel="C1", text="root")
    slack.fail_after_apply_next("chat.postMessage")
    meta = {"event_type": "t", "event_payload": {"key": "k"}}

    with pytest.raises(SlackApiError) as exc:
        await client.chat_postMessage(
            channel="C1", thread_ts=root["ts"], text="kept", metadata=meta
        )

    assert exc.value.response.status_code == 500
    assert exc.value.response["error"] == "fatal_error"
    replies = await client.conversations_replies(
        channel="C1", ts=root["ts"], include_all_metadata=True
    )
    assert [m.get("metadata") for m in replies["messages"]] == [None, meta]


async def test_a_post_can_hang_then_lose_its_answer(slack: FakeSlack) -> None:
    client = web_client(slack, handlers=[])
    slack.hang_then_drop_next("chat.postMessage", delay=0.2)
    started = asyncio.get_running_loop().time()

    with pytest.raises(aiohttp.ServerDisconnectedError):
        await client.chat_postMessage(channel="C1", text="kept")

    assert asyncio.get_running_loop().time() - started >= 0.2
    assert [m["text"] for m in slack.messages("C1")] == ["kept"]


async def test_a_slow_answer_comes_late_and_whole(slack: FakeSlack) -> None:
    client = web_client(slack, handlers=[])
    slack.slow_next("auth.test", delay=0.2)
    started = asyncio.get_running_loop().time()

    assert (await client.auth_test())["user_id"] == slack.bot_user_id
    assert asyncio.get_running_loop().time() - started >= 0.2


async def test_connection_retry_handler_duplicates_a_post_whose_answer_was_lost(
    slack: FakeSlack,
) -> None:
    """slack_sdk's default handler retries on a disconnect: a non-idempotent post lands twice."""
    handler = AsyncConnectionErrorRetryHandler(max_retry_count=1, interval_calculator=NO_WAIT)
    client = web_client(slack, handlers=[handler])
    slack.drop_response_next("chat.postMessage")

    await client.chat_postMessage(channel="C1", text="once?")

    assert [m["text"] for m in slack.messages("C1")] == ["once?", "once?"]


async def test_form_encoded_request_and_token_field(slack: FakeSlack) -> None:
    blocks = [{"type": "section", "text": {"type": "plain_text", "text": "hi"}}]
    async with aiohttp.ClientSession() as session:
        form = {"token": "xoxb-test", "channel": "C9", "text": "hi", "blocks": json.dumps(blocks)}
        async with session.post(slack.api_url + "chat.postMessage", data=form) as resp:
            body = await resp.json()
        async with session.post(slack.api_url + "auth.test", data={"token": "nope"}) as resp:
            denied = await resp.json()
        async with session.post(slack.api_url + "no.suchMethod", data={"token": "x"}) as resp:
            unknown = await resp.json()

    assert body["ok"] is True and body["message"]["blocks"] == blocks
    assert slack.calls_to("chat.postMessage")[0] == {
        "channel": "C9",
        "text": "hi",
        "blocks": blocks,
    }
    assert denied == {"ok": False, "error": "invalid_auth"}
    assert unknown["error"] == "unknown_method"


async def test_other_methods(slack: FakeSlack) -> None:
    client = web_client(slack, handlers=[])
    posted = await client.chat_postMessage(channel="C1", text="v1")
    reply = await client.chat_postMessage(channel="C1", thread_ts=posted["ts"], text="r")

    updated = await client.chat_update(channel="C1", ts=posted["ts"], text="v2")
    assert updated["ts"] == posted["ts"] and updated["message"]["text"] == "v2"
    assert slack.messages("C1")[0]["text"] == "v2"

    eph = await client.chat_postEphemeral(channel="C1", user="U1", text="only you")
    assert (
        slack.ephemerals[0]["user"] == "U1"
        and slack.ephemerals[0]["message_ts"] == eph["message_ts"]
    )

    link = await client.chat_getPermalink(channel="C1", message_ts=reply["ts"])
    assert link["permalink"].endswith(f"?thread_ts={posted['ts']}&cid=C1")

    await client.reactions_add(channel="C1", name="eyes", timestamp=posted["ts"])
    assert slack.messages("C1")[0]["reactions"] == [
        {"name": "eyes", "users": [slack.bot_user_id], "count": 1}
    ]
    with pytest.raises(SlackApiError) as exc:
        await client.reactions_add(channel="C1", name="eyes", timestamp=posted["ts"])
    assert exc.value.response["error"] == "already_reacted"

    user = await client.users_info(user="U1")
    assert user["user"]["id"] == "U1" and user["user"]["tz"]

    modal = {"type": "modal", "title": {"type": "plain_text", "text": "T"}, "blocks": []}
    opened = await client.views_open(trigger_id="123.456", view=modal)
    view_id = opened["view"]["id"]
    again = await client.views_update(view_id=view_id, hash=opened["view"]["hash"], view=modal)
    assert again["view"]["id"] == view_id and again["view"]["hash"] != opened["view"]["hash"]
    with pytest.raises(SlackApiError) as exc:
        await client.views_update(view_id=view_id, hash=opened["view"]["hash"], view=modal)
    assert exc.value.response["error"] == "hash_conflict"

    await client.views_publish(user_id="U1", view={"type": "home", "blocks": []})
    assert slack.home_tabs["U1"]["type"] == "home"


async def test_wait_for_wakes_on_calls(slack: FakeSlack) -> None:
    client = web_client(slack, handlers=[])

    async def later() -> None:
        await asyncio.sleep(0.01)
        await client.chat_postMessage(channel="C1", text="done")

    task = asyncio.create_task(later())
    await slack.wait_for(lambda s: len(s.messages("C1")) == 1, timeout=2)
    await task

    with pytest.raises(TimeoutError, match=r"chat\.postMessage"):
        await slack.wait_for(lambda s: len(s.messages("C1")) == 2, timeout=0.05)


async def test_seeded_human_thread(slack: FakeSlack) -> None:
    root = slack.add_message("C1", "checkout is down", user="U42")
    slack.add_message("C1", "since 10:02", user="U42", thread_ts=root["ts"])
    client = web_client(slack, handlers=[])
    await client.chat_postMessage(channel="C1", thread_ts=root["ts"], text="looking")

    resp = await client.conversations_replies(channel="C1", ts=root["ts"])
    messages = resp["messages"]
    assert [m["user"] for m in messages] == ["U42", "U42", slack.bot_user_id]
    assert "bot_id" not in messages[0] and messages[2]["bot_id"] == slack.bot_id
    assert messages[0]["reply_users"] == ["U42", slack.bot_user_id]
    assert slack.calls_to("conversations.replies") == [{"channel": "C1", "ts": root["ts"]}]


async def test_restricted_channels() -> None:
    async with FakeSlack(channels=["C1"]) as slack:
        client = web_client(slack, handlers=[])
        await client.chat_postMessage(channel="C1", text="ok")
        with pytest.raises(SlackApiError) as exc:
            await client.chat_postMessage(channel="C2", text="no")
        assert exc.value.response["error"] == "channel_not_found"


# ---------------------------------------------------------------------------------- GitHub

TOKEN = "ghs-test"
REPO = "acme/shop"


@pytest.fixture
async def github() -> AsyncIterator[FakeGitHub]:
    async with FakeGitHub(token=TOKEN, repos=[REPO]) as fake:
        yield fake


@pytest.fixture
async def session() -> AsyncIterator[aiohttp.ClientSession]:
    headers = {"Authorization": f"Bearer {TOKEN}", "Accept": "application/vnd.github+json"}
    async with aiohttp.ClientSession(headers=headers) as s:
        yield s


async def create(session: aiohttp.ClientSession, github: FakeGitHub, **body: object):
    url = f"{github.api_url}/repos/{REPO}/issues"
    async with session.post(url, json={"title": "t", **body}) as resp:
        return resp.status, await resp.json()


async def test_create_issue(github: FakeGitHub, session: aiohttp.ClientSession) -> None:
    status, issue = await create(session, github, title="Boom", body="b", labels=["incident"])

    assert status == 201
    assert issue["number"] == 1 and issue["title"] == "Boom" and issue["state"] == "open"
    assert issue["html_url"] == f"https://github.com/{REPO}/issues/1"
    assert issue["url"] == f"{github.api_url}/repos/{REPO}/issues/1"
    assert [label["name"] for label in issue["labels"]] == ["incident"]
    assert issue["user"]["login"] == "incident-bot[bot]"
    assert datetime.fromisoformat(issue["created_at"]).tzinfo is not None
    assert github.issues[REPO][0]["id"] == issue["id"]
    assert github.calls_to("create_issue")[0].body["title"] == "Boom"


async def test_a_token_is_refused_the_writes_it_may_not_make_before_the_body_is_read(
    github: FakeGitHub, session: aiohttp.ClientSession
) -> None:
    url = f"{github.api_url}/repos/{REPO}/issues"
    async with session.post(url, json={}) as resp:  # allowed: then the missing title
        assert resp.status == 422 and "X-OAuth-Scopes" not in resp.headers
    github.grants["issues"] = "read"  # a fine-grained token that may only read issues
    async with session.post(url, json={}) as resp:
        assert resp.status == 403
        assert resp.headers["X-Accepted-GitHub-Permissions"] == "issues=write"
    github.scopes = ["public_repo"]  # a classic token: a private repository is not seen
    async with session.get(f"{github.api_url}/repos/{REPO}") as resp:
        assert resp.status == 404 and resp.headers["X-OAuth-Scopes"] == "public_repo"
    github.private = False
    async with session.get(f"{github.api_url}/repos/{REPO}") as resp:
        assert resp.status == 200 and (await resp.json())["private"] is False
    assert (await create(session, github))[0] == 201
    github.scopes = ["read:org"]
    assert (await create(session, github))[0] == 404
    assert len(github.issues[REPO]) == 1


async def test_list_by_creator_and_since(
    github: FakeGitHub, session: aiohttp.ClientSession
) -> None:
    t0 = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
    github.add_issue(REPO, "old", created_at=t0 - timedelta(days=2))
    github.add_issue(REPO, "someone else", creator="octocat", created_at=t0)
    github.add_issue(REPO, "closed", state="closed", created_at=t0)
    github.clock = lambda: t0 + timedelta(hours=1)
    await create(session, github, title="new")

    params = {"creator": "incident-bot[bot]", "since": "2024-05-01T00:00:00Z", "state": "all"}
    async with session.get(f"{github.api_url}/repos/{REPO}/issues", params=params) as resp:
        assert resp.status == 200
        titles = [i["title"] for i in await resp.json()]
    assert titles == ["new", "closed"]  # sort=created, direction=desc

    params = {"per_page": "2", "page": "1", "state": "all"}
    async with session.get(f"{github.api_url}/repos/{REPO}/issues", params=params) as resp:
        assert len(await resp.json()) == 2
        assert 'rel="next"' in resp.headers["Link"]


async def test_issue_updates(github: FakeGitHub, session: aiohttp.ClientSession) -> None:
    _, issue = await create(session, github, labels=["a"])
    url = issue["url"]

    async with session.post(f"{url}/labels", json={"labels": ["b"]}) as resp:
        assert [label["name"] for label in await resp.json()] == ["a", "b"]
    async with session.delete(f"{url}/labels/a") as resp:
        assert [label["name"] for label in await resp.json()] == ["b"]
    async with session.delete(f"{url}/labels/zzz") as resp:
        assert resp.status == 404
    async with session.post(f"{url}/comments", json={"body": "seen again"}) as resp:
        assert resp.status == 201
        assert (await resp.json())["body"] == "seen again"
    async with session.patch(url, json={"state": "closed", "state_reason": "not_planned"}) as resp:
        closed = await resp.json()
    assert closed["state"] == "closed" and closed["state_reason"] == "not_planned"
    assert closed["closed_at"] is not None and closed["comments"] == 1
    async with session.get(url) as resp:
        assert (await resp.json())["state"] == "closed"
    async with session.get(f"{github.api_url}/user") as resp:
        assert (await resp.json())["login"] == "incident-bot[bot]"


async def test_auth_and_not_found(github: FakeGitHub) -> None:
    async with aiohttp.ClientSession() as s:
        for auth in (None, "Bearer nope", "token nope"):
            headers = {"Authorization": auth} if auth else {}
            async with s.get(f"{github.api_url}/user", headers=headers) as resp:
                assert resp.status == 401
                assert (await resp.json())["message"] == "Bad credentials"
        headers = {"Authorization": f"token {TOKEN}"}
        async with s.get(f"{github.api_url}/repos/acme/nope/issues", headers=headers) as resp:
            assert resp.status == 404
            assert (await resp.json())["message"] == "Not Found"
        async with s.get(f"{github.api_url}/repos/{REPO}/issues/99", headers=headers) as resp:
            assert resp.status == 404


async def test_fail_next(github: FakeGitHub, session: aiohttp.ClientSession) -> None:
    github.fail_next("create_issue", status=502)
    status, _ = await create(session, github)
    assert status == 502
    assert github.issues[REPO] == []
    status, _ = await create(session, github)
    assert status == 201


async def test_timeout_after_apply(github: FakeGitHub, session: aiohttp.ClientSession) -> None:
    github.timeout_after_apply_next("create_issue", delay=30)
    with pytest.raises(TimeoutError):
        async with session.post(
            f"{github.api_url}/repos/{REPO}/issues",
            json={"title": "slow"},
            timeout=aiohttp.ClientTimeout(total=0.2),
        ):
            pass
    assert [i["title"] for i in github.issues[REPO]] == ["slow"]


async def test_drop_next(github: FakeGitHub, session: aiohttp.ClientSession) -> None:
    github.drop_next("create_issue")
    with pytest.raises(aiohttp.ServerDisconnectedError):
        await create(session, github)
    assert github.issues[REPO] == []


async def test_drop_after_apply(github: FakeGitHub, session: aiohttp.ClientSession) -> None:
    github.drop_after_apply_next("create_issue")
    with pytest.raises(aiohttp.ServerDisconnectedError):
        await create(session, github, title="applied")
    assert [i["title"] for i in github.issues[REPO]] == ["applied"]
    await github.wait_for(lambda g: len(g.calls_to("create_issue")) == 1, timeout=1)


async def test_comments_are_listed_and_faults_can_be_forgotten(
    github: FakeGitHub, session: aiohttp.ClientSession
) -> None:
    _, issue = await create(session, github)
    for text in ("one", "two"):
        async with session.post(f"{issue['url']}/comments", json={"body": text}) as resp:
            assert resp.status == 201
    async with session.get(f"{issue['url']}/comments", params={"per_page": "1"}) as resp:
        assert [c["body"] for c in await resp.json()] == ["one"]
    async with session.get(f"{issue['url']}/comments") as resp:
        assert [c["body"] for c in await resp.json()] == ["one", "two"]
    assert github.calls_to("list_comments")[0].query == {"per_page": "1"}
    github.fail_next("create_issue", status=502)
    github.clear_faults()
    github.add_repo("acme/other")
    async with session.post(f"{github.api_url}/repos/acme/other/issues", json={"title": "x"}) as r:
        assert r.status == 201
