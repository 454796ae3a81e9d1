"""The tables. SQLAlchemy Core, portable between SQLite and PostgreSQL.

A change here comes with a revision in storage/migrations/versions (Alembic).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    Boolean,
    CheckConstraint,
    Column,
    DateTime,
    Dialect,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    PrimaryKeyConstraint,
    String,
    Table,
    Text,
    UniqueConstraint,
    false,
    text,
)
from sqlalchemy.types import TypeDecorator

# Named constraints, so that migrations can refer to them on any backend.
metadata = MetaData(
    naming_convention={
        "ix": "ix_%(table_name)s_%(column_0_N_name)s",
        "uq": "uq_%(table_name)s_%(column_0_N_name)s",
        "ck": "ck_%(table_name)s_%(constraint_name)s",
        "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
        "pk": "pk_%(table_name)s",
    }
)


class UTCDateTime(TypeDecorator[datetime]):
    """A timezone-aware UTC datetime on every backend.

    PostgreSQL keeps it as timestamptz. SQLite has no time type: values are
    stored as naive UTC text, so that `<` between two of them compares times.
    Naive datetimes are refused: which zone they mean is a guess.
    """

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None or value.utcoffset() is None:
            raise ValueError(f"naive datetime {value.isoformat()}: give it a timezone")
        value = value.astimezone(UTC)
        if dialect.name == "sqlite":
            return value.replace(tzinfo=None)
        return value

    def process_result_value(self, value: Any, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value.astimezone(UTC)


# none_as_null: a Python None is SQL NULL, not the JSON text 'null'.
JSONValue = JSON(none_as_null=True)

investigations = Table(
    "investigations",
    metadata,
    Column("id", String(64), primary_key=True),
    Column("state", String(32), nullable=False),
    Column("version", Integer, nullable=False),
    Column("question", Text, nullable=False),
    Column("scope", JSONValue, nullable=False),
    Column("requester", String(255), nullable=True),
    Column("stop_reason", Text, nullable=True),
    Column("pending_question", Text, nullable=True),
    Column("diagnosis", JSONValue, nullable=True),
    Column("draft", JSONValue, nullable=True),
    Column("stats", JSONValue, nullable=False),
    Column("extra_budget", Integer, nullable=False, default=0),
    # Origin, approval, publication: small JSON values read with the aggregate.
    Column("extra", JSONValue, nullable=True),
    # What the run turned out to be about, to find another run on the same error.
    Column("subject", String(255), nullable=True),
    Column("created_at", UTCDateTime, nullable=False),
    Column("updated_at", UTCDateTime, nullable=False),
    # `recent()`: newest first, optionally for one requester.
    Index(None, "created_at"),
    Index(None, "requester", "created_at"),
    Index(None, "subject", "state"),
)

# Messages and evidence are append-only children of an investigation, numbered
# from 1 in the order the aggregate holds them. `written_in_version` is the
# aggregate version whose save inserted the row: a load keeps only rows up to
# the version it read, so it is a consistent snapshot on any isolation level.
evidence = Table(
    "evidence",
    metadata,
    Column(
        "investigation_id",
        String(64),
        ForeignKey("investigations.id", ondelete="CASCADE"),
        nullable=False,
    ),
    Column("seq", Integer, nullable=False),
    Column("evidence_id", String(32), nullable=False),
    Column("source", String(32), nullable=False),
    Column("tool", String(255), nullable=False),
    Column("title", Text, nullable=False),
    Column("link", Text, nullable=True),
    Column("retrieved_at", UTCDateTime, nullable=False),
    Column("content", Text, nullable=False),
    Column("content_hash", String(64), nullable=False),
    Column("path", Text, nullable=True),
    Column("revision", String(255), nullable=True),
    Column("data", JSONValue, nullable=True),
    Column("written_in_version", Integer, nullable=False),
    PrimaryKeyConstraint("investigation_id", "seq"),
    UniqueConstraint("investigation_id", "evidence_id"),
)

messages = Table(
    "messages",
    metadata,
    Column(
        "investigation_id",
        String(64),
        ForeignKey("investigations.id", ondelete="CASCADE"),
        nullable=False,
    ),
    Column("seq", Integer, nullable=False),
    Column("body", JSONValue, nullable=False),
    Column("written_in_version", Integer, nullable=False),
    # The primary key is the unique(investigation_id, seq).
    PrimaryKeyConstraint("investigation_id", "seq"),
)

UNFINISHED = ("queued", "running")
_UNFINISHED_SQL = "status IN ('queued', 'running')"

jobs = Table(
    "jobs",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("kind", String(64), nullable=False),
    Column(
        "investigation_id",
        String(64),
        ForeignKey("investigations.id", ondelete="CASCADE"),
        nullable=False,
    ),
    Column("status", String(16), nullable=False),
    Column("worker", String(255), nullable=True),
    Column("lease_until", UTCDateTime, nullable=True),
    Column("attempts", Integer, nullable=False, default=0),
    Column("created_at", UTCDateTime, nullable=False),
    # When the current holder claimed it: with created_at, how long a job waited.
    Column("claimed_at", UTCDateTime, nullable=True),
    Column("finished_at", UTCDateTime, nullable=True),
    Column("last_error", Text, nullable=True),
    # Asked for again while running (an answer, a retry): complete() queues it once more.
    Column("again", Boolean, nullable=False, default=False, server_default=false()),
    CheckConstraint(
        "status IN ('queued', 'running', 'done', 'failed')",
        name="status",
    ),
    # claim(): candidates by status, oldest (lowest id) first; lease_until is
    # filtered from the same index entries.
    Index(None, "status", "id", "lease_until"),
    # At most one unfinished job of a kind per investigation, enforced by the
    # database so two concurrent enqueues cannot both insert. A partial unique
    # index: both SQLite and PostgreSQL have them, with the same syntax.
    Index(
        "uq_jobs_unfinished_kind_investigation",
        "kind",
        "investigation_id",
        unique=True,
        sqlite_where=text(_UNFINISHED_SQL),
        postgresql_where=text(_UNFINISHED_SQL),
    ),
    # enqueue()'s lookup, and PostgreSQL does not index foreign keys by itself.
    Index(None, "investigation_id", "kind"),
)

# What a surface has shown of an investigation: one row per item (root, E3, diagnosis…).
# `ts` is empty while a post is under way: a crash then leaves `pending` behind, and the
# next pass looks in the thread before posting again.
surface_messages = Table(
    "surface_messages",
    metadata,
    Column(
        "investigation_id",
        String(64),
        ForeignKey("investigations.id", ondelete="CASCADE"),
        nullable=False,
    ),
    Column("key", String(64), nullable=False),
    Column("channel", String(64), nullable=False),
    Column("ts", String(32), nullable=True),
    Column("state", String(16), nullable=False),
    Column("payload_hash", String(64), nullable=True),
    Column("updated_at", UTCDateTime, nullable=False),
    PrimaryKeyConstraint("investigation_id", "key"),
    Index(None, "channel", "ts"),
)

# Named leases outside the job queue: one holder at a time, until `lease_until` (the
# Slack thread of an investigation is brought up to date by one process at a time).
leases = Table(
    "leases",
    metadata,
    Column("name", String(255), primary_key=True),
    Column("holder", String(255), nullable=False),
    Column("lease_until", UTCDateTime, nullable=False),
)

# Slack events already taken in, by event_id: Slack delivers an event again when it
# thinks the first delivery was lost (X-Slack-Retry-Num), and Bolt does not deduplicate.
slack_events = Table(
    "slack_events",
    metadata,
    Column("event_id", String(128), primary_key=True),
    Column("received_at", UTCDateTime, nullable=False),
    Index(None, "received_at"),
)

# Idempotency keys of creation requests. The key is written before the investigation
# (so no foreign key): a request that finds its key finishes the creation it names.
idempotency_keys = Table(
    "idempotency_keys",
    metadata,
    Column("key", String(255), primary_key=True),
    Column("request_hash", String(64), nullable=False),
    Column("investigation_id", String(64), nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
)

# Sentry webhook deliveries, stored before they are answered. The keys refuse a replay (the
# same Request-ID, or the same signed body under another one) in the same INSERT; a pending
# one is taken in after the answer, by any process, under a lease — so a process that dies
# after answering loses nothing: after its lease runs out another one takes it in.
sentry_deliveries = Table(
    "sentry_deliveries",
    metadata,
    Column("request_id", String(200), primary_key=True),
    Column("body_hash", String(64), nullable=False),
    Column("resource", String(64), nullable=False),
    Column("payload", JSONValue, nullable=False),
    Column("received_at", UTCDateTime, nullable=False),
    Column("status", String(16), nullable=False),  # pending, done
    Column("holder", String(255), nullable=True),
    Column("lease_until", UTCDateTime, nullable=True),
    Column("attempts", Integer, nullable=False, default=0),
    # What taking it in came to: HookAnswer (queued, joined, skipped, ignored, failed).
    Column("outcome", JSONValue, nullable=True),
    UniqueConstraint("body_hash"),
    Index(None, "status", "received_at"),
)
