"""What every listener shares: who and where a payload names, and answering one person."""

from __future__ import annotations

import json
import logging
from typing import Any

from slack_sdk.web.async_client import AsyncWebClient
from sqlalchemy.exc import SQLAlchemyError

from bot.slack import blocks
from bot.usecases.results import Actor

log = logging.getLogger(__name__)

NOT_STORED = (
    "Your request was received but could not be stored (the database refused it), so "
    "nothing was done. Please try again in a moment."
)
FAILED = (
    "Your request was received, but handling it failed and it may not have been carried "
    "out. Please try again in a moment."
)


def failure_text(error: BaseException) -> str:
    """What the person is told when the work after the ack raised."""
    return NOT_STORED if isinstance(error, SQLAlchemyError) else FAILED


async def ephemeral(client: AsyncWebClient, channel: str, user: str, text: str) -> None:
    await client.chat_postEphemeral(channel=channel, user=user, **blocks.error_ephemeral(text))


async def tell_failure(client: AsyncWebClient, error: BaseException, body: dict[str, Any]) -> None:
    """Work after the ack failed: tell the person who asked, when the payload names a
    channel and a user; never raise (this runs in an error handler, which logged it)."""
    channel, user = channel_of(body), user_of(body)
    if not channel or not user:
        return
    try:
        await ephemeral(client, channel, user, failure_text(error))
    except Exception:
        log.warning("could not tell %s in %s that their request failed", user, channel)


def user_of(body: dict[str, Any]) -> str:
    event = body.get("event") or {}
    user = body.get("user_id") or body.get("user") or event.get("user") or ""
    return str(user.get("id", "") if isinstance(user, dict) else user)


def team_of(body: dict[str, Any]) -> str | None:
    user = body.get("user")
    team = body.get("team_id") or body.get("team")
    if not team and isinstance(user, dict):
        team = user.get("team_id")
    return str((team.get("id") if isinstance(team, dict) else team) or "") or None


def channel_of(body: dict[str, Any]) -> str:
    """The channel a payload names: a command's, a click's, an event's, or the one a modal
    was opened for (our private_metadata)."""
    if body.get("channel_id"):
        return str(body["channel_id"])
    channel = (body.get("channel") or {}).get("id") or (body.get("container") or {}).get(
        "channel_id"
    )
    if channel:
        return str(channel)
    event = body.get("event") or {}
    if event.get("channel") and event.get("type") == "message":
        return str(event["channel"])
    view = body.get("view") or {}
    return str(private_metadata(view).get("channel_id") or "")


def actor_of(body: dict[str, Any], channel: str | None = None) -> Actor:
    return Actor(
        user=user_of(body),
        surface="slack",
        team=team_of(body),
        channel=channel if channel is not None else channel_of(body) or None,
    )


def private_metadata(view: dict[str, Any]) -> dict[str, Any]:
    try:
        meta = json.loads(view.get("private_metadata") or "{}")
    except ValueError:
        return {}
    return meta if isinstance(meta, dict) else {}


def button_value(action: dict[str, Any]) -> dict[str, Any] | None:
    """A button's JSON value, or None when it is not one of ours."""
    try:
        value = json.loads(action.get("value") or "")
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def value_of(view: dict[str, Any], block: str) -> str:
    value = view["state"]["values"][block][blocks.INPUT_ACTION]
    return str(value.get("value") or "")
