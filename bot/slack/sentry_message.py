"""Messages from Sentry's own Slack integration: the issue they link to.

Sentry posts its alerts as a bot message whose attachment (or blocks, or text) links the
issue, `https://<org>.sentry.io/issues/<id>/` or `…/organizations/<org>/issues/<id>/`.
"Investigate this" on such a message investigates that issue directly, without a form.
"""

from __future__ import annotations

import json
import re
from typing import Any

from bot.usecases.alerts import Alert

_ISSUE_LINK = re.compile(r"https?://[^\s|<>\"']+?/issues/(\d{1,20})(?=[/?#|>\s\"']|$)")
_SLACK_LINK = re.compile(r"<([^|>]+)\|([^>]+)>")


def from_sentry(message: dict[str, Any]) -> bool:
    """Posted by Sentry's Slack app (a bot message that names itself Sentry)."""
    if not message.get("bot_id") and not message.get("bot_profile"):
        return False
    names = [
        (message.get("bot_profile") or {}).get("name"),
        message.get("username"),
        *[(a or {}).get("author_name") for a in message.get("attachments") or []],
    ]
    return any(isinstance(n, str) and "sentry" in n.lower() for n in names)


def sentry_alert(message: dict[str, Any]) -> Alert | None:
    """The Sentry issue a Sentry message is about, or None (then the usual form opens)."""
    if not from_sentry(message):
        return None
    attachments = message.get("attachments") or []
    # The link and the title: the attachment's title link first, then anything in the message.
    for a in attachments:
        link = str((a or {}).get("title_link") or "")
        found = _ISSUE_LINK.search(link)
        if found:
            return Alert(
                issue_id=found.group(1),
                title=plain(str(a.get("title") or a.get("fallback") or "")),
                link=link,
                source="sentry slack message",
            )
    raw = json.dumps([message.get("text"), message.get("blocks"), attachments])
    found = _ISSUE_LINK.search(raw.replace("\\/", "/"))
    if not found:
        return None
    text = str(message.get("text") or "")
    labelled = _SLACK_LINK.search(text)
    title = labelled.group(2) if labelled else text.splitlines()[0] if text else ""
    return Alert(
        issue_id=found.group(1), title=plain(title), link=found.group(0), source="sentry slack"
    )


def plain(text: str) -> str:
    """Slack mrkdwn to a short plain line (the question is data, not markup)."""
    text = _SLACK_LINK.sub(lambda m: m.group(2), text)
    return " ".join(text.replace("*", "").replace("`", "").split())[:300]
