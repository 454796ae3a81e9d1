"""Modal submissions: "Investigate this" and the draft's Edit."""

from __future__ import annotations

from typing import Any

from slack_bolt.async_app import AsyncApp
from slack_bolt.context.ack.async_ack import AsyncAck
from slack_sdk.web.async_client import AsyncWebClient

from bot.slack import blocks
from bot.slack.reply import actor_of, ephemeral, private_metadata, value_of
from bot.usecases.investigations import DraftRef, Investigations
from bot.usecases.results import Refused

ERROR_CHARS = 150  # what a modal shows under a block
EDIT_BLOCKS = ("title", "body")


def register(app: AsyncApp, after_ack: Any, client: AsyncWebClient, cases: Investigations) -> None:
    @after_ack(app.view(blocks.CALLBACK_INVESTIGATE))
    async def on_investigate_submit(body: dict[str, Any], view: dict[str, Any]) -> None:
        meta = private_metadata(view)
        actor = actor_of(body, channel=str(meta.get("channel_id") or ""))
        # A modal is submitted once: a second delivery of its view is the same request.
        view_id = view.get("id")
        key = f"slack:{actor.team}:view:{view_id}" if view_id else None
        outcome = await cases.start(actor, value_of(view, "question"), key)
        if isinstance(outcome, Refused):
            await ephemeral(client, actor.channel or "", actor.user, outcome.reason)

    # Answered inline: a refusal is shown in the modal, on the block it is about, and the
    # modal stays open with what was typed.
    @app.view(blocks.CALLBACK_DRAFT_EDIT)
    async def on_edit_submit(ack: AsyncAck, body: dict[str, Any], view: dict[str, Any]) -> None:
        meta = private_metadata(view)
        actor = actor_of(body, channel=str(meta.get("channel_id") or ""))
        try:
            ref = DraftRef.of(meta)
        except (KeyError, TypeError, ValueError):
            await ack(response_action="errors", errors={"title": "This form is not one of ours."})
            return
        outcome = await cases.edit_draft(
            actor, ref, title=value_of(view, "title"), body=value_of(view, "body")
        )
        if isinstance(outcome, Refused):
            block = outcome.field if outcome.field in EDIT_BLOCKS else "title"
            await ack(response_action="errors", errors={block: outcome.reason[:ERROR_CHARS]})
            return
        await ack()
