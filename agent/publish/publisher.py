"""Publishing an approved draft: the plan, and what its outcome does to the investigation.

The plan: create the issue (its body ends with a hidden marker naming the investigation,
the draft hash and the approval) — the saga's pivot — then the side steps: add the
labels, link back from each configured place — the Slack thread and root message, the
Sentry issue when a Sentry write is configured (without one that step is simply not in
the plan). Once the issue exists it is published: a side step that keeps failing is
recorded as not done (the approval's reason says which, the thread shows it) and run
again when the publication is queued again, never undone by closing the issue.

Creating is the one step that cannot be sent again blindly. Before the call goes out the
approval records it (saved); if the answer is lost the issues the bot created in that
repository since the attempt are listed and the one with the marker is adopted. When none
has it, the state is PUBLISH_UNKNOWN and a person decides: "Create anyway" is a second
explicit approval, and allows exactly one more create call.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from datetime import datetime, timedelta
from typing import Protocol

from agent.domain import Approval, Investigation, State, StepRecord, utcnow
from agent.errors import CompensationFailed, PublishFailed, PublishUnknown
from agent.publish.github import Issue, marker
from agent.publish.saga import Plan, Saga, Step

Save = Callable[[Investigation], Awaitable[None]]

CREATE, LABELS = "create_issue", "add_labels"
LOOKUPS = 3  # a read is safe to repeat


class IssueTracker(Protocol):
    """What the publisher needs of GitHub (agent.publish.github.GitHubIssues)."""

    async def create_issue(self, repository: str, title: str, body: str) -> Issue: ...

    async def find_issue(self, repository: str, marker: str, since: datetime) -> Issue | None: ...

    async def add_labels(self, repository: str, number: int, labels: list[str]) -> None: ...


class Backlink(Protocol):
    """A place that links back to the published issue: the Slack thread, the Sentry issue.

    `link` is idempotent and returns a line for the log; it reads the investigation as
    saved (the saga saves after every step). A link is a side step: when it fails the
    issue stands and the link is recorded as not done."""

    name: str

    def applies_to(self, inv: Investigation) -> bool: ...

    async def link(self, inv: Investigation) -> str: ...


# What a side step that is not done leaves undone, as the thread and the state say it.
NOT_DONE = {
    LABELS: "the label could not be added",
    "slack_link": "the Slack thread could not be updated",
    "sentry_note": "the Sentry issue could not be noted",
}


def not_done_line(step: StepRecord) -> str:
    what = NOT_DONE.get(step.name, f"{step.name} was not done")
    return f"{what}: {step.detail}" if step.detail else what


def not_done_summary(a: Approval) -> str | None:
    """'published; the label could not be added: …' when side steps are not done."""
    lines = [not_done_line(s) for s in a.not_done()]
    return "published; " + "; ".join(lines) if lines else None


def issue_marker(inv: Investigation) -> str:
    assert inv.draft is not None and inv.approval is not None
    return marker(inv.id, inv.approval.hash, inv.approval.idempotency_key)


class Publisher:
    def __init__(
        self,
        tracker: IssueTracker,
        *,
        links: Sequence[Backlink] = (),
        labels: Sequence[str] = ("incident-bot",),
        lookback: timedelta = timedelta(minutes=5),
        backoff: float = 0.05,
        side_retries: int = 4,
        clock: Callable[[], datetime] = utcnow,
    ) -> None:
        self.tracker = tracker
        self.links = list(links)
        self.labels = list(labels)
        # `since` starts this long before the attempt: the two clocks may disagree.
        self.lookback = lookback
        self.backoff = backoff
        self.side_retries = side_retries
        self.clock = clock

    def plan(self, inv: Investigation, save: Save) -> Plan:
        """Create the issue (the pivot), then the side steps, each retried until it is done
        or recorded as not done: labels, then each place that links back."""
        a, draft = inv.approval, inv.draft
        assert a is not None and draft is not None
        repository = draft.repository

        async def checkpoint() -> None:
            await save(inv)

        async def create() -> str:
            return await self._create(inv, a, checkpoint)

        async def add_labels() -> str:
            assert a.issue_number is not None
            await self.tracker.add_labels(repository, a.issue_number, self.labels)
            return "labels " + ", ".join(self.labels)

        # Not retried: a lost answer is settled by looking for the marker.
        steps = [Step(name=CREATE, kind="pivot", run=create, retries=0)]
        if self.labels:
            steps.append(
                Step(name=LABELS, kind="retriable", run=add_labels, retries=self.side_retries)
            )
        for place in self.links:
            if place.applies_to(inv):
                steps.append(self._link_step(place, inv))
        return Plan(steps=steps)

    def _link_step(self, place: Backlink, inv: Investigation) -> Step:
        async def run() -> str:
            return await place.link(inv)

        return Step(name=place.name, kind="retriable", run=run, retries=self.side_retries)

    async def publish(self, inv: Investigation, save: Save) -> None:
        """Run (or resume) the saga of the current approval and record its outcome: a
        queued approval is published; a published one with side steps not done has them
        run again. CompensationFailed is raised, after it is saved, when a rollback of the
        steps before the issue's creation is incomplete."""
        a = inv.approval
        finishing = inv.state is State.PUBLISHED and a is not None and bool(a.not_done())
        if a is None or not (inv.state is State.PUBLISH_QUEUED or finishing):
            return

        async def checkpoint() -> None:
            await save(inv)

        saga = Saga(self.plan(inv, save), a, checkpoint, backoff=self.backoff)
        try:
            outcome = await saga.run()
        except CompensationFailed as exc:
            inv.approval_ended("rollback incomplete", f"{a.reason}; {exc}")
            await save(inv)
            raise
        if outcome.kind == "completed":
            assert a.issue_number is not None and a.issue_url is not None
            if not finishing:
                inv.published(a.issue_number, a.issue_url)
            a.reason = not_done_summary(a)
        elif outcome.kind == "suspended":
            inv.publish_unknown(outcome.reason or "the answer was lost")
        elif a.issue_number is None and saga.status(CREATE) == "failed":
            inv.approval_ended("refused", outcome.reason or "refused")
        else:
            inv.approval_ended("rolled back", outcome.reason or "rolled back")
        await save(inv)

    async def _create(
        self, inv: Investigation, a: Approval, checkpoint: Callable[[], Awaitable[None]]
    ) -> str:
        draft = inv.draft
        assert draft is not None
        mark = issue_marker(inv)
        if a.issue_number is not None:
            return f"#{a.issue_number} exists"
        if a.creates_sent > 0:
            # An earlier create went out and its answer never came (or its worker died).
            found = await self._lookup(inv, a, mark)
            if found is not None:
                return self._adopt(a, found)
            if a.creates_sent >= a.creates_allowed:
                a.lookup = "nothing"
                raise PublishUnknown(
                    "no issue carries the marker; creating one again needs a second approval"
                )
        a.creates_sent += 1
        a.lookup = None
        if a.create_started_at is None:
            a.create_started_at = self.clock()
        await checkpoint()  # on record before the call goes out
        try:
            issue = await self.tracker.create_issue(
                draft.repository, draft.title, f"{draft.body}\n\n{mark}"
            )
        except PublishUnknown as lost:
            # The retry of the same approval, at once: look for the marker.
            found = await self._lookup(inv, a, mark, cause=str(lost))
            if found is not None:
                return self._adopt(a, found)
            a.lookup = "nothing"
            raise PublishUnknown(f"{lost}; no issue carries the marker") from None
        a.issue_number, a.issue_url = issue.number, issue.url
        return f"created #{issue.number}"

    async def _lookup(
        self, inv: Investigation, a: Approval, mark: str, cause: str = "an earlier attempt"
    ) -> Issue | None:
        assert inv.draft is not None and a.create_started_at is not None
        since = a.create_started_at - self.lookback
        for attempt in range(LOOKUPS):
            try:
                found = await self.tracker.find_issue(inv.draft.repository, mark, since)
            except (PublishUnknown, PublishFailed) as exc:
                if attempt == LOOKUPS - 1:
                    a.lookup = "failed"
                    raise PublishUnknown(f"{cause}; looking for the issue failed: {exc}") from None
                await asyncio.sleep(self.backoff * 2**attempt)
                continue
            a.lookup = "found" if found else "nothing"
            return found
        raise AssertionError("unreachable")

    @staticmethod
    def _adopt(a: Approval, issue: Issue) -> str:
        a.issue_number, a.issue_url = issue.number, issue.url
        return f"adopted #{issue.number}: found by its marker after a lost answer"
