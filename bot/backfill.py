"""Backfill at start: Sentry issues first seen in the last hours (INCIDENT_BOT_BACKFILL_HOURS,
default 24) that have no investigation yet are queued through the alert intake — the same
severity floor and gates as a webhook (bot/usecases/alerts.py, gates.py).

Issues are listed from Sentry's REST API (`SentryIssues`, read token SENTRY_ACCESS_TOKEN at
SENTRY_API_URL) or, serving a recorded incident without a token, from its recording
(`RecordedIssues`). A Sentry that fails or does not answer is logged and the backfill is
skipped for that project: the service starts regardless.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Protocol

import aiohttp

from agent.domain import utcnow
from bot.config import Project
from bot.usecases.alerts import Alert, Alerts, Ignored, issue_alert
from bot.usecases.investigations import Investigations
from bot.usecases.results import Done, Refused

log = logging.getLogger(__name__)

PAGE = 100
PAGES = 5  # at most this many pages of new issues per project


class IssueLister(Protocol):
    async def first_seen_since(self, project: Project, since: datetime) -> list[Alert]: ...


class Investigated(Protocol):
    async def investigated(self, subjects: Sequence[str], project: str) -> set[str]: ...


@dataclass
class RecordedIssues:
    """The issues of a recorded incident (its sentry/issues.json), for its one project."""

    folder: Path
    sentry_project: str

    async def first_seen_since(self, project: Project, since: datetime) -> list[Alert]:
        if project.sentry_project != self.sentry_project:
            return []
        raw = json.loads((self.folder / "issues.json").read_text(encoding="utf-8"))
        alerts = [issue_alert(issue, "backfill") for issue in raw]
        return [a for a in alerts if a and a.first_seen and a.first_seen >= since]


@dataclass
class SentryIssues:
    """Sentry's REST API: the project's issues first seen since a moment, newest first."""

    api_url: str
    token: str
    timeout: float = 20.0

    async def first_seen_since(self, project: Project, since: datetime) -> list[Alert]:
        base = self.api_url.rstrip("/") + "/api/0"
        org = project.sentry_organization
        hours = max(1, int((utcnow() - since).total_seconds() // 3600) + 1)
        headers = {"Authorization": f"Bearer {self.token}"}
        timeout = aiohttp.ClientTimeout(total=self.timeout)
        async with aiohttp.ClientSession(headers=headers, timeout=timeout) as http:
            async with http.get(f"{base}/projects/{org}/{project.sentry_project}/") as r:
                r.raise_for_status()
                project_id = str((await r.json())["id"])
            found: list[Alert] = []
            params = {
                "project": project_id,
                "statsPeriod": f"{hours}h",
                "query": f"is:unresolved firstSeen:-{hours}h",
                "sort": "new",
                "limit": str(PAGE),
            }
            for _ in range(PAGES):
                async with http.get(f"{base}/organizations/{org}/issues/", params=params) as r:
                    r.raise_for_status()
                    page = await r.json()
                    cursor = next_cursor(r.headers.get("Link", ""))
                alerts = [issue_alert(issue, "backfill") for issue in page]
                found += [a for a in alerts if a and a.first_seen and a.first_seen >= since]
                if not cursor or len(page) < PAGE:
                    break
                params["cursor"] = cursor
            return found


def next_cursor(link: str) -> str | None:
    """Sentry's pagination: the `next` cursor of a Link header when it has results."""
    for part in link.split(","):
        if 'rel="next"' in part and 'results="true"' in part:
            for attr in part.split(";"):
                attr = attr.strip()
                if attr.startswith('cursor="'):
                    return attr.removeprefix('cursor="').removesuffix('"')
    return None


async def backfill(
    alerts: Alerts,
    store: Investigated,
    lister: IssueLister,
    hours: float,
    clock: Callable[[], datetime] = utcnow,
) -> list[Done | Refused | Ignored]:
    """Queue what was missed while the service was down; returns each alert's outcome."""
    if hours <= 0:
        return []
    since = clock() - timedelta(hours=hours)
    outcomes: list[Done | Refused | Ignored] = []
    for project in alerts.projects.projects.values():
        try:
            issues = await lister.first_seen_since(project, since)
        except (aiohttp.ClientError, TimeoutError, OSError, ValueError, KeyError) as exc:
            log.warning("backfill of %s: Sentry did not answer (%s)", project.key, exc)
            continue
        issues.sort(key=lambda a: a.first_seen or since)  # oldest first
        seen = await store.investigated([a.subject for a in issues], project.key)
        for alert in issues:
            if alert.subject in seen:
                continue
            seen.add(alert.subject)
            outcomes.append(await alerts.take(alert, project=project))
    queued = sum(isinstance(o, Done) and o.fresh for o in outcomes)
    log.warning("backfill: %d issue(s) new since %s, %d queued", len(outcomes), since, queued)
    return outcomes


async def at_start(
    cases: Investigations, store: Investigated, lister: IssueLister, hours: float
) -> None:
    """The backfill as a task beside the service: a failure is logged, never raised."""
    try:
        await backfill(Alerts(cases), store, lister, hours)
    except asyncio.CancelledError:
        raise
    except Exception:
        log.exception("the backfill at start failed")


def lister_for(
    environ: Mapping[str, str], api_url: str, recording: tuple[Path, str] | None
) -> IssueLister | None:
    """Sentry's REST API when a read token is set (SENTRY_ACCESS_TOKEN), else the served
    recording's issues (its folder and Sentry project), else nothing to backfill from."""
    token = environ.get("SENTRY_ACCESS_TOKEN")
    if token:
        return SentryIssues(api_url, token)
    return RecordedIssues(*recording) if recording else None
