"""Engine, schema and the database URL: SQLite (aiosqlite) or PostgreSQL (asyncpg).

The queries in `storage` are portable SQL, but for the connection setup below and the
claims of storage.jobs and storage.leases, which use SKIP LOCKED on PostgreSQL.
"""

from __future__ import annotations

import asyncio
import contextlib
import weakref
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any

from sqlalchemy import event, insert, inspect
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError, DBAPIError, SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine
from sqlalchemy.pool import AsyncAdaptedQueuePool

from agent.domain import utcnow
from agent.errors import InputError
from storage import migrate, wakeups
from storage.tables import leases, metadata

DEFAULT_FILENAME = "incident-bot.db"
SQLITE_BUSY_TIMEOUT_MS = 5000

# Driverless schemes people commonly put in DATABASE_URL (Heroku-style
# `postgres://`), mapped to the async drivers this project uses.
_ASYNC_DRIVERS = {
    "postgres": "postgresql+asyncpg",
    "postgresql": "postgresql+asyncpg",
    "sqlite": "sqlite+aiosqlite",
}


def default_url(cwd: str | Path) -> str:
    """A SQLite file `incident-bot.db` in the working directory."""
    path = (Path(cwd) / DEFAULT_FILENAME).resolve()
    return f"sqlite+aiosqlite:///{path}"


def url_from_env(environ: Mapping[str, str], cwd: str | Path) -> str:
    """DATABASE_URL if set (an SQLAlchemy async URL), else `default_url(cwd)`."""
    raw = environ.get("DATABASE_URL", "").strip()
    if not raw:
        return default_url(cwd)
    return _async_url(raw).render_as_string(hide_password=False)


def _async_url(raw: str | URL) -> URL:
    try:
        url = make_url(raw)
    except ArgumentError as e:
        raise InputError(f"DATABASE_URL is not a database URL: {e}") from None
    if url.drivername in _ASYNC_DRIVERS:
        url = url.set(drivername=_ASYNC_DRIVERS[url.drivername])
    if url.drivername not in _ASYNC_DRIVERS.values():
        raise InputError(
            f"DATABASE_URL names {url.drivername}: the database is SQLite "
            "(sqlite+aiosqlite://…) or PostgreSQL (postgresql+asyncpg://…)"
        )
    return url


def _is_sqlite_memory(url: URL) -> bool:
    database = url.database or ""
    return database in ("", ":memory:") or url.query.get("mode") == "memory"


def _sqlite_on_connect(dbapi_connection: Any, _record: Any, *, wal: bool) -> None:
    cursor = dbapi_connection.cursor()
    try:
        # SQLite leaves foreign keys off unless asked, per connection.
        cursor.execute("PRAGMA foreign_keys=ON")
        # Writers wait for each other instead of failing at once with "database is locked".
        cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
        if wal:
            # WAL lets surfaces read while a worker writes; NORMAL sync is safe under WAL.
            try:
                cursor.execute("PRAGMA journal_mode=WAL")
            except Exception as exc:  # the driver's OperationalError, wrapped by the adapter
                # Switching to WAL takes the lock without SQLite's busy handler. WAL is kept
                # in the file: a connection that loses that race to another is in WAL mode
                # once the winner's switch is done (open_database makes sure of it).
                if "locked" not in str(exc):
                    raise
            cursor.execute("PRAGMA synchronous=NORMAL")
    finally:
        cursor.close()


def create_engine(url: str, **options: Any) -> AsyncEngine:
    """An async engine for `url`; extra keyword options go to `create_async_engine`."""
    parsed = _async_url(url)
    if parsed.get_backend_name() != "sqlite":
        options.setdefault("pool_pre_ping", True)
        return create_async_engine(parsed, **options)

    memory = _is_sqlite_memory(parsed)
    if memory and "poolclass" not in options:
        # One in-memory database lives in one connection, so every session must
        # share it. A StaticPool would hand that connection to several coroutines
        # at once and interleave their transactions (one's ROLLBACK discards the
        # other's work); a pool of exactly one connection shares it one at a time.
        options.update(poolclass=AsyncAdaptedQueuePool, pool_size=1, max_overflow=0)
    engine = create_async_engine(parsed, **options)

    def on_connect(dbapi_connection: Any, record: Any) -> None:
        _sqlite_on_connect(dbapi_connection, record, wal=not memory)

    event.listen(engine.sync_engine, "connect", on_connect)
    return engine


async def create_schema(engine: AsyncEngine) -> None:
    """Bring the schema to the newest revision (from empty, or from an older one); safe to
    call on every start."""
    await upgrade(engine)


async def upgrade(engine: AsyncEngine) -> tuple[migrate.Status, migrate.Status]:
    """Migrate the database to the newest revision: its status before and after."""
    async with begin(engine) as conn:
        return await conn.run_sync(migrate.upgrade)


class UnusableDatabase(InputError):
    """The database cannot be opened or written, or its schema is not this version's."""


def where(url: URL | str) -> str:
    """The database as a person names it: the file of SQLite, else the URL sans password."""
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite" and parsed.database:
        return parsed.database.removeprefix("file:")
    return parsed.render_as_string(hide_password=True)


def _reason(exc: BaseException) -> str:
    # The driver's own words, on one line, without SQLAlchemy's statement and link.
    cause = exc.orig if isinstance(exc, DBAPIError) and exc.orig is not None else exc
    text = " ".join(str(cause).split())
    return text or type(cause).__name__


def _missing(conn: Any) -> list[str]:
    found = inspect(conn)
    missing = []
    for table in metadata.sorted_tables:
        if not found.has_table(table.name):
            missing.append(f"table {table.name}")
            continue
        columns = {c["name"] for c in found.get_columns(table.name)}
        missing += [f"column {table.name}.{c.name}" for c in table.columns if c.name not in columns]
    return missing


async def migrate_database(engine: AsyncEngine) -> str:
    """Upgrade the database to this version's schema; one line that says what was done.
    UnusableDatabase if it cannot be, e.g. at a revision this version does not know."""
    at = where(engine.url)
    try:
        before, after = await upgrade(engine)
    except (SQLAlchemyError, OSError) as exc:
        raise UnusableDatabase(f"the database at {at} cannot be migrated: {_reason(exc)}") from None
    _check_revision(at, after)
    if before.current == after.current:
        return f"the database at {at} is at schema {after.current} already: nothing to do"
    if before.current:
        was = f"at schema {before.current}"
    else:
        was = "empty" if before.empty else "from before migrations"
    return f"the database at {at} was {was} and is now at schema {after.current}"


def _check_revision(at: str, found: migrate.Status) -> None:
    if not found.known:
        raise UnusableDatabase(
            f"the database at {at} has schema revision {found.current}, which this version "
            f"of incident-bot does not know (its newest is {found.head}): a newer version "
            "migrated it; run that version"
        )
    if found.current == found.head:
        return
    if found.current is not None or found.premigration:
        was = found.current or "from before migrations"
        raise UnusableDatabase(
            f"the database at {at} has an older schema ({was}) than this version's "
            f"({found.head}): run `incident-bot migrate` (with the same DATABASE_URL) first"
        )
    raise UnusableDatabase(
        f"the database at {at} holds some of incident-bot's tables "
        f"({', '.join(sorted(found.tables))}) but no schema revision: it is not one this "
        "version can migrate"
    )


async def open_database(engine: AsyncEngine) -> None:
    """Create the schema if needed, then make sure the database can be read and written
    and has every table and column this version uses: a process that would otherwise ack
    requests and lose them refuses to start. UnusableDatabase says why, in one line."""
    at = where(engine.url)
    try:
        async with engine.connect() as conn:
            found = await conn.run_sync(migrate.status)
    except (SQLAlchemyError, OSError) as exc:
        raise UnusableDatabase(f"the database at {at} cannot be opened: {_reason(exc)}") from None
    if found.current != found.head:
        # Read without a lock, the status may be half of another process's migration (its
        # tables, not yet its revision): read it again under the write lock that migration
        # holds, and make the schema if the database is still empty then.
        try:
            async with begin(engine) as conn:
                _, found = await conn.run_sync(migrate.upgrade, only_if_empty=True)
        except (SQLAlchemyError, OSError) as exc:
            if found.empty:
                raise UnusableDatabase(
                    f"the database at {at} cannot be written: {_reason(exc)}"
                ) from None
    _check_revision(at, found)
    try:
        async with engine.connect() as conn:
            missing = await conn.run_sync(_missing)
    except (SQLAlchemyError, OSError) as exc:
        raise UnusableDatabase(f"the database at {at} cannot be read: {_reason(exc)}") from None
    if missing:
        raise UnusableDatabase(
            f"the database at {at} has a schema this version does not know: it lacks "
            + ", ".join(missing)
        )
    try:
        # A row written and rolled back: the database, the file and the user may write.
        async with engine.connect() as conn, conn.begin() as tx:
            await conn.execute(
                insert(leases).values(
                    name=f"incident-bot:write-check:{id(conn)}",
                    holder="write-check",
                    lease_until=utcnow(),
                )
            )
            await tx.rollback()
    except (SQLAlchemyError, OSError) as exc:
        raise UnusableDatabase(f"the database at {at} cannot be written: {_reason(exc)}") from None
    await _ensure_wal(engine)


async def _ensure_wal(engine: AsyncEngine) -> None:
    """A file database in WAL mode, though every connection that tried lost the race to
    switch it (see _sqlite_on_connect)."""
    if engine.dialect.name != "sqlite" or _is_sqlite_memory(engine.url):
        return
    for _ in range(50):
        async with engine.connect() as conn:
            mode = (await conn.exec_driver_sql("PRAGMA journal_mode")).scalar()
            if str(mode).lower() == "wal":
                return
            try:
                await conn.exec_driver_sql("PRAGMA journal_mode=WAL")
            except SQLAlchemyError as exc:
                if "locked" not in str(exc):
                    return  # WAL is speed, not safety: the write check above passed
        await asyncio.sleep(0.05)


_WRITE_LOCKS: weakref.WeakKeyDictionary[Any, asyncio.Lock] = weakref.WeakKeyDictionary()


@contextlib.asynccontextmanager
async def begin(engine: AsyncEngine) -> AsyncIterator[AsyncConnection]:
    """A write transaction. On SQLite, writers of one process take turns here: SQLite's
    own busy handler would make them sleep in steps of up to 100 ms instead; and what it
    announced (storage.wakeups) is delivered once it has committed."""
    if engine.dialect.name != "sqlite":
        async with engine.begin() as conn:
            yield conn
        return
    lock = _WRITE_LOCKS.setdefault(engine.sync_engine, asyncio.Lock())
    async with lock:
        conn = None
        try:
            async with engine.begin() as conn:
                yield conn
        except BaseException:
            if conn is not None:
                wakeups.abandoned(conn)
            raise
    wakeups.committed(engine, conn)
