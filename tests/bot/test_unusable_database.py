"""A database that cannot take requests stops `serve`, `worker` and `investigate` at start:
one line on stderr, exit code 2, nothing acked and lost."""

import asyncio
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import alembic.command
import pytest

from storage.db import create_engine, create_schema
from storage.migrate import config

BIN = Path(sys.executable).with_name("incident-bot")


def make_schema(db: Path) -> None:
    async def create() -> None:
        engine = create_engine(f"sqlite+aiosqlite:///{db}")
        await create_schema(engine)
        await engine.dispose()

    asyncio.run(create())


async def at_revision_0001(db: Path) -> None:
    engine = create_engine(f"sqlite+aiosqlite:///{db}")
    async with engine.begin() as conn:
        await conn.run_sync(lambda c: alembic.command.upgrade(config(c), "0001"))
    await engine.dispose()


def broken(kind: str, tmp_path: Path) -> tuple[str, str]:
    """(DATABASE_URL, what stderr must say)."""
    db = tmp_path / "bot.db"
    if kind == "read-only":
        make_schema(db)
        return f"sqlite+aiosqlite:///file:{db}?mode=ro&uri=true", "cannot be written"
    if kind == "corrupt":
        db.write_bytes(b"this is not an SQLite database file" * 200)
        return f"sqlite+aiosqlite:///{db}", "cannot be opened: file is not a database"
    if kind == "older-revision":
        asyncio.run(at_revision_0001(db))
        return f"sqlite+aiosqlite:///{db}", "older schema (0001)"
    assert kind == "older-schema"
    make_schema(db)
    with sqlite3.connect(db) as conn:
        conn.execute("ALTER TABLE jobs DROP COLUMN again")
    return f"sqlite+aiosqlite:///{db}", "lacks column jobs.again"


def command(name: str, scenario: Path) -> list[str]:
    if name == "serve":
        return ["serve", "--scenario", str(scenario), "--offline", "--http", "--port", "0"]
    if name == "worker":
        return ["worker", "--scenario", str(scenario), "--offline"]
    return ["investigate", "--scenario", str(scenario), "--offline", "--json"]


@pytest.mark.parametrize("kind", ["read-only", "corrupt", "older-schema", "older-revision"])
@pytest.mark.parametrize("name", ["serve", "worker", "investigate"])
def test_an_unusable_database_is_one_line_and_exit_2(built_scenarios, tmp_path, name, kind):
    url, says = broken(kind, tmp_path)
    drop = ("GROQ_API_KEY", "GITHUB_TOKEN", "LOG_LEVEL")
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env.update(DATABASE_URL=url, SLACK_BOT_TOKEN="xoxb-test", SLACK_SIGNING_SECRET="s")
    done = subprocess.run(
        [str(BIN), *command(name, built_scenarios["orders"])],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith(f"incident-bot: the database at {tmp_path / 'bot.db'} ")
    assert says in lines[0]
    if kind == "older-revision":
        assert lines[0].endswith("run `incident-bot migrate` (with the same DATABASE_URL) first")
    assert done.stdout == ""
    if kind != "corrupt":
        with sqlite3.connect(tmp_path / "bot.db") as conn:
            assert conn.execute("SELECT count(*) FROM investigations").fetchone() == (0,)
            assert conn.execute("SELECT count(*) FROM leases").fetchone() == (0,)
