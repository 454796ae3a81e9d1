"""Doing a request once: Slack event ids already taken in, and creation idempotency keys."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta

from sqlalchemy import delete, insert, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncEngine

from agent.domain import utcnow
from agent.errors import InputError
from storage.db import begin
from storage.tables import idempotency_keys, slack_events

# Slack retries an event three times within about five minutes; an hour is plenty.
EVENT_MEMORY = timedelta(hours=1)


class KeyReused(InputError):
    """An idempotency key that was already used for a different request."""


class SqlIdempotency:
    """`clock` returns an aware UTC datetime."""

    def __init__(self, engine: AsyncEngine, clock: Callable[[], datetime] = utcnow) -> None:
        self._engine = engine
        self._clock = clock

    # -- Slack events ----------------------------------------------------------

    async def first_delivery(self, event_id: str) -> bool:
        """Record the event; False if it was recorded before (a redelivery)."""
        now = self._clock()
        try:
            async with begin(self._engine) as conn:
                await conn.execute(
                    delete(slack_events).where(slack_events.c.received_at < now - EVENT_MEMORY)
                )
                await conn.execute(insert(slack_events).values(event_id=event_id, received_at=now))
        except IntegrityError:
            return False
        return True

    async def forget_event(self, event_id: str) -> None:
        """Handling the event failed: let a redelivery try again."""
        async with begin(self._engine) as conn:
            await conn.execute(delete(slack_events).where(slack_events.c.event_id == event_id))

    # -- creation keys ---------------------------------------------------------

    async def claim_key(self, key: str, request_hash: str, investigation_id: str) -> str:
        """The investigation this key creates: `investigation_id` if the key is new, the one
        it named before if the request is the same; KeyReused if the request differs."""
        try:
            async with begin(self._engine) as conn:
                await conn.execute(
                    insert(idempotency_keys).values(
                        key=key,
                        request_hash=request_hash,
                        investigation_id=investigation_id,
                        created_at=self._clock(),
                    )
                )
        except IntegrityError:
            pass
        async with self._engine.connect() as conn:
            row = (
                await conn.execute(select(idempotency_keys).where(idempotency_keys.c.key == key))
            ).one()
        if row.request_hash != request_hash:
            raise KeyReused(
                f"the idempotency key {key!r} was already used for a different request "
                f"(investigation {row.investigation_id})"
            )
        return str(row.investigation_id)
