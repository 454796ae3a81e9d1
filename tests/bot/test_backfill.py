"""The backfill at start and the gates, on a real SQLite store: issues first seen in the
window with no investigation are queued through the floor and the gates; Sentry's REST API
is a fake that fails the way Sentry does."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from agent.domain import Investigation, State
from bot.backfill import RecordedIssues, SentryIssues, backfill
from bot.config import Project, Projects
from bot.usecases.access import Access
from bot.usecases.alerts import Alert, Alerts, Ignored
from bot.usecases.gates import Gates
from bot.usecases.investigations import Investigations
from bot.usecases.ports import Callbacks
from bot.usecases.results import Done
from recorded.scenario import load_scenario
from storage.admission import SqlAdmission
from storage.db import create_engine, create_schema
from storage.idempotency import SqlIdempotency
from storage.jobs import SqlJobQueue
from storage.store import SqlStore
from tests.fakes.sentry import FakeSentry

NOW = datetime(2026, 11, 28, 18, 0, tzinfo=UTC)  # the orders incident's "now"
NEW_ISSUE = "sentry:5755875771"  # first seen 2026-11-28T09:14Z
OLD_ISSUE = "sentry:5095199655"  # first seen 2026-11-12: outside any 24 h window


ENGINES: list = []


@pytest.fixture(autouse=True)
async def dispose_engines():
    yield
    while ENGINES:
        await ENGINES.pop().dispose()


async def cases_for(tmp: Path, project: Project, **gates) -> tuple[Investigations, SqlStore]:
    engine = create_engine(f"sqlite+aiosqlite:///{tmp / 'b.db'}")
    ENGINES.append(engine)
    await create_schema(engine)
    store = SqlStore(engine)
    projects = Projects(projects={project.key: project})
    cases = Investigations(
        store,
        SqlJobQueue(engine),
        Access(projects),
        Callbacks(lambda: None, lambda _id: None),
        keys=SqlIdempotency(engine),
        clock=lambda: NOW,
        gates=Gates(SqlAdmission(engine, store), projects, clock=lambda: NOW, **gates),
    )
    return cases, store


@pytest.fixture
def orders(built_scenarios):
    scenario = load_scenario(built_scenarios["orders"])
    return scenario, Project.for_scope(scenario.scope, alert_channel="C0ALERTS")


async def test_issues_first_seen_in_the_window_without_an_investigation_are_queued(
    orders, tmp_path
):
    scenario, project = orders
    cases, store = await cases_for(tmp_path, project)
    lister = RecordedIssues(scenario.sentry, project.sentry_project)
    (outcome,) = await backfill(Alerts(cases), store, lister, 24, clock=lambda: NOW)
    assert isinstance(outcome, Done) and outcome.fresh
    inv = outcome.investigation
    assert inv.subject == NEW_ISSUE and inv.state is State.QUEUED
    assert inv.origin.channel == "C0ALERTS"
    # Started again (a restart): the issue has an investigation now, nothing more is queued.
    assert await backfill(Alerts(cases), store, lister, 24, clock=lambda: NOW) == []
    # A longer window reaches the older issue too.
    (older,) = await backfill(Alerts(cases), store, lister, 24 * 30, clock=lambda: NOW)
    assert isinstance(older, Done) and older.investigation.subject == OLD_ISSUE
    assert await backfill(Alerts(cases), store, lister, 0, clock=lambda: NOW) == []


async def test_the_backfill_goes_through_the_floor_and_the_caps(orders, tmp_path):
    scenario, project = orders
    lister = RecordedIssues(scenario.sentry, project.sentry_project)
    fatal_only = project.model_copy(update={"min_level": "fatal"})
    (tmp_path / "floor").mkdir()
    cases, store = await cases_for(tmp_path / "floor", fatal_only)
    outcomes = await backfill(Alerts(cases), store, lister, 24 * 30, clock=lambda: NOW)
    assert len(outcomes) == 2
    assert all(isinstance(o, Ignored) and "floor" in o.reason for o in outcomes)
    assert await store.recent(None, 10) == []  # below the floor: nothing stored

    (tmp_path / "capped").mkdir()
    cases, store = await cases_for(
        tmp_path / "capped", project.model_copy(update={"max_concurrent": 1})
    )
    first, second = await backfill(Alerts(cases), store, lister, 24 * 30, clock=lambda: NOW)
    assert isinstance(first, Done) and first.investigation.state is State.QUEUED
    assert isinstance(second, Done) and second.investigation.state is State.SKIPPED
    assert "project's concurrency cap" in (second.investigation.stop_reason or "")
    assert (await store.load(second.investigation.id)).state is State.SKIPPED


async def test_the_daily_token_budget_skips_with_its_reason(orders, tmp_path):
    scenario, project = orders
    cases, store = await cases_for(tmp_path, project, tokens_per_day=5_000)
    earlier = Investigation.open("earlier question", scenario.scope)
    earlier.stats.add_tokens(3_000, 2_500, NOW.date().isoformat())
    await store.create(earlier)
    earlier.start()
    earlier.stop("done for the day", None)
    await store.save(earlier)
    alert = Alert(issue_id="77", title="KeyError: 'sku'", sentry_project=project.sentry_project)
    outcome = await Alerts(cases).take(alert)
    assert isinstance(outcome, Done) and outcome.investigation.state is State.SKIPPED
    assert "daily token budget" in (outcome.investigation.stop_reason or "")
    assert "5,500 of 5,000" in (outcome.investigation.stop_reason or "")
    # A second alert for the same issue joins that record, and does not add one.
    again = await Alerts(cases).take(alert)
    assert isinstance(again, Done) and again.investigation.id == outcome.investigation.id
    assert len(await store.recent(None, 10)) == 2


async def test_sentry_rest_lists_new_issues_and_a_failing_sentry_skips_the_backfill(
    orders, tmp_path
):
    scenario, project = orders
    s = scenario.scope
    cases, store = await cases_for(tmp_path, project)
    async with FakeSentry(
        scenario.sentry, s.sentry_organization, s.sentry_project, s.since, s.until, token="read"
    ) as sentry:
        api_url = f"http://{sentry.host}"
        refused = SentryIssues(api_url, "wrong-token", timeout=2)
        assert await backfill(Alerts(cases), store, refused, 24, clock=lambda: NOW) == []
        lister = SentryIssues(api_url, "read", timeout=2)
        (outcome,) = await backfill(Alerts(cases), store, lister, 24, clock=lambda: NOW)
        assert isinstance(outcome, Done) and outcome.investigation.subject == NEW_ISSUE
        listed = [c for c in sentry.calls if c.path.endswith("/issues/")]
        assert listed and all("sort=new" in str(c) or "new" in str(c) for c in listed)
    # Sentry gone altogether: the connection is refused, and the backfill is skipped.
    gone = SentryIssues(api_url, "read", timeout=2)
    assert await backfill(Alerts(cases), store, gone, 24, clock=lambda: NOW) == []
    assert len(await store.recent(None, 10)) == 1
