"""`SqlStore`: the Investigation aggregate in SQL, with optimistic concurrency."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, date, datetime
from datetime import time as dt_time
from typing import Any

from pydantic import BaseModel
from sqlalchemy import func, insert, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from agent.domain import Evidence, Investigation, State, utcnow
from agent.errors import ConcurrencyError, NotFound
from storage.db import begin
from storage.tables import evidence, investigations, messages
from storage.wakeups import INVESTIGATIONS, announce


class InvestigationSummary(BaseModel):
    """A row of a list: what `recent()` returns without loading the aggregate."""

    id: str
    question: str
    state: State
    requester: str | None
    created_at: datetime
    project: str = ""


def _aggregate_fields(inv: Investigation) -> dict[str, Any]:
    """The investigations row, minus id, version and timestamps."""
    return {
        "state": inv.state.value,
        "question": inv.question,
        "scope": inv.scope.model_dump(mode="json"),
        "requester": inv.requester,
        "stop_reason": inv.stop_reason,
        "pending_question": inv.pending_question,
        "diagnosis": inv.diagnosis.model_dump(mode="json") if inv.diagnosis else None,
        "draft": inv.draft.model_dump(mode="json") if inv.draft else None,
        "stats": inv.stats.model_dump(mode="json"),
        "extra_budget": inv.extra_budget,
        "extra": inv.model_dump(
            mode="json",
            include={
                "origin",
                "approval",
                "past_approvals",
                "publication",
                "discarded",
                "duplicate_of",
                "rerun_of",
                "superseded_by",
            },
        ),
        "subject": inv.subject,
    }


def _evidence_row(ev: Evidence) -> dict[str, Any]:
    return {
        "evidence_id": ev.id,
        "source": ev.source,
        "tool": ev.tool,
        "title": ev.title,
        "link": ev.link,
        "retrieved_at": ev.retrieved_at,
        "content": ev.content,
        "content_hash": ev.content_hash,
        "path": ev.path,
        "revision": ev.revision,
        # Round-tripped through JSON, like everything else the aggregate holds.
        "data": ev.model_dump(mode="json", include={"data"})["data"],
    }


def _evidence_from_row(row: Any) -> Evidence:
    return Evidence(
        id=row.evidence_id,
        source=row.source,
        tool=row.tool,
        title=row.title,
        link=row.link,
        retrieved_at=row.retrieved_at,
        content=row.content,
        content_hash=row.content_hash,
        path=row.path,
        revision=row.revision,
        data=row.data,
    )


class SqlStore:
    """Implements `agent.ports.InvestigationStore`, plus the small reads surfaces catch up with."""

    def __init__(self, engine: AsyncEngine, clock: Callable[[], datetime] = utcnow) -> None:
        self._engine = engine
        self._clock = clock

    # -- the port --------------------------------------------------------------

    async def create(self, inv: Investigation, replacing: Investigation | None = None) -> None:
        """Insert a new aggregate with whatever messages and evidence it has; version becomes 1.
        `replacing` (the run a re-run supersedes) is saved in the same transaction."""
        try:
            async with begin(self._engine) as conn:
                replaced = await self.update(conn, replacing) if replacing else None
                await self.insert(conn, inv)
        except IntegrityError:
            if await self._version_of(inv.id) is not None:
                raise ConcurrencyError(f"investigation {inv.id} already exists") from None
            raise
        inv.version = 1
        if replacing is not None and replaced is not None:
            replacing.version = replaced

    async def insert(self, conn: AsyncConnection, inv: Investigation) -> None:
        """create()'s INSERT in the caller's transaction (storage.admission)."""
        await conn.execute(
            insert(investigations).values(
                id=inv.id,
                version=1,
                created_at=inv.created_at,
                updated_at=self._clock(),
                **_aggregate_fields(inv),
            )
        )
        await self._append(conn, inv, stored_messages=0, stored_evidence=0, version=1)
        await announce(conn, INVESTIGATIONS, inv.id)

    async def load(self, investigation_id: str) -> Investigation:
        async with self._engine.connect() as conn:
            row = (
                await conn.execute(
                    select(investigations).where(investigations.c.id == investigation_id)
                )
            ).one_or_none()
            if row is None:
                raise NotFound(f"no investigation {investigation_id}")
            # Rows written by a save that committed after the row above was read
            # belong to a later version: leave them out, so what is returned is
            # exactly version `row.version` (and a save of it stays consistent).
            message_rows = await conn.execute(
                select(messages.c.body)
                .where(
                    messages.c.investigation_id == investigation_id,
                    messages.c.written_in_version <= row.version,
                )
                .order_by(messages.c.seq)
            )
            evidence_rows = await conn.execute(
                select(evidence)
                .where(
                    evidence.c.investigation_id == investigation_id,
                    evidence.c.written_in_version <= row.version,
                )
                .order_by(evidence.c.seq)
            )
            return Investigation.model_validate(
                {
                    "id": row.id,
                    "question": row.question,
                    "scope": row.scope,
                    "state": row.state,
                    "version": row.version,
                    "created_at": row.created_at,
                    "requester": row.requester,
                    "stop_reason": row.stop_reason,
                    "pending_question": row.pending_question,
                    "messages": [r.body for r in message_rows],
                    "evidence": [_evidence_from_row(r) for r in evidence_rows],
                    "diagnosis": row.diagnosis,
                    "draft": row.draft,
                    "stats": row.stats,
                    "extra_budget": row.extra_budget,
                    "subject": row.subject,
                    **(row.extra or {}),
                }
            )

    async def save(self, inv: Investigation) -> None:
        """Write over the version read, or raise ConcurrencyError and write nothing."""
        async with begin(self._engine) as conn:
            version = await self.update(conn, inv)
        inv.version = version

    async def update(self, conn: AsyncConnection, inv: Investigation) -> int:
        """save()'s writes in the caller's transaction; the version they make."""
        read_version = inv.version
        new_version = read_version + 1
        # The version-guarded UPDATE comes first: it takes the row's write lock,
        # so the counts below cannot change under us before commit.
        result = await conn.execute(
            update(investigations)
            .where(
                investigations.c.id == inv.id,
                investigations.c.version == read_version,
            )
            .values(
                version=investigations.c.version + 1,
                updated_at=self._clock(),
                **_aggregate_fields(inv),
            )
        )
        if result.rowcount != 1:
            stored = await self._version_in(conn, inv.id)
            if stored is None:
                raise NotFound(f"no investigation {inv.id}")
            raise ConcurrencyError(
                f"investigation {inv.id} was saved by someone else: "
                f"read version {read_version}, stored version {stored}"
            )
        stored_messages = await self._count(conn, messages, inv.id)
        stored_evidence = await self._count(conn, evidence, inv.id)
        if stored_messages > len(inv.messages) or stored_evidence > len(inv.evidence):
            # Raising inside the transaction rolls back the UPDATE too.
            raise ValueError(
                f"investigation {inv.id}: messages and evidence are append-only, but the "
                f"aggregate holds {len(inv.messages)} messages and {len(inv.evidence)} "
                f"evidence while {stored_messages} and {stored_evidence} are stored"
            )
        await self._append(
            conn,
            inv,
            stored_messages=stored_messages,
            stored_evidence=stored_evidence,
            version=new_version,
        )
        await announce(conn, INVESTIGATIONS, inv.id)
        return new_version

    # -- small reads for the surfaces -------------------------------------------

    async def evidence_after(self, investigation_id: str, after_seq: int) -> list[Evidence]:
        """Evidence numbered above `after_seq`, in order. Numbering starts at 1 (E1 is seq 1),
        so `evidence_after(id, 0)` is all of it and the i-th result is seq after_seq + i + 1.
        An unknown investigation has none."""
        async with self._engine.connect() as conn:
            rows = await conn.execute(
                select(evidence)
                .where(evidence.c.investigation_id == investigation_id, evidence.c.seq > after_seq)
                .order_by(evidence.c.seq)
            )
            return [_evidence_from_row(r) for r in rows]

    async def state_of(self, investigation_id: str) -> tuple[State, int]:
        """(state, version) without loading the aggregate."""
        async with self._engine.connect() as conn:
            row = (
                await conn.execute(
                    select(investigations.c.state, investigations.c.version).where(
                        investigations.c.id == investigation_id
                    )
                )
            ).one_or_none()
        if row is None:
            raise NotFound(f"no investigation {investigation_id}")
        return State(row.state), row.version

    async def tokens_on(self, day: str) -> int:
        """The tokens every investigation booked on `day` (UTC, "2026-11-30"), summed over
        the counts stored with them (`stats.tokens_by_day`): the daily token budget."""
        async with self._engine.connect() as conn:
            return await tokens_on(conn, day)

    async def recent(
        self, requester: str | None = None, limit: int = 20
    ) -> list[InvestigationSummary]:
        """The newest investigations first, of one requester or of everyone."""
        query = select(
            investigations.c.id,
            investigations.c.question,
            investigations.c.state,
            investigations.c.requester,
            investigations.c.created_at,
        )
        if requester is not None:
            query = query.where(investigations.c.requester == requester)
        query = query.order_by(
            investigations.c.created_at.desc(), investigations.c.id.desc()
        ).limit(max(limit, 0))
        async with self._engine.connect() as conn:
            rows = await conn.execute(query)
            return [InvestigationSummary.model_validate(r._mapping) for r in rows]

    async def page(
        self,
        *,
        projects: list[str] | None = None,
        states: list[State] | None = None,
        limit: int = 50,
        after: tuple[datetime, str] | None = None,
    ) -> list[InvestigationSummary]:
        """Newest first, filtered by project and state; `after` is the (created_at, id) of
        the last row of the previous page (keyset pagination: stable while rows are added)."""
        project_key = investigations.c.scope["project_key"].as_string()
        query = select(
            investigations.c.id,
            investigations.c.question,
            investigations.c.state,
            investigations.c.requester,
            investigations.c.created_at,
            project_key.label("project"),
        )
        if projects is not None:
            query = query.where(project_key.in_(projects))
        if states:
            query = query.where(investigations.c.state.in_([s.value for s in states]))
        if after is not None:
            created, last_id = after
            query = query.where(
                (investigations.c.created_at < created)
                | ((investigations.c.created_at == created) & (investigations.c.id < last_id))
            )
        query = query.order_by(investigations.c.created_at.desc(), investigations.c.id.desc())
        async with self._engine.connect() as conn:
            rows = await conn.execute(query.limit(max(limit, 0)))
            return [InvestigationSummary.model_validate(r._mapping) for r in rows]

    async def active_count(self, project: str | None = None) -> int:
        """Investigations queued, running or waiting for an answer (of one project)."""
        async with self._engine.connect() as conn:
            return await active_count(conn, project)

    async def investigated(self, subjects: Sequence[str], project: str) -> set[str]:
        """Those of `subjects` some investigation of `project` is (or was) about."""
        if not subjects:
            return set()
        query = select(investigations.c.subject).where(
            investigations.c.subject.in_(list(subjects)),
            investigations.c.scope["project_key"].as_string() == project,
        )
        async with self._engine.connect() as conn:
            return {str(r.subject) for r in await conn.execute(query)}

    async def latest_on(self, inv: Investigation, since: datetime) -> str | None:
        """The newest other investigation of the same project on the same subject created
        at or after `since`, whatever its state."""
        async with self._engine.connect() as conn:
            return await latest_on(conn, inv, since)

    async def running_on(self, inv: Investigation) -> str | None:
        """An earlier investigation of the same project still at work on the same subject."""
        async with self._engine.connect() as conn:
            return await running_on(conn, inv)

    # -- helpers ---------------------------------------------------------------

    async def _append(
        self,
        conn: AsyncConnection,
        inv: Investigation,
        *,
        stored_messages: int,
        stored_evidence: int,
        version: int,
    ) -> None:
        new_messages = [
            {
                "investigation_id": inv.id,
                "seq": seq,
                "body": message.model_dump(mode="json"),
                "written_in_version": version,
            }
            for seq, message in enumerate(inv.messages[stored_messages:], start=stored_messages + 1)
        ]
        new_evidence = [
            {
                "investigation_id": inv.id,
                "seq": seq,
                "written_in_version": version,
                **_evidence_row(ev),
            }
            for seq, ev in enumerate(inv.evidence[stored_evidence:], start=stored_evidence + 1)
        ]
        if new_messages:
            await conn.execute(insert(messages), new_messages)
        if new_evidence:
            await conn.execute(insert(evidence), new_evidence)

    @staticmethod
    async def _count(conn: AsyncConnection, table: Any, investigation_id: str) -> int:
        result = await conn.execute(
            select(func.count())
            .select_from(table)
            .where(table.c.investigation_id == investigation_id)
        )
        return int(result.scalar_one())

    @staticmethod
    async def _version_in(conn: AsyncConnection, investigation_id: str) -> int | None:
        result = await conn.execute(
            select(investigations.c.version).where(investigations.c.id == investigation_id)
        )
        return result.scalar_one_or_none()

    async def _version_of(self, investigation_id: str) -> int | None:
        async with self._engine.connect() as conn:
            return await self._version_in(conn, investigation_id)


# -- the gates' counts, on any connection (storage.admission reads them in its transaction) --

ACTIVE = ("QUEUED", "RUNNING", "WAITING_FOR_OPERATOR")


async def tokens_on(conn: AsyncConnection, day: str) -> int:
    start = datetime.combine(date.fromisoformat(day), dt_time(), UTC)
    booked = investigations.c.stats[("tokens_by_day", day)].as_integer()
    query = select(func.coalesce(func.sum(booked), 0)).where(
        # Only an investigation saved since the day began can have booked tokens on it.
        investigations.c.updated_at >= start
    )
    return int((await conn.execute(query)).scalar_one())


async def active_count(conn: AsyncConnection, project: str | None = None) -> int:
    query = select(func.count()).where(investigations.c.state.in_(ACTIVE))
    if project is not None:
        query = query.where(investigations.c.scope["project_key"].as_string() == project)
    return int((await conn.execute(query)).scalar_one())


async def latest_on(conn: AsyncConnection, inv: Investigation, since: datetime) -> str | None:
    query = (
        select(investigations.c.id)
        .where(
            investigations.c.subject == inv.subject,
            investigations.c.id != inv.id,
            investigations.c.created_at >= since,
            investigations.c.scope["project_key"].as_string() == inv.scope.project_key,
        )
        .order_by(investigations.c.created_at.desc(), investigations.c.id.desc())
        .limit(1)
    )
    return (await conn.execute(query)).scalar_one_or_none()


async def running_on(conn: AsyncConnection, inv: Investigation) -> str | None:
    query = (
        select(investigations.c.id, investigations.c.scope)
        .where(
            investigations.c.subject == inv.subject,
            investigations.c.state.in_(ACTIVE),
            investigations.c.id != inv.id,
            investigations.c.created_at <= inv.created_at,
        )
        .order_by(investigations.c.created_at, investigations.c.id)
    )
    for row in await conn.execute(query):
        if (row.scope or {}).get("project_key") == inv.scope.project_key:
            return str(row.id)
    return None
