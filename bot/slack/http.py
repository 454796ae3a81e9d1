"""The HTTP front of the Slack app: a request is checked on its raw bytes before Bolt
parses it.

Bolt's own aiohttp handler decodes and parses the body before its signature middleware
runs, so junk (bytes that are not UTF-8, a payload that is not JSON, a timestamp that is
not a number, a JSON content type on a form body) raised a 500 and a traceback, signed or
not. Here the signature is verified on the bytes as they came; an unsigned, forged or
stale request is 401, a signed one Bolt cannot read is 400, each with one log line.
Bolt checks the signature again (cheap): the app stays safe wherever it is mounted.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import time
from collections.abc import Callable, Mapping

from aiohttp import web
from slack_bolt.adapter.aiohttp import to_aiohttp_response
from slack_bolt.async_app import AsyncApp
from slack_bolt.request.async_request import AsyncBoltRequest

log = logging.getLogger(__name__)

STALE_SECONDS = 300  # Slack's rule: a request older than five minutes may be a replay


def signature_problem(
    secret: bytes, raw: bytes, headers: Mapping[str, str], now: float
) -> str | None:
    """Why this request is not Slack's (a few words), or None if its signature holds."""
    timestamp = headers.get("X-Slack-Request-Timestamp", "")
    signature = headers.get("X-Slack-Signature", "")
    if not timestamp or not signature:
        return "no signature"
    if not (timestamp.isascii() and timestamp.isdigit()) or len(timestamp) > 12:
        return "a timestamp that is not a number"
    if abs(now - int(timestamp)) > STALE_SECONDS:
        return "a stale timestamp"
    mac = hmac.new(secret, b"v0:" + timestamp.encode() + b":" + raw, hashlib.sha256)
    expected = b"v0=" + mac.hexdigest().encode()
    if not hmac.compare_digest(expected, signature.encode("utf-8", "surrogateescape")):
        return "a wrong signature"
    return None


def web_app(
    app: AsyncApp,
    signing_secret: str,
    path: str = "/slack/events",
    *,
    clock: Callable[[], float] = time.time,
) -> web.Application:
    secret = signing_secret.encode()

    async def handle(request: web.Request) -> web.StreamResponse:
        raw = await request.read()
        problem = signature_problem(secret, raw, request.headers, clock())
        if problem is not None:
            log.warning("refused a request from %s: %s", request.remote, problem)
            return web.json_response({"error": "invalid request"}, status=401)
        try:
            bolt_request = AsyncBoltRequest(
                body=raw.decode("utf-8"),
                query=request.query_string,
                headers=request.headers,  # type: ignore[arg-type]
            )
            if not isinstance(bolt_request.body, dict):
                raise TypeError(f"a {type(bolt_request.body).__name__}, not an object")
        except (ValueError, TypeError, AttributeError, KeyError) as exc:
            # UnicodeDecodeError and json's errors are ValueErrors; a body of the wrong
            # shape fails in Bolt's context building.
            log.warning(
                "refused a signed request that is not a Slack payload (%s): %s %r",
                request.content_type,
                type(exc).__name__,
                str(exc)[:100],
            )
            return web.json_response({"error": "malformed request"}, status=400)
        return await to_aiohttp_response(await app.async_dispatch(bolt_request))

    front = web.Application()
    front.router.add_post(path, handle)
    return front
