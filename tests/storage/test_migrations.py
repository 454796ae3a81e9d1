"""Alembic migrations on SQLite and PostgreSQL: the newest revision is storage/tables.py, a
database of the schema from before migrations is upgraded by `incident-bot migrate` without
losing a row, and serve/worker refuse a schema they do not know."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import func, insert, select, text
from sqlalchemy.ext.asyncio import AsyncEngine

from agent.domain import utcnow
from storage import SqlJobQueue, SqlStore, create_engine, create_schema
from storage.db import UnusableDatabase, open_database, where
from storage.migrate import config, head
from storage.tables import (
    idempotency_keys,
    jobs,
    leases,
    metadata,
    slack_events,
    surface_messages,
)
from tests.storage.test_store import full_investigation

BIN = Path(sys.executable).with_name("incident-bot")
LATER = {"sentry_deliveries"}  # tables later revisions add (0003)
TABLES = [t.name for t in metadata.sorted_tables if t.name not in LATER]  # those of 0001


def differences(conn: Any) -> list[Any]:
    return compare_metadata(MigrationContext.configure(conn), metadata)


async def premigration(engine: AsyncEngine) -> None:
    """The schema `metadata.create_all` made before there were migrations: revision 0001
    without Alembic's version table."""

    def build(conn: Any) -> None:
        command.upgrade(config(conn), "0001")
        conn.execute(text("DROP TABLE alembic_version"))

    async with engine.begin() as conn:
        await conn.run_sync(build)


async def counts(engine: AsyncEngine) -> dict[str, int]:
    async with engine.connect() as conn:
        return {
            name: (await conn.execute(select(func.count()).select_from(metadata.tables[name])))
            .scalars()
            .one()
            for name in TABLES
        }


async def migrate_cli(url: str) -> subprocess.CompletedProcess[str]:
    """`incident-bot migrate` as an operator runs it."""
    env = {**os.environ, "DATABASE_URL": url}
    return await asyncio.to_thread(
        subprocess.run,
        [str(BIN), "migrate"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )


async def test_the_newest_revision_is_the_schema_of_tables_py(db_url: str) -> None:
    engine = create_engine(db_url)
    try:
        await create_schema(engine)
        async with engine.connect() as conn:
            assert await conn.run_sync(differences) == []
            version = (await conn.execute(text("SELECT version_num FROM alembic_version"))).all()
        assert version == [(head(),)]
    finally:
        await engine.dispose()


async def test_revision_0001_is_the_schema_from_before_migrations(db_url: str) -> None:
    """What 0001 makes differs from tables.py only by what the later revisions add."""
    engine = create_engine(db_url)
    try:
        await premigration(engine)
        async with engine.connect() as conn:
            diff = await conn.run_sync(differences)
        later = {
            (d[0], d[2], d[3].name) if d[0] == "add_column" else (d[0], d[1].name) for d in diff
        }
        assert later == {
            ("add_column", "jobs", "claimed_at"),  # 0002
            ("add_table", "sentry_deliveries"),  # 0003
            ("add_index", "ix_sentry_deliveries_status_received_at"),
        }
    finally:
        await engine.dispose()


async def test_a_premigration_database_is_upgraded_by_migrate_without_losing_a_row(
    db_url: str,
) -> None:
    engine = create_engine(db_url)
    try:
        await premigration(engine)
        # Data as the previous version stored it, in every table.
        store = SqlStore(engine)
        finished = full_investigation()
        await store.create(finished)
        waiting = full_investigation()
        await store.create(waiting)
        now = utcnow()
        async with engine.begin() as conn:
            await conn.execute(
                insert(jobs),
                [
                    {
                        "kind": "investigate",
                        "investigation_id": finished.id,
                        "status": "done",
                        "attempts": 1,
                        "created_at": now,
                        "finished_at": now,
                    },
                    {
                        "kind": "investigate",
                        "investigation_id": waiting.id,
                        "status": "queued",
                        "attempts": 0,
                        "created_at": now,
                        "finished_at": None,
                    },
                ],
            )
            await conn.execute(
                insert(surface_messages).values(
                    investigation_id=finished.id,
                    key="root",
                    channel="C1",
                    ts="1700000000.000100",
                    state="posted",
                    payload_hash="h",
                    updated_at=now,
                )
            )
            await conn.execute(
                insert(leases).values(
                    name=f"thread:{finished.id}", holder="p1", lease_until=now + timedelta(1)
                )
            )
            await conn.execute(insert(slack_events).values(event_id="Ev1", received_at=now))
            await conn.execute(
                insert(idempotency_keys).values(
                    key="k1", request_hash="r", investigation_id=finished.id, created_at=now
                )
            )
        before = await counts(engine)
        assert all(before.values()), before

        # The previous schema is refused at start, with the command that upgrades it.
        with pytest.raises(UnusableDatabase, match="run `incident-bot migrate`"):
            await open_database(engine)

        done = await migrate_cli(db_url)
        assert done.returncode == 0, done.stderr
        assert done.stdout == (
            f"the database at {where(db_url)} was from before migrations and is now at "
            f"schema {head()}\n"
        )

        await open_database(engine)
        assert await counts(engine) == before
        assert await store.load(finished.id) == finished
        assert await store.load(waiting.id) == waiting
        job = await SqlJobQueue(engine).claim("w1", 30)
        assert job is not None and job.investigation_id == waiting.id
        async with engine.connect() as conn:
            assert await conn.run_sync(differences) == []
            claimed = (
                await conn.execute(select(jobs.c.claimed_at).where(jobs.c.id == job.id))
            ).scalar_one()
        assert claimed is not None

        again = await migrate_cli(db_url)
        assert again.returncode == 0 and "nothing to do" in again.stdout, again.stderr
    finally:
        await engine.dispose()


async def test_an_older_revision_is_refused_with_the_command_to_run(db_url: str) -> None:
    engine = create_engine(db_url)
    try:
        async with engine.begin() as conn:
            await conn.run_sync(lambda c: command.upgrade(config(c), "0001"))
        with pytest.raises(UnusableDatabase) as refused:
            await open_database(engine)
        assert f"older schema (0001) than this version's ({head()})" in str(refused.value)
        assert "run `incident-bot migrate`" in str(refused.value)
    finally:
        await engine.dispose()


async def test_a_revision_this_version_does_not_know_is_refused_even_by_migrate(
    db_url: str,
) -> None:
    engine = create_engine(db_url)
    try:
        await create_schema(engine)
        async with engine.begin() as conn:
            await conn.execute(text("UPDATE alembic_version SET version_num = '9999'"))
        with pytest.raises(UnusableDatabase, match="schema revision 9999, which this version"):
            await open_database(engine)
        done = await migrate_cli(db_url)
        assert done.returncode == 2
        (line,) = done.stderr.splitlines()
        assert "schema revision 9999" in line
    finally:
        await engine.dispose()


async def test_processes_opening_an_empty_database_at_once_make_the_schema_once(
    db_url: str,
) -> None:
    engines = [create_engine(db_url) for _ in range(4)]
    try:
        await asyncio.gather(*(open_database(e) for e in engines))
        async with engines[0].connect() as conn:
            assert await conn.run_sync(differences) == []
            version = (await conn.execute(text("SELECT version_num FROM alembic_version"))).all()
        assert version == [(head(),)]
    finally:
        for e in engines:
            await e.dispose()


async def test_many_connections_racing_on_a_new_sqlite_file_all_open_it_in_wal_mode(
    tmp_path: Path,
) -> None:
    # Switching a file to WAL takes its lock without SQLite's busy handler, and a status read
    # without a lock can see another opener's tables before its revision: both once made
    # about half of these rounds fail ("database is locked", "older schema").
    for round_ in range(20):
        url = f"sqlite+aiosqlite:///{tmp_path}/race-{round_}.db"
        engines = [create_engine(url) for _ in range(6)]
        try:
            await asyncio.gather(*(open_database(e) for e in engines))
            async with engines[0].connect() as conn:
                mode = (await conn.exec_driver_sql("PRAGMA journal_mode")).scalar()
                version = (
                    await conn.execute(text("SELECT version_num FROM alembic_version"))
                ).all()
            assert (mode, version) == ("wal", [(head(),)])
        finally:
            for e in engines:
                await e.dispose()


async def test_a_postgresql_database_that_may_not_be_written_is_refused(pg_url: str) -> None:
    engine = create_engine(pg_url)
    try:
        await create_schema(engine)
        name = engine.url.database
        async with engine.connect() as conn:
            await conn.execute(
                text(f'ALTER DATABASE "{name}" SET default_transaction_read_only = on')
            )
            await conn.commit()
        await engine.dispose()  # new sessions read the setting
        with pytest.raises(UnusableDatabase) as refused:
            await open_database(engine)
        assert str(refused.value) == (
            f"the database at {where(pg_url)} cannot be written: "
            "cannot execute INSERT in a read-only transaction"
        )
    finally:
        await engine.dispose()
