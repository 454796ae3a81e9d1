"""`SqlJobQueue`: the database is the queue.

A worker claims a job with a lease; if it dies, the lease runs out and another
worker takes the job over. On PostgreSQL a claim is one UPDATE of the oldest
claimable row taken with `FOR UPDATE SKIP LOCKED`: concurrent workers each take
another row and never wait on one another. SQLite has one writer at a time: there
a claim is a guarded UPDATE of a selected candidate whose row count tells who won.

The holder of a job is (worker, attempts): `attempts` grows with every claim,
so it fences off a worker that lost its lease even if a restarted worker comes
back under the same name.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import and_, bindparam, case, insert, null, or_, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine
from sqlalchemy.sql.elements import ColumnElement

from agent.domain import utcnow
from agent.errors import ConcurrencyError, NotFound
from agent.ports import Job
from storage.db import begin
from storage.tables import UNFINISHED, investigations, jobs
from storage.wakeups import JOBS, announce

# Candidates looked at per round, and rounds, before claim() gives up on a
# busy queue; every lost race means another worker made progress.
CLAIM_BATCH = 5
CLAIM_ROUNDS = 5
MAX_ERROR_CHARS = 10_000


def _job(row: Any) -> Job:
    return Job(
        id=row.id,
        kind=row.kind,
        investigation_id=row.investigation_id,
        attempts=row.attempts,
        worker=row.worker,
    )


def _claimable(now: datetime) -> ColumnElement[bool]:
    # Queued, or running under a lease that has run out (its worker is presumed dead).
    return or_(
        jobs.c.status == "queued",
        and_(jobs.c.status == "running", jobs.c.lease_until < now),
    )


def _held_by(job: Job) -> ColumnElement[bool]:
    return and_(
        jobs.c.id == job.id,
        jobs.c.status == "running",
        jobs.c.worker == job.worker,
        jobs.c.attempts == job.attempts,
    )


class SqlJobQueue:
    """Implements `agent.ports.JobQueue`. `clock` returns an aware UTC datetime."""

    def __init__(self, engine: AsyncEngine, clock: Callable[[], datetime] = utcnow) -> None:
        self._engine = engine
        self._clock = clock

    async def enqueue(self, kind: str, investigation_id: str) -> Job:
        """A queued job; or the unfinished one of this kind that already exists. A running
        one is marked to run again when it completes: what it was asked to do changed."""
        for _ in range(3):
            existing = await self._unfinished(kind, investigation_id)
            if existing is None:
                return await self._insert(kind, investigation_id)
            if await self._again(existing):
                return existing
            # It finished between the two statements: a new one is needed.
        return await self._insert(kind, investigation_id)

    async def _again(self, job: Job) -> bool:
        async with begin(self._engine) as conn:
            result = await conn.execute(
                update(jobs)
                .where(jobs.c.id == job.id, jobs.c.status.in_(UNFINISHED))
                .values(again=jobs.c.status == "running")
            )
            return result.rowcount == 1

    async def _insert(self, kind: str, investigation_id: str) -> Job:
        try:
            async with begin(self._engine) as conn:
                result = await conn.execute(
                    insert(jobs).values(
                        kind=kind,
                        investigation_id=investigation_id,
                        status="queued",
                        attempts=0,
                        created_at=self._clock(),
                    )
                )
                job_id = int(result.inserted_primary_key[0])
                await announce(conn, JOBS, str(job_id))
        except IntegrityError:
            # Either a concurrent enqueue won the unique index, or there is no
            # such investigation (foreign key).
            existing = await self._unfinished(kind, investigation_id)
            if existing is not None:
                return existing
            if not await self._investigation_exists(investigation_id):
                raise NotFound(f"no investigation {investigation_id}") from None
            raise
        return Job(id=job_id, kind=kind, investigation_id=investigation_id)

    async def claim(self, worker: str, lease_seconds: float) -> Job | None:
        """The oldest claimable job, now held by `worker`; None if there is none."""
        lease = _lease(lease_seconds)
        if self._engine.dialect.name == "postgresql":
            return await self._claim_skip_locked(worker, self._clock(), lease)
        for _ in range(CLAIM_ROUNDS):
            now = self._clock()
            async with self._engine.connect() as conn:
                candidates = (
                    (
                        await conn.execute(
                            select(jobs.c.id)
                            .where(_claimable(now))
                            .order_by(jobs.c.id)
                            .limit(CLAIM_BATCH)
                        )
                    )
                    .scalars()
                    .all()
                )
            if not candidates:
                return None
            for job_id in candidates:
                job = await self._try_claim(job_id, worker, now, lease)
                if job is not None:
                    return job
        return None

    async def renew(self, job: Job, lease_seconds: float) -> None:
        """Extend the lease from now; ConcurrencyError if another worker has taken the job."""
        lease = _lease(lease_seconds)
        await self._update_held(job, "renew", lease_until=self._clock() + lease)

    async def complete(self, job: Job) -> None:
        """Done; or queued once more if it was asked for again while it ran."""
        now = self._clock()
        await self._update_held(
            job,
            "complete",
            status=case((jobs.c.again, "queued"), else_="done"),
            finished_at=case(
                (jobs.c.again, null()), else_=bindparam(None, now, type_=jobs.c.finished_at.type)
            ),
            again=False,
            lease_until=None,
        )

    async def fail(self, job: Job, error: str) -> None:
        """Finish the job as failed, keeping the error. Retrying is a new enqueue."""
        await self._update_held(
            job,
            "fail",
            status="failed",
            lease_until=None,
            finished_at=self._clock(),
            last_error=error[:MAX_ERROR_CHARS],
        )

    # -- helpers ---------------------------------------------------------------

    async def _claim_skip_locked(self, worker: str, now: datetime, lease: timedelta) -> Job | None:
        # Rows other claims have locked are passed over, not waited for; the claimable
        # condition is repeated in the UPDATE as the guard it is on SQLite.
        oldest = (
            select(jobs.c.id)
            .where(_claimable(now))
            .order_by(jobs.c.id)
            .limit(1)
            .with_for_update(skip_locked=True)
            .cte("oldest")
        )
        async with begin(self._engine) as conn:
            row = (
                await conn.execute(
                    update(jobs)
                    .where(jobs.c.id == oldest.c.id, _claimable(now))
                    .values(
                        status="running",
                        worker=worker,
                        lease_until=now + lease,
                        attempts=jobs.c.attempts + 1,
                        claimed_at=now,
                    )
                    .returning(*jobs.c)
                )
            ).one_or_none()
        return _job(row) if row is not None else None

    async def _try_claim(
        self, job_id: int, worker: str, now: datetime, lease: timedelta
    ) -> Job | None:
        async with begin(self._engine) as conn:
            # The claimable condition is repeated in the UPDATE: if another worker
            # claimed the job since we selected it, this matches no row.
            result = await conn.execute(
                update(jobs)
                .where(jobs.c.id == job_id, _claimable(now))
                .values(
                    status="running",
                    worker=worker,
                    lease_until=now + lease,
                    attempts=jobs.c.attempts + 1,
                    claimed_at=now,
                )
            )
            if result.rowcount != 1:
                return None
            # Read back in the same transaction: attempts is what this claim made it.
            row = (await conn.execute(select(jobs).where(jobs.c.id == job_id))).one()
            return _job(row)

    async def _update_held(self, job: Job, action: str, **values: Any) -> None:
        async with begin(self._engine) as conn:
            updated = (
                await conn.execute(
                    update(jobs).where(_held_by(job)).values(**values).returning(jobs.c.status)
                )
            ).all()
            if updated:
                if updated[0].status == "queued":  # asked for again while it ran
                    await announce(conn, JOBS, str(job.id))
                return
            row = await self._row(conn, job.id)
        if row is None:
            raise NotFound(f"no job {job.id}")
        raise ConcurrencyError(
            f"cannot {action} job {job.id}: {job.worker} (attempt {job.attempts}) no longer "
            f"holds it; it is {row.status}, held by {row.worker} (attempt {row.attempts})"
        )

    async def _unfinished(self, kind: str, investigation_id: str) -> Job | None:
        async with self._engine.connect() as conn:
            row = (
                await conn.execute(
                    select(jobs)
                    .where(
                        jobs.c.kind == kind,
                        jobs.c.investigation_id == investigation_id,
                        jobs.c.status.in_(UNFINISHED),
                    )
                    .order_by(jobs.c.id)
                    .limit(1)
                )
            ).one_or_none()
        return _job(row) if row is not None else None

    async def _investigation_exists(self, investigation_id: str) -> bool:
        async with self._engine.connect() as conn:
            result = await conn.execute(
                select(investigations.c.id).where(investigations.c.id == investigation_id)
            )
            return result.first() is not None

    @staticmethod
    async def _row(conn: AsyncConnection, job_id: int) -> Any:
        return (await conn.execute(select(jobs).where(jobs.c.id == job_id))).one_or_none()


def _lease(lease_seconds: float) -> timedelta:
    if lease_seconds <= 0:
        raise ValueError(f"a lease must be positive, not {lease_seconds} seconds")
    return timedelta(seconds=lease_seconds)
