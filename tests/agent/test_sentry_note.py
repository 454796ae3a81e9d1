"""The saga's `sentry_note` step against the fake Sentry REST API: one note per approval
however often it is linked, a lost answer settled by the marker, unlinking, refusals, and
the step inside a real publication (the fake GitHub, the real store)."""

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
async def world(tmp_path: Path, db_url: str) -> AsyncIterator[World]:
    engine = create_engine(db_url)
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


async def test_unlink_deletes_this_approvals_note_and_then_finds_nothing_left(world):
    inv = published()
    note = world.note()
    assert await note.unlink(inv) is False  # nothing was ever noted
    await note.link(inv)
    human = world.sentry.add_note(ISSUE, "Looking into it - Jane")
    assert await note.unlink(inv) is True
    assert world.notes() == [human]  # someone else's note is left alone
    assert await note.unlink(inv) is False  # already gone counts as done
    deletes = [c for c in world.sentry.calls_to("/comments/") if c.method == "DELETE"]
    assert len(deletes) == 1


async def test_a_note_deleted_by_someone_else_meanwhile_counts_as_done(world):
    inv = published()
    await world.note().link(inv)
    world.sentry.fail_next("delete_note", status=404)
    assert await world.note().unlink(inv) is False
    world.sentry.notes[ISSUE].clear()
    assert await world.note().unlink(inv) is False


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
    assert await world.note().unlink(inv) is True
    assert note_marker(inv) not in json.dumps(world.notes())


# -- refusals ----------------------------------------------------------------------------


async def test_a_wrong_token_is_refused_and_never_shown(world):
    inv = published()
    wrong = "sntrys-not-the-right-one"
    with pytest.raises(PublishFailed) as refused:
        await world.note(token=wrong).link(inv)
    assert refused.value.status == 401 and not refused.value.retryable
    assert wrong not in str(refused.value) and WRITE not in str(refused.value)
    assert world.notes() == [] and world.posts() == 0
    with pytest.raises(PublishFailed) as refused:
        await world.note(token=wrong).unlink(inv)
    assert refused.value.status == 401


async def test_the_read_token_may_not_write(world):
    with pytest.raises(PublishFailed) as refused:
        await world.note(token=READ).link(published())
    assert refused.value.status == 403 and READ not in str(refused.value)
    assert world.notes() == []


async def test_a_rate_limit_is_retryable_and_a_server_error_unknown(world):
    inv = published()
    world.sentry.fail_next("create_note", status=429)
    with pytest.raises(PublishFailed) as limited:
        await world.note().link(inv)
    assert limited.value.status == 429 and limited.value.retryable
    world.sentry.fail_next("list_notes", status=503)
    with pytest.raises(PublishUnknown, match="503"):
        await world.note().link(inv)
    assert world.notes() == []


async def test_an_unknown_issue_is_refused_and_has_nothing_to_unlink(world):
    inv = published(subject="sentry:999")
    with pytest.raises(PublishFailed) as refused:
        await world.note().link(inv)
    assert refused.value.status == 404
    assert await world.note().unlink(inv) is False


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


async def test_a_later_failure_rolls_back_and_withdraws_the_note(world):
    inv = await approved_about_sentry(world.bench)
    later = Link("later_link", fail=PublishFailed("refused for good", status=403))
    done = await world.bench.publish(inv, links=[world.note(), later])
    assert done.state is State.COMPLETED
    (past,) = done.past_approvals
    assert past.outcome == "rolled back" and "later_link failed" in past.reason
    assert [(e.step, e.outcome) for e in past.compensations()] == [
        ("sentry_note", "done"),
        ("add_labels", "done"),
        ("create_issue", "done"),
    ]
    assert world.notes() == [] and world.posts() == 1
    (issue,) = world.bench.issues()
    assert issue["state"] == "closed" and issue["state_reason"] == "not_planned"


async def test_a_note_that_keeps_failing_rolls_the_publication_back(world):
    inv = await approved_about_sentry(world.bench)
    world.sentry.fail_next("create_note", status=502, count=3)  # every attempt of the step
    done = await world.bench.publish(inv, links=[world.note()])
    (past,) = done.past_approvals
    assert done.state is State.COMPLETED and past.outcome == "rolled back"
    assert past.steps["sentry_note"].status == "compensated"  # its outcome was unknown
    assert [(e.step, e.outcome) for e in past.compensations()] == [
        ("sentry_note", "already done"),
        ("add_labels", "done"),
        ("create_issue", "done"),
    ]
    assert world.notes() == [] and WRITE not in past.reason
