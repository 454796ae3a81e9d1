"""`SqlDeliveries`: Sentry webhook deliveries, stored before they are answered.

`record()` is the one INSERT that both keeps the delivery and refuses a replay (its
Request-ID or its body hash is a key). A pending delivery is claimed under a lease, like a
job: the holder takes it in and `finish()`es it; a holder that dies leaves its lease to run
out, and the next claim (any process, after a restart too) takes it in again.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import delete, insert, or_, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncEngine

from agent.domain import utcnow
from storage.db import begin
from storage.tables import sentry_deliveries as table

# Sentry signs the body only: a replayed body is refused for this long after it came.
MEMORY = timedelta(days=1)
CLAIM_BATCH = 5


@dataclass(frozen=True)
class Delivery:
    request_id: str
    resource: str
    payload: dict[str, Any]
    attempts: int


class SqlDeliveries:
    def __init__(self, engine: AsyncEngine, clock: Callable[[], datetime] = utcnow) -> None:
        self._engine = engine
        self._clock = clock

    async def record(
        self,
        request_id: str,
        body_hash: str,
        resource: str,
        payload: dict[str, Any],
        outcome: dict[str, Any] | None = None,
    ) -> bool:
        """Keep the delivery, pending (or done with `outcome`); False if it is a replay."""
        now = self._clock()
        try:
            async with begin(self._engine) as conn:
                await conn.execute(
                    delete(table).where(
                        table.c.status == "done", table.c.received_at < now - MEMORY
                    )
                )
                await conn.execute(
                    insert(table).values(
                        request_id=request_id,
                        body_hash=body_hash,
                        resource=resource,
                        payload=payload,
                        received_at=now,
                        status="pending" if outcome is None else "done",
                        attempts=0,
                        outcome=outcome,
                    )
                )
        except IntegrityError:
            return False
        return True

    async def claim(self, holder: str, lease_seconds: float) -> Delivery | None:
        """The oldest pending delivery nobody holds (or whose holder's lease ran out)."""
        for _ in range(CLAIM_BATCH):
            now = self._clock()
            free = (table.c.status == "pending") & or_(
                table.c.lease_until.is_(None), table.c.lease_until < now
            )
            async with self._engine.connect() as conn:
                row = (
                    await conn.execute(
                        select(table.c.request_id)
                        .where(free)
                        .order_by(table.c.received_at, table.c.request_id)
                        .limit(1)
                    )
                ).one_or_none()
            if row is None:
                return None
            async with begin(self._engine) as conn:
                # The free condition again: another claim since the SELECT matches no row.
                won = (
                    await conn.execute(
                        update(table)
                        .where(table.c.request_id == row.request_id, free)
                        .values(
                            holder=holder,
                            lease_until=now + timedelta(seconds=lease_seconds),
                            attempts=table.c.attempts + 1,
                        )
                        .returning(table.c.resource, table.c.payload, table.c.attempts)
                    )
                ).one_or_none()
            if won is not None:
                return Delivery(row.request_id, won.resource, won.payload, won.attempts)
        return None

    async def finish(self, request_id: str, holder: str, outcome: dict[str, Any]) -> bool:
        """Done with `outcome`; False if `holder` no longer held it (its lease ran out)."""
        async with begin(self._engine) as conn:
            result = await conn.execute(
                update(table)
                .where(
                    table.c.request_id == request_id,
                    table.c.holder == holder,
                    table.c.status == "pending",
                )
                .values(status="done", outcome=outcome, lease_until=None)
            )
        return result.rowcount == 1

    async def outcome(self, request_id: str) -> dict[str, Any] | None:
        """What taking the delivery in came to; None while it is pending or unknown."""
        async with self._engine.connect() as conn:
            row = (
                await conn.execute(
                    select(table.c.status, table.c.outcome).where(table.c.request_id == request_id)
                )
            ).one_or_none()
        return row.outcome if row is not None and row.status == "done" else None

    async def pending(self) -> int:
        async with self._engine.connect() as conn:
            rows = await conn.execute(select(table.c.request_id).where(table.c.status == "pending"))
            return len(rows.all())
