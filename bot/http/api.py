"""The HTTP API's routes: parse, authorize, call the use cases (bot/usecases), answer.

Errors are JSON, `{"error": {"code", "message", "field"}}`, with the status a client can
act on: 401 without a valid token, 403 for a role that does not allow the action, 404 for
an unknown id (or one of a project the token does not see), 409 for a stale version or a
state that does not allow it, 413 over 1 MiB, 422 for a body that does not validate.
"""

# No `from __future__ import annotations`: FastAPI reads the route signatures, whose
# types are local to build_api.

import base64
import binascii
import json
from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, Depends, FastAPI, Header, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, StreamingResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from starlette.exceptions import HTTPException as StarletteHTTPException

from agent.domain import Investigation, State
from agent.errors import NotFound
from bot.http import events, models
from bot.http.auth import Operator, Role, Tokens
from bot.usecases.investigations import DraftRef, Investigations
from bot.usecases.results import Actor, Done, Refused
from storage.store import SqlStore

STATUS = {"forbidden": 403, "invalid": 422, "conflict": 409, "not_found": 404}
ERRORS: dict[int | str, dict[str, Any]] = {
    s: {"model": models.Error} for s in (401, 403, 404, 409, 413, 422)
}
MAX_KEY_CHARS = 200

bearer = HTTPBearer(auto_error=False, description="An operator token (INCIDENT_BOT_API_TOKENS)")


class ApiError(Exception):
    def __init__(self, status: int, code: str, message: str, field: str | None = None):
        super().__init__(message)
        self.status, self.code, self.message, self.field = status, code, message, field


def refused(outcome: Refused) -> ApiError:
    return ApiError(STATUS[outcome.kind], outcome.kind, outcome.reason, outcome.field)


def language_of(accept_language: str | None) -> str | None:
    """The first language of an Accept-Language header (q-values in order of preference)."""
    if not accept_language:
        return None
    ranked = []
    for n, part in enumerate(accept_language.split(",")):
        tag, _, params = part.strip().partition(";")
        q = 1.0
        if params.strip().startswith("q="):
            try:
                q = float(params.strip()[2:])
            except ValueError:
                q = 0.0
        if tag and tag != "*" and q > 0:
            ranked.append((-q, n, tag))
    return sorted(ranked)[0][2] if ranked else None


def encode_cursor(created_at: datetime, investigation_id: str) -> str:
    raw = json.dumps([created_at.isoformat(), investigation_id]).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: str) -> tuple[datetime, str]:
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        created, last = json.loads(raw)
        moment = datetime.fromisoformat(created)
        if moment.utcoffset() is None or not isinstance(last, str):
            raise ValueError
        return moment, last
    except (binascii.Error, ValueError, TypeError, UnicodeDecodeError):
        raise ApiError(422, "invalid", "the cursor is not one this API gave", "cursor") from None


def build_api(
    cases: Investigations,
    store: SqlStore,
    tokens: Tokens,
    *,
    poll_seconds: float = 0.1,
    routers: tuple[APIRouter, ...] = (),
) -> FastAPI:
    api = FastAPI(
        title="incident-bot",
        version="1",
        description="Start and follow investigations, edit and publish their drafts.",
        docs_url=None,
        redoc_url=None,
    )
    projects = cases.access.projects

    @api.exception_handler(ApiError)
    async def on_api_error(_: Request, exc: ApiError) -> JSONResponse:
        headers = {"WWW-Authenticate": "Bearer"} if exc.status == 401 else None
        body = models.error(exc.code, exc.message, exc.field)
        return JSONResponse(body, status_code=exc.status, headers=headers)

    @api.exception_handler(RequestValidationError)
    async def on_invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        first = exc.errors()[0] if exc.errors() else {"msg": "invalid request", "loc": ()}
        loc = [str(p) for p in first.get("loc", ()) if p not in ("body", "query", "header")]
        field = ".".join(loc) or None
        message = f"{field}: {first['msg']}" if field else str(first["msg"])
        return JSONResponse(models.error("invalid", message, field), status_code=422)

    @api.exception_handler(StarletteHTTPException)
    async def on_http(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        if exc.status_code == 400:
            # FastAPI's answer to a body it cannot decode (not UTF-8): like malformed JSON,
            # a body that does not validate.
            message = "the body is not JSON in UTF-8"
            return JSONResponse(models.error("invalid", message), status_code=422)
        code = {404: "not_found", 405: "invalid"}.get(exc.status_code, "invalid")
        return JSONResponse(models.error(code, str(exc.detail)), status_code=exc.status_code)

    async def operator(
        credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)],
    ) -> Operator:
        found = tokens.operator(credentials.credentials) if credentials else None
        if found is None:
            raise ApiError(401, "unauthorized", "a valid Bearer token is required")
        return found

    Caller = Annotated[Operator, Depends(operator)]
    AcceptLanguage = Annotated[str | None, Header(alias="Accept-Language")]
    LastEventId = Annotated[str | None, Header(alias="Last-Event-ID", max_length=200)]
    IdempotencyKey = Annotated[
        str | None, Header(alias="Idempotency-Key", max_length=MAX_KEY_CHARS, min_length=1)
    ]

    def actor(op: Operator, language: str | None = None) -> Actor:
        approves = frozenset(
            key for key in projects.projects if op.role == "approver" and op.sees(key)
        )
        return Actor(user=op.identity, surface="http", approves=approves, language=language)

    def need(op: Operator, role: Role, project: str) -> None:
        if not op.may(role, project):
            raise ApiError(403, "forbidden", f"this token's role may not do that in `{project}`")

    async def visible(op: Operator, investigation_id: str) -> Investigation:
        try:
            inv = await store.load(investigation_id)
        except NotFound:
            inv = None
        if inv is None or not op.sees(inv.scope.project_key):
            raise ApiError(404, "not_found", "there is no such investigation")
        return inv

    def done(outcome: Done | Refused) -> Done:
        if isinstance(outcome, Refused):
            raise refused(outcome)
        return outcome

    def accepted(inv: Investigation, replayed: bool = False) -> JSONResponse:
        location = f"/investigations/{inv.id}"
        body = models.Accepted(id=inv.id, state=inv.state, location=location)
        headers = {"Location": location}
        if replayed:
            headers["Idempotent-Replayed"] = "true"
        return JSONResponse(body.model_dump(mode="json"), status_code=202, headers=headers)

    @api.post(
        "/investigations",
        status_code=202,
        response_model=models.Accepted,
        responses=ERRORS,
        summary="Start an investigation",
    )
    async def start(
        body: models.StartRequest,
        op: Caller,
        idempotency_key: IdempotencyKey = None,
        accept_language: AcceptLanguage = None,
    ) -> JSONResponse:
        if body.project not in projects.projects or not op.sees(body.project):
            raise ApiError(422, "invalid", f"unknown project `{body.project}`", "project")
        need(op, "operator", body.project)
        key = f"http:{op.name}:{idempotency_key}" if idempotency_key else None
        outcome = done(
            await cases.start_in(
                actor(op, language_of(accept_language)),
                body.project,
                body.question,
                body.since,
                body.until,
                key,
                {"surface": "http", "operator": op.name, **body.model_dump(mode="json")},
            )
        )
        return accepted(outcome.investigation, replayed=not outcome.fresh)

    @api.get("/investigations", response_model=models.Page, responses=ERRORS, summary="List them")
    async def listing(
        op: Caller,
        project: Annotated[str | None, Query(max_length=100)] = None,
        state: Annotated[list[State] | None, Query()] = None,
        limit: Annotated[int, Query(ge=1, le=200)] = 50,
        cursor: Annotated[str | None, Query(max_length=500)] = None,
    ) -> models.Page:
        seen = [key for key in projects.projects if op.sees(key)]
        if project is not None:
            seen = [key for key in seen if key == project]
        after = decode_cursor(cursor) if cursor else None
        rows = await store.page(projects=seen, states=state, limit=limit + 1, after=after)
        more = len(rows) > limit
        rows = rows[:limit]
        items = [models.Summary.model_validate(r.model_dump()) for r in rows]
        last = rows[-1] if rows and more else None
        return models.Page(
            items=items, next_cursor=encode_cursor(last.created_at, last.id) if last else None
        )

    @api.get(
        "/investigations/{investigation_id}",
        response_model=models.InvestigationOut,
        responses=ERRORS,
        summary="State, evidence, diagnosis, draft and messages",
    )
    async def one(investigation_id: str, op: Caller) -> models.InvestigationOut:
        return models.InvestigationOut.of(await visible(op, investigation_id))

    @api.put(
        "/investigations/{investigation_id}/draft",
        response_model=models.DraftOut,
        responses=ERRORS,
        summary="Edit the draft (a new version); 409 when expectedDraftVersion is stale",
    )
    async def edit(investigation_id: str, body: models.DraftEdit, op: Caller) -> models.DraftOut:
        inv = await visible(op, investigation_id)
        need(op, "operator", inv.scope.project_key)
        ref = DraftRef(inv.id, body.expected_draft_version)
        outcome = done(await cases.edit_draft(actor(op), ref, body.title, body.body))
        out = models.InvestigationOut.of(outcome.investigation).draft
        assert out is not None
        return out

    @api.post(
        "/investigations/{investigation_id}/messages",
        status_code=202,
        response_model=models.Accepted,
        responses=ERRORS,
        summary="Answer the question the run waits on; 409 when none is waiting",
    )
    async def message(investigation_id: str, body: models.Answer, op: Caller) -> JSONResponse:
        inv = await visible(op, investigation_id)
        need(op, "operator", inv.scope.project_key)
        return accepted(done(await cases.answer(actor(op), inv.id, body.text)).investigation)

    @api.post(
        "/investigations/{investigation_id}/issue",
        status_code=202,
        response_model=models.ReceiptOut,
        responses=ERRORS,
        summary="Publish the draft version and hash shown; a repeat returns the receipt",
    )
    async def issue(
        investigation_id: str,
        body: models.IssueRequest,
        op: Caller,
        idempotency_key: IdempotencyKey = None,
    ) -> JSONResponse:
        inv = await visible(op, investigation_id)
        need(op, "approver", inv.scope.project_key)
        if not idempotency_key:
            raise ApiError(
                422, "invalid", "the Idempotency-Key header is required", "Idempotency-Key"
            )
        ref = DraftRef(inv.id, body.draft_version, body.hash)
        outcome = done(await cases.approve(actor(op), ref, f"http:{op.name}:{idempotency_key}"))
        assert outcome.receipt is not None
        receipt = models.ReceiptOut.of(outcome.investigation, outcome.receipt)
        status = 202 if outcome.fresh else 200
        headers = {"Location": f"/investigations/{inv.id}"}
        return JSONResponse(receipt.model_dump(mode="json"), status_code=status, headers=headers)

    @api.post(
        "/investigations/{investigation_id}/rerun",
        status_code=202,
        response_model=models.Accepted,
        responses=ERRORS,
        summary="Run it again (a run at work stops); the old report is superseded",
    )
    async def rerun(
        investigation_id: str, op: Caller, accept_language: AcceptLanguage = None
    ) -> JSONResponse:
        inv = await visible(op, investigation_id)
        need(op, "operator", inv.scope.project_key)
        outcome = done(await cases.rerun(actor(op, language_of(accept_language)), inv.id))
        return accepted(outcome.investigation)

    @api.get(
        "/investigations/{investigation_id}/events",
        responses={**ERRORS, 200: {"content": {"text/event-stream": {}}}},
        response_class=StreamingResponse,
        summary="Evidence, questions, the diagnosis and state changes as they are stored",
    )
    async def stream(
        investigation_id: str,
        op: Caller,
        last_event_id: LastEventId = None,
    ) -> StreamingResponse:
        """`Last-Event-ID`: the id of the last event the client has; only what came after it
        is sent."""
        inv = await visible(op, investigation_id)
        return StreamingResponse(
            events.follow(store, inv.id, poll_seconds, since=last_event_id),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
        )

    for router in routers:
        api.include_router(router)
    return api
