"""SqlJobQueue against real SQLite and PostgreSQL: claim exclusivity, leases, dedup."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine

from agent.domain import Investigation, Scope
from agent.errors import ConcurrencyError, NotFound
from agent.ports import Job
from storage import SqlJobQueue, SqlStore, create_engine, create_schema
from storage.tables import jobs
from tests.postgres import database_url

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


class Clock:
    """A clock the test moves by hand, so leases expire without sleeping."""

    def __init__(self, now: datetime = T0) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


@pytest.fixture(params=["sqlite", "memory", "postgresql"])
async def engine(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[AsyncEngine]:
    engine = create_engine(database_url(request, request.param, tmp_path))
    try:
        await create_schema(engine)
        yield engine
    finally:
        await engine.dispose()


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def queue(engine: AsyncEngine, clock: Clock) -> SqlJobQueue:
    return SqlJobQueue(engine, clock=clock)


async def investigation(engine: AsyncEngine) -> str:
    scope = Scope(
        project_key="shop",
        repository="acme/shop",
        sentry_organization="acme",
        sentry_project="shop-api",
        since=T0 - timedelta(hours=24),
        until=T0,
    )
    inv = Investigation.open("errors when saving orders", scope)
    await SqlStore(engine).create(inv)
    return inv.id


async def job_row(engine: AsyncEngine, job_id: int) -> dict[str, object]:
    async with engine.connect() as conn:
        row = (await conn.execute(select(jobs).where(jobs.c.id == job_id))).one()
        return dict(row._mapping)


async def test_enqueue_makes_a_queued_job(queue: SqlJobQueue, engine: AsyncEngine) -> None:
    inv_id = await investigation(engine)

    job = await queue.enqueue("investigate", inv_id)

    assert job == Job(id=job.id, kind="investigate", investigation_id=inv_id, attempts=0)
    row = await job_row(engine, job.id)
    assert row["status"] == "queued"
    assert row["created_at"] == T0


async def test_enqueue_returns_the_unfinished_job_of_the_same_kind(
    queue: SqlJobQueue, engine: AsyncEngine
) -> None:
    inv_id = await investigation(engine)
    first = await queue.enqueue("investigate", inv_id)

    assert (await queue.enqueue("investigate", inv_id)).id == first.id
    other_kind = await queue.enqueue("publish", inv_id)
    assert other_kind.id != first.id

    claimed = await queue.claim("w1", 30)
    assert claimed is not None and claimed.id == first.id
    await queue.complete(claimed)
    after_done = await queue.enqueue("investigate", inv_id)
    assert after_done.id not in (first.id, other_kind.id)


async def test_a_job_asked_for_while_it_runs_is_queued_again_when_it_completes(
    queue: SqlJobQueue, engine: AsyncEngine
) -> None:
    """An answer or a retry arriving as the worker finishes must not be folded into a run
    that already read the old state: the job runs once more."""
    inv_id = await investigation(engine)
    first = await queue.enqueue("publish", inv_id)
    claimed = await queue.claim("w1", 30)
    assert claimed is not None

    # Running is unfinished too: the same job comes back, with its holder, marked again.
    again = await queue.enqueue("publish", inv_id)
    assert (again.id, again.worker) == (first.id, "w1")
    assert (await queue.enqueue("publish", inv_id)).id == first.id  # marks fold into one

    await queue.complete(claimed)
    row = await job_row(engine, first.id)
    assert (row["status"], row["again"], row["finished_at"]) == ("queued", False, None)
    rerun = await queue.claim("w2", 30)
    assert rerun is not None and (rerun.id, rerun.worker) == (first.id, "w2")
    await queue.complete(rerun)
    assert (await job_row(engine, first.id))["status"] == "done"
    assert await queue.claim("w3", 30) is None

    # Asked for while merely queued: it runs once, and is done.
    queued = await queue.enqueue("publish", inv_id)
    assert await queue.enqueue("publish", inv_id) == queued
    held = await queue.claim("w1", 30)
    assert held is not None
    await queue.complete(held)
    assert (await job_row(engine, queued.id))["status"] == "done"


async def test_concurrent_enqueues_make_one_job(queue: SqlJobQueue, engine: AsyncEngine) -> None:
    inv_id = await investigation(engine)

    made = await asyncio.gather(*(queue.enqueue("investigate", inv_id) for _ in range(10)))

    assert len({job.id for job in made}) == 1


async def test_enqueue_for_an_unknown_investigation_is_not_found(queue: SqlJobQueue) -> None:
    with pytest.raises(NotFound):
        await queue.enqueue("investigate", "nope")


async def test_claim_takes_the_oldest_and_none_when_empty(
    queue: SqlJobQueue, engine: AsyncEngine
) -> None:
    assert await queue.claim("w1", 30) is None
    first = await queue.enqueue("investigate", await investigation(engine))
    second = await queue.enqueue("investigate", await investigation(engine))

    got = await queue.claim("w1", 30)
    assert got == Job(
        id=first.id,
        kind="investigate",
        investigation_id=first.investigation_id,
        attempts=1,
        worker="w1",
    )
    got2 = await queue.claim("w2", 30)
    assert got2 is not None and got2.id == second.id
    assert await queue.claim("w3", 30) is None

    row = await job_row(engine, first.id)
    assert row["status"] == "running"
    assert row["lease_until"] == T0 + timedelta(seconds=30)


async def test_twenty_concurrent_claims_on_five_jobs_claim_each_once(
    queue: SqlJobQueue, engine: AsyncEngine, clock: Clock
) -> None:
    enqueued = {
        (await queue.enqueue("investigate", await investigation(engine))).id for _ in range(5)
    }

    claims = await asyncio.gather(*(queue.claim(f"w{n}", 30) for n in range(20)))

    won = [job for job in claims if job is not None]
    assert sorted(job.id for job in won) == sorted(enqueued)
    assert len({job.worker for job in won}) == 5
    for job in won:
        row = await job_row(engine, job.id)
        assert (row["worker"], row["attempts"], row["status"]) == (job.worker, 1, "running")


async def test_claims_from_separate_engines_on_one_database_are_exclusive(db_url: str) -> None:
    """Workers in separate processes each have their own engine on the same database."""
    engines = [create_engine(db_url) for _ in range(4)]
    try:
        await create_schema(engines[0])
        queues = [SqlJobQueue(e) for e in engines]
        for _ in range(5):
            await queues[0].enqueue("investigate", await investigation(engines[0]))

        claims = await asyncio.gather(*(queues[n % 4].claim(f"w{n}", 30) for n in range(20)))

        won = [job.id for job in claims if job is not None]
        assert len(won) == 5 and len(set(won)) == 5
    finally:
        for e in engines:
            await e.dispose()


async def test_a_claim_passes_over_a_job_another_claim_has_locked(pg_url: str) -> None:
    """PostgreSQL: a row locked by a claim in progress is skipped, not waited for."""
    engine = create_engine(pg_url)
    try:
        await create_schema(engine)
        queue = SqlJobQueue(engine)
        first = await queue.enqueue("investigate", await investigation(engine))
        second = await queue.enqueue("investigate", await investigation(engine))
        async with engine.connect() as other, other.begin():
            await other.execute(select(jobs.c.id).where(jobs.c.id == first.id).with_for_update())
            async with asyncio.timeout(5):
                taken = await queue.claim("w2", 30)
            assert taken is not None and taken.id == second.id
            assert await queue.claim("w3", 30) is None  # the locked one is not waited for
        # Once the other transaction has ended, its row is claimable again.
        taken = await queue.claim("w3", 30)
        assert taken is not None and taken.id == first.id
    finally:
        await engine.dispose()


async def test_an_expired_lease_is_taken_over_and_the_old_holder_is_fenced_off(
    queue: SqlJobQueue, engine: AsyncEngine, clock: Clock
) -> None:
    job = await queue.enqueue("investigate", await investigation(engine))
    held = await queue.claim("w1", 30)
    assert held is not None

    clock.advance(29)
    assert await queue.claim("w2", 30) is None  # still leased

    clock.advance(2)  # w1 is presumed dead
    taken = await queue.claim("w2", 30)
    assert taken is not None
    assert (taken.id, taken.worker, taken.attempts) == (job.id, "w2", 2)

    with pytest.raises(ConcurrencyError):
        await queue.renew(held, 30)
    with pytest.raises(ConcurrencyError):
        await queue.complete(held)
    with pytest.raises(ConcurrencyError):
        await queue.fail(held, "too late")

    await queue.renew(taken, 30)
    await queue.complete(taken)
    row = await job_row(engine, job.id)
    assert (row["status"], row["worker"], row["last_error"]) == ("done", "w2", None)
    assert row["finished_at"] == clock.now
    assert await queue.claim("w3", 30) is None


async def test_the_same_worker_name_after_a_restart_does_not_hold_the_old_claim(
    queue: SqlJobQueue, engine: AsyncEngine, clock: Clock
) -> None:
    await queue.enqueue("investigate", await investigation(engine))
    before_restart = await queue.claim("worker-1", 30)
    clock.advance(31)
    after_restart = await queue.claim("worker-1", 30)
    assert before_restart is not None and after_restart is not None

    with pytest.raises(ConcurrencyError):
        await queue.complete(before_restart)
    await queue.complete(after_restart)


async def test_renew_extends_the_lease_from_now(
    queue: SqlJobQueue, engine: AsyncEngine, clock: Clock
) -> None:
    await queue.enqueue("investigate", await investigation(engine))
    held = await queue.claim("w1", 30)
    assert held is not None

    clock.advance(20)
    await queue.renew(held, 30)  # now good until T0 + 50 s
    clock.advance(25)
    assert await queue.claim("w2", 30) is None
    clock.advance(6)
    assert await queue.claim("w2", 30) is not None


async def test_fail_records_the_error_and_the_job_is_not_claimed_again(
    queue: SqlJobQueue, engine: AsyncEngine, clock: Clock
) -> None:
    job = await queue.enqueue("investigate", await investigation(engine))
    held = await queue.claim("w1", 30)
    assert held is not None

    await queue.fail(held, "model unreachable")

    row = await job_row(engine, job.id)
    assert (row["status"], row["last_error"], row["lease_until"]) == (
        "failed",
        "model unreachable",
        None,
    )
    clock.advance(3600)
    assert await queue.claim("w2", 30) is None
    # A failed job is finished: a retry is a fresh enqueue.
    retry = await queue.enqueue("investigate", job.investigation_id)
    assert retry.id != job.id


async def test_a_queued_job_cannot_be_completed_by_anyone(
    queue: SqlJobQueue, engine: AsyncEngine
) -> None:
    job = await queue.enqueue("investigate", await investigation(engine))
    with pytest.raises(ConcurrencyError):
        await queue.complete(job)
    with pytest.raises(NotFound):
        await queue.complete(Job(id=9999, kind="investigate", investigation_id="x", worker="w"))


async def test_a_lease_must_be_positive(queue: SqlJobQueue) -> None:
    with pytest.raises(ValueError):
        await queue.claim("w1", 0)
