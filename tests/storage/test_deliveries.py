"""Sentry deliveries on SQLite and PostgreSQL: one INSERT keeps a delivery and refuses a
replay (its Request-ID or its body again, within a burst too); a claim holds it under a
lease, and a holder whose lease ran out can no longer finish it."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

from storage import create_engine, create_schema
from storage.deliveries import SqlDeliveries

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


async def test_replays_are_refused_and_leases_fence_the_holder(db_url: str) -> None:
    engine = create_engine(db_url)
    await create_schema(engine)
    now = [NOW]
    deliveries = SqlDeliveries(engine, clock=lambda: now[0])
    try:
        # A burst, stored together: the same Request-ID twice, the same body twice.
        kept = await asyncio.gather(
            deliveries.record("r1", "h1", "issue", {"n": 1}),
            deliveries.record("r1", "h9", "issue", {"n": 1}),
            deliveries.record("r2", "h1", "issue", {"n": 1}),
            deliveries.record("r3", "h3", "event_alert", {"n": 3}),
            deliveries.record("r4", "h4", "installation", {}, {"status": "ignored"}),
        )
        assert kept == [True, False, False, True, True]
        # Later, one at a time: still refused.
        assert not await deliveries.record("r3", "h-new", "issue", {})
        assert not await deliveries.record("r-new", "h3", "issue", {})
        assert await deliveries.pending() == 2
        assert await deliveries.outcome("r4") == {"status": "ignored"}

        first = await deliveries.claim("a", 10)
        second = await deliveries.claim("b", 10)
        assert first is not None and second is not None
        assert (first.request_id, first.payload, first.attempts) == ("r1", {"n": 1}, 1)
        assert second.request_id == "r3"
        assert await deliveries.claim("c", 10) is None  # both are held
        assert await deliveries.outcome("r1") is None

        now[0] += timedelta(seconds=11)  # a's lease ran out: c takes r1 over
        taken = await deliveries.claim("c", 10)
        assert taken is not None and (taken.request_id, taken.attempts) == ("r1", 2)
        assert not await deliveries.finish("r1", "a", {"status": "queued"})
        assert await deliveries.finish("r1", "c", {"status": "joined"})
        assert await deliveries.outcome("r1") == {"status": "joined"}
        assert not await deliveries.finish("r1", "c", {"status": "queued"})  # done already
        assert await deliveries.pending() == 1
    finally:
        await engine.dispose()
