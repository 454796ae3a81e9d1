"""A re-run is two writes made one: the old run marked superseded and the new run stored,
in one transaction, with and without the gates. A database that fails between them, or a
writer that saves the old run meanwhile, leaves no old run pointing at a run that is not
stored (a reader following it would find nothing, and every later Re-run be refused)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime

import pytest
from sqlalchemy import func, select
from sqlalchemy.exc import OperationalError

from agent.domain import Diagnosis, Draft, State
from bot.config import Project, Projects
from bot.usecases.access import Access
from bot.usecases.gates import Gates
from bot.usecases.investigations import Investigations
from bot.usecases.ports import Callbacks
from bot.usecases.results import Actor, Done
from storage.admission import SqlAdmission
from storage.db import create_engine, create_schema
from storage.idempotency import SqlIdempotency
from storage.jobs import SqlJobQueue
from storage.store import SqlStore
from storage.tables import investigations, jobs

NOW = datetime(2026, 11, 30, 12, tzinfo=UTC)
ALICE = Actor(user="U0ALICE", team="T0ACME", channel="C0ORDERS")


@pytest.fixture(params=["gates", "no gates"])
async def world(request, tmp_path) -> AsyncIterator[tuple[Investigations, SqlStore, object]]:
    engine = create_engine(f"sqlite+aiosqlite:///{tmp_path / 'r.db'}")
    await create_schema(engine)
    project = Project(
        key="orders",
        repository="acme/orders",
        sentry_organization="acme",
        sentry_project="orders",
        channels=["C0ORDERS"],
        approvers=["U0BOB"],
    )
    projects = Projects(projects={"orders": project})
    store = SqlStore(engine)
    gates = Gates(SqlAdmission(engine, store), projects, clock=lambda: NOW)
    cases = Investigations(
        store,
        SqlJobQueue(engine),
        Access(projects),
        Callbacks(lambda: None, lambda _id: None),
        keys=SqlIdempotency(engine),
        clock=lambda: NOW,
        gates=gates if request.param == "gates" else None,
    )
    yield cases, store, engine
    await engine.dispose()


async def completed(cases: Investigations, store: SqlStore) -> str:
    started = await cases.start(ALICE, "errors when saving orders", key="k1")
    assert isinstance(started, Done)
    inv = await store.load(started.investigation.id)
    inv.start()
    inv.complete(
        Diagnosis(root_cause="a null customer reference"),
        Draft(repository="acme/orders", title="NPE", body="The body."),
    )
    await store.save(inv)
    return inv.id


async def rows(engine, table) -> int:
    async with engine.connect() as conn:
        return (await conn.execute(select(func.count()).select_from(table))).scalar_one()


async def test_a_database_failing_before_the_new_run_is_stored_leaves_the_old_run_as_it_was(
    world, monkeypatch
):
    cases, store, engine = world
    old_id = await completed(cases, store)
    before = await store.load(old_id)
    queued = await rows(engine, jobs)
    insert = SqlStore.insert

    async def failing(self, conn, inv):
        raise OperationalError("INSERT INTO investigations", {}, Exception("disk I/O error"))

    monkeypatch.setattr(SqlStore, "insert", failing)
    with pytest.raises(OperationalError):
        await cases.rerun(ALICE, old_id)
    after = await store.load(old_id)
    assert after.superseded_by is None and after.state is State.COMPLETED
    assert after.version == before.version
    assert await rows(engine, investigations) == 1 and await rows(engine, jobs) == queued

    monkeypatch.setattr(SqlStore, "insert", insert)  # the database is back: Re-run works
    done = await cases.rerun(ALICE, old_id)
    assert isinstance(done, Done)
    old = await store.load(old_id)
    fresh = await store.load(old.superseded_by)
    assert fresh.id == done.investigation.id and fresh.rerun_of == old_id
    assert fresh.state is State.QUEUED and await rows(engine, jobs) == queued + 1


async def test_a_save_of_the_old_run_meanwhile_is_read_again_and_nothing_is_stored_twice(
    world, monkeypatch
):
    cases, store, engine = world
    old_id = await completed(cases, store)
    admit, raced = cases.admit, []

    async def racing(inv, key, fingerprint, replacing=None):
        if not raced:  # another writer (a worker, a second click) saves the old run first
            other = await store.load(replacing.id)
            other.discarded = True
            await store.save(other)
            raced.append(other.version)
        return await admit(inv, key, fingerprint, replacing=replacing)

    monkeypatch.setattr(cases, "admit", racing)
    done = await cases.rerun(ALICE, old_id)
    assert isinstance(done, Done) and raced
    old = await store.load(old_id)
    assert old.discarded, "the other writer's save is kept"
    assert old.superseded_by == done.investigation.id and old.version == raced[0] + 1
    assert await rows(engine, investigations) == 2  # the lost attempt stored nothing
    again = await cases.rerun(ALICE, old_id)
    assert again.kind == "conflict" and done.investigation.id in again.reason


async def test_a_rerun_whose_answer_is_lost_after_the_commit_is_not_stored_twice(
    world, monkeypatch
):
    cases, store, engine = world
    old_id = await completed(cases, store)
    admit = cases.admit

    async def lost(inv, key, fingerprint, replacing=None):
        await admit(inv, key, fingerprint, replacing=replacing)  # committed, then the answer
        raise OperationalError("COMMIT", {}, Exception("server closed the connection"))

    monkeypatch.setattr(cases, "admit", lost)
    with pytest.raises(OperationalError):
        await cases.rerun(ALICE, old_id)
    monkeypatch.setattr(cases, "admit", admit)
    old = await store.load(old_id)
    fresh = await store.load(old.superseded_by)  # both writes landed, together
    again = await cases.rerun(ALICE, old_id)  # the retry finds the first one
    assert again.kind == "conflict" and fresh.id in again.reason
    assert await rows(engine, investigations) == 2
