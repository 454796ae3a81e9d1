"""The gates across processes: two `serve --no-workers` fronts on one database (a SQLite file,
then PostgreSQL) take a burst of 100 signed Sentry alerts for 10 issues, spread over both.
Each issue makes one investigation, the project's cap of 3 holds across both fronts, and
every other issue is SKIPPED with its reason. No worker runs: what is queued stays at work,
so the counts the gates read cannot move under the test."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import Counter

import aiohttp

from agent.domain import State
from recorded.scenario import load_scenario
from storage import SqlStore, create_engine, create_schema
from storage.deliveries import SqlDeliveries
from tests.bot.test_alerts import SECRET, delivery, event_alert
from tests.bot.test_durability import environment, free_port
from tests.bot.test_processes import started, until
from tests.fakes.slack import FakeSlack

CAP = 3


async def hook(http: aiohttp.ClientSession, url: str, body: bytes, headers: dict[str, str]) -> int:
    """A signed delivery; retried until the front listens (it was not taken in before)."""
    async with asyncio.timeout(60):
        while True:
            with contextlib.suppress(aiohttp.ClientConnectionError):
                async with http.post(url, data=body, headers=headers) as r:
                    answer = await r.json()
                    assert answer.get("status") in (None, "accepted"), answer
                    return r.status
            await asyncio.sleep(0.05)


async def test_two_fronts_hold_the_cap_and_start_each_sentry_issue_once(
    built_scenarios, db_url, tmp_path
):
    folder = built_scenarios["orders"]
    scope = load_scenario(folder).scope
    config = tmp_path / "projects.toml"
    config.write_text(
        f"""
[projects.{scope.project_key}]
repository = "{scope.repository}"
sentry_organization = "{scope.sentry_organization}"
sentry_project = "{scope.sentry_project}"
release_prefix = "{scope.release_prefix}"
channels = ["C0ORDERS"]
alert_channel = "C0ALERTS"
sentry_project_id = "4644290483746556"
max_concurrent = {CAP}
"""
    )
    engine = create_engine(db_url)
    await create_schema(engine)
    store, deliveries = SqlStore(engine), SqlDeliveries(engine)
    try:
        async with (
            FakeSlack(start_ts=f"{time.time():.6f}") as slack,
            aiohttp.ClientSession() as http,
            contextlib.AsyncExitStack() as stack,
        ):
            env = environment(
                slack,
                db_url,
                SENTRY_CLIENT_SECRET=SECRET,
                INCIDENT_BOT_CONFIG=str(config),
                INCIDENT_BOT_BACKFILL_HOURS="0",
            )
            ports = [free_port(), free_port()]
            for port in ports:
                front = ("serve", "--no-workers", "--scenario", str(folder), "--http")
                await stack.enter_async_context(started(env, *front, "--port", str(port)))
            urls = [f"http://127.0.0.1:{port}/hooks/sentry" for port in ports]
            sent = [
                delivery(resource="event_alert", payload=event_alert(str(1000 + n % 10)))
                for n in range(100)
            ]
            statuses = await asyncio.gather(
                *(hook(http, urls[n % 2], body, headers) for n, (body, headers) in enumerate(sent))
            )
            assert statuses == [202] * 100

            async def taken_in() -> bool:
                return await deliveries.pending() == 0

            await until(taken_in, 60)

        summaries = await store.recent(None, 200)
        invs = [await store.load(s.id) for s in summaries]
        assert sorted(i.subject for i in invs) == sorted(f"sentry:{1000 + n}" for n in range(10))
        states = Counter(i.state for i in invs)
        assert states == {State.QUEUED: CAP, State.SKIPPED: 10 - CAP}, states
        skipped = [i for i in invs if i.state is State.SKIPPED]
        assert all("concurrency cap" in (i.stop_reason or "") for i in skipped)
        outcomes = [await deliveries.outcome(headers["Request-ID"]) for _, headers in sent]
        came_to = Counter(o["status"] for o in outcomes if o)
        assert came_to["queued"] == CAP and came_to["skipped"] >= 10 - CAP, came_to
        assert sum(came_to.values()) == 100
    finally:
        await engine.dispose()
