"""A throwaway PostgreSQL server for the tests: initdb into a temporary folder, a free port,
run as an unprivileged user when the tests run as root, stopped at the end of the session.

Debian's `postgresql` package puts the server in /usr/lib/postgresql/<version>/bin (`.ci/run`
installs it); without it the PostgreSQL half of the tests is skipped, unless
INCIDENT_BOT_REQUIRE_POSTGRES=1 (CI) makes that a failure.
"""

from __future__ import annotations

import contextlib
import glob
import itertools
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from typing import BinaryIO

import pytest

SUPERUSER = "postgres"
MISSING = (
    "no PostgreSQL server here (initdb and postgres, from Debian's postgresql package, "
    "are not in /usr/lib/postgresql/*/bin nor on PATH): the PostgreSQL half is skipped"
)


def server_binaries() -> Path | None:
    """The newest installed server's bin folder."""

    def version(path: str) -> tuple[int, ...]:
        name = Path(path).parents[1].name
        return tuple(int(p) for p in name.split(".") if p.isdigit())

    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/postgres"), key=version)
    if found:
        return Path(found[-1]).parent
    on_path = shutil.which("postgres")
    if on_path and shutil.which("initdb"):
        return Path(on_path).parent
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class PostgresServer:
    def __init__(self, bindir: Path) -> None:
        self.bindir = bindir
        self.folder = Path(tempfile.mkdtemp(prefix="incident-bot-pg-"))
        self.port = _free_port()
        self.process: subprocess.Popen[bytes] | None = None
        self._names = itertools.count(1)
        self._log: BinaryIO | None = None
        # The server refuses to run as root: use nobody's uid, on a folder it owns.
        self.user = pwd.getpwnam("nobody") if os.geteuid() == 0 else None
        if self.user is not None:
            os.chown(self.folder, self.user.pw_uid, self.user.pw_gid)

    def _run(self, *args: str, **kw: object) -> subprocess.Popen[bytes]:
        extra: dict[str, object] = {}
        if self.user is not None:
            extra = {"user": self.user.pw_uid, "group": self.user.pw_gid, "extra_groups": []}
        return subprocess.Popen(
            list(args),
            cwd=self.folder,
            env={"PATH": os.environ.get("PATH", ""), "LC_ALL": "C", "TZ": "UTC"},
            **extra,
            **kw,  # type: ignore[arg-type]
        )

    def start(self) -> None:
        data = self.folder / "data"
        init = self._run(
            str(self.bindir / "initdb"),
            "-D",
            str(data),
            "-U",
            SUPERUSER,
            "--auth=trust",
            "-E",
            "UTF8",
            "--no-sync",
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        out, _ = init.communicate(timeout=120)
        if init.returncode != 0:
            raise RuntimeError(f"initdb failed: {out.decode(errors='replace')[-2000:]}")
        self.log = self.folder / "server.log"
        self._log = open(self.log, "wb")  # noqa: SIM115 - the server writes it until stop()
        self.process = self._run(
            str(self.bindir / "postgres"),
            "-D",
            str(data),
            "-p",
            str(self.port),
            "-k",
            str(self.folder),
            "-c",
            "listen_addresses=127.0.0.1",
            # A throwaway server: durability buys nothing here and costs seconds.
            "-c",
            "fsync=off",
            "-c",
            "synchronous_commit=off",
            "-c",
            "full_page_writes=off",
            "-c",
            "max_connections=200",
            stdout=subprocess.DEVNULL,
            stderr=self._log,
        )
        deadline = time.monotonic() + 30
        while self._psql("SELECT 1", check=False).returncode != 0:
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"postgres did not start: {self.log.read_text()[-2000:]}")
            time.sleep(0.1)

    def _psql(self, sql: str, *, check: bool = True) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [
                str(self.bindir / "psql") if (self.bindir / "psql").exists() else "psql",
                "-h",
                "127.0.0.1",
                "-p",
                str(self.port),
                "-U",
                SUPERUSER,
                "-d",
                "postgres",
                "-v",
                "ON_ERROR_STOP=1",
                "-qAtc",
                sql,
            ],
            capture_output=True,
            text=True,
            check=check,
            timeout=30,
        )

    def create_database(self) -> str:
        """A new empty database, as an async SQLAlchemy URL."""
        name = f"t{os.getpid()}_{next(self._names)}"
        self._psql(f'CREATE DATABASE "{name}"')
        return f"postgresql+asyncpg://{SUPERUSER}@127.0.0.1:{self.port}/{name}"

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)  # fast shutdown: no waiting for clients
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self._log is not None:
            self._log.close()
        shutil.rmtree(self.folder, ignore_errors=True)


@pytest.fixture(scope="session")
def postgres_server() -> object:
    bindir = server_binaries()
    if bindir is None:
        if os.environ.get("INCIDENT_BOT_REQUIRE_POSTGRES") == "1":
            pytest.fail(MISSING.replace("is skipped", "is required here"))
        pytest.skip(MISSING)
    server = PostgresServer(bindir)
    try:
        server.start()
        yield server
    finally:
        with contextlib.suppress(Exception):
            server.stop()


def database_url(request: pytest.FixtureRequest, kind: str, tmp_path: Path) -> str:
    """A fresh empty database of `kind`: a SQLite file, SQLite in memory, or PostgreSQL."""
    if kind == "sqlite":
        return f"sqlite+aiosqlite:///{tmp_path / 'bot.db'}"
    if kind == "memory":
        return "sqlite+aiosqlite:///:memory:"
    assert kind == "postgresql", kind
    server: PostgresServer = request.getfixturevalue("postgres_server")
    return server.create_database()


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A fresh empty database: a SQLite file, then a database on the PostgreSQL server."""
    return database_url(request, request.param, tmp_path)


@pytest.fixture
def pg_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A fresh empty database on the PostgreSQL server, for what only PostgreSQL does."""
    return database_url(request, "postgresql", tmp_path)
