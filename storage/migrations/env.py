"""Alembic's entry point: runs on the connection storage.migrate hands it."""

from alembic import context

from storage.tables import metadata

connection = context.config.attributes["connection"]
context.configure(
    connection=connection,
    target_metadata=metadata,
    # SQLite alters a table by copying it: Alembic's batch mode does that.
    render_as_batch=True,
    compare_type=True,
)
with context.begin_transaction():
    context.run_migrations()
