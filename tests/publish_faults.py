"""Randomized fault injection into publishing: shared by tests/agent/test_publish_faults.py
(≥ 100 runs) and benchmarks/publish_faults.py (≥ 1,000).

Each run is one approval of one draft into its own repository of one fake GitHub REST
server, published by the real publisher (the worker's) through gidgethub with a short
client timeout, with the `sentry_note` backlink (agent.publish.sentry, its own aiohttp
session per request as bot.serve wires it) noting the investigation's Sentry issue on one
fake Sentry REST API. The store is in memory: it round-trips the aggregate through JSON
and checks versions like the SQL one (tests/agent/test_publish.py uses SqlStore).
Every GitHub route the saga touches may be told, by a seeded random generator, to answer
5xx or 4xx, to drop the connection before or after applying the request, or to apply it
and stall past the client timeout; the Sentry notes routes, by a second generator of the
same seed and less often, to answer 5xx, drop before or after applying, or apply and
stall. A simulated operator then retries the approval or clicks "Create anyway" when
asked. After each run the invariants are checked:

- never two issues for one approval;
- never an issue whose text differs from the approved one;
- a published investigation points at an open issue with its labels;
- whenever it rolled back, the compensation log has an entry for every completed
  reversible step (the Sentry note's included), and a complete rollback left the issue
  closed as not planned without labels;
- never two Sentry notes carrying one approval's marker, and none unless its step ran;
- a published investigation has exactly one, naming the issue's URL; a complete
  rollback left none;
- the notes of earlier approvals on the same Sentry issue are left alone.

All runs note the same Sentry issue; after each, only its last few notes are kept, so the
marker always has other approvals' notes to be told apart from and the list stays short.
"""

from __future__ import annotations

import contextlib
import random
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

from agent.domain import Diagnosis, Draft, Investigation, Scope, State, utcnow
from agent.errors import CompensationFailed, ConcurrencyError
from agent.publish.github import GitHubIssues
from agent.publish.publisher import Publisher, issue_marker
from agent.publish.sentry import SentryNote, note_marker
from tests.fakes.github import FakeGitHub
from tests.fakes.sentry import FakeSentry

ROUTES = (
    "create_issue",
    "list_issues",
    "add_labels",
    "get_issue",
    "list_comments",
    "create_comment",
    "update_issue",
    "remove_label",
)
KINDS = ("5xx", "4xx", "drop", "drop_after_apply", "timeout_after_apply")
SENTRY_ROUTES = ("list_notes", "create_note", "delete_note")
# No 4xx: the note's step sees only lost answers, which are what its marker is for.
SENTRY_KINDS = ("5xx", "drop", "drop_after_apply", "timeout_after_apply")
SENTRY_RATE = 0.1  # per route and run (GitHub's is 0.3): about one run in seven
KEPT_NOTES = 3  # earlier approvals' notes left on the Sentry issue between runs
NOTE = "sentry_note"
REVERSIBLE = ("create_issue", "add_labels", NOTE)


@dataclass
class Tally:
    runs: int = 0
    outcomes: Counter[str] = field(default_factory=Counter)
    violations: list[str] = field(default_factory=list)
    sentry_faults: int = 0  # runs where an injected Sentry fault hit a call

    def line(self) -> str:
        o = self.outcomes
        return (
            f"runs={self.runs} published={o['published']} "
            f"adopted_after_lost_answer={o['adopted']} "
            f"created_anyway={o['created anyway']} rolled_back={o['rolled back']} "
            f"refused={o['refused']} left_for_a_human={o['left for a human']} "
            f"violations={len(self.violations)} sentry_faults={self.sentry_faults}"
        )


class MemoryStore:
    """The InvestigationStore port in a dict: JSON round trips, optimistic versions."""

    def __init__(self) -> None:
        self.rows: dict[str, str] = {}

    async def create(self, inv: Investigation) -> None:
        inv.version = 1
        self.rows[inv.id] = inv.model_dump_json()

    async def load(self, investigation_id: str) -> Investigation:
        return Investigation.model_validate_json(self.rows[investigation_id])

    async def save(self, inv: Investigation) -> None:
        stored = Investigation.model_validate_json(self.rows[inv.id]).version
        if stored != inv.version:
            raise ConcurrencyError(f"read version {inv.version}, stored {stored}")
        inv.version += 1
        self.rows[inv.id] = inv.model_dump_json()


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
                # Not 404: on a DELETE it truthfully means "already gone".
                github.fail_next(route, status=rng.choice((403, 422)))
            elif kind == "drop":
                github.drop_next(route)
            elif kind == "drop_after_apply":
                github.drop_after_apply_next(route)
            else:
                github.timeout_after_apply_next(route, delay=30)
    return planned


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
                kind = rng.choice(SENTRY_KINDS)
                planned.append(f"sentry {route}:{kind}")
                if kind == "5xx":
                    self.fake.fail_next(route, status=rng.choice((500, 502, 503)))
                elif kind == "drop":
                    self.fake.drop_next(route)
                elif kind == "drop_after_apply":
                    self.fake.drop_after_apply_next(route)
                else:
                    self.fake.timeout_after_apply_next(route, delay=30)
        return planned


async def one_run(
    i: int,
    rng: random.Random,
    github: FakeGitHub,
    store: MemoryStore,
    publisher: Publisher,
    sentry: Sentry,
    sentry_rng: random.Random,
) -> tuple[str, list[str], bool]:
    """One approval under faults: its outcome, the invariants it broke, and whether an
    injected Sentry fault hit a call."""
    repo = f"acme/run{i}"
    github.add_repo(repo)
    inv = draft_for(repo)
    inv.subject = f"sentry:{sentry.issue}"
    await store.create(inv)
    planned = inject(github, rng, rate=0.3)
    sentry_planned = sentry.inject(sentry_rng, rate=SENTRY_RATE)
    planned += sentry_planned
    earlier = [note["id"] for note in sentry.notes()]
    assert inv.draft is not None
    key = f"approval-{i}"
    draft = inv.draft

    async def click() -> None:
        # What the worker does with a publish job (bot.worker.Worker._publish).
        with contextlib.suppress(CompensationFailed):
            await publisher.publish(await store.load(inv.id), store.save)

    receipt = inv.approve(
        approver="U0BOB", version=draft.version, hash=draft.hash, idempotency_key=key
    )
    assert receipt.fresh
    await store.save(inv)
    await click()
    created_anyway = False
    for _ in range(4):
        inv = await store.load(inv.id)
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
        await store.save(inv)
        await click()
    inv = await store.load(inv.id)
    sentry_hit = sentry.fake.clear_faults() < len(sentry_planned)
    broken = check(inv, github, repo, key, planned, sentry.notes(), earlier)
    del sentry.notes()[:-KEPT_NOTES]
    return outcome_of(inv, created_anyway), broken, sentry_hit


def outcome_of(inv: Investigation, created_anyway: bool) -> str:
    if inv.state is State.PUBLISHED:
        assert inv.approval is not None
        if created_anyway:
            return "created anyway"
        if "adopted" in inv.approval.steps["create_issue"].detail:
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
    inv: Investigation,
    github: FakeGitHub,
    repo: str,
    key: str,
    planned: list[str],
    notes: list[dict],
    earlier: list[str],
) -> list[str]:
    """The invariants; each broken one is a line naming the run's faults. `notes` are the
    Sentry issue's, `earlier` the ids of those that were there before the run."""
    broken: list[str] = []
    issues = github.issues[repo]
    draft = inv.draft
    assert draft is not None
    approval = inv.approval or inv.past_approvals[-1]
    where = f"{repo} ({inv.state}, faults {planned})"
    if len(issues) > 1:
        broken.append(f"{where}: {len(issues)} issues for one approval")
    saved, inv.approval = inv.approval, approval
    expected_body = f"{draft.body}\n\n{issue_marker(inv)}"
    mark = note_marker(inv)
    inv.approval = saved
    mine = [note for note in notes if mark in note["data"]["text"]]
    if len(mine) > 1:
        broken.append(f"{where}: {len(mine)} Sentry notes for one approval")
    if mine and NOTE not in approval.steps:
        broken.append(f"{where}: a Sentry note, but its step never ran")
    ids = {note["id"] for note in notes}
    if any(n not in ids for n in earlier):
        broken.append(f"{where}: an earlier approval's Sentry note was deleted")
    for issue in issues:
        if issue["title"] != draft.title or issue["body"] != expected_body:
            broken.append(f"{where}: #{issue['number']} differs from the approved text")
    if inv.state is State.PUBLISHED:
        assert inv.publication is not None
        match = [i for i in issues if i["html_url"] == inv.publication.url]
        if not match or match[0]["state"] != "open":
            broken.append(f"{where}: published, but no open issue at {inv.publication.url}")
        elif [label["name"] for label in match[0]["labels"]] != ["incident-bot"]:
            broken.append(f"{where}: published without its labels")
        if len(mine) != 1:
            broken.append(f"{where}: published with {len(mine)} Sentry notes")
        elif inv.publication.url not in mine[0]["data"]["text"]:
            broken.append(f"{where}: the Sentry note does not name {inv.publication.url}")
    if approval.outcome in ("rolled back", "rollback incomplete"):
        undone = {e.step for e in approval.compensations()}
        for step in REVERSIBLE:
            status = approval.steps.get(step)
            done = status is not None and status.status in (
                "compensated",
                "compensation_failed",
                "done",
                "unknown",
            )
            if done and step not in undone:
                broken.append(f"{where}: {step} completed but has no compensation logged")
        if approval.outcome == "rolled back":
            for issue in issues:
                if issue["state"] != "closed" or issue["state_reason"] != "not_planned":
                    broken.append(f"{where}: rolled back but #{issue['number']} is open")
                if issue["labels"]:
                    broken.append(f"{where}: rolled back but #{issue['number']} keeps labels")
            if mine:
                broken.append(f"{where}: rolled back but the Sentry note is still there")
    if approval.outcome == "refused" and any(i["state"] == "open" for i in issues):
        broken.append(f"{where}: refused, but an issue is open")
    return broken


async def run_faults(runs: int, seed: int, client_timeout: float = 0.05) -> Tally:
    # Here, not at the top: test_sentry_note imports test_publish, which imports this module.
    from tests.agent.test_sentry_note import ISSUE, READ, WRITE, sentry_export

    rng = random.Random(seed)
    # The Sentry faults draw from their own generator: GitHub's plan for a seed is unchanged.
    sentry_rng = random.Random(f"sentry {seed}")
    tally = Tally()
    now = utcnow()
    with tempfile.TemporaryDirectory() as tmp:
        async with (
            FakeGitHub(token="ghs-test", repos=[]) as github,
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
            store = MemoryStore()
            tracker = GitHubIssues(github.api_url, "ghs-test", timeout=client_timeout)
            note = SentryNote(f"http://{fake_sentry.host}", WRITE, timeout=client_timeout)
            publisher = Publisher(tracker, links=[note], backoff=0.001)
            sentry = Sentry(fake_sentry, ISSUE)
            for i in range(runs):
                outcome, broken, sentry_hit = await one_run(
                    i, rng, github, store, publisher, sentry, sentry_rng
                )
                tally.runs += 1
                tally.outcomes[outcome] += 1
                tally.violations += broken
                tally.sentry_faults += sentry_hit
    return tally
