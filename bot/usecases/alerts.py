"""Investigations that start from an alert: a Sentry webhook, the backfill at start, or
"Investigate this" on a message from Sentry's own Slack integration.

An alert names one Sentry issue. Its project is the configured project with that Sentry
project (slug, or id for event alerts, which carry only the id); below the project's
`min_level` nothing is stored. The question is built from the issue, the investigation is
about that issue (`subject`), and it passes the gates of bot/usecases/gates.py. Its thread
opens in the project's `alert_channel` (or, for "Investigate this", where it was asked).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from agent.domain import Investigation, Origin
from agent.errors import InputError
from bot.config import Project, Projects
from bot.usecases.investigations import Investigations, scope_of
from bot.usecases.request import Request
from bot.usecases.results import Actor, Done, Refused

LEVELS = ("debug", "info", "warning", "error", "fatal")
TITLE_CHARS = 300


@dataclass(frozen=True)
class Alert:
    """One Sentry issue something alerted on. `level` is Sentry's (error, fatal…)."""

    issue_id: str
    title: str
    level: str = "error"
    short_id: str | None = None
    culprit: str | None = None
    link: str | None = None
    sentry_project: str | None = None  # the slug
    sentry_project_id: str | None = None
    first_seen: datetime | None = None
    source: str = "sentry webhook"

    @property
    def subject(self) -> str:
        return f"sentry:{self.issue_id}"

    def question(self) -> str:
        name = self.short_id or self.issue_id
        title = " ".join(self.title.split())[:TITLE_CHARS] or "an error"
        where = f" in {' '.join(self.culprit.split())[:200]}" if self.culprit else ""
        return f"Why does Sentry issue {name} happen: {title}{where}?"


def parse_time(value: object) -> datetime | None:
    """Sentry's ISO times ("2026-11-28T09:14:03.218000Z"), None when absent or not one."""
    if not isinstance(value, str):
        return None
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.utcoffset() is not None else None


def issue_alert(issue: object, source: str = "sentry webhook") -> Alert | None:
    """A Sentry issue (the webhook's `data.issue`, or an issue of the API's list)."""
    if not isinstance(issue, dict) or not issue.get("id"):
        return None
    project = issue.get("project") if isinstance(issue.get("project"), dict) else {}
    assert isinstance(project, dict)
    return Alert(
        issue_id=str(issue["id"]),
        title=str(issue.get("title") or ""),
        level=str(issue.get("level") or "error"),
        short_id=str(issue["shortId"]) if issue.get("shortId") else None,
        culprit=str(issue["culprit"]) if issue.get("culprit") else None,
        link=str(issue.get("web_url") or issue.get("permalink") or "") or None,
        sentry_project=str(project["slug"]) if project.get("slug") else None,
        sentry_project_id=str(project["id"]) if project.get("id") else None,
        first_seen=parse_time(issue.get("firstSeen")),
        source=source,
    )


def sentry_alert(resource: str, payload: dict[str, Any]) -> Alert | None:
    """The Sentry issue a delivery alerts on, or None when it is about something else."""
    data = payload.get("data") if isinstance(payload.get("data"), dict) else {}
    assert isinstance(data, dict)
    action = payload.get("action")
    if resource == "issue" and action == "created":
        return issue_alert(data.get("issue"))
    if resource == "event_alert" and action == "triggered" and isinstance(data.get("event"), dict):
        event = data["event"]
        if not event.get("issue_id"):
            return None
        project = event.get("project")
        return Alert(
            issue_id=str(event["issue_id"]),
            title=str(event.get("title") or event.get("message") or ""),
            level=str(event.get("level") or "error"),
            culprit=str(event["culprit"]) if event.get("culprit") else None,
            link=str(event.get("web_url") or "") or None,
            sentry_project_id=str(project) if project is not None else None,
        )
    return None


def project_for(alert: Alert, projects: Projects) -> Project | None:
    for p in projects.projects.values():
        if alert.sentry_project and p.sentry_project == alert.sentry_project:
            return p
        if alert.sentry_project_id and p.sentry_project_id == alert.sentry_project_id:
            return p
    return None


def below_floor(alert: Alert, project: Project) -> bool:
    level = alert.level.lower() if alert.level else "error"
    if level not in LEVELS:
        level = "error"  # an unknown level is not silently dropped
    return LEVELS.index(level) < LEVELS.index(project.min_level)


@dataclass(frozen=True)
class Ignored:
    """Nothing was stored, and why (below the floor, no project for it)."""

    reason: str


class Alerts:
    def __init__(self, cases: Investigations) -> None:
        self.cases = cases

    @property
    def projects(self) -> Projects:
        return self.cases.access.projects

    def screen(
        self, alert: Alert, project: Project | None = None, *, floor: bool = True
    ) -> Project | Ignored:
        """The project the alert is for, or why nothing is to be stored (a webhook answers
        that at once)."""
        project = project or project_for(alert, self.projects)
        if project is None:
            which = alert.sentry_project or alert.sentry_project_id
            return Ignored(f"no configured project has Sentry project {which}")
        if floor and below_floor(alert, project):
            return Ignored(
                f"level {alert.level} is below the project's floor ({project.min_level})"
            )
        return project

    async def take(
        self,
        alert: Alert,
        *,
        project: Project | None = None,
        origin: Origin | None = None,
        requester: str | None = None,
        key: str | None = None,
        floor: bool = True,
    ) -> Done | Refused | Ignored:
        """`floor`: an alert below the project's level is ignored (a person who asks for
        the issue explicitly is not held to it)."""
        screened = self.screen(alert, project, floor=floor)
        if isinstance(screened, Ignored):
            return screened
        project = screened
        now = self.cases.clock()
        request = Request(
            project=project,
            question=alert.question(),
            since=now - timedelta(hours=project.window_hours),
            until=now,
            asked_at=now,
        )
        try:
            inv = Investigation.open(request.question, scope_of(request), requester=requester)
        except InputError as exc:
            return Refused("invalid", str(exc))
        inv.subject = alert.subject
        channel = project.alert_channel
        inv.origin = origin or (
            Origin(surface="slack", channel=channel) if channel else Origin(surface=alert.source)
        )
        fingerprint = {"alert": alert.subject, "project": project.key}
        return await self.cases.admit(inv, key, fingerprint)

    async def from_slack(
        self, actor: Actor, alert: Alert, key: str | None = None
    ) -> Done | Refused | Ignored:
        """ "Investigate this" on Sentry's own message: that issue, in this channel's thread,
        asked by this person (the channel must be allowed for the project)."""
        project = project_for(alert, self.projects)
        allowed = self.projects.for_channel(actor.channel or "")
        if project is None and len(allowed) == 1:
            project = allowed[0]
        if project is None or project not in allowed:
            return Refused("forbidden", "This channel is not authorized for that Sentry project.")
        origin = Origin(surface="slack", channel=actor.channel, team=actor.team, user=actor.user)
        return await self.take(
            alert, project=project, origin=origin, requester=actor.user, key=key, floor=False
        )
