"""POST /hooks/sentry: Sentry's integration-platform webhooks start investigations.

A delivery counts only when `Sentry-Hook-Signature` is the HMAC-SHA256 (hex) of the raw
body under the integration's client secret (SENTRY_CLIENT_SECRET), its
`Sentry-Hook-Timestamp` (Unix seconds) is within `TOLERANCE_SECONDS` of now, and neither
its `Request-ID` nor its body was taken in before (Sentry signs the body only, so a
replayed body under a new Request-ID is refused too). Refusals are 401 (signature,
timestamp) or 409 (replay) with a JSON error body, and nothing is stored.

`Sentry-Hook-Resource` says what it is about: `issue` (action `created`: the issue is in
`data.issue`) and `event_alert` (an issue alert rule fired: `data.event`, with
`issue_id`); anything else is acknowledged and ignored.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from collections.abc import Callable
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel

from bot.http.models import Error, error
from bot.usecases.alerts import Alert, Alerts, Ignored, parse_time
from bot.usecases.ports import Keys
from bot.usecases.results import Refused

TOLERANCE_SECONDS = 300.0


class HookAnswer(BaseModel):
    status: str  # queued, joined, skipped, ignored
    investigation: str | None = None
    reason: str | None = None


def refuse(status: int, code: str, message: str) -> JSONResponse:
    return JSONResponse(error(code, message), status_code=status)


def signed(secret: str, body: bytes, signature: str | None) -> bool:
    expected = hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    return signature is not None and hmac.compare_digest(signature.strip().lower(), expected)


def alert_of(resource: str, payload: dict[str, Any]) -> Alert | None:
    """The Sentry issue a delivery alerts on, or None when it is about something else."""
    data = payload.get("data") if isinstance(payload.get("data"), dict) else {}
    assert isinstance(data, dict)
    action = payload.get("action")
    if resource == "issue" and action == "created" and isinstance(data.get("issue"), dict):
        issue = data["issue"]
        project = issue.get("project") if isinstance(issue.get("project"), dict) else {}
        assert isinstance(project, dict)
        if not issue.get("id"):
            return None
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
        )
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


def sentry_router(
    alerts: Alerts,
    secret: str | None,
    keys: Keys | None,
    clock: Callable[[], float] = time.time,
) -> APIRouter:
    router = APIRouter()

    @router.post(
        "/hooks/sentry",
        status_code=202,
        response_model=HookAnswer,
        responses={s: {"model": Error} for s in (401, 409, 413, 422)},
        summary="Sentry integration webhooks (issue created, issue alerts)",
    )
    async def hook(request: Request) -> JSONResponse:
        body = await request.body()
        if not secret:
            return refuse(401, "unauthorized", "Sentry webhooks are not configured here")
        if not signed(secret, body, request.headers.get("Sentry-Hook-Signature")):
            return refuse(401, "unauthorized", "the Sentry-Hook-Signature does not match")
        try:
            sent_at = float(request.headers.get("Sentry-Hook-Timestamp", ""))
        except ValueError:
            return refuse(401, "unauthorized", "the Sentry-Hook-Timestamp is missing")
        if abs(clock() - sent_at) > TOLERANCE_SECONDS:
            return refuse(401, "unauthorized", "the delivery is stale (Sentry-Hook-Timestamp)")
        request_id = request.headers.get("Request-ID", "").strip()
        if not request_id or len(request_id) > 200:
            return refuse(422, "invalid", "the Request-ID header is missing")
        try:
            payload = json.loads(body)
            if not isinstance(payload, dict):
                raise ValueError
        except ValueError:
            return refuse(422, "invalid", "the body is not a JSON object")
        marks = [f"sentry-hook:{request_id}", "sentry-body:" + hashlib.sha256(body).hexdigest()]
        taken: list[str] = []
        if keys is not None:
            for mark in marks:
                if not await keys.first_delivery(mark):
                    for done in taken:  # this delivery was not taken in after all
                        await keys.forget_event(done)
                    return refuse(409, "conflict", "this delivery was received before")
                taken.append(mark)
        try:
            answer = await take(alerts, request.headers.get("Sentry-Hook-Resource", ""), payload)
        except BaseException:
            if keys is not None:  # not taken in: Sentry (or an operator) may send it again
                for mark in taken:
                    await keys.forget_event(mark)
            raise
        return JSONResponse(answer.model_dump(), status_code=202)

    return router


async def take(alerts: Alerts, resource: str, payload: dict[str, Any]) -> HookAnswer:
    alert = alert_of(resource, payload)
    if alert is None:
        return HookAnswer(status="ignored", reason=f"nothing to investigate in {resource!r}")
    outcome = await alerts.take(alert)
    if isinstance(outcome, Ignored):
        return HookAnswer(status="ignored", reason=outcome.reason)
    if isinstance(outcome, Refused):
        return HookAnswer(status="ignored", reason=outcome.reason)
    inv = outcome.investigation
    if inv.state.value == "SKIPPED":
        return HookAnswer(status="skipped", investigation=inv.id, reason=inv.stop_reason)
    return HookAnswer(status="queued" if outcome.fresh else "joined", investigation=inv.id)
