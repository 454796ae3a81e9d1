"""Events: replies in our threads, and App Home."""

from __future__ import annotations

from typing import Any

from slack_bolt.async_app import AsyncApp
from slack_sdk.web.async_client import AsyncWebClient

from agent.domain import State
from bot.slack import blocks
from bot.slack.reply import ephemeral, team_of
from bot.usecases.investigations import Investigations
from bot.usecases.results import Actor, Refused
from storage.store import SqlStore
from storage.surface import SqlSurfaceMessages


def register(
    app: AsyncApp,
    after_ack: Any,
    client: AsyncWebClient,
    cases: Investigations,
    store: SqlStore,
    shown: SqlSurfaceMessages,
) -> None:
    @after_ack(app.event("message"))
    async def on_message(event: dict[str, Any], body: dict[str, Any]) -> None:
        """A reply in a thread of ours may answer the question the run is waiting on."""
        thread = event.get("thread_ts")
        if not thread or event.get("bot_id") or event.get("subtype"):
            return
        channel = str(event.get("channel") or "")
        found = await shown.investigation_at(channel, thread)
        if found is None or found[1] != "root":
            return
        actor = Actor(user=str(event.get("user") or ""), team=team_of(body), channel=channel)
        delivery = str(body.get("event_id") or "") or None
        outcome = await cases.answer(actor, found[0], event.get("text") or "", delivery)
        # Not waiting for an answer, or no such investigation: other chatter in the thread.
        if isinstance(outcome, Refused) and outcome.kind in ("forbidden", "invalid"):
            await ephemeral(client, channel, actor.user, outcome.reason)

    @after_ack(app.event("app_home_opened"))
    async def on_home(event: dict[str, Any]) -> None:
        user = event["user"]
        items = []
        for summary in await store.recent(requester=user, limit=15):
            root = (await shown.all_for(summary.id)).get("root")
            link = None
            if root and root.ts:
                link = await permalink(client, root.channel, root.ts)
            items.append((summary.id, summary.question, summary.state, link))
        # What the gates skipped is everyone's to see: an alert has no requester.
        skipped = [
            (s.id, s.question, (await store.load(s.id)).stop_reason or "")
            for s in await store.page(states=[State.SKIPPED], limit=blocks.SKIPPED_ITEMS)
        ]
        await client.views_publish(user_id=user, view=blocks.home_view(items, skipped))


async def permalink(client: AsyncWebClient, channel: str, ts: str) -> str | None:
    try:
        return str((await client.chat_getPermalink(channel=channel, message_ts=ts))["permalink"])
    except Exception:
        return None
