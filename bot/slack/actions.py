"""The buttons: Edit, Approve & publish, Discard, Create anyway, Continue, Re-run."""

from __future__ import annotations

import dataclasses
from typing import Any

from slack_bolt.async_app import AsyncApp
from slack_sdk.web.async_client import AsyncWebClient

from bot.slack import blocks
from bot.slack.reply import actor_of, button_value, ephemeral
from bot.slack.sync import CONTINUE_CALLS
from bot.usecases.investigations import DraftRef, Investigations
from bot.usecases.results import Actor, Done, Refused

NOT_OURS = "That button is not one this app made; nothing was changed."


def register(app: AsyncApp, after_ack: Any, client: AsyncWebClient, cases: Investigations) -> None:
    async def tell(actor: Actor, outcome: Done | Refused) -> None:
        text = outcome.reason if isinstance(outcome, Refused) else outcome.note
        if text:
            await ephemeral(client, actor.channel or "", actor.user, text)

    async def clicked(body: dict[str, Any], action: dict[str, Any]) -> tuple[Actor, Any]:
        actor, value = actor_of(body), button_value(action)
        if value is None:
            await ephemeral(client, actor.channel or "", actor.user, NOT_OURS)
        return actor, value

    @after_ack(app.action(blocks.ACTION_DRAFT_EDIT))
    async def on_edit(body: dict[str, Any], action: dict[str, Any]) -> None:
        actor, value = await clicked(body, action)
        if value is None:
            return
        outcome = await cases.may_edit(actor, DraftRef.of(value))
        if isinstance(outcome, Refused):
            await tell(actor, outcome)
            return
        view = blocks.edit_modal(outcome.investigation, channel=actor.channel)
        await client.views_open(trigger_id=body["trigger_id"], view=view)

    @after_ack(app.action(blocks.ACTION_DRAFT_APPROVE))
    async def on_approve(body: dict[str, Any], action: dict[str, Any]) -> None:
        actor, value = await clicked(body, action)
        if value is not None:
            await tell(actor, await cases.approve(actor, DraftRef.of(value)))

    @after_ack(app.action(blocks.ACTION_CREATE_ANYWAY))
    async def on_create_anyway(body: dict[str, Any], action: dict[str, Any]) -> None:
        actor, value = await clicked(body, action)
        if value is not None:
            outcome = await cases.create_anyway(actor, DraftRef.of(value), int(value["creates"]))
            await tell(actor, outcome)

    @after_ack(app.action(blocks.ACTION_DRAFT_DISCARD))
    async def on_discard(body: dict[str, Any], action: dict[str, Any]) -> None:
        actor, value = await clicked(body, action)
        if value is not None:
            await tell(actor, await cases.discard(actor, DraftRef.of(value)))

    @after_ack(app.action(blocks.ACTION_CONTINUE))
    async def on_continue(body: dict[str, Any], action: dict[str, Any]) -> None:
        actor, value = await clicked(body, action)
        if value is not None:
            inv_id, version = str(value["investigation_id"]), int(value["version"])
            await tell(actor, await cases.continue_run(actor, inv_id, version, CONTINUE_CALLS))

    @after_ack(app.action(blocks.ACTION_RERUN))
    async def on_rerun(body: dict[str, Any], action: dict[str, Any]) -> None:
        actor, value = await clicked(body, action)
        if value is None:
            return
        # The clicker's language when Slack sends it (the user's locale), else the old run's.
        locale = (body.get("user") or {}).get("locale")
        actor = dataclasses.replace(actor, language=locale if isinstance(locale, str) else None)
        outcome = await cases.rerun(actor, str(value["investigation_id"]))
        await tell(actor, outcome)
