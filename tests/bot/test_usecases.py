"""The use cases on their own, over a real SQLite store, as any way in calls them: each
outcome is a `Done` or a typed `Refused`, and a refusal changes nothing."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime

import pytest

from agent.domain import Diagnosis, Draft, State
from bot.config import Project, Projects
from bot.usecases.access import Access
from bot.usecases.investigations import DraftRef, Investigations
from bot.usecases.ports import Callbacks
from bot.usecases.results import Actor, Done, Refused
from storage.db import create_engine, create_schema
from storage.idempotency import SqlIdempotency
from storage.jobs import SqlJobQueue
from storage.store import SqlStore

ALICE = Actor(user="U0ALICE", team="T0ACME", channel="C0ORDERS")  # the requester
BOB = Actor(user="U0BOB", team="T0ACME", channel="C0ORDERS")  # an approver
API_BOB = Actor(user="U0BOB", surface="api")  # another surface vouches for its caller


@pytest.fixture
async def cases(tmp_path) -> AsyncIterator[tuple[Investigations, SqlStore, list[str]]]:
    engine = create_engine(f"sqlite+aiosqlite:///{tmp_path / 'u.db'}")
    await create_schema(engine)
    project = Project(
        key="orders",
        repository="acme/orders",
        sentry_organization="acme",
        sentry_project="orders",
        channels=["C0ORDERS"],
        approvers=["U0BOB"],
        require_other_approver=True,
    )
    store, changed = SqlStore(engine), []
    yield (
        Investigations(
            store,
            SqlJobQueue(engine),
            Access(Projects(projects={"orders": project})),
            Callbacks(lambda: None, changed.append),
            keys=SqlIdempotency(engine),
            clock=lambda: datetime(2026, 11, 30, 12, tzinfo=UTC),
        ),
        store,
        changed,
    )
    await engine.dispose()


async def completed(cases: Investigations, store: SqlStore) -> str:
    started = await cases.start(ALICE, "errors when saving orders", key="k1")
    assert isinstance(started, Done) and started.fresh
    inv = await store.load(started.investigation.id)
    assert (inv.origin.surface, inv.origin.team, inv.origin.channel) == (
        "slack",
        "T0ACME",
        "C0ORDERS",
    )
    inv.start()
    inv.complete(
        Diagnosis(root_cause="a null customer reference"),
        Draft(repository="acme/orders", title="NPE", body="The body."),
    )
    await store.save(inv)
    return inv.id


async def test_outcomes_are_typed_and_refusals_change_nothing(cases):
    uc, store, changed = cases
    refused = await uc.start(ALICE, "   ")
    assert isinstance(refused, Refused) and (refused.kind, refused.field) == ("invalid", "question")
    inv_id = await completed(uc, store)
    again = await uc.start(ALICE, "errors when saving orders", key="k1")
    assert isinstance(again, Done) and not again.fresh and again.investigation.id == inv_id
    other = await uc.start(ALICE, "something else", key="k1")
    assert isinstance(other, Refused) and other.kind == "conflict"

    before = await store.load(inv_id)
    ref = DraftRef(inv_id, 1, before.draft.hash)
    outcomes = [
        await uc.approve(ALICE, ref),  # the requester may not approve her own draft
        await uc.discard(Actor(user="U0EVE", team="T0ACME", channel="C0ORDERS"), ref),
        await uc.approve(Actor(user="U0BOB", team="T0ACME", channel="C0OTHER"), ref),
        await uc.approve(BOB, DraftRef(inv_id, 1, "0" * 64)),  # a stale hash
        await uc.edit_draft(ALICE, DraftRef(inv_id, 1), "\u200b", "The body."),
        await uc.continue_run(ALICE, inv_id, before.version, 4),  # not stopped
        await uc.answer(ALICE, inv_id, "it was 835b04b"),  # nothing asked
        await uc.approve(BOB, DraftRef("no-such-id", 1)),
    ]
    kinds = [(o.kind, o.field) if isinstance(o, Refused) else o for o in outcomes]
    assert kinds == [
        ("forbidden", None),
        ("forbidden", None),
        ("forbidden", None),
        ("conflict", None),
        ("invalid", "title"),
        ("conflict", None),
        ("conflict", None),
        ("not_found", None),
    ]
    after = await store.load(inv_id)
    assert (after.version, after.state, after.draft, after.discarded) == (
        before.version,
        before.state,
        before.draft,
        before.discarded,
    )

    edited = await uc.edit_draft(ALICE, DraftRef(inv_id, 1), "NPE on save", "A better body.")
    assert isinstance(edited, Done) and edited.investigation.draft.version == 2
    v2 = DraftRef(inv_id, 2, edited.investigation.draft.hash)
    approved = await uc.approve(API_BOB, v2)  # no Slack channel to check on the API
    assert isinstance(approved, Done) and approved.receipt.status == "queued"
    assert (await store.load(inv_id)).state is State.PUBLISH_QUEUED
    assert changed.count(inv_id) >= 3  # the thread sync was told after each change
