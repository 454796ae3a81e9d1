"""SqlStore against real databases: a SQLite file, SQLite in memory and PostgreSQL."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest
from sqlalchemy import func, insert, select, text
from sqlalchemy.exc import StatementError
from sqlalchemy.ext.asyncio import AsyncEngine

from agent.domain import (
    Diagnosis,
    Draft,
    Fact,
    Investigation,
    Message,
    Scope,
    State,
    Stats,
    Suspect,
    ToolCall,
)
from agent.errors import ConcurrencyError, InputError, NotFound
from storage import SqlStore, create_engine, create_schema, default_url, url_from_env
from storage.tables import evidence, messages
from tests.postgres import database_url

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


@pytest.fixture(params=["sqlite", "memory", "postgresql"])
async def engine(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[AsyncEngine]:
    engine = create_engine(database_url(request, request.param, tmp_path))
    try:
        await create_schema(engine)
        yield engine
    finally:
        await engine.dispose()


@pytest.fixture
def store(engine: AsyncEngine) -> SqlStore:
    return SqlStore(engine)


def scope() -> Scope:
    return Scope(
        project_key="shop",
        repository="acme/shop",
        sentry_organization="acme",
        sentry_project="shop-api",
        release_prefix="shop@",
        since=T0 - timedelta(hours=24),
        until=T0,
    )


def opened(
    question: str = "errors when saving orders", requester: str | None = "U1"
) -> Investigation:
    return Investigation.open(question, scope(), requester=requester)


def full_investigation() -> Investigation:
    """An investigation with every part filled in, as a finished run leaves it."""
    inv = opened()
    inv.start()
    inv.messages += [
        Message(role="system", content="You investigate incidents."),
        Message(role="user", content="errors when saving orders"),
        Message(
            role="assistant",
            tool_calls=[
                ToolCall(
                    id="call_1",
                    name="sentry__search_issues",
                    arguments={"query": "is:unresolved", "limit": 5, "nested": {"a": [1, 2]}},
                )
            ],
        ),
    ]
    ev1 = inv.add_evidence(
        source="sentry",
        tool="sentry__search_issues",
        title="NullPointerException in OrderService.save",
        content="java.lang.NullPointerException at OrderService.save(OrderService.java:42)",
        link="https://sentry.example/issues/1",
        data={"issues": [{"id": "1", "count": 17, "culprit": "OrderService.save"}], "ok": True},
    )
    inv.messages.append(
        Message(
            role="tool",
            tool_call_id="call_1",
            name="sentry__search_issues",
            evidence_id=ev1.id,
            content=ev1.content,
            data={"issues": [{"id": "1"}], "unicode": "commande échouée ✓"},
        )
    )
    inv.add_evidence(
        source="code",
        tool="git__show",
        title="OrderService.java at abc123",
        content="public void save(Order o) {\n  o.customer().id();\n}",
        path="src/main/java/OrderService.java",
        revision="abc123",
    )
    inv.stats = Stats(
        model_calls=3, tool_calls=2, input_tokens=1200, output_tokens=300, wall_seconds=4.25
    )
    inv.extra_budget = 2
    inv.complete(
        Diagnosis(
            root_cause="Orders without a customer reach OrderService.save.",
            facts=[Fact(text="NPE at line 42", evidence=["E1", "E2"], quote="o.customer().id()")],
            hypotheses=["guest checkout creates orders without customers"],
            uncertainties=["whether the mobile client is affected"],
            recommended_check="Count orders with a null customer since the release.",
            suspect=Suspect(
                path="src/main/java/OrderService.java", line_start=41, line_end=43, commit="abc123"
            ),
            confidence="high",
        ),
        Draft(repository="acme/shop", title="NPE when saving guest orders", body="Details…"),
    )
    return inv


async def count(engine: AsyncEngine, table: object, investigation_id: str) -> int:
    async with engine.connect() as conn:
        result = await conn.execute(
            select(func.count())
            .select_from(table)
            .where(table.c.investigation_id == investigation_id)  # type: ignore[attr-defined]
        )
        return int(result.scalar_one())


async def test_full_investigation_round_trips(store: SqlStore) -> None:
    inv = full_investigation()
    await store.create(inv)
    assert inv.version == 1

    loaded = await store.load(inv.id)

    assert loaded == inv
    assert loaded.messages[2].tool_calls[0].arguments["nested"] == {"a": [1, 2]}
    assert loaded.evidence[0].data == inv.evidence[0].data
    assert [e.id for e in loaded.evidence] == ["E1", "E2"]
    assert loaded.draft is not None and loaded.draft.hash == inv.draft.hash  # type: ignore[union-attr]
    for moment in (loaded.created_at, loaded.evidence[0].retrieved_at, loaded.scope.since):
        assert moment.utcoffset() == timedelta(0)


async def test_round_trip_through_saves(store: SqlStore) -> None:
    """Created empty, then filled by saves, as the loop does it."""
    full = full_investigation()
    inv = opened()
    inv.id = full.id
    inv.created_at = full.created_at
    await store.create(inv)

    inv.start()
    inv.messages += full.messages[:3]
    await store.save(inv)
    inv.messages += full.messages[3:]
    inv.evidence += full.evidence
    inv.stats = full.stats
    inv.extra_budget = full.extra_budget
    assert full.diagnosis is not None and full.draft is not None
    inv.complete(full.diagnosis, full.draft)
    await store.save(inv)

    loaded = await store.load(inv.id)
    assert inv.version == 3
    assert loaded == inv
    assert loaded.model_dump(exclude={"version"}) == full.model_dump(exclude={"version"})


async def test_times_in_other_zones_come_back_as_the_same_instant_in_utc(store: SqlStore) -> None:
    inv = opened()
    inv.created_at = datetime(2026, 3, 1, 14, 0, tzinfo=timezone(timedelta(hours=2)))
    await store.create(inv)

    loaded = await store.load(inv.id)

    assert loaded.created_at == datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
    assert loaded.created_at.utcoffset() == timedelta(0)


async def test_naive_times_are_refused_rather_than_guessed(store: SqlStore) -> None:
    inv = opened()
    inv.created_at = datetime(2026, 3, 1, 12, 0)
    with pytest.raises(StatementError, match="naive datetime"):
        await store.create(inv)
    assert inv.version == 0


async def test_load_of_an_unknown_id_is_not_found(store: SqlStore) -> None:
    with pytest.raises(NotFound):
        await store.load("nope")
    with pytest.raises(NotFound):
        await store.state_of("nope")


async def test_save_of_an_unknown_id_is_not_found(store: SqlStore) -> None:
    inv = opened()
    inv.version = 1
    with pytest.raises(NotFound):
        await store.save(inv)


async def test_create_twice_is_a_concurrency_error(store: SqlStore) -> None:
    inv = opened()
    await store.create(inv)
    again = inv.model_copy(update={"version": 0})
    with pytest.raises(ConcurrencyError):
        await store.create(again)
    assert again.version == 0


async def test_second_save_over_the_same_version_loses_and_writes_nothing(
    store: SqlStore, engine: AsyncEngine
) -> None:
    inv = opened()
    await store.create(inv)
    first = await store.load(inv.id)
    second = await store.load(inv.id)

    first.start()
    first.add_evidence(source="sentry", tool="t", title="first's", content="one")
    first.messages.append(Message(role="user", content="first"))
    await store.save(first)

    second.start()
    second.ask("which release?")
    second.add_evidence(source="docs", tool="t", title="second's", content="two")
    second.add_evidence(source="docs", tool="t", title="second's too", content="three")
    second.messages.append(Message(role="user", content="second"))
    with pytest.raises(ConcurrencyError):
        await store.save(second)

    assert second.version == 1
    stored = await store.load(inv.id)
    assert stored == first
    assert stored.state is State.RUNNING
    assert stored.pending_question is None
    assert await store.state_of(inv.id) == (State.RUNNING, 2)
    assert await count(engine, evidence, inv.id) == 1
    assert await count(engine, messages, inv.id) == 1


async def test_concurrent_saves_of_one_version_let_exactly_one_win(store: SqlStore) -> None:
    inv = opened()
    await store.create(inv)
    copies = [await store.load(inv.id) for _ in range(8)]
    for i, copy in enumerate(copies):
        copy.add_evidence(source="local", tool="t", title=f"copy {i}", content=str(i))

    results = await asyncio.gather(*(store.save(c) for c in copies), return_exceptions=True)

    winners = [c for c, r in zip(copies, results, strict=True) if r is None]
    assert len(winners) == 1
    assert all(isinstance(r, ConcurrencyError) for r in results if r is not None)
    assert await store.load(inv.id) == winners[0]


async def test_appended_evidence_and_messages_are_inserted_once(
    store: SqlStore, engine: AsyncEngine
) -> None:
    inv = opened()
    inv.add_evidence(source="sentry", tool="t", title="at creation", content="zero")
    await store.create(inv)

    inv.start()
    inv.add_evidence(source="sentry", tool="t", title="one", content="1")
    inv.messages.append(Message(role="user", content="hello"))
    await store.save(inv)
    await store.save(inv)  # nothing new: only the version moves
    inv.add_evidence(source="code", tool="t", title="two", content="2")
    await store.save(inv)

    assert inv.version == 4
    assert await count(engine, evidence, inv.id) == 3
    assert await count(engine, messages, inv.id) == 1
    loaded = await store.load(inv.id)
    assert [e.id for e in loaded.evidence] == ["E1", "E2", "E3"]
    assert loaded == inv


async def test_shrinking_an_append_only_list_is_refused_and_rolled_back(store: SqlStore) -> None:
    inv = opened()
    inv.add_evidence(source="sentry", tool="t", title="one", content="1")
    await store.create(inv)
    inv.evidence.clear()
    inv.start()

    with pytest.raises(ValueError, match="append-only"):
        await store.save(inv)

    assert inv.version == 1
    assert await store.state_of(inv.id) == (State.QUEUED, 1)


async def test_load_is_the_version_it_read_even_if_later_rows_exist(
    store: SqlStore, engine: AsyncEngine
) -> None:
    """Rows of a save that commits between load's reads are left out of that load."""
    inv = opened()
    await store.create(inv)
    async with engine.begin() as conn:
        await conn.execute(
            insert(messages).values(
                investigation_id=inv.id,
                seq=1,
                body=Message(role="user", content="from version 2").model_dump(mode="json"),
                written_in_version=2,
            )
        )

    loaded = await store.load(inv.id)

    assert loaded.version == 1
    assert loaded.messages == []


async def test_evidence_after(store: SqlStore) -> None:
    inv = opened()
    await store.create(inv)
    inv.start()
    for n in range(3):
        inv.add_evidence(
            source="docs", tool="search_knowledge", title=f"passage {n}", content=str(n)
        )
    await store.save(inv)

    assert [e.id for e in await store.evidence_after(inv.id, 0)] == ["E1", "E2", "E3"]
    after_one = await store.evidence_after(inv.id, 1)
    assert after_one == inv.evidence[1:]
    assert await store.evidence_after(inv.id, 3) == []
    assert await store.evidence_after("nope", 0) == []


async def test_state_of(store: SqlStore) -> None:
    inv = opened()
    await store.create(inv)
    assert await store.state_of(inv.id) == (State.QUEUED, 1)
    inv.start()
    inv.ask("which release?")
    await store.save(inv)
    assert await store.state_of(inv.id) == (State.WAITING_FOR_OPERATOR, 2)


async def test_recent_lists_newest_first_and_filters_by_requester(store: SqlStore) -> None:
    made = []
    for n, requester in enumerate(["U1", "U2", "U1", None]):
        inv = opened(f"question {n}", requester=requester)
        inv.created_at = T0 + timedelta(minutes=n)
        await store.create(inv)
        made.append(inv)

    everyone = await store.recent(None, 3)
    assert [s.question for s in everyone] == ["question 3", "question 2", "question 1"]
    assert everyone[0].state is State.QUEUED
    assert everyone[0].created_at == T0 + timedelta(minutes=3)

    mine = await store.recent("U1", 10)
    assert [s.id for s in mine] == [made[2].id, made[0].id]
    assert await store.recent("U9", 10) == []


async def test_create_schema_is_idempotent(engine: AsyncEngine, store: SqlStore) -> None:
    inv = opened()
    await store.create(inv)
    await create_schema(engine)
    assert (await store.load(inv.id)) == inv


async def test_sqlite_file_connections_use_wal_busy_timeout_and_foreign_keys(
    tmp_path: Path,
) -> None:
    engine = create_engine(default_url(tmp_path))
    try:
        async with engine.connect() as conn:
            assert (await conn.execute(text("PRAGMA journal_mode"))).scalar_one() == "wal"
            assert (await conn.execute(text("PRAGMA busy_timeout"))).scalar_one() == 5000
            assert (await conn.execute(text("PRAGMA foreign_keys"))).scalar_one() == 1
    finally:
        await engine.dispose()
    assert (tmp_path / "incident-bot.db").exists()


async def test_a_memory_database_is_shared_by_every_connection() -> None:
    engine = create_engine("sqlite+aiosqlite:///:memory:")
    try:
        await create_schema(engine)
        inv = opened()
        await SqlStore(engine).create(inv)
        assert await SqlStore(engine).load(inv.id) == inv
    finally:
        await engine.dispose()


def test_url_from_env(tmp_path: Path) -> None:
    assert default_url(tmp_path) == f"sqlite+aiosqlite:///{tmp_path.resolve()}/incident-bot.db"
    assert url_from_env({}, tmp_path) == default_url(tmp_path)
    assert url_from_env({"DATABASE_URL": "  "}, tmp_path) == default_url(tmp_path)
    pg = "postgresql+asyncpg://bot:secret@db:5432/incidents"
    assert url_from_env({"DATABASE_URL": pg}, tmp_path) == pg
    # Driverless URLs get the async driver rather than failing at connect.
    assert url_from_env({"DATABASE_URL": "postgres://bot:secret@db/incidents"}, tmp_path) == (
        "postgresql+asyncpg://bot:secret@db/incidents"
    )
    with pytest.raises(InputError):
        url_from_env({"DATABASE_URL": "not a url"}, tmp_path)
