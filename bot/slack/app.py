"""The Slack app: thin Bolt listeners that ack at once and hand the work to the queue.

Listeners store what the person asked for and wake the worker and the thread
sync; they never investigate, post cards or publish themselves.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from slack_bolt.async_app import AsyncApp
from slack_bolt.context.ack.async_ack import AsyncAck
from slack_sdk.web.async_client import AsyncWebClient

from agent.domain import Investigation, Origin, Scope, State, utcnow
from agent.errors import (
    ConcurrencyError,
    IdempotencyConflict,
    IllegalTransition,
    InputError,
    NotFound,
    StaleDraft,
)
from bot.config import Project, Projects
from bot.intake import open_once
from bot.slack import blocks, command
from bot.slack.identity import BotIdentity
from bot.slack.sync import CONTINUE_CALLS, SlackSync
from bot.worker import INVESTIGATE, PUBLISH
from storage.idempotency import KeyReused, SqlIdempotency
from storage.jobs import SqlJobQueue
from storage.store import SqlStore
from storage.surface import SqlSurfaceMessages

log = logging.getLogger(__name__)


@dataclass
class Deps:
    store: SqlStore
    jobs: SqlJobQueue
    shown: SqlSurfaceMessages
    sync: SlackSync
    projects: Projects
    wake_workers: Callable[[], None]
    clock: Callable[[], datetime] = utcnow
    # Redelivered events and repeated creation requests are recognised here (None: not).
    once: SqlIdempotency | None = None


Listener = Callable[..., Awaitable[None]]


class AfterAck:
    """Ack in the request and run the listener's work after the response.

    Bolt's ack-then-continue mode polls for the ack every 10 ms, and its lazy
    listeners deep-copy the request with its client (~2 ms each); this answers
    Slack in a fraction of a millisecond. The work names the arguments it wants
    (body, action, view, event), as a Bolt listener would.

    Acks come first: work queues until no ack has been given for `quiet` seconds (or
    its oldest item has waited `longest_wait`), then runs `at_once` at a time. A burst
    of commands is answered before any of them touches the database or wakes a worker,
    and one drainer task, not one timer per request, watches for the pause.
    """

    def __init__(self, at_once: int = 8, quiet: float = 0.005, longest_wait: float = 0.25):
        self.quiet, self.longest_wait = quiet, longest_wait
        self._slots = asyncio.Semaphore(at_once)
        self._last_ack = 0.0
        self._queued: deque[tuple[float, Listener, dict[str, Any]]] = deque()
        self._drainer: asyncio.Task[None] | None = None
        self._running: set[asyncio.Task[None]] = set()  # held so the loop keeps them

    def __call__(self, register: Callable[..., Any]) -> Callable[[Listener], Listener]:
        def decorate(work: Listener) -> Listener:
            wanted = list(inspect.signature(work).parameters)

            async def ack_then(ack: AsyncAck, **kwargs: Any) -> None:
                await ack()
                self._last_ack = now = time.monotonic()
                self._queued.append((now, work, kwargs))
                if self._drainer is None or self._drainer.done():
                    self._drainer = asyncio.create_task(self._drain())

            # Bolt injects the arguments a listener's signature names: ack and the work's.
            ack_then.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
                [
                    inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD)
                    for n in ["ack", *wanted]
                ]
            )
            register(ack_then)
            return work

        return decorate

    async def _drain(self) -> None:
        while self._queued:
            oldest = self._queued[0][0]
            wait = min(self._last_ack + self.quiet, oldest + self.longest_wait) - time.monotonic()
            if wait > 0:
                await asyncio.sleep(wait)
                continue
            await self._slots.acquire()
            _, work, kwargs = self._queued.popleft()
            task = asyncio.create_task(self._run(work, kwargs))
            self._running.add(task)
            task.add_done_callback(self._running.discard)

    async def finish(self) -> None:
        """Run what is queued now without waiting for a pause, and wait for all of it: a
        process that stops after its last ack loses none of the work it acked."""
        self.quiet = self.longest_wait = 0.0
        if self._drainer is not None:
            await self._drainer
        await asyncio.gather(*self._running, return_exceptions=True)

    async def _run(self, work: Listener, kwargs: dict[str, Any]) -> None:
        try:
            await work(**kwargs)
        except Exception:
            log.exception("listener %s failed", work.__name__)
        finally:
            self._slots.release()


def build_app(
    client: AsyncWebClient,
    signing_secret: str,
    deps: Deps,
    after_ack: AfterAck | None = None,
    identity: BotIdentity | None = None,
) -> AsyncApp:
    # Listeners that need the response (a modal's errors) answer inline; the rest ack
    # at once and work after it (after_ack). Requests are authorized from the identity
    # resolved at start, never with an auth.test before the ack (bot.slack.identity).
    identity = identity or BotIdentity(client)
    app = AsyncApp(
        client=identity.bolt_client(),
        authorize=identity,
        signing_secret=signing_secret,
        process_before_response=True,
    )
    d = deps
    after_ack = after_ack or AfterAck()

    async def ephemeral(channel: str, user: str, text: str) -> None:
        await client.chat_postEphemeral(channel=channel, user=user, **blocks.error_ephemeral(text))

    async def start(text: str, channel: str, user: str, key: str | None = None) -> None:
        """Check, store, enqueue; a refusal is an ephemeral and nothing is stored.
        A request whose key was seen before is the investigation it started (bot.intake)."""
        try:
            request = command.parse(text, d.projects, channel, d.clock())
            inv = Investigation.open(request.question, scope(request), requester=user)
        except InputError as exc:
            await ephemeral(channel, user, str(exc))
            return
        inv.origin = Origin(surface="slack", channel=channel, user=user)
        request = {"surface": "slack", "text": text, "channel": channel, "user": user}
        try:
            inv, _ = await open_once(d.store, d.jobs, d.once, inv, key, request)
        except KeyReused as exc:
            await ephemeral(channel, user, str(exc))
            return
        d.wake_workers()
        d.sync.kick(inv.id)

    @after_ack(app.command("/investigate"))
    async def on_investigate(body: dict[str, Any]) -> None:
        text = body.get("text") or ""
        if text.strip() in ("", "help"):
            await client.chat_postEphemeral(
                channel=body["channel_id"], user=body["user_id"], **blocks.help_message()
            )
            return
        channel, user, trigger = body["channel_id"], body["user_id"], body.get("trigger_id")
        # Slack's own key: one trigger_id per invocation of the command.
        key = f"slack:{body.get('team_id')}:{channel}:{user}:{trigger}" if trigger else None
        await start(text, channel, user, key)

    @after_ack(app.shortcut("investigate_this"))
    async def on_shortcut(body: dict[str, Any]) -> None:
        message = body.get("message") or {}
        view = blocks.investigate_modal(message.get("text") or "", body["channel"]["id"])
        await client.views_open(trigger_id=body["trigger_id"], view=view)

    @after_ack(app.view("investigate_submit"))
    async def on_shortcut_submit(body: dict[str, Any], view: dict[str, Any]) -> None:
        meta = json.loads(view.get("private_metadata") or "{}")
        question = value_of(view, "question")
        # A modal is submitted once: a second delivery of its view is the same request.
        team, view_id = (body.get("team") or {}).get("id"), view.get("id")
        key = f"slack:{team}:view:{view_id}" if view_id else None
        await start(question, meta.get("channel_id", ""), body["user"]["id"], key)

    @after_ack(app.action("draft_edit"))
    async def on_edit(body: dict[str, Any], action: dict[str, Any]) -> None:
        target = json.loads(action["value"])
        inv = await d.store.load(target["investigation_id"])
        if inv.draft is None or inv.draft.version != target["version"]:
            await stale(body, inv)
            return
        await client.views_open(trigger_id=body["trigger_id"], view=blocks.edit_modal(inv))

    @app.view("draft_edit_submit")
    async def on_edit_submit(ack: Any, view: dict[str, Any]) -> None:
        meta = json.loads(view.get("private_metadata") or "{}")
        inv = await d.store.load(meta["investigation_id"])
        try:
            inv.edit_draft(
                version=int(meta["version"]),
                title=value_of(view, "title"),
                body=value_of(view, "body"),
            )
        except (StaleDraft, IllegalTransition, InputError) as exc:
            await ack(response_action="errors", errors={"title": str(exc)[:150]})
            return
        await ack()
        await d.store.save(inv)
        d.sync.kick(inv.id)

    @after_ack(app.action("draft_approve"))
    async def on_approve(body: dict[str, Any], action: dict[str, Any]) -> None:
        allowed = await approving(body, action)
        if allowed is None:
            return
        target, user, inv = allowed
        # One key per approval of this version: a repeated click is the same approval (its
        # receipt, or a retry while the outcome is unknown); after a rollback it is a new one.
        key = f"slack:{inv.id}:{target['version']}:{target['hash']}:{len(inv.past_approvals)}"
        try:
            receipt = inv.approve(
                approver=user,
                version=int(target["version"]),
                hash=str(target["hash"]),
                idempotency_key=key,
            )
        except (StaleDraft, IllegalTransition):
            await stale(body, inv)
            return
        except IdempotencyConflict as exc:
            await ephemeral(channel_of(body), user, str(exc))
            return
        if receipt.fresh:
            await queue_publication(inv, body, user)
        elif receipt.publication is not None:
            await ephemeral(channel_of(body), user, f"Already published: {receipt.publication.url}")
        d.sync.kick(inv.id)

    @after_ack(app.action("publish_create_anyway"))
    async def on_create_anyway(body: dict[str, Any], action: dict[str, Any]) -> None:
        """The second explicit approval after a lost answer nobody could find: an approver's
        click, bound to the draft's version and hash and to the attempts made so far."""
        allowed = await approving(body, action)
        if allowed is None:
            return
        target, user, inv = allowed
        try:
            inv.create_anyway(
                approver=user,
                version=int(target["version"]),
                hash=str(target["hash"]),
                creates=int(target["creates"]),
            )
        except (StaleDraft, IllegalTransition):
            await ephemeral(channel_of(body), user, "That question was already answered.")
            return
        await queue_publication(inv, body, user)
        d.sync.kick(inv.id)

    async def approving(
        body: dict[str, Any], action: dict[str, Any]
    ) -> tuple[dict[str, Any], str, Investigation] | None:
        """The button's target, the clicker and the investigation, if the clicker may
        approve it; otherwise they are told why, and None."""
        target = json.loads(action["value"])
        user = body["user"]["id"]
        inv = await d.store.load(target["investigation_id"])
        project = d.projects.projects.get(inv.scope.project_key)
        why_not = await may_approve(client, project, inv, user)
        if why_not:
            await ephemeral(channel_of(body), user, why_not)
            return None
        return target, user, inv

    async def queue_publication(inv: Investigation, body: dict[str, Any], user: str) -> None:
        try:
            await d.store.save(inv)
        except ConcurrencyError:
            await ephemeral(channel_of(body), user, "Someone acted on it first; nothing changed.")
            return
        await d.jobs.enqueue(PUBLISH, inv.id)
        d.wake_workers()

    @after_ack(app.action("draft_discard"))
    async def on_discard(body: dict[str, Any], action: dict[str, Any]) -> None:
        target = json.loads(action["value"])
        inv = await d.store.load(target["investigation_id"])
        try:
            inv.discard_draft(int(target["version"]))
        except (StaleDraft, IllegalTransition):
            await stale(body, inv)
            return
        await d.store.save(inv)
        d.sync.kick(inv.id)

    @after_ack(app.action("continue"))
    async def on_continue(body: dict[str, Any], action: dict[str, Any]) -> None:
        target = json.loads(action["value"])
        inv = await d.store.load(target["investigation_id"])
        if inv.version != int(target["version"]) or inv.state is not State.STOPPED:
            await ephemeral(channel_of(body), body["user"]["id"], "This run already moved on.")
            return
        inv.continue_with(CONTINUE_CALLS)
        await d.store.save(inv)
        await d.jobs.enqueue(INVESTIGATE, inv.id)
        d.wake_workers()
        d.sync.kick(inv.id)

    @after_ack(app.event("message"))
    async def on_message(event: dict[str, Any], body: dict[str, Any]) -> None:
        """A reply in a thread of ours may answer the question the run is waiting on.
        Slack redelivers an event it believes lost (X-Slack-Retry-Num): an answer is
        taken once per event_id, or a retried first answer could answer a later question."""
        thread = event.get("thread_ts")
        if not thread or event.get("bot_id") or event.get("subtype"):
            return
        found = await d.shown.investigation_at(event.get("channel", ""), thread)
        if found is None or found[1] != "root":
            return
        try:
            inv = await d.store.load(found[0])
        except NotFound:
            return
        user = event.get("user", "")
        project = d.projects.projects.get(inv.scope.project_key)
        if inv.state is not State.WAITING_FOR_OPERATOR:
            return
        if user != inv.requester and not await is_approver(client, project, user):
            return  # other chatter in the thread
        event_id = str(body.get("event_id") or "")
        if event_id and d.once is not None and not await d.once.first_delivery(event_id):
            return  # a redelivery of an event already taken in
        try:
            try:
                inv.answer(event.get("text") or "")
            except (InputError, IllegalTransition):
                return
            await d.store.save(inv)
            await d.jobs.enqueue(INVESTIGATE, inv.id)
        except BaseException:
            if event_id and d.once is not None:  # not taken in: a redelivery may try again
                await d.once.forget_event(event_id)
            raise
        d.wake_workers()
        d.sync.kick(inv.id)

    @after_ack(app.event("app_home_opened"))
    async def on_home(event: dict[str, Any]) -> None:
        user = event["user"]
        items = []
        for summary in await d.store.recent(requester=user, limit=15):
            shown = await d.shown.all_for(summary.id)
            root = shown.get("root")
            link = None
            if root and root.ts:
                link = await permalink(client, root.channel, root.ts)
            items.append((summary.id, summary.question, summary.state, link))
        await client.views_publish(user_id=user, view=blocks.home_view(items))

    async def stale(body: dict[str, Any], inv: Investigation) -> None:
        current = f"v{inv.draft.version}" if inv.draft else "none"
        await ephemeral(
            channel_of(body),
            body["user"]["id"],
            f"That draft is out of date (the current one is {current}, state {inv.state}). "
            "Nothing was changed.",
        )

    return app


def scope(request: command.Request) -> Scope:
    p = request.project
    return Scope(
        project_key=p.key,
        repository=p.repository,
        sentry_organization=p.sentry_organization,
        sentry_project=p.sentry_project,
        release_prefix=p.release_prefix,
        language=p.language,
        since=request.since,
        until=request.until,
        asked_at=request.asked_at,
    )


async def is_approver(client: AsyncWebClient, project: Project | None, user: str) -> bool:
    """Listed by id, or a member of the approvers' user group; anyone when neither is set."""
    if project is None:
        return False
    if not project.approvers and not project.approver_group:
        return True
    if user in project.approvers:
        return True
    if project.approver_group:
        try:
            members = await client.usergroups_users_list(usergroup=project.approver_group)
        except Exception:
            log.warning("could not read the members of %s", project.approver_group)
            return False
        return user in (members.get("users") or [])
    return False


async def may_approve(
    client: AsyncWebClient, project: Project | None, inv: Investigation, user: str
) -> str | None:
    """Why this user may not approve, or None."""
    if project is None:
        return "This project is no longer configured."
    if not await is_approver(client, project, user):
        return "Only the project's approvers can publish this draft."
    if project.require_other_approver and user == inv.requester:
        return "Someone other than the requester must approve this draft."
    return None


def value_of(view: dict[str, Any], block: str) -> str:
    value = view["state"]["values"][block]["value"]
    return str(value.get("value") or "")


def channel_of(body: dict[str, Any]) -> str:
    return (body.get("channel") or {}).get("id") or (body.get("container") or {}).get(
        "channel_id", ""
    )


async def permalink(client: AsyncWebClient, channel: str, ts: str) -> str | None:
    try:
        return str((await client.chat_getPermalink(channel=channel, message_ts=ts))["permalink"])
    except Exception:
        return None
