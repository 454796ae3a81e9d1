"""`/investigate` and the "Investigate this" message shortcut."""

from __future__ import annotations

from typing import Any

from slack_bolt.async_app import AsyncApp
from slack_sdk.web.async_client import AsyncWebClient

from bot.slack import blocks
from bot.slack.reply import actor_of, ephemeral
from bot.slack.sentry_message import sentry_alert
from bot.usecases.alerts import Alerts, Ignored
from bot.usecases.investigations import Investigations
from bot.usecases.results import Refused


def register(app: AsyncApp, after_ack: Any, client: AsyncWebClient, cases: Investigations) -> None:
    @after_ack(app.command("/investigate"))
    async def on_investigate(body: dict[str, Any]) -> None:
        text = body.get("text") or ""
        actor = actor_of(body)
        if text.strip() in ("", "help"):
            await client.chat_postEphemeral(
                channel=actor.channel, user=actor.user, **blocks.help_message()
            )
            return
        trigger = body.get("trigger_id")
        # Slack's own key: one trigger_id per invocation of the command.
        key = f"slack:{actor.team}:{actor.channel}:{actor.user}:{trigger}" if trigger else None
        outcome = await cases.start(actor, text, key)
        if isinstance(outcome, Refused):
            await ephemeral(client, actor.channel or "", actor.user, outcome.reason)

    alerts = Alerts(cases)

    @after_ack(app.shortcut(blocks.SHORTCUT_INVESTIGATE))
    async def on_shortcut(body: dict[str, Any]) -> None:
        message = body.get("message") or {}
        alert = sentry_alert(message)
        if alert is not None:  # Sentry's own alert: that issue, at once, in this channel
            actor = actor_of(body, channel=str((body.get("channel") or {}).get("id") or ""))
            trigger = body.get("trigger_id")
            key = f"slack:{actor.team}:shortcut:{trigger}" if trigger else None
            outcome = await alerts.from_slack(actor, alert, key)
            text = outcome.reason if isinstance(outcome, Refused | Ignored) else outcome.note
            if text:
                await ephemeral(client, actor.channel or "", actor.user, text)
            return
        view = blocks.investigate_modal(message.get("text") or "", body["channel"]["id"])
        await client.views_open(trigger_id=body["trigger_id"], view=view)
