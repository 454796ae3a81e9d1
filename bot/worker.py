"""Workers claim jobs from the database and run them; a lease lets another take over a dead one."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
from collections.abc import Awaitable, Callable

from agent.domain import Investigation, State
from agent.errors import ConcurrencyError
from agent.loop import Loop
from agent.ports import InvestigationStore, Job, JobQueue

log = logging.getLogger(__name__)

INVESTIGATE = "investigate"

# Builds the loop for one investigation; `save` is the worker's (it keeps the lease alive).
LoopFactory = Callable[[Investigation, Callable[[Investigation], Awaitable[None]]], Awaitable[Loop]]


class Worker:
    def __init__(
        self,
        store: InvestigationStore,
        jobs: JobQueue,
        loops: LoopFactory,
        *,
        name: str | None = None,
        lease_seconds: float = 30.0,
        poll_seconds: float = 0.02,
    ) -> None:
        self.store = store
        self.jobs = jobs
        self.loops = loops
        self.name = name or f"{socket.gethostname()}:{os.getpid()}:{id(self):x}"
        self.lease_seconds = lease_seconds
        self.poll_seconds = poll_seconds

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
            with contextlib.suppress(asyncio.CancelledError):
                await heartbeat
        await self.jobs.complete(job)
        return True

    async def run_forever(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            try:
                worked = await self.run_once()
            except Exception:
                log.exception("worker %s: a job failed", self.name)
                worked = False
            if not worked:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), self.poll_seconds)

    async def _run(self, job: Job) -> None:
        if job.kind != INVESTIGATE:
            log.error("unknown job kind %s", job.kind)
            return
        inv = await self.store.load(job.investigation_id)
        if inv.state not in (State.QUEUED, State.RUNNING):
            return  # already done, or waiting for the operator
        loop = await self.loops(inv, self.store.save)
        await loop.run(inv)

    async def _heartbeat(self, job: Job) -> None:
        while True:
            await asyncio.sleep(self.lease_seconds / 3)
            await self.jobs.renew(job, self.lease_seconds)
