"""The Slack thread follows the database.

Each pass loads an investigation and brings its thread up to date: the root
message, one card per evidence item in order, questions, the diagnosis and the
draft. What was posted is recorded (storage.surface) with its ts, so a retry,
a restart or a second worker never posts a card twice; a post whose answer was
lost is looked for in the thread (message metadata) before it is posted again.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
import os
import socket
from collections import defaultdict
from collections.abc import AsyncIterator
from functools import partial
from typing import Any

import aiohttp
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from agent.domain import Investigation, State
from agent.errors import PublishFailed, PublishUnknown
from agent.publish.github import retry_after
from bot.slack import blocks
from bot.slack.identity import BotIdentity
from bot.slack.retry import unknown_outcome
from storage.leases import SqlLeases
from storage.store import SqlStore
from storage.surface import POSTED, Shown, SqlSurfaceMessages

log = logging.getLogger(__name__)

EVENT_TYPE = "incident_bot"
CONTINUE_CALLS = 4  # what the Continue button adds
UPDATABLE = ("root", "diagnosis", "draft")


class ThreadBusy(Exception):
    """Another process is bringing this thread up to date (or held it and died)."""


def payload_hash(payload: dict[str, Any]) -> str:
    raw = json.dumps({k: payload.get(k) for k in ("text", "blocks")}, sort_keys=True)
    return hashlib.sha256(raw.encode()).hexdigest()


class SlackSync:
    def __init__(
        self,
        client: AsyncWebClient,
        store: SqlStore,
        shown: SqlSurfaceMessages,
        *,
        sweep_seconds: float = 5.0,
        retry_seconds: float = 0.5,
        leases: SqlLeases | None = None,
        lease_seconds: float = 30.0,
        identity: BotIdentity | None = None,
    ) -> None:
        self.client = client
        self.identity = identity or BotIdentity(client)  # the workspace URL, for permalinks
        self.store = store
        self.shown = shown
        # With several processes on one database, one pass at a time per thread: the
        # lease runs out if its holder dies, and the next pass looks before it posts.
        self.leases = leases
        self.lease_seconds = lease_seconds
        self.holder = f"{socket.gethostname()}:{os.getpid()}:{id(self):x}"
        self.sweep_seconds = sweep_seconds
        self.retry_seconds = retry_seconds
        self._locks: defaultdict[str, asyncio.Lock] = defaultdict(asyncio.Lock)
        self._dirty: set[str] = set()
        self._passes: set[asyncio.Task[None]] = set()
        self._running: set[str] = set()
        self._again: set[str] = set()
        self._wake = asyncio.Event()
        self._workspace_url: str | None = None

    def kick(self, investigation_id: str) -> None:
        """Something changed: bring that thread up to date soon."""
        self._dirty.add(investigation_id)
        self._wake.set()

    async def run(self, stop: asyncio.Event) -> None:
        stopping = asyncio.create_task(stop.wait())
        stopping.add_done_callback(lambda _: self._wake.set())  # stop at once, not next sweep
        try:
            while not stop.is_set():
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), self.sweep_seconds)
                self._wake.clear()
                dirty, self._dirty = self._dirty, set()
                for investigation_id in dirty:
                    if investigation_id in self._running:
                        # One pass at a time per thread, and at most one waiting: a pass
                        # reads the latest state, so the kicks of a busy run fold into one.
                        self._again.add(investigation_id)
                        continue
                    # Threads are independent: one slow thread must not hold up the others.
                    task = asyncio.create_task(self._pass(investigation_id))
                    self._running.add(investigation_id)
                    self._passes.add(task)
                    task.add_done_callback(partial(self._passed, investigation_id))
            for task in list(self._passes):
                with contextlib.suppress(Exception):
                    await task
        finally:
            stopping.cancel()

    def _passed(self, investigation_id: str, task: asyncio.Task[None]) -> None:
        self._passes.discard(task)
        self._running.discard(investigation_id)
        if investigation_id in self._again:
            self._again.discard(investigation_id)
            self.kick(investigation_id)

    async def _pass(self, investigation_id: str) -> None:
        try:
            await self.sync(investigation_id)
        except ThreadBusy:
            asyncio.get_running_loop().call_later(self.retry_seconds, self.kick, investigation_id)
        except Exception as exc:
            # The database has everything: a later pass catches the thread up.
            log.warning("slack sync of %s failed: %s", investigation_id, exc)
            asyncio.get_running_loop().call_later(self.retry_seconds, self.kick, investigation_id)

    async def sync(self, investigation_id: str) -> None:
        async with self._locks[investigation_id], self._leased(investigation_id):
            inv = await self.store.load(investigation_id)
            if inv.origin.surface != "slack" or not inv.origin.channel:
                return
            shown = await self.shown.all_for(inv.id)
            # A re-run posts its own root message and cards in the thread it re-runs.
            thread = await self._thread_of(inv)
            # The root is posted if missing but updated last: cards first, then its state.
            root_message = blocks.root_message(inv)
            root = await self._show(inv, shown, "root", root_message, thread, update=False)
            root = thread or root
            for ev in inv.evidence:
                await self._show(inv, shown, ev.id, blocks.evidence_card(inv.id, ev), root)
            for call_id, question in asked(inv):
                payload = blocks.question_message(inv, question, inv.requester)
                await self._show(inv, shown, f"q:{call_id}", payload, root)
            if inv.duplicate_of is not None:
                await self._workspace()
                other = (await self.shown.all_for(inv.duplicate_of)).get("root")
                link = (
                    self._permalink(other.channel, other.ts, None) if other and other.ts else None
                )
                await self._show(inv, shown, "duplicate", blocks.duplicate_message(inv, link), root)
            elif inv.diagnosis is not None or inv.state is State.STOPPED:
                links = await self._links(inv, shown, root)
                payload = blocks.diagnosis_message(inv, links, extra_calls=CONTINUE_CALLS)
                await self._show(inv, shown, "diagnosis", payload, root)
            if inv.draft is not None:
                await self._show(inv, shown, "draft", self._draft(inv), root)
                approvals = [*inv.past_approvals, *([inv.approval] if inv.approval else [])]
                for n, approval in enumerate(approvals):
                    # One message per approval: its link, a question, or its rollback log.
                    payload = blocks.publish_message(inv, approval)
                    if payload is not None:
                        await self._show(inv, shown, f"publish:{n}", payload, root)
            # The root shows the state last, once its thread is complete.
            await self._show(inv, shown, "root", root_message, thread)

    async def _thread_of(self, inv: Investigation) -> str | None:
        """The ts of the thread a re-run answers in; None for an investigation that opens
        its own. ThreadBusy (try again soon) while that thread's root is not posted yet."""
        if inv.origin.thread_of is None:
            return None
        root = (await self.shown.all_for(inv.origin.thread_of)).get("root")
        if root is None or not root.ts:
            raise ThreadBusy(inv.origin.thread_of)
        return root.ts

    # -- the publication saga's "link back in Slack" side step (agent.publish.Backlink) ---

    name = "slack_link"

    def applies_to(self, inv: Investigation) -> bool:
        return inv.origin.surface == "slack" and bool(inv.origin.channel)

    async def link(self, inv: Investigation) -> str:
        """Bring the thread up to date now: the link in the thread and the root message."""
        try:
            await self._publish_pass(inv.id)
        except ThreadBusy:
            # Another process holds the thread; what it shows follows the database, and
            # this pass comes back to it when the lease is free.
            self.kick(inv.id)
            return "the thread is being updated by another process; the link follows"
        shown = await self.shown.all_for(inv.id)
        n = len(inv.past_approvals)
        if f"publish:{n}" not in shown:
            raise PublishFailed("the thread shows no link to the issue")
        return "linked in the thread and the root message"

    async def _publish_pass(self, investigation_id: str) -> None:
        try:
            await self.sync(investigation_id)
        except SlackApiError as exc:
            error = str(exc.response.get("error", "")) if exc.response else ""
            if error == "ratelimited":  # not applied; waiting helps
                wait = retry_after(exc.response.headers if exc.response else None)
                raise PublishFailed(
                    "Slack's rate limit", status=429, retryable=True, retry_after=wait
                ) from None
            if error in ("internal_error", "fatal_error", "service_unavailable"):
                raise PublishUnknown(f"Slack answered {error}") from None
            raise PublishFailed(f"Slack refused: {error or exc}") from None
        except (TimeoutError, OSError, aiohttp.ClientError) as exc:
            raise PublishUnknown(f"Slack did not answer ({type(exc).__name__})") from None

    @contextlib.asynccontextmanager
    async def _leased(self, investigation_id: str) -> AsyncIterator[None]:
        """Hold the thread's lease for the pass, renewing it; ThreadBusy if another has it.
        A pass that loses its lease (stalled past it) stops where it is."""
        if self.leases is None:
            yield
            return
        name, leases = f"slack-thread:{investigation_id}", self.leases
        if not await leases.acquire(name, self.holder, self.lease_seconds):
            raise ThreadBusy(investigation_id)
        passing = asyncio.current_task()
        assert passing is not None
        lost = False

        async def renew() -> None:
            nonlocal lost
            while True:
                await asyncio.sleep(self.lease_seconds / 3)
                if not await leases.renew(name, self.holder, self.lease_seconds):
                    lost = True
                    passing.cancel()
                    return

        renewing = asyncio.create_task(renew())
        try:
            yield
        except asyncio.CancelledError:
            if not lost:
                raise
            passing.uncancel()
            raise ThreadBusy(investigation_id) from None
        finally:
            renewing.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await renewing
            if not lost:
                await leases.release(name, self.holder)

    def _draft(self, inv: Investigation) -> dict[str, Any]:
        if inv.state is State.PUBLISHED and inv.publication is not None:
            return blocks.published_message(inv, inv.publication.url, inv.publication.number)
        if inv.state in (State.PUBLISH_QUEUED, State.PUBLISH_UNKNOWN):
            return blocks.publishing_message(inv)
        return blocks.draft_message(inv)

    async def _show(
        self,
        inv: Investigation,
        shown: dict[str, Shown],
        key: str,
        payload: dict[str, Any],
        thread: str | None,
        *,
        update: bool = True,
    ) -> str:
        channel = inv.origin.channel
        assert channel is not None
        digest = payload_hash(payload)
        record = shown.get(key)
        if record is not None and record.state == POSTED and record.ts:
            updatable = key in UPDATABLE or key.startswith("publish:")
            if update and updatable and record.payload_hash != digest:
                await self.client.chat_update(
                    channel=record.channel,
                    ts=record.ts,
                    text=payload["text"],
                    blocks=payload.get("blocks"),
                )
                await self.shown.posted(inv.id, key, record.channel, record.ts, digest)
                shown[key] = record.model_copy(update={"payload_hash": digest})
            return record.ts
        # A post that went out earlier without its answer being recorded (a crash, a lost
        # answer, another process's record this pass did not see) is looked for first.
        pending = record is not None or not await self.shown.begin(inv.id, key, channel)
        if pending and (ts := await self._find(inv, key, channel, thread)) is not None:
            await self._record(inv, shown, key, channel, ts, "")
            return await self._show(inv, shown, key, payload, thread)
        metadata = {
            "event_type": EVENT_TYPE,
            "event_payload": {"investigation_id": inv.id, "key": key},
        }
        try:
            response = await self.client.chat_postMessage(
                channel=channel,
                thread_ts=thread,
                text=payload["text"],
                blocks=payload.get("blocks"),
                metadata=metadata,
                unfurl_links=False,
                unfurl_media=False,
            )
        except Exception as exc:
            if not unknown_outcome(exc):
                raise
            # Slack may have kept it (a 5xx, a timeout, a dropped connection): look before
            # anything is sent again. Not found, it stays pending and the next pass looks.
            ts = await self._find(inv, key, channel, thread)
            if ts is None:
                raise
            log.info("the post of %s/%s was kept by Slack despite %r", inv.id, key, exc)
            await self._record(inv, shown, key, channel, ts, "")
            return await self._show(inv, shown, key, payload, thread)
        ts = str(response["ts"])
        await self._record(inv, shown, key, channel, ts, digest)
        return ts

    async def _record(
        self,
        inv: Investigation,
        shown: dict[str, Shown],
        key: str,
        channel: str,
        ts: str,
        digest: str,
    ) -> None:
        """The post is in Slack at ts; an empty digest: its content is not known here."""
        await self.shown.posted(inv.id, key, channel, ts, digest)
        shown[key] = Shown(
            investigation_id=inv.id,
            key=key,
            channel=channel,
            ts=ts,
            state=POSTED,
            payload_hash=digest,
        )

    async def _find(
        self, inv: Investigation, key: str, channel: str, thread: str | None
    ) -> str | None:
        """The ts of a message of ours carrying this item's metadata, if Slack has it."""
        cursor = None
        while True:
            if thread is None:
                page = await self.client.conversations_history(
                    channel=channel,
                    oldest=str(inv.created_at.timestamp() - 60),
                    include_all_metadata=True,
                    limit=200,
                    cursor=cursor,
                )
            else:
                page = await self.client.conversations_replies(
                    channel=channel,
                    ts=thread,
                    include_all_metadata=True,
                    limit=200,
                    cursor=cursor,
                )
            for message in page.get("messages", []):
                meta = message.get("metadata") or {}
                body = meta.get("event_payload") or {}
                if (
                    meta.get("event_type") == EVENT_TYPE
                    and body.get("investigation_id") == inv.id
                    and body.get("key") == key
                ):
                    return str(message["ts"])
            cursor = (page.get("response_metadata") or {}).get("next_cursor")
            if not cursor:
                return None

    async def _workspace(self) -> None:
        """The workspace URL permalinks are built from (the identity's one auth.test)."""
        if self._workspace_url is None:
            try:
                self._workspace_url = (await self.identity.resolve()).url
            except (SlackApiError, aiohttp.ClientError, TimeoutError, OSError) as exc:
                log.warning("no workspace URL for permalinks yet: %r", exc)

    async def _links(
        self, inv: Investigation, shown: dict[str, Shown], thread: str
    ) -> dict[str, str]:
        """Permalinks of the evidence cards in `thread`."""
        await self._workspace()
        links = {}
        for ev in inv.evidence:
            record = shown.get(ev.id)
            if record and record.ts:
                links[ev.id] = self._permalink(record.channel, record.ts, thread) or ""
        return links

    def _permalink(self, channel: str, ts: str, thread: str | None) -> str | None:
        if self._workspace_url is None:
            return None
        url = f"{self._workspace_url.rstrip('/')}/archives/{channel}/p{ts.replace('.', '')}"
        return f"{url}?thread_ts={thread}&cid={channel}" if thread else url


def asked(inv: Investigation) -> list[tuple[str, str]]:
    """Every clarification the model asked for, in order (answered or not)."""
    refused = {
        m.tool_call_id for m in inv.messages if m.role == "tool" and m.content.startswith("ERROR:")
    }
    out = []
    for m in inv.messages:
        for call in m.tool_calls:
            if call.name == "ask_clarification" and call.id not in refused:
                question = str(call.arguments.get("question") or "").strip()
                if question:
                    out.append((call.id, question))
    return out
