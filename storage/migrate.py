"""The schema's version: Alembic migrations (storage/migrations), for SQLite and PostgreSQL.

Functions of a sync connection (`AsyncConnection.run_sync`): storage.db runs them.

An empty database is brought to the newest revision by whoever opens it first. A database
at an older revision, or made before there were migrations (today's tables, no version),
is upgraded only by `incident-bot migrate`: serve and worker refuse to start on it, and
on a revision they do not know (written by a newer incident-bot).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import inspect, text

# The revision whose tables are those of the databases made before migrations existed.
INITIAL = "0001"
_INITIAL_TABLES = frozenset(
    {
        "investigations",
        "evidence",
        "messages",
        "jobs",
        "surface_messages",
        "leases",
        "slack_events",
        "idempotency_keys",
    }
)
# Any constant: the key of the advisory lock migrating PostgreSQL processes take turns on.
_PG_LOCK = 0x1B0D_5C4E


def config(connection: Any = None) -> Config:
    """Alembic's configuration, to run its commands on this (sync) connection."""
    alembic = Config()
    alembic.set_main_option("script_location", str(Path(__file__).parent / "migrations"))
    alembic.attributes["connection"] = connection
    return alembic


def _script() -> ScriptDirectory:
    return ScriptDirectory.from_config(config())


def head() -> str:
    """The newest revision this version knows."""
    newest = _script().get_current_head()
    assert newest is not None
    return newest


@dataclass(frozen=True)
class Status:
    current: str | None  # the database's revision; None when it has none
    head: str
    tables: frozenset[str]  # the tables it has (without alembic_version)

    @property
    def empty(self) -> bool:
        """None of our tables (a PostgreSQL database may hold other applications')."""
        return self.current is None and not self.tables & _INITIAL_TABLES

    @property
    def premigration(self) -> bool:
        """The tables of the first schema, made before migrations existed: no revision."""
        return self.current is None and self.tables >= _INITIAL_TABLES

    @property
    def known(self) -> bool:
        return self.current is None or _known(self.current)


def _known(revision: str) -> bool:
    try:
        return _script().get_revision(revision) is not None
    except Exception:  # an unknown or malformed revision id
        return False


def status(conn: Any) -> Status:
    """The schema of the database on this (sync) connection."""
    current = MigrationContext.configure(conn).get_current_revision()
    tables = frozenset(inspect(conn).get_table_names()) - {"alembic_version"}
    return Status(current=current, head=head(), tables=tables)


def _lock(conn: Any) -> None:
    # One migrating process at a time; the others find the work done once they get in.
    if conn.dialect.name == "postgresql":
        conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _PG_LOCK})
    else:
        # pysqlite starts transactions lazily and not for DDL: take the write lock now,
        # so that the whole migration is one transaction and concurrent ones wait.
        conn.exec_driver_sql("BEGIN IMMEDIATE")


def upgrade(conn: Any, *, only_if_empty: bool = False) -> tuple[Status, Status]:
    """Bring the database on this (sync) connection, in its transaction, to the newest
    revision: (status before, status after). A database at a revision this version does not
    know is left as it is; so is any but an empty one if `only_if_empty`."""
    _lock(conn)
    before = status(conn)
    if not before.known:
        return before, before
    if only_if_empty and not before.empty:
        return before, before
    alembic = config(conn)
    if before.premigration:
        command.stamp(alembic, INITIAL)
    command.upgrade(alembic, "head")
    return before, status(conn)
