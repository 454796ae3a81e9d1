"""Wake-ups on SQLite (the writing process) and PostgreSQL (LISTEN/NOTIFY, any process)."""

from __future__ import annotations

import asyncio

from sqlalchemy import text

from storage import SqlJobQueue, SqlStore, create_engine, create_schema
from storage.db import begin
from storage.wakeups import INVESTIGATIONS, JOBS, Wakeups, announce
from tests.storage.test_store import full_investigation, opened


class Heard:
    def __init__(self) -> None:
        self.payloads: list[str] = []
        self.catch_ups = 0  # "" is the wake-everyone after (re)connecting
        self.changed = asyncio.Event()

    def __call__(self, payload: str) -> None:
        if payload:
            self.payloads.append(payload)
        else:
            self.catch_ups += 1
        self.changed.set()

    async def caught_up(self, count: int) -> None:
        async with asyncio.timeout(10):
            while self.catch_ups < count:
                self.changed.clear()
                await self.changed.wait()

    async def until(self, count: int) -> list[str]:
        async with asyncio.timeout(5):
            while len(self.payloads) < count:
                self.changed.clear()
                await self.changed.wait()
        return self.payloads


async def test_a_queued_job_and_a_stored_investigation_wake_their_listeners(db_url: str) -> None:
    engine = create_engine(db_url)
    wakeups = Wakeups(engine)
    jobs_heard, investigations_heard = Heard(), Heard()
    wakeups.listen(JOBS, jobs_heard)
    wakeups.listen(INVESTIGATIONS, investigations_heard)
    try:
        await create_schema(engine)
        await wakeups.start()
        inv = opened()
        await SqlStore(engine).create(inv)
        job = await SqlJobQueue(engine).enqueue("investigate", inv.id)
        assert await jobs_heard.until(1) == [str(job.id)]
        inv.start()
        await SqlStore(engine).save(inv)
        assert await investigations_heard.until(2) == [inv.id, inv.id]
    finally:
        await wakeups.aclose()
        await engine.dispose()


async def test_a_job_asked_for_again_while_it_ran_wakes_when_requeued(db_url: str) -> None:
    engine = create_engine(db_url)
    wakeups = Wakeups(engine)
    heard = Heard()
    wakeups.listen(JOBS, heard)
    try:
        await create_schema(engine)
        await wakeups.start()
        inv = opened()
        await SqlStore(engine).create(inv)
        queue = SqlJobQueue(engine)
        job = await queue.enqueue("investigate", inv.id)
        held = await queue.claim("w1", 30)
        assert held is not None
        await queue.enqueue("investigate", inv.id)  # while it runs: again, no new row
        await queue.complete(held)  # queued once more
        assert await heard.until(2) == [str(job.id), str(job.id)]
        again = await queue.claim("w1", 30)
        assert again is not None
        await queue.complete(again)  # done: nobody to wake
        await asyncio.sleep(0.2)
        assert heard.payloads == [str(job.id), str(job.id)]
    finally:
        await wakeups.aclose()
        await engine.dispose()


async def test_a_rolled_back_write_wakes_nobody(db_url: str) -> None:
    engine = create_engine(db_url)
    wakeups = Wakeups(engine)
    heard = Heard()
    wakeups.listen(JOBS, heard)
    try:
        await create_schema(engine)
        await wakeups.start()
        try:
            async with begin(engine) as conn:
                await announce(conn, JOBS, "lost")
                raise RuntimeError("the write fails")
        except RuntimeError:
            pass
        async with begin(engine) as conn:
            await announce(conn, JOBS, "kept")
        assert await heard.until(1) == ["kept"]
    finally:
        await wakeups.aclose()
        await engine.dispose()


async def test_postgresql_wakes_other_processes_and_listens_again_after_a_lost_connection(
    pg_url: str,
) -> None:
    """Separate engines stand for separate processes: the writer's NOTIFY reaches the
    listener through the server; a listener whose connection is killed comes back."""
    writer, reader = create_engine(pg_url), create_engine(pg_url)
    wakeups = Wakeups(reader)
    heard = Heard()
    wakeups.listen(INVESTIGATIONS, heard)
    try:
        await create_schema(writer)
        await wakeups.start()
        first = full_investigation()
        await SqlStore(writer).create(first)
        assert await heard.until(1) == [first.id]

        async with writer.connect() as conn:
            killed = await conn.execute(
                text(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                    "WHERE query LIKE 'LISTEN%' AND pid <> pg_backend_pid()"
                )
            )
            assert killed.scalars().all() == [True]
        await heard.caught_up(2)  # listening again, on a new connection
        second = full_investigation()
        await SqlStore(writer).create(second)
        assert await heard.until(2) == [first.id, second.id]
    finally:
        await wakeups.aclose()
        await writer.dispose()
        await reader.dispose()
