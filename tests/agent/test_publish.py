"""Publishing an approved draft to the fake GitHub REST server over gidgethub, with the
real store: the saga's steps, a lost answer settled by the marker, "Create anyway", the
receipt of a repeated approval, Idempotency-Key semantics, side steps that fail after the
issue exists (the issue stands, they are recorded as not done and finished by a re-run),
and a refusal at the pivot that rolls back what came before it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from agent.domain import Investigation, State, utcnow
from agent.errors import (
    IdempotencyConflict,
    IllegalTransition,
    PublishFailed,
    StaleDraft,
)
from agent.publish.github import GitHubIssues
from agent.publish.publisher import Publisher, issue_marker
from agent.publish.saga import Plan, Saga, Step
from bot.worker import PUBLISH, Worker
from storage.db import create_engine, create_schema
from storage.jobs import SqlJobQueue
from storage.store import SqlStore
from tests.fakes.github import FakeGitHub
from tests.publish_faults import completed as shared_completed

REPO = "acme/shop"
TOKEN = "ghs-test"


def completed(repo: str = REPO, title: str = "NPE when saving orders") -> Investigation:
    return shared_completed(repo, title, "Orders without a reference fail.")


def approve(inv: Investigation, key: str = "key-1", approver: str = "U0BOB"):
    assert inv.draft is not None
    return inv.approve(
        approver=approver, version=inv.draft.version, hash=inv.draft.hash, idempotency_key=key
    )


class Link:
    """A backlink port whose far end is a list (the real Sentry note: test_sentry_note.py)."""

    def __init__(self, name: str, fail: Exception | None = None) -> None:
        self.name = name
        self.fail = fail
        self.linked: list[int] = []

    def applies_to(self, inv: Investigation) -> bool:
        return True

    async def link(self, inv: Investigation) -> str:
        if self.fail is not None:
            raise self.fail
        assert inv.approval is not None and inv.approval.issue_number is not None
        self.linked.append(inv.approval.issue_number)
        return "linked"


@dataclass
class Bench:
    github: FakeGitHub
    store: SqlStore
    tracker: GitHubIssues
    engine: AsyncEngine | None = None

    def publisher(self, **options) -> Publisher:
        return Publisher(self.tracker, backoff=0, **options)

    async def publish(self, inv: Investigation, **options) -> Investigation:
        await self.publisher(**options).publish(inv, self.store.save)
        return await self.store.load(inv.id)

    async def approved(self, **kwargs) -> Investigation:
        inv = completed(**kwargs)
        await self.store.create(inv)
        assert approve(inv).status == "queued"
        await self.store.save(inv)
        return inv

    def issues(self) -> list[dict]:
        return self.github.issues[REPO]


@pytest.fixture
async def bench() -> AsyncIterator[Bench]:
    engine = create_engine("sqlite+aiosqlite://")
    await create_schema(engine)
    async with FakeGitHub(token=TOKEN, repos=[REPO]) as github:
        tracker = GitHubIssues(github.api_url, TOKEN, timeout=0.2)
        yield Bench(github, SqlStore(engine), tracker, engine)
    await engine.dispose()


async def test_an_approved_draft_is_published_with_its_marker_and_labels(bench):
    inv = await bench.approved()
    done = await bench.publish(inv)
    (issue,) = bench.issues()
    assert done.state is State.PUBLISHED
    assert done.publication.url == issue["html_url"] and done.publication.number == 1
    assert issue["title"] == inv.draft.title
    assert issue["body"] == f"{inv.draft.body}\n\n{issue_marker(inv)}"
    assert [label["name"] for label in issue["labels"]] == ["incident-bot"]
    assert [(e.step, e.outcome) for e in done.approval.log] == [
        ("create_issue", "done"),
        ("add_labels", "done"),
    ]
    create = bench.github.calls_to("create_issue")[0]
    assert create.body == {"title": inv.draft.title, "body": issue["body"]}


async def test_a_repeated_approval_after_publishing_returns_the_receipt(bench):
    inv = await bench.approved()
    done = await bench.publish(inv)
    calls = len(bench.github.calls)
    receipt = approve(done)
    assert receipt.status == "published" and not receipt.fresh
    assert receipt.publication.url == done.publication.url
    other_click = approve(done, key="another-click", approver="U0CAROL")
    assert other_click.status == "published"
    await bench.publish(done)  # a stray job does nothing either
    assert len(bench.github.calls) == calls and len(bench.issues()) == 1


def test_the_same_idempotency_key_with_another_body_is_refused():
    inv = completed()
    first = approve(inv, key="k-1")
    assert first.status == "queued" and first.fresh
    again = approve(inv, key="k-1")
    assert again.status == "in progress" and again.approval is first.approval
    with pytest.raises(IdempotencyConflict, match=r"k-1.*approved v1"):
        inv.approve(approver="U0BOB", version=2, hash="0" * 64, idempotency_key="k-1")
    with pytest.raises(IdempotencyConflict):
        inv.approve(approver="U0BOB", version=1, hash="f" * 64, idempotency_key="k-1")
    # After a refusal the key keeps its receipt; a new key is a new approval.
    inv.publish_refused("422 Validation Failed")
    assert approve(inv, key="k-1").status == "refused"
    assert inv.state is State.COMPLETED
    assert approve(inv, key="k-2").status == "queued"
    assert [a.idempotency_key for a in inv.past_approvals] == ["k-1"]


async def test_a_create_whose_answer_is_lost_after_it_was_made_is_adopted(bench):
    inv = await bench.approved()
    bench.github.timeout_after_apply_next("create_issue", delay=30)
    done = await bench.publish(inv)
    assert done.state is State.PUBLISHED
    (issue,) = bench.issues()
    assert done.publication.number == issue["number"]
    assert len(bench.github.calls_to("create_issue")) == 1
    lookup = bench.github.calls_to("list_issues")[0]
    assert lookup.query["creator"] == bench.github.login and lookup.query["state"] == "all"
    assert "since" in lookup.query
    assert bench.github.calls_to("get_user")  # the creator filter is the token's own login
    assert "adopted #1" in done.approval.steps["create_issue"].detail
    assert [label["name"] for label in issue["labels"]] == ["incident-bot"]


async def test_nothing_found_after_a_lost_answer_waits_for_create_anyway(bench):
    inv = await bench.approved()
    bench.github.drop_next("create_issue")  # the connection drops, nothing was made
    unknown = await bench.publish(inv)
    assert unknown.state is State.PUBLISH_UNKNOWN
    assert unknown.approval.lookup == "nothing" and bench.issues() == []

    # A retry of the same approval looks again and still creates nothing.
    assert approve(unknown, key="another-click").status == "in progress"
    assert approve(unknown).status == "retry"
    await bench.store.save(unknown)
    again = await bench.publish(unknown)
    assert again.state is State.PUBLISH_UNKNOWN and again.approval.lookup == "nothing"
    assert len(bench.github.calls_to("create_issue")) == 1  # never a second blind create

    with pytest.raises(StaleDraft):  # bound to the attempts it was shown after
        again.create_anyway(approver="U0BOB", version=1, hash=again.draft.hash, creates=0)
    again.create_anyway(approver="U0BOB", version=1, hash=again.draft.hash, creates=1)
    await bench.store.save(again)
    done = await bench.publish(again)
    assert done.state is State.PUBLISHED and done.approval.confirmed_by == ["U0BOB"]
    assert len(bench.issues()) == 1 and len(bench.github.calls_to("create_issue")) == 2
    with pytest.raises(IllegalTransition):
        done.create_anyway(approver="U0BOB", version=1, hash=done.draft.hash, creates=2)


async def test_a_lookup_that_fails_leaves_it_unknown_and_the_retry_adopts(bench):
    inv = await bench.approved()
    bench.github.drop_after_apply_next("create_issue")  # made, answer lost
    bench.github.fail_next("list_issues", status=503, count=3)
    unknown = await bench.publish(inv)
    assert unknown.state is State.PUBLISH_UNKNOWN and unknown.approval.lookup == "failed"
    assert approve(unknown).status == "retry"
    await bench.store.save(unknown)
    done = await bench.publish(unknown)
    assert done.state is State.PUBLISHED and len(bench.issues()) == 1
    assert len(bench.github.calls_to("create_issue")) == 1


async def test_a_worker_that_died_after_sending_the_create_looks_before_sending_another(bench):
    inv = await bench.approved()
    inv.approval.creates_sent = 1
    inv.approval.create_started_at = utcnow()
    await bench.store.save(inv)
    bench.github.add_issue(REPO, inv.draft.title, f"{inv.draft.body}\n\n{issue_marker(inv)}")
    done = await bench.publish(inv)
    assert done.state is State.PUBLISHED and bench.github.calls_to("create_issue") == []


async def test_a_refused_create_is_nothing_to_roll_back(bench):
    inv = await bench.approved()
    bench.github.fail_next("create_issue", status=422)
    done = await bench.publish(inv)
    assert done.state is State.COMPLETED and done.approval is None
    (past,) = done.past_approvals
    assert past.outcome == "refused" and "422" in past.reason
    assert past.compensations() == [] and bench.issues() == []


def assert_standing(bench: Bench, done: Investigation, step: str, why: str) -> None:
    """Published, the issue open and never withdrawn, `step` recorded as not done."""
    assert done.state is State.PUBLISHED and done.approval is not None
    (issue,) = bench.issues()
    assert issue["state"] == "open" and done.publication.url == issue["html_url"]
    assert bench.github.comments.get((REPO, 1), []) == []  # no "withdrew this issue"
    assert bench.github.calls_to("update_issue") == [] and done.past_approvals == []
    assert done.approval.outcome == "published" and done.approval.compensations() == []
    assert [s.name for s in done.approval.not_done()] == [step]
    assert why in done.approval.steps[step].detail
    assert done.approval.reason is not None and done.approval.reason.startswith("published; ")


@pytest.mark.parametrize(
    ("status", "attempts"),
    [(502, 5), (422, 1)],  # a lost answer is sent again (bounded), a refusal is not
)
async def test_labels_that_fail_leave_the_issue_published_and_say_so(bench, status, attempts):
    inv = await bench.approved()
    bench.github.fail_next("add_labels", status=status, count=10)
    slack = Link("slack_link")
    done = await bench.publish(inv, links=[slack])
    assert_standing(bench, done, "add_labels", str(status))
    assert bench.issues()[0]["labels"] == []
    assert len(bench.github.calls_to("add_labels")) == attempts
    assert "the label could not be added: add labels: GitHub" in done.approval.reason
    assert slack.linked == [1]  # the next side step ran all the same
    # Approving again returns the receipt, and queues the publication to finish it.
    receipt = approve(done)
    assert receipt.status == "published" and receipt.fresh


async def test_a_rerun_of_the_publication_adds_the_labels_not_done_and_nothing_else(bench):
    inv = await bench.approved()
    bench.github.fail_next("add_labels", status=422)
    slack = Link("slack_link")
    first = await bench.publish(inv, links=[slack])
    assert [s.name for s in first.approval.not_done()] == ["add_labels"]
    done = await bench.publish(first, links=[slack])
    assert done.state is State.PUBLISHED and done.approval.not_done() == []
    assert done.approval.reason is None and done.publication == first.publication
    assert [x["name"] for x in bench.issues()[0]["labels"]] == ["incident-bot"]
    assert len(bench.github.calls_to("create_issue")) == 1 and slack.linked == [1]
    assert not approve(done).fresh  # nothing left to finish
    calls = len(bench.github.calls)
    await bench.publish(done, links=[slack])  # a stray job does nothing
    assert len(bench.github.calls) == calls


async def test_the_worker_finishes_a_published_approvals_side_steps_on_a_publish_job(bench):
    jobs = SqlJobQueue(bench.engine)
    inv = await bench.approved()
    await jobs.enqueue(PUBLISH, inv.id)
    worker = Worker(bench.store, jobs, loops=None, publisher=bench.tracker)  # type: ignore[arg-type]
    bench.github.fail_next("add_labels", status=422)
    assert await worker.run_once()
    published = await bench.store.load(inv.id)
    assert published.state is State.PUBLISHED and published.approval.not_done()
    await jobs.enqueue(PUBLISH, inv.id)  # what a repeated approval does
    assert await worker.run_once()
    done = await bench.store.load(inv.id)
    assert done.approval.not_done() == [] and done.approval.steps["add_labels"].status == "done"
    assert [x["name"] for x in bench.issues()[0]["labels"]] == ["incident-bot"]


async def test_a_link_that_fails_leaves_the_issue_published_with_its_labels(bench):
    inv = await bench.approved()
    sentry = Link("sentry_link", fail=PublishFailed("Sentry refused (403)", status=403))
    slack = Link("slack_link")
    done = await bench.publish(inv, links=[sentry, slack])
    assert_standing(bench, done, "sentry_link", "Sentry refused (403)")
    assert [x["name"] for x in bench.issues()[0]["labels"]] == ["incident-bot"]
    assert slack.linked == [1]
    assert approve(done).status == "published"


async def test_a_rate_limit_on_the_labels_carries_its_retry_after(bench):
    inv = await bench.approved()
    done = await bench.publish(inv)
    bench.github.fail_next("add_labels", status=429, retry_after=30)
    with pytest.raises(PublishFailed) as limited:
        await bench.tracker.add_labels(REPO, done.publication.number, ["incident-bot"])
    assert limited.value.retryable and limited.value.retry_after == 30
    assert "retry after 30 s" in str(limited.value)
    bench.github.fail_next("add_labels", status=403, retry_after=5)  # a secondary rate limit
    with pytest.raises(PublishFailed) as secondary:
        await bench.tracker.add_labels(REPO, done.publication.number, ["incident-bot"])
    assert secondary.value.retryable and secondary.value.retry_after == 5


async def test_a_refusal_at_the_pivot_rolls_back_what_came_before_it(bench):
    """The publisher's own plan has nothing before the pivot; one compensatable step is put
    in front of it to show that a create GitHub refuses (4xx) still rolls that back."""
    inv = await bench.approved()
    events: list[str] = []

    async def reserve() -> str:
        events.append("reserve")
        return "reserved"

    async def release() -> bool:
        events.append("release")
        return True

    async def checkpoint() -> None:
        await bench.store.save(inv)

    steps = bench.publisher().plan(inv, bench.store.save).steps
    plan = Plan(
        steps=[
            Step(name="reserve", kind="compensatable", run=reserve, compensation=release),
            *steps,
        ]
    )
    bench.github.fail_next("create_issue", status=422)
    outcome = await Saga(plan, inv.approval, checkpoint, backoff=0).run()
    assert outcome.kind == "rolled back" and outcome.step == "create_issue"
    assert "422" in (outcome.reason or "")
    assert events == ["reserve", "release"]
    assert [(e.step, e.outcome) for e in inv.approval.compensations()] == [("reserve", "done")]
    assert bench.issues() == [] and bench.github.calls_to("add_labels") == []


def test_the_plan_has_a_sentry_step_only_when_a_sentry_write_is_configured(bench):
    inv = completed()
    approve(inv)
    publisher = bench.publisher()
    assert publisher.plan(inv, bench.store.save).names() == ["create_issue", "add_labels"]
    with_sentry = bench.publisher(links=[Link("sentry_link")])
    assert with_sentry.plan(inv, bench.store.save).names() == [
        "create_issue",
        "add_labels",
        "sentry_link",
    ]
