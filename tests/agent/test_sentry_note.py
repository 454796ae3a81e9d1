"""The saga's `sentry_note` side step against the fake Sentry REST API: one note per
approval however often it is linked, a lost answer settled by the marker, refusals, and
the step inside a real publication (the fake GitHub, the real store): when it fails the
issue stays published and the note is reported not done, and a re-run posts it once."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

import pytest

from agent.domain import Investigation, State, utcnow
from agent.errors import PublishFailed, PublishUnknown
from agent.publish.github import GitHubIssues
from agent.publish.sentry import SentryNote, note_marker
from storage.db import create_engine, create_schema
from storage.store import SqlStore
from tests.agent.test_publish import REPO, Bench, Link, approve, completed
from tests.fakes.github import FakeGitHub
from tests.fakes.sentry import FakeSentry

ISSUE = "5755875771"
READ, WRITE = "sntrys-read-token", "sntrys-write-token-5ecret"
GITHUB_TOKEN = "ghs-test"
ISSUE_URL = "https://github.com/acme/shop/issues/7"


@dataclass
class World:
    bench: Bench
    sentry: FakeSentry

    def note(self, token: str = WRITE, **options) -> SentryNote:
        return SentryNote(f"http://{self.sentry.host}", token, timeout=0.5, **options)

    def notes(self) -> list[dict]:
        return self.sentry.notes[ISSUE]

    def posts(self) -> int:
        return len([c for c in self.sentry.calls_to("/comments/") if c.method == "POST"])


def sentry_export(folder: Path) -> Path:
    """One issue in organization acme, project shop (the scope of `completed`)."""
    now = utcnow()
    issue = {
        "id": ISSUE,
        "shortId": "SHOP-1",
        "title": "NullPointerException in OrderService.save",
        "firstSeen": (now - timedelta(hours=2)).isoformat(),
        "lastSeen": (now - timedelta(hours=1)).isoformat(),
        "project": {"id": "42", "slug": "shop", "name": "shop"},
    }
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "issues.json").write_text(json.dumps([issue]), "utf-8")
    return folder


@pytest.fixture
async def world(tmp_path: Path) -> AsyncIterator[World]:
    engine = create_engine("sqlite+aiosqlite://")
    await create_schema(engine)
    now = utcnow()
    folder = sentry_export(tmp_path / "sentry")
    async with (
        FakeGitHub(token=GITHUB_TOKEN, repos=[REPO]) as github,
        FakeSentry(
            folder, "acme", "shop", now - timedelta(days=1), now, token=READ, write_token=WRITE
        ) as sentry,
    ):
        tracker = GitHubIssues(github.api_url, GITHUB_TOKEN, timeout=0.2)
        yield World(Bench(github, SqlStore(engine), tracker), sentry)
    await engine.dispose()


def published(subject: str | None = f"sentry:{ISSUE}", key: str = "key-1") -> Investigation:
    """Approved, with the issue created: what the step reads once create_issue is done."""
    inv = completed()
    inv.subject = subject
    approve(inv, key=key)
    assert inv.approval is not None
    inv.approval.issue_number, inv.approval.issue_url = 7, ISSUE_URL
    return inv


# -- link, unlink ----------------------------------------------------------------------


async def test_a_published_investigation_gets_exactly_one_note_with_the_issue_url(world):
    inv = published()
    note = world.note()
    assert await note.link(inv) == f"noted on Sentry issue {ISSUE}"
    (noted,) = world.notes()
    text = noted["data"]["text"]
    assert ISSUE_URL in text and inv.id in text and inv.draft.title in text
    assert text.splitlines()[-1] == note_marker(inv)  # a plain-text line, not HTML
    assert noted["type"] == "note"

    assert await note.link(inv) == f"already noted on Sentry issue {ISSUE}"
    assert len(world.notes()) == 1 and world.posts() == 1


async def test_another_approval_of_the_same_investigation_gets_its_own_note(world):
    first, second = published(key="key-1"), published(key="key-2")
    second.id = first.id
    await world.note().link(first)
    await world.note().link(second)
    assert len(world.notes()) == 2  # a rolled-back approval's note is never taken for it


@pytest.mark.parametrize(
    ("fault", "applied"),
    [("drop_after_apply", 1), ("timeout_after_apply", 1), ("fail", 0), ("drop", 0)],
)
async def test_a_lost_answer_to_the_post_is_unknown_and_linking_again_posts_at_most_once(
    world, fault, applied
):
    inv = published()
    getattr(world.sentry, f"{fault}_next")("create_note")
    with pytest.raises(PublishUnknown) as lost:
        await world.note().link(inv)
    assert WRITE not in str(lost.value)
    assert len(world.notes()) == applied
    # The retry looks for the marker before it posts.
    expected = "already noted" if applied else "noted"
    assert (await world.note().link(inv)).startswith(expected)
    assert len(world.notes()) == 1 and world.posts() == 2 - applied


async def test_the_note_is_found_past_the_first_page(world):
    inv = published()
    await world.note().link(inv)
    for n in range(5):
        world.sentry.add_note(ISSUE, f"note {n}")
    world.sentry.notes_per_page = 2  # ours is on the third page, newest first
    assert (await world.note().link(inv)).startswith("already noted")
    # Reading one page only it is missed, and Sentry refuses the repeat: noted all the same.
    assert (await world.note(pages=1).link(inv)).startswith("already noted")
    assert world.posts() == 2 and len(world.notes()) == 6
    assert json.dumps(world.notes()).count(note_marker(inv)) == 1


# -- refusals ----------------------------------------------------------------------------


async def test_a_wrong_token_is_refused_and_never_shown(world):
    inv = published()
    wrong = "sntrys-not-the-right-one"
    with pytest.raises(PublishFailed) as refused:
        await world.note(token=wrong).link(inv)
    assert refused.value.status == 401 and not refused.value.retryable
    assert wrong not in str(refused.value) and WRITE not in str(refused.value)
    assert world.notes() == [] and world.posts() == 0


async def test_the_read_token_may_not_write(world):
    with pytest.raises(PublishFailed) as refused:
        await world.note(token=READ).link(published())
    assert refused.value.status == 403 and READ not in str(refused.value)
    assert world.notes() == []


async def test_a_rate_limit_is_retryable_and_a_server_error_unknown(world):
    inv = published()
    world.sentry.fail_next("create_note", status=429, retry_after=12)
    with pytest.raises(PublishFailed) as limited:
        await world.note().link(inv)
    assert limited.value.status == 429 and limited.value.retryable
    assert limited.value.retry_after == 12 and "retry after 12 s" in str(limited.value)
    world.sentry.fail_next("list_notes", status=503)
    with pytest.raises(PublishUnknown, match="503"):
        await world.note().link(inv)
    assert world.notes() == []


async def test_an_unknown_issue_is_refused(world):
    inv = published(subject="sentry:999")
    with pytest.raises(PublishFailed) as refused:
        await world.note().link(inv)
    assert refused.value.status == 404 and not refused.value.retryable


async def test_sentry_that_does_not_answer_is_unknown(world):
    inv = published()
    note = SentryNote("http://127.0.0.1:9", WRITE, timeout=0.5)  # nothing listens there
    with pytest.raises(PublishUnknown) as lost:
        await note.link(inv)
    assert WRITE not in str(lost.value)


def test_applies_only_to_an_approved_investigation_about_a_sentry_issue(world):
    note = world.note()
    assert note.applies_to(published())
    assert not note.applies_to(published(subject=None))
    assert not note.applies_to(published(subject="sentry:"))
    assert not note.applies_to(published(subject="github:acme/shop#1"))
    no_org = published()
    no_org.scope.sentry_organization = ""
    assert not note.applies_to(no_org)
    unapproved = completed()
    unapproved.subject = f"sentry:{ISSUE}"
    assert not note.applies_to(unapproved)
    # The plan is built before the issue exists: the step is in it all the same.
    fresh = completed()
    fresh.subject = f"sentry:{ISSUE}"
    approve(fresh)
    plan = world.bench.publisher(links=[note]).plan(fresh, world.bench.store.save)
    assert plan.names() == ["create_issue", "add_labels", "sentry_note"]


# -- inside a publication -------------------------------------------------------------------


async def approved_about_sentry(bench: Bench) -> Investigation:
    inv = await bench.approved()
    inv.subject = f"sentry:{ISSUE}"
    await bench.store.save(inv)
    return inv


async def test_a_publication_notes_the_sentry_issue(world):
    inv = await approved_about_sentry(world.bench)
    done = await world.bench.publish(inv, links=[world.note()])
    assert done.state is State.PUBLISHED
    (noted,) = world.notes()
    assert done.publication.url in noted["data"]["text"]
    assert ("sentry_note", "done") in [(e.step, e.outcome) for e in done.approval.log]
    assert done.approval.steps["sentry_note"].detail == f"noted on Sentry issue {ISSUE}"


async def test_a_lost_answer_inside_a_publication_is_retried_without_a_second_note(world):
    inv = await approved_about_sentry(world.bench)
    world.sentry.drop_after_apply_next("create_note")
    done = await world.bench.publish(inv, links=[world.note()])
    assert done.state is State.PUBLISHED
    assert len(world.notes()) == 1 and world.posts() == 1
    assert done.approval.steps["sentry_note"].detail.startswith("already noted")


def assert_published_without_the_note(world: World, done: Investigation, why: str) -> None:
    """The issue stands (open, labelled, never withdrawn) and the note is reported not done."""
    assert done.state is State.PUBLISHED and done.past_approvals == []
    (issue,) = world.bench.issues()
    assert issue["state"] == "open" and [x["name"] for x in issue["labels"]] == ["incident-bot"]
    assert world.bench.github.comments.get((REPO, 1), []) == []  # no "withdrew this issue"
    a = done.approval
    assert a.outcome == "published" and a.compensations() == []
    assert [s.name for s in a.not_done()] == ["sentry_note"]
    assert why in a.steps["sentry_note"].detail
    assert a.reason.startswith("published; the Sentry issue could not be noted: ")
    assert WRITE not in a.reason and "rollback" not in a.reason


@pytest.mark.parametrize(
    ("status", "attempts", "why"),
    [(500, 5, "Sentry answered 500 (after 5 attempts)"), (404, 1, "Sentry refused (404)")],
)
async def test_a_note_endpoint_that_fails_leaves_the_issue_published(world, status, attempts, why):
    inv = await approved_about_sentry(world.bench)
    world.sentry.fail_next("create_note", status=status, count=10)
    done = await world.bench.publish(inv, links=[world.note()])
    assert_published_without_the_note(world, done, why)
    assert world.notes() == [] and world.posts() == attempts  # a refusal is not sent again
    world.sentry.clear_faults()  # Sentry is back: a re-run finishes the publication
    finished = await world.bench.publish(done, links=[world.note()])
    assert finished.state is State.PUBLISHED and finished.approval.not_done() == []
    (noted,) = world.notes()
    assert finished.publication.url in noted["data"]["text"]


async def test_a_rerun_after_a_note_whose_answer_was_lost_does_not_post_it_twice(world):
    inv = await approved_about_sentry(world.bench)
    world.sentry.drop_after_apply_next("create_note")  # posted, answer lost
    world.sentry.fail_next("list_notes", status=503, count=5)  # and every look after it fails
    done = await world.bench.publish(inv, links=[world.note()])
    assert_published_without_the_note(world, done, "503")
    finished = await world.bench.publish(done, links=[world.note()])
    assert finished.approval.not_done() == []
    assert finished.approval.steps["sentry_note"].detail.startswith("already noted")
    assert len(world.notes()) == 1 and world.posts() == 1  # the marker was looked for first


async def test_a_later_side_step_that_fails_leaves_the_note_and_the_issue(world):
    inv = await approved_about_sentry(world.bench)
    later = Link("later_link", fail=PublishFailed("refused for good", status=403))
    done = await world.bench.publish(inv, links=[world.note(), later])
    assert done.state is State.PUBLISHED and done.approval.compensations() == []
    assert [s.name for s in done.approval.not_done()] == ["later_link"]
    (noted,) = world.notes()
    assert done.publication.url in noted["data"]["text"]
    (issue,) = world.bench.issues()
    assert issue["state"] == "open"
