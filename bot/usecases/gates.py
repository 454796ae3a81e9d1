"""Gates a new investigation passes before any worker may take it (seed 002).

- Coalescing: a request about a Sentry issue already under investigation in the same
  project joins that run (nothing new is stored); so does one about an issue investigated,
  or skipped, within the coalescing window (`coalesce`, default an hour): a burst of
  alerts makes one record per issue, and a skipped issue is run again with Re-run.
- Concurrency caps, per project (`max_concurrent` in the projects file) and in all
  (INCIDENT_BOT_MAX_CONCURRENT), and the daily token budget (INCIDENT_BOT_TOKENS_PER_DAY):
  over one, the investigation is stored as SKIPPED with the reason, shown in its channel
  and in App Home — never a silent queue.

The severity floor is the alert intake's (bot/usecases/alerts.py): below it nothing is
stored at all. The checks and the creation are one transaction that holds the database's
admission lock (storage/admission.py), so a burst of requests — in one process or spread
over several on one database — cannot all pass a cap or all start the same issue.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Protocol

from agent.domain import Investigation, utcnow
from bot.config import Projects


class Counts(Protocol):
    """What the gates read, and the insert they let through, in one admission transaction
    (storage.admission.Held implements it)."""

    async def running_on(self, inv: Investigation) -> str | None: ...

    async def latest_on(self, inv: Investigation, since: datetime) -> str | None: ...

    async def active_count(self, project: str | None = None) -> int: ...

    async def tokens_on(self, day: str) -> int: ...

    async def create(self, inv: Investigation, replacing: Investigation | None = None) -> None: ...


class Admission(Protocol):
    """The admission lock across processes (storage.admission.SqlAdmission)."""

    def hold(self) -> AbstractAsyncContextManager[Counts]: ...


@dataclass(frozen=True)
class Verdict:
    join: str | None = None  # the id of the run this one joins
    skip: str | None = None  # why it is stored as SKIPPED


@dataclass
class Gates:
    admission: Admission
    projects: Projects
    max_concurrent: int | None = None
    tokens_per_day: int | None = None
    coalesce: timedelta = timedelta(hours=1)
    clock: Callable[[], datetime] = utcnow

    async def check(self, inv: Investigation, counts: Counts) -> Verdict:
        """Under `admission.hold()`: what `counts` says of `inv` stays true until it commits."""
        if inv.subject is not None:
            running = await counts.running_on(inv)
            if running is not None:
                return Verdict(join=running)
            recent = await counts.latest_on(inv, self.clock() - self.coalesce)
            if recent is not None:
                return Verdict(join=recent)
        return Verdict(skip=await self.over(inv, counts))

    async def over(self, inv: Investigation, counts: Counts) -> str | None:
        """Why a cap or the budget stops `inv` now, or None."""
        project = self.projects.projects.get(inv.scope.project_key)
        cap = project.max_concurrent if project else None
        if cap is not None:
            active = await counts.active_count(inv.scope.project_key)
            if active >= cap:
                return f"the project's concurrency cap is reached ({active} of {cap} at work)"
        if self.max_concurrent is not None:
            active = await counts.active_count()
            if active >= self.max_concurrent:
                return (
                    f"the concurrency cap is reached ({active} of {self.max_concurrent} "
                    "at work across projects)"
                )
        if self.tokens_per_day:
            day = self.clock().date().isoformat()
            spent = await counts.tokens_on(day)
            if spent >= self.tokens_per_day:
                return (
                    f"the daily token budget is spent ({spent:,} of {self.tokens_per_day:,} "
                    f"tokens on {day} UTC)"
                )
        return None
