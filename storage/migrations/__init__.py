"""Alembic migrations of the schema in storage/tables.py, for SQLite and PostgreSQL.

A change to storage/tables.py comes with a revision in versions/: tests/storage/
test_migrations.py fails until the newest revision makes exactly the tables of tables.py.
"""
