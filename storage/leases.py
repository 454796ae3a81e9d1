"""`SqlLeases`: named leases in the database, one holder at a time.

A holder takes a lease for a while and renews it while it works; if it dies the
lease runs out and another holder may take it. Taking is an INSERT, or a guarded
UPDATE of an expired row, whose row count tells who won. On PostgreSQL the row is
read first `FOR UPDATE SKIP LOCKED`: a lease another process is taking or renewing
at this moment is theirs, and nobody waits for its row lock to learn that.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta

from sqlalchemy import delete, insert, or_, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncEngine

from agent.domain import utcnow
from storage.db import begin
from storage.tables import leases


class SqlLeases:
    """`clock` returns an aware UTC datetime."""

    def __init__(self, engine: AsyncEngine, clock: Callable[[], datetime] = utcnow) -> None:
        self._engine = engine
        self._clock = clock

    async def acquire(self, name: str, holder: str, seconds: float) -> bool:
        """Take `name` until `seconds` from now; False while someone else holds it."""
        now = self._clock()
        until = now + _lease(seconds)
        if self._engine.dialect.name == "postgresql":
            return await self._acquire_skip_locked(name, holder, now, until)
        async with begin(self._engine) as conn:
            result = await conn.execute(
                update(leases)
                .where(
                    leases.c.name == name,
                    or_(leases.c.holder == holder, leases.c.lease_until < now),
                )
                .values(holder=holder, lease_until=until)
            )
            if result.rowcount == 1:
                return True
        try:
            async with begin(self._engine) as conn:
                await conn.execute(
                    insert(leases).values(name=name, holder=holder, lease_until=until)
                )
        except IntegrityError:
            return False  # held, and not expired
        return True

    async def _acquire_skip_locked(
        self, name: str, holder: str, now: datetime, until: datetime
    ) -> bool:
        async with begin(self._engine) as conn:
            row = (
                await conn.execute(
                    select(leases.c.holder, leases.c.lease_until)
                    .where(leases.c.name == name)
                    .with_for_update(skip_locked=True)
                )
            ).one_or_none()
            if row is None:
                # No such lease, or one locked by its taker right now: insert, or learn
                # that it exists (a locked row is someone else's).
                taken = await conn.execute(
                    pg_insert(leases)
                    .values(name=name, holder=holder, lease_until=until)
                    .on_conflict_do_nothing(index_elements=[leases.c.name])
                    .returning(leases.c.name)
                )
                return taken.first() is not None
            if row.holder != holder and row.lease_until >= now:
                return False  # held, and not expired
            await conn.execute(
                update(leases).where(leases.c.name == name).values(holder=holder, lease_until=until)
            )
            return True

    async def renew(self, name: str, holder: str, seconds: float) -> bool:
        """Extend a lease this holder still holds; False if it has lost it."""
        async with begin(self._engine) as conn:
            result = await conn.execute(
                update(leases)
                .where(leases.c.name == name, leases.c.holder == holder)
                .values(lease_until=self._clock() + _lease(seconds))
            )
            return result.rowcount == 1

    async def release(self, name: str, holder: str) -> None:
        async with begin(self._engine) as conn:
            await conn.execute(
                delete(leases).where(leases.c.name == name, leases.c.holder == holder)
            )


def _lease(seconds: float) -> timedelta:
    if seconds <= 0:
        raise ValueError(f"a lease must be positive, not {seconds} seconds")
    return timedelta(seconds=seconds)
