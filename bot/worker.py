"""Workers claim jobs from the database and run them; a lease lets another take over a dead one."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
from collections.abc import Awaitable, Callable, Sequence

from agent.domain import Investigation, State
from agent.errors import CompensationFailed, ConcurrencyError
from agent.loop import Loop
from agent.ports import InvestigationStore, Job, JobQueue
from agent.publish import publisher as publishing
from agent.publish.publisher import Backlink, IssueTracker
from bot.logs import INVESTIGATION

log = logging.getLogger(__name__)

INVESTIGATE = "investigate"
PUBLISH = "publish"

Save = Callable[[Investigation], Awaitable[None]]
# Builds the loop for one investigation; `save` is the worker's (it tells the surfaces).
LoopFactory = Callable[[Investigation, Save], Awaitable[Loop]]


# The issue tracker approved drafts are published to (GitHubIssues); the saga is ours.
Publisher = IssueTracker


class Worker:
    def __init__(
        self,
        store: InvestigationStore,
        jobs: JobQueue,
        loops: LoopFactory,
        *,
        publisher: Publisher | None = None,
        links: Sequence[Backlink] = (),
        changed: Callable[[str], None] | None = None,
        name: str | None = None,
        lease_seconds: float = 30.0,
        poll_seconds: float = 0.02,
    ) -> None:
        self.store = store
        self.jobs = jobs
        self.loops = loops
        self.publisher = publisher
        # Runs each approval's publication as a saga (agent.publish.publisher).
        self.saga = publishing.Publisher(publisher, links=links) if publisher else None
        self.changed = changed or (lambda _id: None)
        self.name = name or f"{socket.gethostname()}:{os.getpid()}:{id(self):x}"
        self.lease_seconds = lease_seconds
        self.poll_seconds = poll_seconds
        self.wake = asyncio.Event()
        self._checked: set[str] = set()

    async def run_once(self) -> bool:
        """Claim and run one job; False when there was none."""
        job = await self.jobs.claim(self.name, self.lease_seconds)
        if job is None:
            return False
        heartbeat = asyncio.create_task(self._heartbeat(job))
        try:
            await self._run(job)
        except ConcurrencyError:
            log.warning("job %s was taken over by another worker", job.id)
            return True
        finally:
            heartbeat.cancel()
            with contextlib.suppress(asyncio.CancelledError, ConcurrencyError):
                await heartbeat
        await self.jobs.complete(job)
        # With the "runs" line, the span this worker held the job: claims can be audited.
        log.info("worker %s completed the job %s (attempt %d)", self.name, job.id, job.attempts)
        return True

    async def run_forever(self, stop: asyncio.Event) -> None:
        # Stopping wakes the worker too: its poll may be long when wake-ups come by LISTEN.
        stopping = asyncio.create_task(stop.wait())
        stopping.add_done_callback(lambda _: self.wake.set())
        try:
            while not stop.is_set():
                try:
                    worked = await self.run_once()
                except Exception:
                    log.exception("worker %s: a job failed", self.name)
                    worked = False
                if not worked:
                    # New work wakes the worker at once; the poll covers what does not.
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(self.wake.wait(), self.poll_seconds)
                    self.wake.clear()
        finally:
            stopping.cancel()

    async def save(self, inv: Investigation) -> None:
        await self.store.save(inv)
        if (
            inv.subject
            and inv.state is State.RUNNING
            and inv.duplicate_of is None
            and inv.id not in self._checked
        ):
            self._checked.add(inv.id)  # once: what it is about does not change
            other = await self.store.running_on(inv)
            if other is not None:
                inv.stop_as_duplicate(other)  # the loop sees the state and ends
                await self.store.save(inv)
        self.changed(inv.id)

    async def _run(self, job: Job) -> None:
        INVESTIGATION.set(job.investigation_id)  # every log line of this job names it
        log.info(
            "worker %s runs the %s job %s (attempt %d)", self.name, job.kind, job.id, job.attempts
        )
        inv = await self.store.load(job.investigation_id)
        if job.kind == INVESTIGATE:
            if inv.state in (State.QUEUED, State.RUNNING):
                loop = await self.loops(inv, self.save)
                await loop.run(inv)
        elif job.kind == PUBLISH:
            # Published with side steps not done: the job runs them again (idempotent).
            pending = inv.state is State.PUBLISHED and inv.approval and inv.approval.not_done()
            if inv.state is State.PUBLISH_QUEUED or pending:
                await self._publish(inv)
        else:
            log.error("unknown job kind %s", job.kind)

    async def _publish(self, inv: Investigation) -> None:
        if self.saga is None:
            inv.publish_refused("no issue tracker is configured")
            await self.save(inv)
            return
        # A retry or "Create anyway" asked for while this runs queues the job once more
        # (storage.jobs: again), so one pass is enough here.
        try:
            await self.saga.publish(inv, self.save)
        except CompensationFailed as exc:
            # Recorded with the investigation and shown in the thread; a human finishes it.
            log.error("investigation %s: %s", inv.id, exc)

    async def _heartbeat(self, job: Job) -> None:
        while True:
            await asyncio.sleep(self.lease_seconds / 3)
            await self.jobs.renew(job, self.lease_seconds)
