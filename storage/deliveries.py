"""`SqlDeliveries`: Sentry webhook deliveries, stored before they are answered.

`record()` is the one INSERT that both keeps the delivery and refuses a replay (its
Request-ID or its body hash is a key). A pending delivery is claimed under a lease, like a
job: the holder takes it in and `finish()`es it; a holder that dies leaves its lease to run
out, and the next claim (any process, after a restart too) takes it in again.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import delete, or_, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncEngine

from agent.domain import utcnow
from storage.db import begin
from storage.tables import sentry_deliveries as table

# Sentry signs the body only: a replayed body is refused for this long after it came.
MEMORY = timedelta(days=1)
CLAIM_BATCH = 5


@dataclass(frozen=True)
class Stored:
    """A delivery as kept: its body's hash, `pending` or `done`, and what it came to."""

    body_hash: str
    status: str
    outcome: dict[str, Any] | None


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
        self._waiting: list[tuple[dict[str, Any], asyncio.Future[bool]]] = []
        self._writer: asyncio.Task[None] | None = None

    async def record(
        self,
        request_id: str,
        body_hash: str,
        resource: str,
        payload: dict[str, Any],
        outcome: dict[str, Any] | None = None,
    ) -> bool:
        """Keep the delivery, pending (or done with `outcome`); False if it is a replay.
        Deliveries that come in together are inserted in one transaction (a burst waits
        for a few commits, not for one each)."""
        row = {
            "request_id": request_id,
            "body_hash": body_hash,
            "resource": resource,
            "payload": payload,
            "status": "pending" if outcome is None else "done",
            "attempts": 0,
            "outcome": outcome,
        }
        kept: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        self._waiting.append((row, kept))
        if self._writer is None or self._writer.done():
            self._writer = asyncio.create_task(self._write())
        return await kept

    async def _write(self) -> None:
        while self._waiting:
            batch, self._waiting = self._waiting, []
            now = self._clock()
            chosen: list[dict[str, Any]] = []
            keys: set[str] = set()
            for row, _ in batch:
                if row["request_id"] in keys or row["body_hash"] in keys:
                    continue  # a replay within the batch: the first one is kept
                keys |= {row["request_id"], row["body_hash"]}
                chosen.append(row)
            rows = [{**row, "received_at": now} for row in chosen]
            try:
                async with begin(self._engine) as conn:
                    await conn.execute(
                        delete(table).where(
                            table.c.status == "done", table.c.received_at < now - MEMORY
                        )
                    )
                    # A row that meets a key already stored is a replay: not inserted.
                    insert_ = self._insert(rows).on_conflict_do_nothing()
                    stored = await conn.execute(insert_.returning(table.c.request_id))
                    inserted = {r.request_id for r in stored}
            except Exception as exc:
                for _, kept in batch:
                    if not kept.done():
                        kept.set_exception(exc)
                continue
            first = {id(row) for row in chosen}
            for row, kept in batch:
                if not kept.done():
                    kept.set_result(id(row) in first and row["request_id"] in inserted)

    def _insert(self, rows: list[dict[str, Any]]) -> Any:
        dialect = postgresql if self._engine.dialect.name == "postgresql" else sqlite
        return dialect.insert(table).values(rows)

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

    async def stored(self, request_id: str) -> Stored | None:
        async with self._engine.connect() as conn:
            row = (
                await conn.execute(
                    select(table.c.body_hash, table.c.status, table.c.outcome).where(
                        table.c.request_id == request_id
                    )
                )
            ).one_or_none()
        return None if row is None else Stored(row.body_hash, row.status, row.outcome)

    async def pending(self) -> int:
        async with self._engine.connect() as conn:
            rows = await conn.execute(select(table.c.request_id).where(table.c.status == "pending"))
            return len(rows.all())
