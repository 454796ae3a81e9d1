"""A start request in its text form, `/investigate [project] <question> [since..until]`,
checked before anything is stored (Slack's command and modal use it)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from agent.domain import MAX_QUESTION_CHARS
from agent.errors import InputError
from bot.config import Project, Projects

USAGE = (
    "Usage: `/investigate [project] <question> [since..until]`, e.g. "
    "`/investigate orders errors when saving orders 2026-11-28..2026-11-29`"
)

_WINDOW = re.compile(r"(?:^|\s)(\S*)\.\.(\S*)\s*$")
_RELATIVE = re.compile(r"^-(\d+)([mhd])$")


@dataclass(frozen=True)
class Request:
    project: Project
    question: str
    since: datetime
    until: datetime
    asked_at: datetime


def parse(text: str, projects: Projects, channel: str, now: datetime) -> Request:
    text = " ".join((text or "").split())
    since = until = None
    match = _WINDOW.search(text)
    if match and (match.group(1) or match.group(2)):
        since = moment(match.group(1), now) if match.group(1) else None
        until = moment(match.group(2), now) if match.group(2) else None
        text = text[: match.start()].strip()
    first, _, rest = text.partition(" ")
    name = first if first in projects.projects else None
    question = rest.strip() if name else text
    project = projects.choose(channel, name)
    if not question:
        raise InputError(f"the question is empty. {USAGE}")
    if len(question) > MAX_QUESTION_CHARS:
        raise InputError(
            f"the question has {len(question)} characters; the limit is {MAX_QUESTION_CHARS}"
        )
    until = until or now
    since = since or until - timedelta(hours=project.window_hours)
    if since >= until:
        raise InputError("the time window is empty: since must come before until")
    return Request(project=project, question=question, since=since, until=until, asked_at=now)


def moment(value: str, now: datetime) -> datetime:
    relative = _RELATIVE.match(value)
    if relative:
        amount, unit = int(relative.group(1)), relative.group(2)
        return now - timedelta(**{{"m": "minutes", "h": "hours", "d": "days"}[unit]: amount})
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise InputError(f"`{value}` is not a date (use 2026-11-28 or 2026-11-28T09:00Z)") from None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
