"""The first schema: the tables storage/tables.py created before there were migrations.

Revision ID: 0001
Revises:
Create Date: 2026-12-01
"""

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "idempotency_keys",
        sa.Column("key", sa.String(length=255), nullable=False),
        sa.Column("request_hash", sa.String(length=64), nullable=False),
        sa.Column("investigation_id", sa.String(length=64), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("key", name=op.f("pk_idempotency_keys")),
    )
    op.create_table(
        "investigations",
        sa.Column("id", sa.String(length=64), nullable=False),
        sa.Column("state", sa.String(length=32), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("question", sa.Text(), nullable=False),
        sa.Column("scope", sa.JSON(), nullable=False),
        sa.Column("requester", sa.String(length=255), nullable=True),
        sa.Column("stop_reason", sa.Text(), nullable=True),
        sa.Column("pending_question", sa.Text(), nullable=True),
        sa.Column("diagnosis", sa.JSON(), nullable=True),
        sa.Column("draft", sa.JSON(), nullable=True),
        sa.Column("stats", sa.JSON(), nullable=False),
        sa.Column("extra_budget", sa.Integer(), nullable=False),
        sa.Column("extra", sa.JSON(), nullable=True),
        sa.Column("subject", sa.String(length=255), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_investigations")),
    )
    op.create_index(
        op.f("ix_investigations_created_at"), "investigations", ["created_at"], unique=False
    )
    op.create_index(
        op.f("ix_investigations_requester_created_at"),
        "investigations",
        ["requester", "created_at"],
        unique=False,
    )
    op.create_index(
        op.f("ix_investigations_subject_state"),
        "investigations",
        ["subject", "state"],
        unique=False,
    )

    op.create_table(
        "leases",
        sa.Column("name", sa.String(length=255), nullable=False),
        sa.Column("holder", sa.String(length=255), nullable=False),
        sa.Column("lease_until", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("name", name=op.f("pk_leases")),
    )
    op.create_table(
        "slack_events",
        sa.Column("event_id", sa.String(length=128), nullable=False),
        sa.Column("received_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("event_id", name=op.f("pk_slack_events")),
    )
    op.create_index(
        op.f("ix_slack_events_received_at"), "slack_events", ["received_at"], unique=False
    )

    op.create_table(
        "evidence",
        sa.Column("investigation_id", sa.String(length=64), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("evidence_id", sa.String(length=32), nullable=False),
        sa.Column("source", sa.String(length=32), nullable=False),
        sa.Column("tool", sa.String(length=255), nullable=False),
        sa.Column("title", sa.Text(), nullable=False),
        sa.Column("link", sa.Text(), nullable=True),
        sa.Column("retrieved_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("content", sa.Text(), nullable=False),
        sa.Column("content_hash", sa.String(length=64), nullable=False),
        sa.Column("path", sa.Text(), nullable=True),
        sa.Column("revision", sa.String(length=255), nullable=True),
        sa.Column("data", sa.JSON(), nullable=True),
        sa.Column("written_in_version", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["investigation_id"],
            ["investigations.id"],
            name=op.f("fk_evidence_investigation_id_investigations"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("investigation_id", "seq", name=op.f("pk_evidence")),
        sa.UniqueConstraint(
            "investigation_id", "evidence_id", name=op.f("uq_evidence_investigation_id_evidence_id")
        ),
    )
    op.create_table(
        "jobs",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("kind", sa.String(length=64), nullable=False),
        sa.Column("investigation_id", sa.String(length=64), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("worker", sa.String(length=255), nullable=True),
        sa.Column("lease_until", sa.DateTime(timezone=True), nullable=True),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.Column("again", sa.Boolean(), server_default=sa.false(), nullable=False),
        sa.CheckConstraint(
            "status IN ('queued', 'running', 'done', 'failed')", name=op.f("ck_jobs_status")
        ),
        sa.ForeignKeyConstraint(
            ["investigation_id"],
            ["investigations.id"],
            name=op.f("fk_jobs_investigation_id_investigations"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_jobs")),
    )
    op.create_index(
        op.f("ix_jobs_investigation_id_kind"), "jobs", ["investigation_id", "kind"], unique=False
    )
    op.create_index(
        op.f("ix_jobs_status_id_lease_until"), "jobs", ["status", "id", "lease_until"], unique=False
    )
    op.create_index(
        "uq_jobs_unfinished_kind_investigation",
        "jobs",
        ["kind", "investigation_id"],
        unique=True,
        sqlite_where=sa.text("status IN ('queued', 'running')"),
        postgresql_where=sa.text("status IN ('queued', 'running')"),
    )

    op.create_table(
        "messages",
        sa.Column("investigation_id", sa.String(length=64), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("body", sa.JSON(), nullable=False),
        sa.Column("written_in_version", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["investigation_id"],
            ["investigations.id"],
            name=op.f("fk_messages_investigation_id_investigations"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("investigation_id", "seq", name=op.f("pk_messages")),
    )
    op.create_table(
        "surface_messages",
        sa.Column("investigation_id", sa.String(length=64), nullable=False),
        sa.Column("key", sa.String(length=64), nullable=False),
        sa.Column("channel", sa.String(length=64), nullable=False),
        sa.Column("ts", sa.String(length=32), nullable=True),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("payload_hash", sa.String(length=64), nullable=True),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["investigation_id"],
            ["investigations.id"],
            name=op.f("fk_surface_messages_investigation_id_investigations"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("investigation_id", "key", name=op.f("pk_surface_messages")),
    )
    op.create_index(
        op.f("ix_surface_messages_channel_ts"), "surface_messages", ["channel", "ts"], unique=False
    )


def downgrade() -> None:
    op.drop_index(op.f("ix_surface_messages_channel_ts"), "surface_messages")

    op.drop_table("surface_messages")
    op.drop_table("messages")
    op.drop_index(
        "uq_jobs_unfinished_kind_investigation",
        "jobs",
        sqlite_where=sa.text("status IN ('queued', 'running')"),
        postgresql_where=sa.text("status IN ('queued', 'running')"),
    )
    op.drop_index(op.f("ix_jobs_status_id_lease_until"), "jobs")
    op.drop_index(op.f("ix_jobs_investigation_id_kind"), "jobs")

    op.drop_table("jobs")
    op.drop_table("evidence")
    op.drop_index(op.f("ix_slack_events_received_at"), "slack_events")

    op.drop_table("slack_events")
    op.drop_table("leases")
    op.drop_index(op.f("ix_investigations_subject_state"), "investigations")
    op.drop_index(op.f("ix_investigations_requester_created_at"), "investigations")
    op.drop_index(op.f("ix_investigations_created_at"), "investigations")

    op.drop_table("investigations")
    op.drop_table("idempotency_keys")
