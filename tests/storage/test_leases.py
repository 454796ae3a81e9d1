"""Named leases on real SQLite and PostgreSQL: one holder at a time, until they run out."""

import asyncio
from datetime import timedelta

import pytest
from sqlalchemy import select

from agent.domain import utcnow
from storage.db import create_engine, create_schema
from storage.idempotency import SqlIdempotency
from storage.leases import SqlLeases
from storage.tables import leases as lease_rows


@pytest.fixture
async def engine(db_url):
    engine = create_engine(db_url)
    await create_schema(engine)
    yield engine
    await engine.dispose()


async def test_a_lease_has_one_holder_until_it_runs_out(engine):
    now = utcnow()
    clock = [now]
    leases = SqlLeases(engine, clock=lambda: clock[0])
    assert await leases.acquire("thread:1", "a", 10)
    assert await leases.acquire("thread:1", "a", 10)  # its holder may take it again
    assert not await leases.acquire("thread:1", "b", 10)
    assert await leases.acquire("thread:2", "b", 10)  # another name is another lease

    clock[0] = now + timedelta(seconds=11)  # "a" stopped renewing: presumed dead
    assert await leases.acquire("thread:1", "b", 10)
    assert not await leases.renew("thread:1", "a", 10)  # "a" lost it, and learns so
    await leases.release("thread:1", "a")  # releasing what one does not hold changes nothing
    assert not await leases.acquire("thread:1", "c", 10)
    await leases.release("thread:1", "b")
    assert await leases.acquire("thread:1", "c", 10)
    with pytest.raises(ValueError):
        await leases.acquire("thread:3", "c", 0)


async def test_an_event_is_taken_in_once_and_again_after_a_failure(engine):
    events = SqlIdempotency(engine)
    assert await events.first_delivery("Ev1")
    assert not await events.first_delivery("Ev1")
    await events.forget_event("Ev1")  # handling it failed
    assert await events.first_delivery("Ev1")


async def test_a_lease_being_taken_elsewhere_is_not_waited_for(pg_url):
    """PostgreSQL: while another process holds the lease's row lock (taking or renewing
    it), acquiring answers at once that someone else has it."""
    engine = create_engine(pg_url)
    try:
        await create_schema(engine)
        now = utcnow()
        clock = [now]
        leases = SqlLeases(engine, clock=lambda: clock[0])
        assert await leases.acquire("thread:1", "a", 10)
        clock[0] = now + timedelta(seconds=11)  # expired: free to take, once unlocked
        async with engine.connect() as other, other.begin():
            await other.execute(
                select(lease_rows.c.name).where(lease_rows.c.name == "thread:1").with_for_update()
            )
            async with asyncio.timeout(5):
                assert not await leases.acquire("thread:1", "b", 10)
        assert await leases.acquire("thread:1", "b", 10)
        assert not await leases.acquire("thread:1", "a", 10)
    finally:
        await engine.dispose()
