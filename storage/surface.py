"""What each surface has already shown, so a retry or a restart never shows it twice."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from pydantic import BaseModel
from sqlalchemy import insert, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncEngine

from agent.domain import utcnow
from storage.db import begin
from storage.tables import surface_messages

PENDING, POSTED = "pending", "posted"


class Shown(BaseModel):
    investigation_id: str
    key: str
    channel: str
    ts: str | None
    state: str
    payload_hash: str | None


class SqlSurfaceMessages:
    def __init__(self, engine: AsyncEngine, clock: Callable[[], datetime] = utcnow) -> None:
        self._engine = engine
        self._clock = clock

    async def all_for(self, investigation_id: str) -> dict[str, Shown]:
        async with self._engine.connect() as conn:
            rows = await conn.execute(
                select(surface_messages).where(
                    surface_messages.c.investigation_id == investigation_id
                )
            )
            return {r.key: Shown.model_validate(r._asdict()) for r in rows}

    async def begin(self, investigation_id: str, key: str, channel: str) -> bool:
        """Record that a post is about to go out; False if one was already recorded."""
        try:
            async with begin(self._engine) as conn:
                await conn.execute(
                    insert(surface_messages).values(
                        investigation_id=investigation_id,
                        key=key,
                        channel=channel,
                        ts=None,
                        state=PENDING,
                        payload_hash=None,
                        updated_at=self._clock(),
                    )
                )
        except IntegrityError:
            return False
        return True

    async def posted(
        self, investigation_id: str, key: str, channel: str, ts: str, payload_hash: str
    ) -> None:
        async with begin(self._engine) as conn:
            await conn.execute(
                update(surface_messages)
                .where(
                    surface_messages.c.investigation_id == investigation_id,
                    surface_messages.c.key == key,
                )
                .values(
                    channel=channel,
                    ts=ts,
                    state=POSTED,
                    payload_hash=payload_hash,
                    updated_at=self._clock(),
                )
            )

    async def investigation_at(self, channel: str, ts: str) -> tuple[str, str] | None:
        """The investigation and item a Slack message belongs to (a thread root, a card)."""
        async with self._engine.connect() as conn:
            row = (
                await conn.execute(
                    select(surface_messages.c.investigation_id, surface_messages.c.key).where(
                        surface_messages.c.channel == channel, surface_messages.c.ts == ts
                    )
                )
            ).first()
        return (row.investigation_id, row.key) if row else None
