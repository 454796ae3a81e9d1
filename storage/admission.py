"""Counting and inserting as one step, across processes: the gates' admission.

A new investigation passes the gates (bot/usecases/gates.py) on counts of what is stored —
a run on the same Sentry issue, the runs at work, the tokens spent today — and is then
inserted. Two processes that count at once would both pass a cap, or both start the same
issue. `SqlAdmission.hold()` is one transaction that takes the database's admission lock
first, reads the counts and inserts in it, and commits before anyone else may count:

- PostgreSQL: `pg_advisory_xact_lock`, released by the commit (or by the server when the
  connection dies);
- SQLite: `BEGIN IMMEDIATE`, which takes the database's write lock at once: another
  process's admission waits for it (busy_timeout), and reads the counts it committed.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from datetime import datetime

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from agent.domain import Investigation
from agent.errors import ConcurrencyError
from storage import store as counts
from storage.db import begin
from storage.store import SqlStore
from storage.tables import investigations

# The advisory lock's key: any fixed 64-bit number, the same in every process.
ADMISSION_LOCK = 0x1BC1DE47


class Held:
    """The counts and the insert, inside the admission transaction."""

    def __init__(self, conn: AsyncConnection, store: SqlStore) -> None:
        self._conn, self._store = conn, store

    async def running_on(self, inv: Investigation) -> str | None:
        return await counts.running_on(self._conn, inv)

    async def latest_on(self, inv: Investigation, since: datetime) -> str | None:
        return await counts.latest_on(self._conn, inv, since)

    async def active_count(self, project: str | None = None) -> int:
        return await counts.active_count(self._conn, project)

    async def tokens_on(self, day: str) -> int:
        return await counts.tokens_on(self._conn, day)

    async def create(self, inv: Investigation, replacing: Investigation | None = None) -> None:
        """ConcurrencyError if it exists (another attempt under its key stored it), or if
        `replacing` (saved in the same transaction) was saved by someone else."""
        found = await self._conn.execute(
            select(investigations.c.id).where(investigations.c.id == inv.id)
        )
        if found.first() is not None:
            raise ConcurrencyError(f"investigation {inv.id} already exists")
        if replacing is not None:
            replacing.version = await self._store.update(self._conn, replacing)
        await self._store.insert(self._conn, inv)
        inv.version = 1


class SqlAdmission:
    def __init__(self, engine: AsyncEngine, store: SqlStore | None = None) -> None:
        self._engine = engine
        self._store = store or SqlStore(engine)

    @contextlib.asynccontextmanager
    async def hold(self) -> AsyncIterator[Held]:
        """The admission lock, held until the block's inserts commit (or roll back)."""
        async with begin(self._engine) as conn:
            if self._engine.dialect.name == "sqlite":
                # The driver opens transactions lazily, at the first write: open this one
                # now, with the write lock, so the counts read below stay true to commit.
                await conn.exec_driver_sql("BEGIN IMMEDIATE")
            else:
                await conn.execute(select(func.pg_advisory_xact_lock(ADMISSION_LOCK)))
            yield Held(conn, self._store)
