"""Randomized fault injection into publishing: shared by tests/agent/test_publish_faults.py
(≥ 100 runs) and benchmarks/publish_faults.py (≥ 1,000).

Each run is one approval of one draft into its own repository of one fake GitHub REST
server, published by the real publisher (the worker's) through gidgethub with a short
client timeout, with both backlinks the bot wires: the Slack thread (bot.slack.sync, the
real thread sync over the real store, each run in its own channel of one fake Slack Web
API) and the `sentry_note` (agent.publish.sentry, its own aiohttp session per request as
bot.serve wires it) noting the investigation's Sentry issue on one fake Sentry REST API.
The store is SQLite in memory (the real SqlStore and surface records).

Creating the issue is the saga's pivot; labels, the Slack link and the Sentry note are
the side steps after it. Seeded random generators tell every route those steps touch to
fail: GitHub's (create, lookup, labels) to answer 5xx, 4xx or 429, to drop the connection
before or after applying the request, to apply it and stall past the client timeout, or
to be down longer than the retries last; Sentry's notes routes the same (its 4xx: 404,
403); Slack's post, update and thread read to answer 5xx, 429, a refusal
(`not_in_channel`), to apply a post and lose the answer, or to be down. The Slack client
has no automatic retries: the saga's retries and the sync's look-before-post are what is
measured. A simulated operator then retries the approval or clicks "Create anyway" when
asked. After that the invariants are checked:

- never two issues for one approval, never two Sentry notes for one approval, never one
  thread item posted twice;
- never an issue whose text differs from the approved one;
- once the issue exists, the approval is published and the issue open, never closed or
  commented on by a side step that failed (`closed_by_side_step`); every side step is
  done — its effect there (the label, the one note naming the URL, the link in the thread
  and the root) — or recorded as not done and named in the approval's reason;
- a refused approval left no open issue; the notes of earlier approvals are left alone.

Then the services are back (the faults are cleared) and, when side steps were not done,
the approver clicks Approve again: the receipt queues the publication, which must finish
every side step, with nothing posted, noted or created twice.

All runs note the same Sentry issue; after each, only its last few notes are kept, so the
marker always has other approvals' notes to be told apart from and the list stays short.
"""

from __future__ import annotations

import contextlib
import json
import random
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

from slack_sdk.web.async_client import AsyncWebClient

from agent.domain import Diagnosis, Draft, Investigation, Origin, Scope, State, utcnow
from agent.errors import CompensationFailed
from agent.publish.github import GitHubIssues
from agent.publish.publisher import CREATE, LABELS, NOT_DONE, Publisher, issue_marker
from agent.publish.sentry import SentryNote, note_marker
from bot.slack.sync import EVENT_TYPE, SlackSync
from storage.db import create_engine, create_schema
from storage.store import SqlStore
from storage.surface import SqlSurfaceMessages
from tests.fakes.github import FakeGitHub
from tests.fakes.sentry import FakeSentry
from tests.fakes.slack import FakeSlack

ROUTES = ("create_issue", "list_issues", "add_labels")
KINDS = ("5xx", "4xx", "429", "drop", "drop_after_apply", "timeout_after_apply", "outage")
SENTRY_ROUTES = ("list_notes", "create_note")
SENTRY_RATE = 0.15  # per route and run (GitHub's is 0.3)
SLACK_METHODS = ("chat.postMessage", "chat.update", "conversations.replies")
SLACK_KINDS = ("5xx", "429", "refused", "drop_after_apply", "outage")
SLACK_RATE = 0.15
OUTAGE = 30  # failed calls in a row: more than the retries of a step (and of a re-run)
KEPT_NOTES = 3  # earlier approvals' notes left on the Sentry issue between runs
NOTE, SLACK = "sentry_note", "slack_link"
SIDE_STEPS = (LABELS, SLACK, NOTE)


@dataclass
class Tally:
    runs: int = 0
    outcomes: Counter[str] = field(default_factory=Counter)
    violations: list[str] = field(default_factory=list)
    sentry_faults: int = 0  # runs where an injected Sentry fault hit a call
    slack_faults: int = 0  # runs where an injected Slack fault hit a call
    not_done: Counter[str] = field(default_factory=Counter)  # side step → runs it was not done
    side_steps_not_done: int = 0  # runs published with at least one side step not done
    finished_on_rerun: int = 0  # of those, the runs whose re-run finished every side step
    closed_by_side_step: int = 0  # runs whose created issue was closed or withdrawn
    duplicates: int = 0  # runs with two issues, two notes or a thread item twice
    differing_texts: int = 0  # runs with an issue whose text is not the approved one

    def line(self) -> str:
        o = self.outcomes
        not_done = ",".join(f"{step}:{self.not_done[step]}" for step in SIDE_STEPS)
        return (
            f"runs={self.runs} published={o['published']} "
            f"adopted_after_lost_answer={o['adopted']} "
            f"created_anyway={o['created anyway']} rolled_back={o['rolled back']} "
            f"refused={o['refused']} left_for_a_human={o['left for a human']} "
            f"side_steps_not_done={self.side_steps_not_done} not_done={not_done} "
            f"finished_on_rerun={self.finished_on_rerun} "
            f"closed_by_side_step={self.closed_by_side_step} duplicates={self.duplicates} "
            f"differing_texts={self.differing_texts} violations={len(self.violations)} "
            f"sentry_faults={self.sentry_faults} slack_faults={self.slack_faults}"
        )


def completed(repo: str, title: str, body: str) -> Investigation:
    """A finished investigation with a draft, ready to approve."""
    now = utcnow()
    scope = Scope(
        project_key="shop",
        repository=repo,
        sentry_organization="acme",
        sentry_project="shop",
        since=now - timedelta(hours=24),
        until=now,
    )
    inv = Investigation.open("why do orders fail", scope, requester="U0ALICE")
    inv.start()
    draft = Draft(repository=repo, title=title, body=body)
    inv.complete(Diagnosis(root_cause="a null customer reference"), draft)
    return inv


def draft_for(repo: str) -> Investigation:
    return completed(repo, f"NPE when saving orders ({repo})", "Body.\n")


def inject(github: FakeGitHub, rng: random.Random, rate: float) -> list[str]:
    github.clear_faults()
    planned = []
    for route in ROUTES:
        if rng.random() >= rate:
            continue
        for _ in range(rng.choice((1, 1, 2, 3))):
            kind = rng.choice(KINDS)
            planned.append(f"{route}:{kind}")
            if kind == "5xx":
                github.fail_next(route, status=rng.choice((500, 502, 503)))
            elif kind == "4xx":
                # Not 404: the issue was just created, GitHub would not say it is gone.
                github.fail_next(route, status=rng.choice((403, 422)))
            elif kind == "429":
                github.fail_next(route, status=429, retry_after=0)
            elif kind == "drop":
                github.drop_next(route)
            elif kind == "drop_after_apply":
                github.drop_after_apply_next(route)
            elif kind == "timeout_after_apply":
                github.timeout_after_apply_next(route, delay=30)
            else:
                github.fail_next(route, status=503, count=OUTAGE)
    return planned


def inject_slack(slack: FakeSlack, rng: random.Random, rate: float) -> list[str]:
    slack.clear_faults()
    planned = []
    for method in SLACK_METHODS:
        if rng.random() >= rate:
            continue
        for _ in range(rng.choice((1, 1, 2, 3))):
            kind = rng.choice(SLACK_KINDS)
            planned.append(f"slack {method}:{kind}")
            if kind == "5xx":
                slack.fail_next(method, status=rng.choice((500, 503)), error="internal_error")
            elif kind == "429":
                slack.fail_next(method, status=429, retry_after=0)
            elif kind == "refused":
                slack.fail_next(method, error="not_in_channel")
            elif kind == "drop_after_apply":
                slack.drop_response_next(method)
            else:
                slack.fail_next(method, status=503, error="service_unavailable", count=OUTAGE)
    return planned


def queued(planned: list[str]) -> int:
    """How many failing calls a plan queued (an outage is many)."""
    return sum(OUTAGE if p.endswith(":outage") else 1 for p in planned)


@dataclass
class Sentry:
    """The fake Sentry, and the one issue of it every run's investigation is about."""

    fake: FakeSentry
    issue: str

    def notes(self) -> list[dict]:
        return self.fake.notes[self.issue]

    def inject(self, rng: random.Random, rate: float) -> list[str]:
        self.fake.clear_faults()
        planned = []
        for route in SENTRY_ROUTES:
            if rng.random() >= rate:
                continue
            for _ in range(rng.choice((1, 1, 2, 3))):
                kind = rng.choice(KINDS)
                planned.append(f"sentry {route}:{kind}")
                if kind == "5xx":
                    self.fake.fail_next(route, status=rng.choice((500, 502, 503)))
                elif kind == "4xx":
                    self.fake.fail_next(route, status=rng.choice((403, 404)))
                elif kind == "429":
                    self.fake.fail_next(route, status=429, retry_after=0)
                elif kind == "drop":
                    self.fake.drop_next(route)
                elif kind == "drop_after_apply":
                    self.fake.drop_after_apply_next(route)
                elif kind == "timeout_after_apply":
                    self.fake.timeout_after_apply_next(route, delay=30)
                else:
                    self.fake.fail_next(route, status=503, count=OUTAGE)
        return planned


@dataclass
class World:
    github: FakeGitHub
    slack: FakeSlack
    sentry: Sentry
    store: SqlStore
    sync: SlackSync
    publisher: Publisher


def thread_items(slack: FakeSlack, channel: str) -> list[tuple[str, dict[str, Any]]]:
    """(key, message) of every item of ours in the channel, as Slack holds it now."""
    out = []
    for message in slack.messages(channel):
        meta = message.get("metadata") or {}
        if meta.get("event_type") == EVENT_TYPE:
            out.append((str(meta["event_payload"]["key"]), message))
    return out


async def one_run(
    i: int, rng: random.Random, w: World, sentry_rng: random.Random, slack_rng: random.Random
) -> tuple[str, list[str], dict[str, Any]]:
    """One approval under faults, then a re-run once the services are back: its outcome,
    the invariants it broke, and what the tally counts."""
    repo, channel = f"acme/run{i}", f"C{i:05d}"
    w.github.add_repo(repo)
    inv = draft_for(repo)
    inv.subject = f"sentry:{w.sentry.issue}"
    inv.origin = Origin(surface="slack", channel=channel, user="U0ALICE")
    await w.store.create(inv)
    await w.sync.sync(inv.id)  # the thread as the draft left it: root, diagnosis, draft
    planned = inject(w.github, rng, rate=0.3)
    sentry_planned = w.sentry.inject(sentry_rng, rate=SENTRY_RATE)
    slack_planned = inject_slack(w.slack, slack_rng, rate=SLACK_RATE)
    planned += sentry_planned + slack_planned
    earlier = [note["id"] for note in w.sentry.notes()]
    assert inv.draft is not None
    key = f"approval-{i}"
    draft = inv.draft

    async def click() -> None:
        # What the worker does with a publish job (bot.worker.Worker._publish).
        with contextlib.suppress(CompensationFailed):
            await w.publisher.publish(await w.store.load(inv.id), w.store.save)

    receipt = inv.approve(
        approver="U0BOB", version=draft.version, hash=draft.hash, idempotency_key=key
    )
    assert receipt.fresh
    await w.store.save(inv)
    await click()
    created_anyway = False
    for _ in range(4):
        inv = await w.store.load(inv.id)
        if inv.state is not State.PUBLISH_UNKNOWN:
            break
        assert inv.approval is not None
        choice = rng.random()
        if choice < 0.15:
            break  # nobody answers: left for a human
        if inv.approval.lookup == "nothing" and choice < 0.6:
            inv.create_anyway(
                approver="U0CAROL",
                version=draft.version,
                hash=draft.hash,
                creates=inv.approval.creates_sent,
            )
            created_anyway = True
        else:
            again = inv.approve(
                approver="U0BOB", version=draft.version, hash=draft.hash, idempotency_key=key
            )
            assert again.status == "retry", again.status
        await w.store.save(inv)
        await click()
    inv = await w.store.load(inv.id)
    where = f"{repo} ({inv.state}, faults {planned})"
    broken, counts = check(inv, w, channel, where, earlier)
    # The services are back.
    w.github.clear_faults()
    counts["sentry_hit"] = w.sentry.fake.clear_faults() < queued(sentry_planned)
    counts["slack_hit"] = w.slack.clear_faults() < queued(slack_planned)
    if counts["not_done"]:
        again = inv.approve(
            approver="U0BOB", version=draft.version, hash=draft.hash, idempotency_key=key
        )
        if not (again.status == "published" and again.fresh):
            broken.append(f"{where}: approving again does not finish the side steps")
        else:
            await w.store.save(inv)
            await click()
        inv = await w.store.load(inv.id)
        rerun, _ = check(inv, w, channel, f"{where}, re-run", earlier)
        broken += rerun
        assert inv.approval is not None
        left = [s.name for s in inv.approval.not_done()]
        if left:
            broken.append(f"{where}: the re-run left {left} not done")
        counts["finished_on_rerun"] = not rerun and not left
    del w.sentry.notes()[:-KEPT_NOTES]
    return outcome_of(inv, created_anyway), broken, counts


def outcome_of(inv: Investigation, created_anyway: bool) -> str:
    if inv.state is State.PUBLISHED:
        assert inv.approval is not None
        if created_anyway:
            return "created anyway"
        if "adopted" in inv.approval.steps[CREATE].detail:
            return "adopted"
        return "published"
    if inv.state is State.PUBLISH_UNKNOWN:
        return "left for a human"
    past = inv.past_approvals[-1]
    if past.outcome == "rollback incomplete":
        return "left for a human"
    if past.outcome == "refused":
        return "refused"
    return "rolled back"


def check(
    inv: Investigation, w: World, channel: str, where: str, earlier: list[str]
) -> tuple[list[str], dict[str, Any]]:
    """The invariants; each broken one is a line naming the run's faults. `earlier` are the
    ids of the Sentry notes that were there before the run."""
    broken: list[str] = []
    counts: dict[str, Any] = {"not_done": [], "closed": False, "duplicate": False, "differs": False}
    issues = w.github.issues[inv.scope.repository]
    notes = w.sentry.notes()
    draft = inv.draft
    assert draft is not None
    approval = inv.approval or inv.past_approvals[-1]
    if len(issues) > 1:
        broken.append(f"{where}: {len(issues)} issues for one approval")
        counts["duplicate"] = True
    saved, inv.approval = inv.approval, approval
    expected_body = f"{draft.body}\n\n{issue_marker(inv)}"
    mark = note_marker(inv)
    inv.approval = saved
    mine = [note for note in notes if mark in note["data"]["text"]]
    if len(mine) > 1:
        broken.append(f"{where}: {len(mine)} Sentry notes for one approval")
        counts["duplicate"] = True
    if mine and NOTE not in approval.steps:
        broken.append(f"{where}: a Sentry note, but its step never ran")
    keys = [k for k, _ in thread_items(w.slack, channel)]
    if len(keys) != len(set(keys)):
        broken.append(f"{where}: a thread item posted twice: {sorted(keys)}")
        counts["duplicate"] = True
    ids = {note["id"] for note in notes}
    if any(n not in ids for n in earlier):
        broken.append(f"{where}: an earlier approval's Sentry note was deleted")
    for issue in issues:
        if issue["title"] != draft.title or issue["body"] != expected_body:
            broken.append(f"{where}: #{issue['number']} differs from the approved text")
            counts["differs"] = True
    created = approval.steps.get(CREATE)
    if created is not None and created.status == "done":
        broken += after_the_pivot(inv, w, channel, where, mine, counts)
    elif approval.outcome == "refused" and any(i["state"] == "open" for i in issues):
        broken.append(f"{where}: refused, but an issue is open")
    return broken, counts


def after_the_pivot(
    inv: Investigation,
    w: World,
    channel: str,
    where: str,
    mine: list[dict],
    counts: dict[str, Any],
) -> list[str]:
    """The issue exists: it stands, whatever the side steps did."""
    broken: list[str] = []
    approval = inv.approval
    if inv.state is not State.PUBLISHED or approval is None or inv.publication is None:
        return [f"{where}: the issue was created but the approval is not published"]
    match = [
        i for i in w.github.issues[inv.scope.repository] if i["html_url"] == inv.publication.url
    ]
    if not match:
        return [f"{where}: published, but there is no issue at {inv.publication.url}"]
    issue = match[0]
    comments = w.github.comments.get((inv.scope.repository, issue["number"]), [])
    if issue["state"] != "open" or comments:
        counts["closed"] = True
        broken.append(f"{where}: #{issue['number']} was withdrawn ({issue['state']})")
    for step in SIDE_STEPS:
        record = approval.steps.get(step)
        if record is None or record.status not in ("done", "not_done"):
            broken.append(f"{where}: side step {step} is {record.status if record else 'absent'}")
        elif record.status == "not_done":
            counts["not_done"].append(step)
            if NOT_DONE[step] not in (approval.reason or ""):
                broken.append(f"{where}: {step} not done, and the reason does not say so")
        elif step == LABELS and [x["name"] for x in issue["labels"]] != ["incident-bot"]:
            broken.append(f"{where}: add_labels done, but the issue has no label")
        elif step == NOTE and (len(mine) != 1 or inv.publication.url not in json.dumps(mine)):
            broken.append(f"{where}: sentry_note done with {len(mine)} Sentry notes naming it")
        elif step == SLACK:
            shown = dict(thread_items(w.slack, channel))
            n = len(inv.past_approvals)
            for item in (f"publish:{n}", "root"):
                if inv.publication.url not in json.dumps(shown.get(item)):
                    broken.append(f"{where}: slack_link done, but {item} has no link")
    if not counts["not_done"] and approval.reason is not None:
        broken.append(f"{where}: every side step done, but the reason says {approval.reason}")
    return broken


async def run_faults(runs: int, seed: int, client_timeout: float = 0.05) -> Tally:
    # Here, not at the top: test_sentry_note imports test_publish, which imports this module.
    from tests.agent.test_sentry_note import ISSUE, READ, WRITE, sentry_export

    rng = random.Random(seed)
    # Sentry's and Slack's faults draw from their own generators: GitHub's plan for a seed
    # does not depend on theirs.
    sentry_rng = random.Random(f"sentry {seed}")
    slack_rng = random.Random(f"slack {seed}")
    tally = Tally()
    now = utcnow()
    engine = create_engine("sqlite+aiosqlite://")
    await create_schema(engine)
    with tempfile.TemporaryDirectory() as tmp:
        async with (
            FakeGitHub(token="ghs-test", repos=[]) as github,
            FakeSlack() as slack,
            FakeSentry(
                sentry_export(Path(tmp)),
                "acme",  # the scope of `completed`
                "shop",
                now - timedelta(days=1),
                now,
                token=READ,
                write_token=WRITE,
            ) as fake_sentry,
        ):
            store = SqlStore(engine)
            client = AsyncWebClient(
                token="xoxb-test", base_url=slack.api_url, timeout=10, retry_handlers=[]
            )
            sync = SlackSync(client, store, SqlSurfaceMessages(engine))
            tracker = GitHubIssues(github.api_url, "ghs-test", timeout=client_timeout)
            note = SentryNote(f"http://{fake_sentry.host}", WRITE, timeout=client_timeout)
            publisher = Publisher(tracker, links=[sync, note], backoff=0.001)
            w = World(github, slack, Sentry(fake_sentry, ISSUE), store, sync, publisher)
            try:
                for i in range(runs):
                    outcome, broken, counts = await one_run(i, rng, w, sentry_rng, slack_rng)
                    tally.runs += 1
                    tally.outcomes[outcome] += 1
                    tally.violations += broken
                    tally.sentry_faults += counts["sentry_hit"]
                    tally.slack_faults += counts["slack_hit"]
                    tally.not_done.update(counts["not_done"])
                    tally.side_steps_not_done += bool(counts["not_done"])
                    tally.finished_on_rerun += bool(counts.get("finished_on_rerun"))
                    tally.closed_by_side_step += counts["closed"]
                    tally.duplicates += counts["duplicate"]
                    tally.differing_texts += counts["differs"]
            finally:
                await engine.dispose()
    return tally
