"""POST /hooks/sentry: Sentry's integration-platform webhooks start investigations.

A delivery counts only when `Sentry-Hook-Signature` is the HMAC-SHA256 (hex) of the raw
body under the integration's client secret (SENTRY_CLIENT_SECRET), its
`Sentry-Hook-Timestamp` (Unix seconds) is within `TOLERANCE_SECONDS` of now, and neither
its `Request-ID` nor its body was taken in before (Sentry signs the body only, so a
replayed body under a new Request-ID is refused too). Refusals are 401 (signature,
timestamp) or 409 (replay) with a JSON error body, and nothing is stored. The same delivery
sent again (its Request-ID and body, as a sender does whose answer was lost) starts nothing
either, but is answered 200 `duplicate` with what the first one came to.

`Sentry-Hook-Resource` says what it is about: `issue` (action `created`: the issue is in
`data.issue`) and `event_alert` (an issue alert rule fired: `data.event`, with
`issue_id`); anything else is acknowledged and ignored.

The answer comes before the gates: a delivery that may start a run is stored (the same
INSERT refuses a replay, storage.deliveries) and answered 202 `accepted`; the process's
Inbox (bot/usecases/inbox.py) takes it in right after, and any process takes it in after a
restart. Sentry waits about a second for an answer; the gates may take longer in a burst.
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
from bot.usecases.alerts import Alerts, Ignored, sentry_alert
from bot.usecases.inbox import Inbox

TOLERANCE_SECONDS = 300.0


class HookAnswer(BaseModel):
    """`accepted`: stored, and taken in right after (its outcome is kept with the delivery:
    queued, joined, skipped); `ignored`: nothing to start, and why; `duplicate`: received
    before, with its `outcome` (none while it is being taken in)."""

    status: str
    delivery: str | None = None
    reason: str | None = None
    outcome: dict[str, Any] | None = None


def refuse(status: int, code: str, message: str) -> JSONResponse:
    return JSONResponse(error(code, message), status_code=status)


def signed(secret: str, body: bytes, signature: str | None) -> bool:
    expected = hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    return signature is not None and hmac.compare_digest(signature.strip().lower(), expected)


def sentry_router(
    inbox: Inbox, secret: str | None, clock: Callable[[], float] = time.time
) -> APIRouter:
    router = APIRouter()

    @router.post(
        "/hooks/sentry",
        status_code=202,
        response_model=HookAnswer,
        responses={
            200: {"model": HookAnswer, "description": "the same delivery, received before"},
            **{s: {"model": Error} for s in (401, 409, 413, 422)},
        },
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
        resource = request.headers.get("Sentry-Hook-Resource", "")[:64]
        # What needs no gate is answered now; the rest is stored and taken in after.
        ignored = screen(inbox.alerts, resource, payload)
        answer = ignored or HookAnswer(status="accepted", delivery=request_id)
        outcome = ignored.model_dump() if ignored else None
        body_hash = hashlib.sha256(body).hexdigest()
        if not await inbox.deliveries.record(request_id, body_hash, resource, payload, outcome):
            first = await inbox.deliveries.stored(request_id)
            if first is None or first.body_hash != body_hash:
                return refuse(409, "conflict", "this delivery was received before")
            again = HookAnswer(status="duplicate", delivery=request_id, outcome=first.outcome)
            return JSONResponse(again.model_dump(exclude_none=True), status_code=200)
        if ignored is None:
            inbox.wake.set()
        return JSONResponse(answer.model_dump(exclude_none=True), status_code=202)

    return router


def screen(alerts: Alerts, resource: str, payload: dict[str, Any]) -> HookAnswer | None:
    """The answer of a delivery that starts nothing (not an alert, below the floor, of no
    configured project), or None when it is to be taken in."""
    alert = sentry_alert(resource, payload)
    if alert is None:
        return HookAnswer(status="ignored", reason=f"nothing to investigate in {resource!r}")
    screened = alerts.screen(alert)
    if isinstance(screened, Ignored):
        return HookAnswer(status="ignored", reason=screened.reason)
    return None
