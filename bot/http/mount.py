"""The API inside the aiohttp app that serves Bolt: one server, one port.

aiohttp-asgi hands each request under a prefix to the ASGI (FastAPI) application. Two
things are fixed on the way in, by `Shim`:

- The adapter gives no `asgi.spec_version`, so Starlette takes it for an ASGI 2.0 server
  and, while streaming a response, polls `receive()` for the client's disconnect; the
  adapter answers each poll at once with an empty body, so an open event stream would
  spin. aiohttp raises an OSError on a write to a closed connection, which is what ASGI
  2.4 promises instead, so the scope says 2.4 and `receive()` after the body waits.
- The adapter reads the body chunk by chunk with no limit: the shim reads it first and
  answers 413 over `MAX_BODY_BYTES`, before the application sees any of it.

The prefixes are mounted with an empty root_path so the routes see the full path.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable, Mapping, MutableMapping
from pathlib import Path
from typing import Any

from aiohttp import web
from aiohttp_asgi import ASGIResource
from starlette.requests import ClientDisconnect

from bot.http.api import build_api
from bot.http.auth import ENV, Tokens
from bot.http.models import error
from bot.http.sentry import sentry_router
from bot.usecases.inbox import Inbox
from bot.usecases.investigations import Investigations
from storage.store import SqlStore

log = logging.getLogger(__name__)

MAX_BODY_BYTES = 1024 * 1024
PREFIXES = ("/investigations", "/openapi.json", "/hooks/")

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]


class Shim:
    def __init__(self, app: App, max_body: int = MAX_BODY_BYTES) -> None:
        self.app, self.max_body = app, max_body

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        scope = {**scope, "root_path": "", "asgi": {"version": "3.0", "spec_version": "2.4"}}
        declared = dict(scope.get("headers") or []).get(b"content-length", b"0")
        if declared.isdigit() and int(declared) > self.max_body:
            await too_large(send, self.max_body)
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if len(body) > self.max_body:
                await too_large(send, self.max_body)
                return
            if not message.get("more_body"):
                break
        delivered = False

        async def replay() -> Message:
            nonlocal delivered
            if not delivered:
                delivered = True
                return {"type": "http.request", "body": body, "more_body": False}
            await asyncio.Event().wait()  # ASGI 2.4: nobody waits on this for a disconnect
            raise AssertionError("unreachable")

        try:
            await self.app(scope, replay, send)
        except (ClientDisconnect, OSError):
            # The client went away mid-stream (an event stream closed): nothing to answer.
            log.debug("client left %s", scope.get("path"))


async def too_large(send: Send, limit: int) -> None:
    raw = json.dumps(error("too_large", f"the body is over {limit:,} bytes")).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(raw)).encode())]
    await send({"type": "http.response.start", "status": 413, "headers": headers})
    await send({"type": "http.response.body", "body": raw})


def mount(web_app: web.Application, asgi_app: App) -> None:
    """Serve `asgi_app` under PREFIXES in `web_app` (next to /slack/events)."""
    shim = Shim(asgi_app)
    for prefix in PREFIXES:
        web_app.router.register_resource(ASGIResource(shim, root_path=prefix))


def attach(
    web_app: web.Application,
    cases: Investigations,
    store: SqlStore,
    environ: Mapping[str, str],
    config: Path | None,
    inbox: Inbox,
) -> None:
    """The HTTP API (operator tokens from `environ`, roles from `config`) and the Sentry
    webhook (its deliveries taken in by `inbox`) in `web_app`."""
    tokens = Tokens.from_env(environ, config)
    if not tokens:
        log.warning("no %s: every API route answers 401", ENV)
    secret = environ.get("SENTRY_CLIENT_SECRET") or None
    hooks = sentry_router(inbox, secret)
    mount(web_app, build_api(cases, store, tokens, routers=(hooks,)))
