"""The Slack app's HTTP front, over real HTTP: acks never wait on Slack (the bot's identity
is resolved at start, in the background, never per request), and junk is refused on its
raw bytes before Bolt parses it (401 unsigned, 400 signed but unreadable, one log line,
no traceback)."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import json
import logging
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from urllib.parse import urlencode

import aiohttp
import pytest
from aiohttp import web

from agent.domain import Scope
from bot.config import Project, Projects, Settings
from bot.serve import Bot, assemble, slack_client
from storage.db import create_engine, create_schema
from tests.fakes.slack import FakeSlack, signed_headers

SECRET = "front-secret"
CHANNEL = "C0FRONT"
SCOPE = Scope(
    project_key="orders",
    repository="acme/orders",
    sentry_organization="acme",
    sentry_project="orders",
    since=datetime(2026, 1, 1, tzinfo=UTC),
    until=datetime(2026, 1, 2, tzinfo=UTC),
)


@dataclass
class Front:
    url: str
    slack: FakeSlack
    bot: Bot
    http: aiohttp.ClientSession

    async def post(self, raw: bytes, headers: dict[str, str]) -> tuple[int, str, float]:
        started = time.perf_counter()
        async with self.http.post(self.url, data=raw, headers=headers) as response:
            text = await response.text()
        return response.status, text, time.perf_counter() - started

    async def command(self, n: int = 0) -> tuple[int, str, float]:
        body = urlencode(
            {
                "command": "/investigate",
                "text": f"errores al guardar pedidos #{n}",
                "user_id": f"U{n:05d}",
                "channel_id": CHANNEL,
                "team_id": "T0FAKE",
                "trigger_id": f"trig.{n}",
                "response_url": "http://127.0.0.1:9/unused",
            }
        )
        return await self.post(body.encode(), signed_headers(body, SECRET))

    def roots(self) -> int:
        return len(self.slack.messages(CHANNEL))


@contextlib.asynccontextmanager
async def front(
    tmp_path, before: Callable[[FakeSlack], None] = lambda _: None
) -> AsyncIterator[Front]:
    """The web front alone (no workers) with its thread sync, started cold: `before` sets
    the fake's faults before anything has called Slack."""
    project = Project.for_scope(SCOPE, channels=["*"])
    engine = create_engine(f"sqlite+aiosqlite:///{tmp_path / 'front.db'}")
    await create_schema(engine)
    stop = asyncio.Event()
    async with FakeSlack(start_ts=f"{time.time():.6f}") as slack, aiohttp.ClientSession() as http:
        before(slack)
        client = slack_client(Settings(slack_bot_token="xoxb-test", slack_api_url=slack.api_url))
        bot = assemble(
            client, engine, None, Projects(projects={project.key: project}), SECRET, workers=0
        )
        tasks = bot.run(stop)
        runner = web.AppRunner(bot.web_app())
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", 0).start()
        try:
            url = f"http://127.0.0.1:{runner.addresses[0][1]}/slack/events"
            yield Front(url, slack, bot, http)
        finally:
            stop.set()
            await runner.cleanup()
            await bot.acks.finish()
            await asyncio.gather(*tasks, return_exceptions=True)
            await engine.dispose()


# -- acks never wait on Slack -------------------------------------------------------------


@pytest.mark.parametrize(
    ("fault", "unanswered"),
    [
        pytest.param(lambda s: s.hold_next("auth.test"), True, id="auth.test never answers"),
        pytest.param(lambda s: s.slow_next("auth.test", delay=4.0), True, id="takes 4 s"),
        pytest.param(lambda s: s.fail_next("auth.test", status=500, count=50), False, id="500"),
        pytest.param(
            lambda s: s.fail_next("auth.test", status=429, retry_after=2, count=3), False, id="429"
        ),
    ],
)
async def test_the_first_command_is_acked_whatever_auth_test_does(tmp_path, fault, unanswered):
    async with front(tmp_path, fault) as f:
        status, text, _ = await f.command()
        known_at_ack = f.bot.identity.current
        assert status == 200 and text == ""  # the normal ack, not Bolt's "reinstall" text
        await f.slack.wait_for(lambda s: bool(s.calls_to("auth.test")), timeout=5)
        if unanswered:  # the ack came while auth.test was still out (benchmarks time it)
            assert known_at_ack is None
        await f.slack.wait_for(lambda s: len(s.messages(CHANNEL)) == 1, timeout=5)
        (summary,) = await f.bot.store.recent(None, 10)  # the command was taken in
        assert summary.question == "errores al guardar pedidos #0"


async def test_a_burst_at_cold_start_makes_one_auth_test_call(tmp_path):
    async with front(tmp_path, lambda s: s.slow_next("auth.test", delay=0.5)) as f:
        answers = await asyncio.gather(*(f.command(n) for n in range(40)))
        assert {(status, text) for status, text, _ in answers} == {(200, "")}
        await f.slack.wait_for(lambda s: len(s.messages(CHANNEL)) == 40, timeout=20)
        async with asyncio.timeout(5):
            while f.bot.identity.current is None:  # noqa: ASYNC110 (the background call)
                await asyncio.sleep(0.02)
        assert (await f.command(40))[0] == 200  # and after it is known: no call either
        await f.slack.wait_for(lambda s: len(s.messages(CHANNEL)) == 41, timeout=5)
        assert len(f.slack.calls_to("auth.test")) == 1
        assert f.bot.identity.current.bot_user_id == f.slack.bot_user_id


async def test_a_new_token_is_resolved_again_in_the_background(tmp_path):
    async with front(tmp_path) as f:
        f.slack.tokens.add("xoxb-rotated")
        await f.command(0)
        async with asyncio.timeout(5):
            while f.bot.identity.current is None:  # noqa: ASYNC110
                await asyncio.sleep(0.02)
        f.bot.identity.client.token = "xoxb-rotated"
        await f.command(1)
        async with asyncio.timeout(5):
            while f.bot.identity.current.token != "xoxb-rotated":  # noqa: ASYNC110
                await asyncio.sleep(0.02)
        assert len(f.slack.calls_to("auth.test")) == 2


# -- junk before the signature check ------------------------------------------------------


def sign(raw: bytes, timestamp: str | None = None, content_type: str = "") -> dict[str, str]:
    ts = timestamp or str(int(time.time()))
    mac = hmac.new(SECRET.encode(), b"v0:" + ts.encode() + b":" + raw, hashlib.sha256)
    return {
        "Content-Type": content_type or "application/x-www-form-urlencoded",
        "X-Slack-Request-Timestamp": ts,
        "X-Slack-Signature": f"v0={mac.hexdigest()}",
    }


FORM = b"command=%2Finvestigate&text=x&user_id=U1&channel_id=C0FRONT&team_id=T0FAKE"
JUNK = {
    "a payload that is not JSON": (b"payload=%7Bnot+json", ""),
    "bytes that are not UTF-8": (b"command=/investigate&text=\xff\xfe\xfa", ""),
    "a JSON content type on a form body": (FORM, "application/json"),
    "a JSON body that is not an object": (b'["block_actions"]', "application/json"),
    "JSON that is not JSON": (b"{'type': 'event_callback'", "application/json"),
}


@pytest.mark.parametrize("kind", list(JUNK))
async def test_junk_is_refused_with_one_line_and_no_traceback(tmp_path, caplog, kind):
    raw, content_type = JUNK[kind]
    caplog.set_level(logging.INFO)
    unsigned = {"Content-Type": content_type or "application/x-www-form-urlencoded"}
    forged = {**sign(raw, content_type=content_type), "X-Slack-Signature": "v0=" + "0" * 64}
    not_a_number = sign(raw, timestamp="12ab", content_type=content_type)
    stale = sign(raw, timestamp=str(int(time.time()) - 600), content_type=content_type)
    async with front(tmp_path) as f:
        for headers in (unsigned, forged, not_a_number, stale):
            status, text, _ = await f.post(raw, headers)
            assert (status, json.loads(text)) == (401, {"error": "invalid request"})
        status, text, _ = await f.post(raw, sign(raw, content_type=content_type))
        assert (status, json.loads(text)) == (400, {"error": "malformed request"})
        await asyncio.sleep(0.05)  # time for any work after an ack, were there one
        assert await f.bot.store.recent(None, 10) == []
    assert "Traceback" not in caplog.text
    assert all(r.exc_info is None for r in caplog.records)
    ours = [r for r in caplog.records if r.name == "bot.slack.http"]
    assert len(ours) == 5 and all("\n" not in r.getMessage() for r in ours)
    assert [r.levelname for r in caplog.records if r.levelno >= logging.ERROR] == []


async def test_a_signed_request_passes_the_front_to_bolt(tmp_path):
    async with front(tmp_path) as f:
        challenge = json.dumps({"type": "url_verification", "challenge": "abc", "token": "t"})
        headers = sign(challenge.encode(), content_type="application/json")
        status, text, _ = await f.post(challenge.encode(), headers)
        assert status == 200 and json.loads(text) == {"challenge": "abc"}
        assert (await f.command())[:2] == (200, "")
