"""sentry_deliveries: webhook deliveries stored before they are answered, taken in after.

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-01
"""

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "sentry_deliveries",
        sa.Column("request_id", sa.String(length=200), nullable=False),
        sa.Column("body_hash", sa.String(length=64), nullable=False),
        sa.Column("resource", sa.String(length=64), nullable=False),
        sa.Column("payload", sa.JSON(), nullable=False),
        sa.Column("received_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("holder", sa.String(length=255), nullable=True),
        sa.Column("lease_until", sa.DateTime(timezone=True), nullable=True),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("outcome", sa.JSON(), nullable=True),
        sa.PrimaryKeyConstraint("request_id", name=op.f("pk_sentry_deliveries")),
        sa.UniqueConstraint("body_hash", name=op.f("uq_sentry_deliveries_body_hash")),
    )
    op.create_index(
        op.f("ix_sentry_deliveries_status_received_at"),
        "sentry_deliveries",
        ["status", "received_at"],
        unique=False,
    )


def downgrade() -> None:
    op.drop_index(op.f("ix_sentry_deliveries_status_received_at"), "sentry_deliveries")
    op.drop_table("sentry_deliveries")
