"""Wake-ups: a committed write tells whoever waits on it, so that nobody has to poll fast.

A write announces itself inside its transaction (`announce`): on PostgreSQL that is a
NOTIFY, which the server delivers when the transaction commits to every process that
LISTENs, this one included; on SQLite there is no server to tell, so the listeners of the
writing process are called once the transaction of `storage.db.begin` has committed, and
other processes find the work by polling, as before. A rolled-back write wakes nobody.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import weakref
from collections import defaultdict
from collections.abc import Callable
from typing import Any

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

log = logging.getLogger(__name__)

# A job was queued (payload: its id); an investigation was stored (payload: its id).
JOBS = "incident_bot_jobs"
INVESTIGATIONS = "incident_bot_investigations"
RECONNECT_SECONDS = 1.0

Listener = Callable[[str], None]

# SQLite: what each open write transaction announced, and each engine's listeners.
_PENDING: weakref.WeakKeyDictionary[AsyncConnection, list[tuple[str, str]]] = (
    weakref.WeakKeyDictionary()
)
_LOCAL: weakref.WeakKeyDictionary[Any, dict[str, list[Listener]]] = weakref.WeakKeyDictionary()


async def announce(conn: AsyncConnection, channel: str, payload: str) -> None:
    """Inside a write transaction of `storage.db.begin`: wake the listeners of `channel`
    once it commits."""
    if conn.dialect.name == "postgresql":
        await conn.execute(
            text("SELECT pg_notify(:channel, :payload)"), {"channel": channel, "payload": payload}
        )
    else:
        _PENDING.setdefault(conn, []).append((channel, payload))


def committed(engine: AsyncEngine, conn: AsyncConnection) -> None:
    """storage.db.begin, after a commit: deliver what the transaction announced (SQLite)."""
    pending = _PENDING.pop(conn, None)
    listeners = _LOCAL.get(engine.sync_engine)
    for channel, payload in pending or ():
        for listener in (listeners or {}).get(channel, ()):
            _call(listener, payload)


def abandoned(conn: AsyncConnection) -> None:
    """storage.db.begin, after a rollback: what it announced did not happen."""
    _PENDING.pop(conn, None)


def _call(listener: Listener, payload: str) -> None:
    try:
        listener(payload)
    except Exception:
        log.exception("a wake-up listener failed")


async def _connect(engine: AsyncEngine) -> Any:
    import asyncpg

    url = engine.url
    return await asyncpg.connect(
        user=url.username,
        password=url.password,
        host=url.host,
        port=url.port,
        database=url.database,
        **{k: v for k, v in url.query.items() if k in ("ssl", "server_settings")},
    )


class Wakeups:
    """Calls listeners when a write of any process (PostgreSQL) or of this one (SQLite)
    announced on their channel. `start()` before, `aclose()` after."""

    def __init__(self, engine: AsyncEngine) -> None:
        self._engine = engine
        self._listeners: defaultdict[str, list[Listener]] = defaultdict(list)
        self._task: asyncio.Task[None] | None = None
        self.listening = asyncio.Event()  # PostgreSQL: LISTEN is in place

    @property
    def cross_process(self) -> bool:
        """Whether other processes' writes wake this one (else they are polled for)."""
        return self._engine.dialect.name == "postgresql"

    def listen(self, channel: str, listener: Listener) -> None:
        self._listeners[channel].append(listener)

    async def start(self) -> None:
        if not self.cross_process:
            local = _LOCAL.setdefault(self._engine.sync_engine, {})
            for channel, listeners in self._listeners.items():
                local.setdefault(channel, []).extend(listeners)
            return
        self._task = asyncio.create_task(self._listen())
        # Listening before start() returns: a write made after it wakes us.
        waiting = asyncio.create_task(self.listening.wait())
        await asyncio.wait({waiting, self._task}, return_when=asyncio.FIRST_COMPLETED)
        waiting.cancel()

    async def aclose(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        local = _LOCAL.get(self._engine.sync_engine, {})
        for channel, listeners in self._listeners.items():
            for listener in listeners:
                with contextlib.suppress(ValueError):
                    local.get(channel, []).remove(listener)

    async def _listen(self) -> None:
        # A connection of its own kept for LISTEN; if it is lost, another, and
        # meanwhile the pollers' slow fallback covers what was announced.
        while True:
            conn = None
            try:
                conn = await _connect(self._engine)
                lost = asyncio.Event()
                conn.add_termination_listener(lambda _c, lost=lost: lost.set())
                for channel in self._listeners:
                    await conn.add_listener(channel, self._notified)
                self.listening.set()
                # Whatever was announced while nobody listened: wake everyone once.
                for channel in self._listeners:
                    self._deliver(channel, "")
                await lost.wait()
                log.warning("the LISTEN connection was lost; listening again")
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                log.warning("cannot LISTEN for wake-ups (%s); polling meanwhile", exc)
            finally:
                self.listening.clear()
                if conn is not None:
                    with contextlib.suppress(Exception):
                        await conn.close(timeout=2)
            await asyncio.sleep(RECONNECT_SECONDS)

    def _notified(self, _conn: Any, _pid: int, channel: str, payload: str) -> None:
        self._deliver(channel, payload)

    def _deliver(self, channel: str, payload: str) -> None:
        for listener in self._listeners.get(channel, ()):
            _call(listener, payload)
