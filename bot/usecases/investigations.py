"""The use cases: start, answer, edit the draft, approve, create anyway, discard, continue,
re-run and cancel."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

from agent import locale
from agent.domain import Investigation, Origin, Receipt, Scope, State, utcnow
from agent.errors import (
    ConcurrencyError,
    IdempotencyConflict,
    IllegalTransition,
    InputError,
    NotFound,
    StaleDraft,
)
from agent.ports import InvestigationStore, JobQueue
from bot.usecases.access import Access, Action
from bot.usecases.gates import Gates
from bot.usecases.intake import claim, open_once
from bot.usecases.ports import Keys, Notify
from bot.usecases.request import Request, parse
from bot.usecases.results import Actor, Done, Refused
from bot.worker import INVESTIGATE, PUBLISH
from storage.idempotency import KeyReused

RACED = "Someone acted on it first; nothing changed."
# A re-run or a cancel of a run at work races its worker's saves: read it again this often.
RACE_RETRIES = 5


@dataclass(frozen=True)
class DraftRef:
    """A draft as it was shown: what an Edit, Approve or Discard names."""

    investigation_id: str
    version: int
    hash: str = ""

    @classmethod
    def of(cls, value: dict[str, Any]) -> DraftRef:
        return cls(
            str(value["investigation_id"]), int(value["version"]), str(value.get("hash", ""))
        )


class Investigations:
    def __init__(
        self,
        store: InvestigationStore,
        jobs: JobQueue,
        access: Access,
        notify: Notify,
        keys: Keys | None = None,
        clock: Callable[[], datetime] = utcnow,
        gates: Gates | None = None,
    ) -> None:
        self.store, self.jobs, self.access, self.notify = store, jobs, access, notify
        self.keys, self.clock, self.gates = keys, clock, gates

    # -- start ----------------------------------------------------------------

    async def start(self, actor: Actor, text: str, key: str | None = None) -> Done | Refused:
        """`/investigate`'s text form (`[project] question [since..until]`), asked in the
        actor's channel. A request whose key was seen before is the investigation it
        started (bot.usecases.intake)."""
        try:
            request = parse(text, self.access.projects, actor.channel or "", self.clock())
        except InputError as exc:
            return Refused("invalid", str(exc), "question")
        # The fingerprint of the request its key names (unchanged: keys outlive a restart).
        fingerprint = {
            "surface": actor.surface,
            "text": text,
            "channel": actor.channel,
            "user": actor.user,
        }
        return await self.open(actor, request, key, fingerprint)

    async def start_in(
        self,
        actor: Actor,
        project_key: str,
        question: str,
        since: datetime | None = None,
        until: datetime | None = None,
        key: str | None = None,
        fingerprint: dict[str, Any] | None = None,
    ) -> Done | Refused:
        """A request that names its project and window itself (the HTTP API, an alert):
        the window defaults to the project's, ending now."""
        project = self.access.projects.projects.get(project_key)
        if project is None:
            return Refused("invalid", f"unknown project `{project_key}`", "project")
        for name, moment in (("since", since), ("until", until)):
            if moment is not None and moment.utcoffset() is None:
                return Refused("invalid", f"{name} has no time zone (add Z or +00:00)", name)
        now = self.clock()
        until = until or now
        since = since or until - timedelta(hours=project.window_hours)
        request = Request(
            project=project, question=question, since=since, until=until, asked_at=now
        )
        return await self.open(actor, request, key, fingerprint)

    async def open(
        self,
        actor: Actor,
        request: Request,
        key: str | None = None,
        fingerprint: dict[str, Any] | None = None,
    ) -> Done | Refused:
        scope = scope_of(request)
        language = locale.normalize(actor.language)
        if language in locale.NAMES:  # the caller's language (Accept-Language) first
            scope.language = language
        try:
            inv = Investigation.open(request.question, scope, requester=actor.user)
        except InputError as exc:
            return Refused("invalid", str(exc), "question")
        inv.origin = Origin(
            surface=actor.surface, channel=actor.channel, team=actor.team, user=actor.user
        )
        return await self.admit(inv, key, fingerprint)

    async def admit(
        self,
        inv: Investigation,
        key: str | None,
        fingerprint: dict[str, Any] | None,
        replacing: Investigation | None = None,
    ) -> Done | Refused:
        """Store and queue a new investigation through the gates: it joins a run on the
        same Sentry issue, or is stored SKIPPED with the reason, or is queued. The counts
        and the insert are one transaction under the admission lock (storage.admission).
        `replacing` is saved in that transaction (a re-run's old run, now superseded); if
        someone saved it meanwhile, ConcurrencyError and nothing is stored."""
        if self.gates is None:
            return await self._create(inv, key, fingerprint, replacing)
        try:
            seen, inv, fresh = await claim(self.store, self.jobs, self.keys, inv, key, fingerprint)
        except KeyReused as exc:
            return Refused("conflict", str(exc))
        if seen is not None:
            return self._opened(seen, fresh=False)
        try:
            async with self.gates.admission.hold() as counts:
                verdict = await self.gates.check(inv, counts)
                if verdict.join is None:
                    if verdict.skip is not None:
                        inv.skip(verdict.skip)
                    await counts.create(inv, replacing)
        except ConcurrencyError:
            if replacing is not None:
                raise
            # another attempt under the same key stored it first
            return self._opened(await self.store.load(inv.id), fresh=False)
        if verdict.join is not None:
            joined = await self.store.load(verdict.join)
            note = f"Joined the run already on it ({joined.id})."
            return Done(joined, fresh=False, note=note, joined=True)
        await self.jobs.enqueue(INVESTIGATE, inv.id)
        return self._opened(inv, fresh)

    async def _create(
        self,
        inv: Investigation,
        key: str | None,
        fingerprint: dict[str, Any] | None,
        replacing: Investigation | None = None,
    ) -> Done | Refused:
        try:
            inv, fresh = await open_once(
                self.store, self.jobs, self.keys, inv, key, fingerprint, replacing
            )
        except KeyReused as exc:
            return Refused("conflict", str(exc))
        return self._opened(inv, fresh)

    def _opened(self, inv: Investigation, fresh: bool) -> Done:
        self._changed(inv, work=True)
        note = f"Skipped: {inv.stop_reason}" if inv.state is State.SKIPPED else None
        return Done(inv, fresh=fresh, note=note)

    # -- the run --------------------------------------------------------------

    async def answer(
        self, actor: Actor, investigation_id: str, text: str, delivery: str | None = None
    ) -> Done | Refused:
        """The reply to the question the run waits on. `delivery` names one delivery of the
        request (Slack's event_id): a redelivery is taken once, or a retried first answer
        could answer a later question."""
        inv = await self._current(investigation_id)
        if isinstance(inv, Refused):
            return inv
        if inv.state is not State.WAITING_FOR_OPERATOR:
            return Refused("conflict", "No question is waiting for an answer.")
        refused = await self.access.check(Action.ANSWER, actor, inv)
        if refused:
            return refused
        if delivery and self.keys is not None and not await self.keys.first_delivery(delivery):
            return Done(inv, fresh=False)  # a redelivery of a reply already taken in
        try:
            try:
                inv.answer(text)
            except InputError as exc:
                return Refused("invalid", str(exc), "text")
            except IllegalTransition as exc:
                return Refused("conflict", str(exc))
            await self.store.save(inv)
            await self.jobs.enqueue(INVESTIGATE, inv.id)
        except BaseException:
            if delivery and self.keys is not None:  # not taken in: a redelivery may try again
                await self.keys.forget_event(delivery)
            raise
        self._changed(inv, work=True)
        return Done(inv)

    async def continue_run(
        self, actor: Actor, investigation_id: str, version: int, extra_calls: int
    ) -> Done | Refused:
        """A stopped run goes on with `extra_calls` more tool calls; `version` is the
        investigation as the Continue button showed it."""

        def step(inv: Investigation) -> Refused | None:
            if inv.superseded_by is not None:
                return stale(inv)
            if inv.version != version or inv.state is not State.STOPPED:
                return Refused("conflict", "This run already moved on.")
            inv.continue_with(extra_calls)
            return None

        return await self._apply(actor, investigation_id, Action.CONTINUE, step, job=INVESTIGATE)

    # -- the draft ------------------------------------------------------------

    async def may_edit(self, actor: Actor, ref: DraftRef) -> Done | Refused:
        """Whether `actor` may edit that draft version now (before a form opens)."""

        def step(inv: Investigation) -> Done | Refused:
            if inv.draft is None or inv.draft.version != ref.version:
                return stale(inv)
            return Done(inv, fresh=False)  # nothing to change

        return await self._apply(actor, ref.investigation_id, Action.EDIT, step)

    async def edit_draft(
        self, actor: Actor, ref: DraftRef, title: str, body: str
    ) -> Done | Refused:
        """Version + 1 of the draft, made from `ref.version`."""

        def step(inv: Investigation) -> Refused | None:
            try:
                inv.edit_draft(version=ref.version, title=title, body=body)
            except InputError as exc:
                return Refused("invalid", str(exc), exc.field or "title")
            except (StaleDraft, IllegalTransition):
                return stale(inv)
            return None

        return await self._apply(actor, ref.investigation_id, Action.EDIT, step)

    async def discard(self, actor: Actor, ref: DraftRef) -> Done | Refused:
        def step(inv: Investigation) -> Refused | None:
            try:
                inv.discard_draft(ref.version)
            except (StaleDraft, IllegalTransition):
                return stale(inv)
            return None

        return await self._apply(actor, ref.investigation_id, Action.DISCARD, step)

    # -- publishing -----------------------------------------------------------

    async def approve(self, actor: Actor, ref: DraftRef, key: str | None = None) -> Done | Refused:
        """Queue the exact draft shown for publishing, once per `key`. Without a key, one
        per approval of this version: a repeated click is the same approval (its receipt,
        or a retry while the outcome is unknown); after a rollback it is a new one."""
        receipts: list[Receipt] = []

        def step(inv: Investigation) -> Done | Refused | None:
            approval = key or (
                f"{actor.surface}:{inv.id}:{ref.version}:{ref.hash}:{len(inv.past_approvals)}"
            )
            try:
                receipt = inv.approve(
                    approver=actor.user,
                    version=ref.version,
                    hash=ref.hash,
                    idempotency_key=approval,
                )
            except (StaleDraft, IllegalTransition):
                return stale(inv)
            except IdempotencyConflict as exc:
                return Refused("conflict", str(exc))
            if not receipt.fresh:  # the same approval again: its receipt, nothing to save
                self._changed(inv)
                published = receipt.publication
                note = f"Already published: {published.url}" if published is not None else None
                return Done(inv, fresh=False, note=note, receipt=receipt)
            receipts.append(receipt)
            return None

        done = await self._apply(actor, ref.investigation_id, Action.APPROVE, step, job=PUBLISH)
        if isinstance(done, Done) and receipts and done.receipt is None:
            return replace(done, receipt=receipts[-1])
        return done

    async def create_anyway(self, actor: Actor, ref: DraftRef, creates: int) -> Done | Refused:
        """The second explicit approval after a lost answer nobody could find: bound to the
        draft's version and hash and to the create calls sent so far."""

        def step(inv: Investigation) -> Refused | None:
            try:
                inv.create_anyway(
                    approver=actor.user, version=ref.version, hash=ref.hash, creates=creates
                )
            except (StaleDraft, IllegalTransition):
                return Refused("conflict", "That question was already answered.")
            return None

        return await self._apply(
            actor, ref.investigation_id, Action.CREATE_ANYWAY, step, job=PUBLISH
        )

    # -- re-run and cancel ----------------------------------------------------

    async def rerun(self, actor: Actor, investigation_id: str) -> Done | Refused:
        """Run the investigation afresh in the same thread: a run at work is stopped, the
        old report is marked superseded, and a new investigation of the same question (its
        window moved to now when it ended at the time of asking) is queued. The language
        is the caller's when the surface knows it, else the one the old run used. The old
        run's save and the new run's insert are one transaction."""
        for _ in range(RACE_RETRIES):
            old = await self._load(investigation_id)
            if isinstance(old, Refused):
                return old
            refused = await self.access.check(Action.RERUN, actor, old)
            if refused:
                return refused
            if old.superseded_by is not None:
                return Refused(
                    "conflict", f"This was already re-run ({old.superseded_by}). Nothing changed."
                )
            try:
                fresh = rerun_of(old, actor, self.clock())
                old.supersede(fresh.id)
            except InputError as exc:
                return Refused("invalid", str(exc))
            except IllegalTransition as exc:
                return Refused("conflict", f"{exc}. Nothing was changed.")
            # Through the same gates as any new run: over a cap it is stored SKIPPED.
            try:
                done = await self.admit(fresh, None, None, replacing=old)
            except ConcurrencyError:
                # A worker still on the old run loses its next save; one that saved
                # meanwhile makes this one lose: it is read again.
                continue
            self._changed(old)
            return done
        return Refused("conflict", RACED)

    async def cancel(self, actor: Actor, investigation_id: str) -> Done | Refused:
        """Stop a run that is queued, running or waiting; what it gathered is kept."""

        def step(inv: Investigation) -> Refused | None:
            try:
                inv.cancel(f"cancelled by {actor.user}")
            except IllegalTransition as exc:
                return Refused("conflict", f"{exc}. Nothing was changed.")
            return None

        return await self._apply(actor, investigation_id, Action.CANCEL, step, retries=RACE_RETRIES)

    # -- the steps every use case shares ---------------------------------------

    async def _load(self, investigation_id: str) -> Investigation | Refused:
        try:
            return await self.store.load(investigation_id)
        except NotFound:
            return Refused("not_found", "There is no such investigation.")

    async def _current(self, investigation_id: str) -> Investigation | Refused:
        """The investigation a thread is about now: the last re-run of the one that opened
        it (a reply in the thread answers that one)."""
        inv = await self._load(investigation_id)
        seen = set()
        while not isinstance(inv, Refused) and inv.superseded_by and inv.id not in seen:
            seen.add(inv.id)
            inv = await self._load(inv.superseded_by)
        return inv

    async def _apply(
        self,
        actor: Actor,
        investigation_id: str,
        action: Action,
        step: Callable[[Investigation], Done | Refused | None],
        *,
        job: str | None = None,
        retries: int = 1,
    ) -> Done | Refused:
        """What every use case on a stored investigation does: load it, check that `actor`
        may do `action`, apply the domain change `step`, save, queue `job`, wake the workers
        and kick the thread. `step` answers None when it changed the investigation, else
        the answer as it is (a Refused, or a Done with nothing to save). A save that lost a
        race to another writer is tried again on a fresh read, up to `retries` times."""
        for _ in range(retries):
            inv = await self._load(investigation_id)
            if isinstance(inv, Refused):
                return inv
            refused = await self.access.check(action, actor, inv)
            if refused:
                return refused
            answer = step(inv)
            if answer is not None:
                return answer
            try:
                await self.store.save(inv)
            except ConcurrencyError:
                continue
            if job is not None:
                await self.jobs.enqueue(job, inv.id)
            self._changed(inv, work=job is not None)
            return Done(inv)
        return Refused("conflict", RACED)

    def _changed(self, inv: Investigation, *, work: bool = False) -> None:
        if work:
            self.notify.wake_workers()
        self.notify.changed(inv.id)


def stale(inv: Investigation) -> Refused:
    if inv.superseded_by is not None:
        return Refused(
            "conflict",
            f"This report was superseded by a re-run ({inv.superseded_by[:8]}); act on the "
            "re-run's draft. Nothing was changed.",
        )
    current = f"v{inv.draft.version}" if inv.draft else "none"
    return Refused(
        "conflict",
        f"That draft is out of date (the current one is {current}, state {inv.state}). "
        "Nothing was changed.",
    )


def rerun_of(old: Investigation, actor: Actor, now: datetime) -> Investigation:
    """A new investigation of `old`'s question in `old`'s thread, for the same requester."""
    scope = old.scope
    changes: dict[str, Any] = {"asked_at": now}
    if scope.asked_at is not None and scope.until >= scope.asked_at:
        # The window ended "now" when it was asked: it ends now again, just as long.
        changes |= {"since": now - (scope.until - scope.since), "until": now}
    language = locale.normalize(actor.language)
    if language in locale.NAMES:
        changes["language"] = language
    inv = Investigation.open(old.question, scope.model_copy(update=changes), old.requester)
    inv.origin = old.origin.model_copy(
        update={"user": actor.user, "thread_of": old.origin.thread_of or old.id}
    )
    inv.rerun_of = old.id
    return inv


def scope_of(request: Request) -> Scope:
    return request.project.scope(request.since, request.until, request.asked_at)
