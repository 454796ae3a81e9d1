"""Alerts over real HTTP: Sentry's signed webhooks start investigations in the project's
alert channel, behind the gates; forged, stale and replayed deliveries change nothing."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import time
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from agent.domain import State
from bot.usecases.inbox import take_in
from tests.bot.sentry_faults import held_calls
from tests.bot.test_api import Api, running_api
from tests.fakes.slack import signed_headers

SECRET = "sentry-client-secret"
ALERTS = "C0ALERTS"
ISSUE = {
    "id": "5755875771",
    "shortId": "ORDERS-INCIDENT-DEMO-2K",
    "title": 'NullPointerException: Cannot invoke "String.strip()" because "value" is null',
    "culprit": "POST /orders",
    "level": "error",
    "web_url": "https://acme.sentry.io/issues/5755875771/",
    "project": {"id": "4644290483746556", "slug": "orders-incident-demo"},
    "firstSeen": "2026-11-28T09:14:03.218000Z",
}


def event_alert(issue_id: str, level: str = "error") -> dict[str, Any]:
    """An issue alert rule fired on one event of the issue (Sentry-Hook-Resource event_alert)."""
    event_id = uuid.uuid4().hex
    return {
        "action": "triggered",
        "installation": {"uuid": "inst-1"},
        "data": {
            "event": {
                "event_id": event_id,
                "issue_id": issue_id,
                "project": 4644290483746556,
                "level": level,
                "title": f"NullPointerException in issue {issue_id}",
                "culprit": "POST /orders",
                "web_url": f"https://acme.sentry.io/issues/{issue_id}/events/{event_id}/",
            },
            "triggered_rule": "Errors on orders",
        },
        "actor": {"type": "application", "id": "sentry", "name": "Sentry"},
    }


def delivery(
    issue: dict[str, Any] | None = None,
    *,
    resource: str = "issue",
    secret: str = SECRET,
    timestamp: float | None = None,
    request_id: str | None = None,
    payload: dict[str, Any] | None = None,
) -> tuple[bytes, dict[str, str]]:
    payload = payload or {
        "action": "created",
        "installation": {"uuid": "inst-1"},
        "data": {"issue": issue or ISSUE},
        "actor": {"type": "application", "id": "sentry", "name": "Sentry"},
    }
    body = json.dumps(payload).encode()
    headers = {
        "Content-Type": "application/json",
        "Request-ID": request_id or str(uuid.uuid4()),
        "Sentry-Hook-Resource": resource,
        "Sentry-Hook-Timestamp": str(int(timestamp if timestamp is not None else time.time())),
        "Sentry-Hook-Signature": hmac.new(secret.encode(), body, hashlib.sha256).hexdigest(),
    }
    return body, headers


async def send(api: Api, body: bytes, headers: dict[str, str]) -> tuple[int, Any]:
    """The answer; for one `accepted`, what taking it in came to (status, investigation)."""
    status, _, answer = await api.call("POST", "/hooks/sentry", None, data=body, headers=headers)
    if status == 202 and answer["status"] == "accepted":
        assert answer["delivery"] == headers["Request-ID"]
        return status, await api.outcome(answer["delivery"])
    return status, answer


@pytest.fixture
async def alerting(built_scenarios, tmp_path) -> AsyncIterator[Api]:
    async with running_api(
        built_scenarios["orders"],
        tmp_path,
        {"SENTRY_CLIENT_SECRET": SECRET},
        alert_channel=ALERTS,
        sentry_project_id="4644290483746556",
    ) as api:
        yield api


async def test_an_alert_opens_a_thread_in_the_alert_channel_and_publishes_one_issue(alerting):
    api = alerting
    status, answer = await send(api, *delivery())
    assert status == 202 and answer["status"] == "queued", answer
    inv = await api.settled(answer["investigation"], State.COMPLETED)
    assert inv.subject == "sentry:5755875771" and inv.requester is None
    assert "ORDERS-INCIDENT-DEMO-2K" in inv.question
    assert inv.origin.surface == "slack" and inv.origin.channel == ALERTS
    # The issue the alert named is the one investigated: the first evidence is about it.
    assert "5755875771" in json.dumps(inv.evidence[0].model_dump(mode="json"))
    await api.slack.wait_for(
        lambda s: any(
            (m.get("metadata") or {}).get("event_payload", {}).get("key") == "draft"
            for m in s.messages(ALERTS)
        ),
        timeout=10,
    )
    assert api.slack.messages("C0ORDERS") == []  # never in the operators' channel
    assert inv.draft is not None
    key = {"Idempotency-Key": "alert-publish"}
    body = {"draftVersion": inv.draft.version, "hash": inv.draft.hash}
    status, _, receipt = await api.call("POST", f"/investigations/{inv.id}/issue", "bob", body, key)
    assert status == 202, receipt
    await api.settled(inv.id, State.PUBLISHED)
    assert len(api.github.issues[inv.scope.repository]) == 1


async def test_forged_stale_and_replayed_deliveries_change_nothing(alerting):
    api = alerting
    body, headers = delivery()
    for bad in (
        {**headers, "Sentry-Hook-Signature": "0" * 64},
        {k: v for k, v in headers.items() if k != "Sentry-Hook-Signature"},
        delivery(secret="another-secret")[1],
        delivery(timestamp=time.time() - 600)[1],
        delivery(timestamp=time.time() + 600)[1],
        {**headers, "Sentry-Hook-Timestamp": "soon"},
    ):
        status, answer = await send(api, body, bad)
        assert status == 401 and answer["error"]["code"] == "unauthorized", bad
    tampered = body.replace(b"error", b"fatal")
    status, answer = await send(api, tampered, headers)
    assert status == 401
    assert await api.store.recent(None, 10) == []

    status, answer = await send(api, body, headers)
    assert status == 202 and answer["status"] == "queued"
    first = answer
    # The same delivery again, as Sentry would send it after losing the answer: told what
    # the first one came to, nothing started.
    status, answer = await send(api, body, headers)
    assert status == 200, answer
    assert answer == {"status": "duplicate", "delivery": headers["Request-ID"], "outcome": first}
    status, answer = await send(api, body, {**headers, "Request-ID": str(uuid.uuid4())})
    assert status == 409  # the same signed body under a new Request-ID
    other = delivery({**ISSUE, "id": "9999999999"}, request_id=headers["Request-ID"])
    status, answer = await send(api, *other)
    assert status == 409 and answer["error"]["code"] == "conflict"  # another body, same id
    assert len(await api.store.recent(None, 10)) == 1

    raw = b"[1, 2"
    sig = hmac.new(SECRET.encode(), raw, hashlib.sha256).hexdigest()
    status, answer = await send(api, raw, {**headers, "Sentry-Hook-Signature": sig})
    assert status == 422 and answer["error"]["code"] == "invalid"


async def test_without_a_client_secret_every_delivery_is_refused(built_scenarios, tmp_path):
    async with running_api(built_scenarios["orders"], tmp_path, alert_channel=ALERTS) as api:
        status, answer = await send(api, *delivery())
        assert status == 401 and "not configured" in answer["error"]["message"]
        assert await api.store.recent(None, 10) == []


async def test_below_the_floor_or_of_another_project_nothing_is_stored(alerting):
    api = alerting
    status, answer = await send(api, *delivery({**ISSUE, "level": "warning"}))
    assert status == 202 and answer["status"] == "ignored" and "floor" in answer["reason"]
    stranger = {**ISSUE, "project": {"id": "1", "slug": "somebody-else"}}
    status, answer = await send(api, *delivery(stranger))
    assert status == 202 and answer["status"] == "ignored"
    status, answer = await send(api, *delivery(resource="installation"))
    assert status == 202 and answer["status"] == "ignored"
    assert await api.store.recent(None, 10) == []


async def test_a_burst_of_alerts_coalesces_per_issue_and_skips_over_the_cap(
    built_scenarios, tmp_path
):
    async with running_api(
        built_scenarios["orders"],
        tmp_path,
        {"SENTRY_CLIENT_SECRET": SECRET},
        alert_channel=ALERTS,
        sentry_project_id="4644290483746556",
        max_concurrent=3,
    ) as api:
        gate = held_calls(api.runtime)  # the runs stay at work through the burst
        try:
            alerts = [event_alert(str(1000 + n % 10)) for n in range(100)]
            deliveries = [delivery(resource="event_alert", payload=a) for a in alerts]
            answers = await asyncio.gather(*(send(api, b, h) for b, h in deliveries))
            assert all(status == 202 for status, _ in answers)
            summaries = await api.store.recent(None, 200)
            assert len(summaries) == 10  # one per issue, whatever the number of alerts
            invs = [await api.store.load(s.id) for s in summaries]
            active = [i for i in invs if i.state.value in ("QUEUED", "RUNNING")]
            skipped = [i for i in invs if i.state is State.SKIPPED]
            assert len(active) == 3 and len(skipped) == 7
            assert all("concurrency cap" in (i.stop_reason or "") for i in skipped)
            assert len({i.subject for i in invs}) == 10
            statuses = [answer["status"] for _, answer in answers]
            assert statuses.count("queued") == 3 and statuses.count("joined") == 27
            assert statuses.count("skipped") == 70  # each later alert joins its skipped record
            # Every skipped one is shown in the alert channel with its reason.
            await api.slack.wait_for(
                lambda s: sum("Skipped" in json.dumps(m) for m in s.messages(ALERTS)) >= 7,
                timeout=10,
            )
            # And in App Home, for anyone who opens it (an alert has no requester).
            await open_home(api, "U0ONCALL")
            home = json.dumps(api.slack.home_tabs["U0ONCALL"])
            assert all(i.question in home for i in skipped) and "concurrency cap" in home
        finally:
            gate.set()


async def open_home(api: Api, user: str) -> None:
    """A signed app_home_opened event from Slack, and the tab it publishes."""
    event = {"type": "app_home_opened", "user": user, "channel": "D0HOME", "tab": "home"}
    body = json.dumps(
        {
            "type": "event_callback",
            "team_id": "T0FAKE",
            "api_app_id": "A0APP",
            "event": event,
            "event_id": f"Ev{uuid.uuid4().hex}",
            "event_time": int(time.time()),
        }
    )
    headers = signed_headers(body, "secret", content_type="application/json")
    async with api.http.post(f"{api.base}/slack/events", data=body, headers=headers) as r:
        assert r.status == 200
    await api.slack.wait_for(lambda s: user in s.home_tabs, timeout=5)


async def test_over_the_cap_across_projects_alerts_are_skipped_with_that_reason(
    built_scenarios, tmp_path
):
    async with running_api(
        built_scenarios["orders"],
        tmp_path,
        {"SENTRY_CLIENT_SECRET": SECRET},
        max_concurrent=2,  # INCIDENT_BOT_MAX_CONCURRENT: for all projects together
        alert_channel=ALERTS,
        sentry_project_id="4644290483746556",
    ) as api:
        gate = held_calls(api.runtime)
        try:
            sent = [delivery(resource="event_alert", payload=event_alert(str(n))) for n in range(5)]
            answers = [await send(api, body, headers) for body, headers in sent]
            assert [a["status"] for _, a in answers] == ["queued"] * 2 + ["skipped"] * 3
            for _, a in answers[2:]:
                assert "across projects" in a["reason"] and "2 of 2" in a["reason"], a
                assert (await api.store.load(a["investigation"])).state is State.SKIPPED
        finally:
            gate.set()


def alerting_on(folder: Path, tmp: Path, name: str) -> Any:
    """One serving process (its own Slack, GitHub and clone) on the database `tmp`/bot.db."""
    (tmp / name).mkdir()
    return running_api(
        folder,
        tmp / name,
        {"SENTRY_CLIENT_SECRET": SECRET},
        database=tmp / "bot.db",
        alert_channel=ALERTS,
        sentry_project_id="4644290483746556",
    )


async def test_a_delivery_answered_before_a_restart_still_starts_its_investigation_once(
    built_scenarios, tmp_path
):
    folder = built_scenarios["orders"]
    body, headers = delivery()
    async with alerting_on(folder, tmp_path, "first") as api:

        async def died(_holder: str, _lease: float) -> None:
            return None  # the process went down right after answering: nothing taken in

        api.inbox.deliveries.claim = died  # type: ignore[method-assign]
        status, _, answer = await api.call(
            "POST", "/hooks/sentry", None, data=body, headers=headers
        )
        assert status == 202 and answer == {"status": "accepted", "delivery": headers["Request-ID"]}
        assert await api.store.recent(None, 10) == []
        assert await api.deliveries.pending() == 1

    async with alerting_on(folder, tmp_path, "second") as api:
        taken = await api.outcome(headers["Request-ID"])
        assert taken["status"] == "queued", taken
        inv = await api.settled(taken["investigation"], State.COMPLETED)
        assert inv.subject == "sentry:5755875771" and inv.origin.channel == ALERTS
        await api.slack.wait_for(lambda s: len(s.messages(ALERTS)) > 0, timeout=10)
        status, answer = await send(api, body, headers)  # sent again, after the restart too
        assert status == 200 and answer["outcome"] == taken, answer
        # Taking the same delivery in once more (a lease that ran out) starts nothing new.
        again = await take_in(api.inbox.alerts, headers["Request-ID"], "issue", json.loads(body))
        assert again == {"status": "queued", "investigation": inv.id}
        assert [s.id for s in await api.store.recent(None, 10)] == [inv.id]
        assert await api.deliveries.pending() == 0


async def test_a_process_that_dies_while_taking_a_delivery_in_leaves_it_to_the_next(
    built_scenarios, tmp_path
):
    folder = built_scenarios["orders"]
    body, headers = delivery()
    async with alerting_on(folder, tmp_path, "first") as api:
        finished = asyncio.Event()

        async def crash(*_args: Any) -> bool:
            finished.set()
            raise ConnectionError("the process dies before it stores the outcome")

        api.inbox.lease_seconds = 0.5
        api.inbox.deliveries.finish = crash  # type: ignore[method-assign]
        status, _, answer = await api.call(
            "POST", "/hooks/sentry", None, data=body, headers=headers
        )
        assert status == 202 and answer["status"] == "accepted"
        await asyncio.wait_for(finished.wait(), 10)
        [started] = await api.store.recent(None, 10)  # it was stored, then the process died

    async with alerting_on(folder, tmp_path, "second") as api:
        taken = await api.outcome(headers["Request-ID"])
        # The next process takes it in again: the investigation is the one already started.
        assert taken == {"status": "queued", "investigation": started.id}
        assert [s.id for s in await api.store.recent(None, 10)] == [started.id]
