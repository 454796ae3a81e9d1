"""`incident-bot serve` as a process: real HTTP, real signature checks, its own workers."""

import asyncio
import contextlib
import os
import signal
import socket
import sys
import time
from pathlib import Path
from urllib.parse import urlencode

import aiohttp

from agent.publish.sentry import SentryNote
from bot.config import Settings
from bot.serve import backlinks
from tests.fakes.slack import FakeSlack, signed_headers

SECRET = "serve-secret"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def signed(body: str) -> dict[str, str]:
    return signed_headers(body, SECRET)


def keys(slack: FakeSlack) -> list[str]:
    out = []
    for channel in slack.channels:
        for message in slack.messages(channel):
            meta = message.get("metadata") or {}
            if meta.get("event_type") == "incident_bot":
                out.append(meta["event_payload"]["key"])
    return out


async def test_serve_answers_a_signed_command_in_a_thread(built_scenarios, db_url):
    port = free_port()
    async with FakeSlack(start_ts=f"{time.time():.6f}") as slack:
        env = dict(os.environ)
        env.update(
            SLACK_BOT_TOKEN="xoxb-test",
            SLACK_SIGNING_SECRET=SECRET,
            SLACK_API_URL=slack.api_url,
            DATABASE_URL=db_url,
        )
        env.pop("GITHUB_TOKEN", None)
        proc = await asyncio.create_subprocess_exec(
            str(Path(sys.executable).with_name("incident-bot")),
            "serve",
            "--scenario",
            str(built_scenarios["orders"]),
            "--offline",
            "--http",
            "--port",
            str(port),
            env=env,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.PIPE,
        )
        try:
            url = f"http://127.0.0.1:{port}/slack/events"
            body = urlencode(
                {
                    "command": "/investigate",
                    "text": "errores al guardar pedidos",
                    "user_id": "U1",
                    "channel_id": "C1",
                    "team_id": "T0FAKE",
                    "trigger_id": "t",
                    "response_url": slack.api_url,
                }
            )
            async with aiohttp.ClientSession() as http:
                async with asyncio.timeout(30):
                    while True:  # until the server listens
                        with contextlib.suppress(aiohttp.ClientConnectionError):
                            async with http.post(url, data=body, headers=signed(body)) as r:
                                assert r.status == 200
                                break
                        await asyncio.sleep(0.1)
                forged = {**signed(body), "X-Slack-Signature": "v0=" + "0" * 64}
                async with http.post(url, data=body, headers=forged) as r:
                    assert r.status == 401
            await slack.wait_for(lambda s: "draft" in keys(s), timeout=30)
            assert keys(slack)[:3] == ["root", "E1", "E2"] and keys(slack).count("E1") == 1
        finally:
            proc.send_signal(signal.SIGTERM)
            _, err = await asyncio.wait_for(proc.communicate(), 20)
        assert proc.returncode == 0, err.decode()[-2000:]


async def test_serve_in_socket_mode_takes_a_command_over_the_websocket(built_scenarios, tmp_path):
    async with FakeSlack(token=["xoxb-test", "xapp-test"], start_ts=f"{time.time():.6f}") as slack:
        env = dict(os.environ)
        env.update(
            SLACK_BOT_TOKEN="xoxb-test",
            SLACK_APP_TOKEN="xapp-test",
            SLACK_API_URL=slack.api_url,
            DATABASE_URL=f"sqlite+aiosqlite:///{tmp_path / 'b.db'}",
        )
        env.pop("SLACK_SIGNING_SECRET", None)
        proc = await asyncio.create_subprocess_exec(
            str(Path(sys.executable).with_name("incident-bot")),
            "serve",
            "--scenario",
            str(built_scenarios["orders"]),
            "--offline",
            env=env,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.PIPE,
        )
        try:
            await slack.wait_for(lambda s: bool(s.sockets), timeout=30)
            envelope = await slack.send_envelope(
                "slash_commands",
                {
                    "command": "/investigate",
                    "text": "errores al guardar pedidos",
                    "user_id": "U1",
                    "channel_id": "C1",
                    "team_id": "T0FAKE",
                    "trigger_id": "t",
                    "response_url": slack.api_url,
                },
            )
            await slack.wait_for(
                lambda s: any(f.get("envelope_id") == envelope for f in s.socket_frames), 10
            )
            await slack.wait_for(lambda s: "draft" in keys(s), timeout=30)
            assert keys(slack)[:2] == ["root", "E1"] and keys(slack).count("E1") == 1
        finally:
            proc.send_signal(signal.SIGTERM)
            _, err = await asyncio.wait_for(proc.communicate(), 20)
        assert proc.returncode == 0, err.decode()[-2000:]


def test_a_sentry_write_token_adds_the_sentry_note_step(monkeypatch):
    for name in ("SENTRY_WRITE_TOKEN", "SENTRY_API_URL"):
        monkeypatch.delenv(name, raising=False)
    assert backlinks(Settings()) == []
    monkeypatch.setenv("SENTRY_WRITE_TOKEN", "")
    assert backlinks(Settings()) == []
    monkeypatch.setenv("SENTRY_WRITE_TOKEN", "sntrys-write")
    (note,) = backlinks(Settings())
    assert isinstance(note, SentryNote) and note.base_url == "https://sentry.io"
    monkeypatch.setenv("SENTRY_API_URL", "https://sentry.example.com/")
    (note,) = backlinks(Settings())
    assert isinstance(note, SentryNote) and note.base_url == "https://sentry.example.com"
    assert "sntrys-write" not in repr(Settings())
