"""Sentry webhook answer time under a burst, and the time from a delivery to the first card.

1. `--burst` concurrent signed deliveries (issue alerts for `--issues` Sentry issues) to
   POST /hooks/sentry on the real app (store, gates, worker and thread sync running):
   p50/p99/max answer time (the delivery is stored, then answered), how long until the
   last one was taken in through the gates, how many investigations were stored, and what
   the deliveries came to.
2. One delivery at a time → the first evidence card posted in the alert channel (the
   Slack fake on loopback), with the offline investigator: p50/p90 over `--runs`.

    .venv/bin/python benchmarks/alerts.py [--burst 200] [--issues 10] [--runs 10]
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import hmac
import json
import statistics
import sys
import tempfile
import time
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

import aiohttp
from aiohttp import web

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bot.config import Project, Projects, Settings  # noqa: E402
from bot.http.mount import attach  # noqa: E402
from bot.runtime import Runtime  # noqa: E402
from bot.serve import assemble, slack_client  # noqa: E402
from recorded.build import build_scenario  # noqa: E402
from recorded.scenario import clone, load_scenario  # noqa: E402
from storage.db import create_engine, create_schema  # noqa: E402
from tests.fakes.slack import FakeSlack  # noqa: E402

SECRET = "bench-sentry-secret"
ALERTS = "C0ALERTS"
PROJECT_ID = "4644290483746556"


def signed_delivery(issue_id: str) -> tuple[bytes, dict[str, str]]:
    event_id = uuid.uuid4().hex
    payload = {
        "action": "triggered",
        "data": {
            "event": {
                "event_id": event_id,
                "issue_id": issue_id,
                "project": int(PROJECT_ID),
                "level": "error",
                "title": 'NullPointerException: Cannot invoke "String.strip()"',
                "culprit": "POST /orders",
            },
            "triggered_rule": "bench",
        },
    }
    body = json.dumps(payload).encode()
    return body, {
        "Content-Type": "application/json",
        "Request-ID": str(uuid.uuid4()),
        "Sentry-Hook-Resource": "event_alert",
        "Sentry-Hook-Timestamp": str(int(time.time())),
        "Sentry-Hook-Signature": hmac.new(SECRET.encode(), body, hashlib.sha256).hexdigest(),
    }


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def main(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        folder = build_scenario(ROOT / "bot" / "demo" / "orders", tmp / "orders")
        scenario = load_scenario(folder)
        project = Project.for_scope(
            scenario.scope,
            channels=["C0ORDERS"],
            alert_channel=ALERTS,
            sentry_project_id=PROJECT_ID,
            max_concurrent=args.cap,
        )
        projects = Projects(projects={project.key: project})
        engine = create_engine(f"sqlite+aiosqlite:///{tmp / 'bench.db'}")
        await create_schema(engine)
        runtime = Runtime.recorded(scenario, await clone(scenario, tmp))
        await runtime.start()
        stop = asyncio.Event()
        async with (
            FakeSlack(start_ts=f"{time.time():.6f}") as slack,
            aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as http,
        ):
            client = slack_client(
                Settings(slack_bot_token="xoxb-test", slack_api_url=slack.api_url)
            )
            bot = assemble(client, engine, runtime, projects, "secret")
            web_app = bot.web_app(path="/slack/events")
            attach(web_app, bot.cases, bot.store, {"SENTRY_CLIENT_SECRET": SECRET}, None, bot.inbox)
            runner = web.AppRunner(web_app, access_log=None)
            await runner.setup()
            site = web.TCPSite(runner, "127.0.0.1", 0)
            await site.start()
            url = f"http://127.0.0.1:{runner.addresses[0][1]}/hooks/sentry"
            tasks = bot.run(stop)
            try:
                await burst(http, url, bot, args)
                await first_card(http, url, bot, slack, args)
            finally:
                stop.set()
                await asyncio.gather(*tasks, return_exceptions=True)
                await runner.cleanup()
                await runtime.aclose()
                await engine.dispose()


async def post(http: aiohttp.ClientSession, url: str, issue: str) -> tuple[float, str]:
    """(answer time, the delivery's Request-ID)"""
    body, headers = signed_delivery(issue)
    started = time.perf_counter()
    async with http.post(url, data=body, headers=headers) as response:
        answer = await response.json()
        assert response.status == 202 and answer["status"] == "accepted", answer
    return time.perf_counter() - started, headers["Request-ID"]


async def outcomes(bot: Any, request_ids: list[str]) -> list[dict[str, Any]]:
    """What each delivery came to, once the inbox has taken them all in."""
    for _ in range(1200):
        found = [await bot.inbox.deliveries.outcome(r) for r in request_ids]
        if all(found):
            return found
        await asyncio.sleep(0.05)
    raise TimeoutError("deliveries still pending after 60 s")


async def send_burst(url: str, count: int, issues: int) -> None:
    """The sender, in a process of its own (as Sentry is): one JSON line of
    [answer seconds, Request-ID] pairs on stdout."""
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as http:
        sent = [str(9_000_000 + n % issues) for n in range(count)]
        results = await asyncio.gather(*(post(http, url, issue) for issue in sent))
    print(json.dumps(results))


async def burst(http: aiohttp.ClientSession, url: str, bot: Any, args: argparse.Namespace) -> None:
    started = time.perf_counter()
    sender = await asyncio.create_subprocess_exec(
        sys.executable,
        __file__,
        "--send",
        url,
        "--burst",
        str(args.burst),
        "--issues",
        str(args.issues),
        stdout=asyncio.subprocess.PIPE,
    )
    out, _ = await sender.communicate()
    assert sender.returncode == 0, "the sender failed"
    results = json.loads(out)
    wall = time.perf_counter() - started
    times = [t * 1000 for t, _ in results]
    came_to = await outcomes(bot, [r for _, r in results])
    gated = time.perf_counter() - started
    stored = await bot.store.recent(None, args.burst + 10)
    print(
        f"webhook burst: {args.burst} deliveries for {args.issues} issues (sent by another "
        f"process) answered in "
        f"{wall:.2f} s; answer p50 {statistics.median(times):.1f} ms, "
        f"p99 {pct(times, 0.99):.1f} ms, max {max(times):.1f} ms"
    )
    print(f"  all taken in through the gates {gated:.2f} s after the first was sent")
    print(f"  outcomes: {dict(Counter(str(o['status']) for o in came_to))}")
    print(f"  investigations stored: {len(stored)} (cap {args.cap} at work per project)")


async def idle(bot: Any) -> None:
    """Until no run is at work (polled: the runs are in this process's workers)."""
    for _ in range(1200):
        if await bot.store.active_count() == 0:
            return
        await asyncio.sleep(0.05)
    raise TimeoutError("runs still at work after 60 s")


async def first_card(
    http: aiohttp.ClientSession, url: str, bot: Any, slack: FakeSlack, args: argparse.Namespace
) -> None:
    # Let the burst's runs finish so each run below starts at once.
    await idle(bot)
    delays = []
    for n in range(args.runs):
        before = len(slack.messages(ALERTS))
        started = time.perf_counter()
        await post(http, url, str(8_000_000 + n))

        def card(s: FakeSlack, seen: int = before) -> bool:
            return any(
                (m.get("metadata") or {}).get("event_payload", {}).get("key") == "E1"
                for m in s.messages(ALERTS)[seen:]
            )

        await slack.wait_for(card, timeout=30)
        delays.append((time.perf_counter() - started) * 1000)
        await idle(bot)
    print(
        f"delivery → first evidence card in the alert channel over {args.runs} runs: "
        f"p50 {statistics.median(delays):.0f} ms, p90 {pct(delays, 0.9):.0f} ms"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--burst", type=int, default=200)
    parser.add_argument("--issues", type=int, default=10)
    parser.add_argument("--cap", type=int, default=3)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--send", metavar="URL", help=argparse.SUPPRESS)  # the sender process
    parsed = parser.parse_args()
    if parsed.send:
        asyncio.run(send_burst(parsed.send, parsed.burst, parsed.issues))
    else:
        asyncio.run(main(parsed))
