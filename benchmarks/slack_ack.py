"""/investigate acknowledgement latency, and the time from job claim to the first card.

1. 200 concurrent signed /investigate requests to the real app (store, queue, worker and
   thread sync all running), then the same to a bare Bolt app that only acks, to the same
   bare app in two processes sharing the port (SO_REUSEPORT), and to a plain aiohttp
   handler that answers 200 without Bolt (the floor of this machine): p50/p99 per round,
   and the median of the rounds. Each round waits for the last one's 200 investigations.
2. Claim → first evidence card in Slack with the offline investigator: p50/p90 over runs.
3. Cold start with an auth.test that takes 4 s: a fresh app's first ack, then a burst at
   once, and the auth.test calls they made; a fresh bare Bolt app beside it.

Slack's Web API is the local fake (tests/fakes/slack.py), on loopback.

    .venv/bin/python benchmarks/slack_ack.py [--concurrency 200] [--rounds 3] [--runs 20]
    .venv/bin/python benchmarks/slack_ack.py --cold-start-only   # part 3 alone
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import socket
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any
from urllib.parse import urlencode, urlsplit

import aiohttp
from aiohttp import web
from slack_bolt.async_app import AsyncApp
from slack_sdk.web.async_client import AsyncWebClient

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agent.domain import State  # noqa: E402
from bot.config import Project, Projects, Settings  # noqa: E402
from bot.runtime import Runtime  # noqa: E402
from bot.serve import assemble, slack_client  # noqa: E402
from recorded.build import build_scenario  # noqa: E402
from recorded.scenario import clone, load_scenario  # noqa: E402
from storage.db import create_engine, create_schema  # noqa: E402
from tests.fakes.slack import FakeSlack, signed_headers  # noqa: E402

SECRET = "bench-secret"
CHANNEL = "C0BENCH"


def signed(body: str) -> dict[str, str]:
    return signed_headers(body, SECRET)


def command(i: int) -> str:
    return urlencode(
        {
            "command": "/investigate",
            "text": f"errores al guardar pedidos #{i}",
            "user_id": f"U{i:05d}",
            "channel_id": CHANNEL,
            "team_id": "T0FAKE",
            "trigger_id": f"t.{i}",
            "response_url": "http://127.0.0.1:9/",
        }
    )


async def serve(app: web.Application) -> tuple[web.AppRunner, str]:
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    return runner, f"http://127.0.0.1:{runner.addresses[0][1]}/slack/events"


def bare_bolt(api_url: str) -> AsyncApp:
    """Configured as ours is (the response goes out when the ack function returns)."""
    bare = AsyncApp(
        client=AsyncWebClient(token="xoxb-test", base_url=api_url),
        signing_secret=SECRET,
        process_before_response=True,
    )

    @bare.command("/investigate")
    async def only_ack(ack) -> None:
        await ack()

    return bare


def shared_port(port: int = 0) -> socket.socket:
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen(1024)
    sock.setblocking(False)
    return sock


async def bare_process(port: int, api_url: str) -> None:
    """One of the processes of the two-process bare app; says "ready" when listening."""
    runner = web.AppRunner(bare_bolt(api_url).web_app(), access_log=None)
    await runner.setup()
    await web.SockSite(runner, shared_port(port)).start()
    print("ready", flush=True)
    await asyncio.Event().wait()


async def bare_processes(n: int, api_url: str) -> tuple[list[asyncio.subprocess.Process], str]:
    holder = shared_port()  # holds the port until the children listen on it
    port = holder.getsockname()[1]
    procs = []
    for _ in range(n):
        proc = await asyncio.create_subprocess_exec(
            sys.executable, __file__, "--bare", f"{port} {api_url}", stdout=asyncio.subprocess.PIPE
        )
        assert proc.stdout is not None
        await proc.stdout.readline()
        procs.append(proc)
    holder.close()
    return procs, f"http://127.0.0.1:{port}/slack/events"


async def client(url: str, n: int) -> list[float]:
    """n commands at once over n warm keep-alive connections; each one's latency in ms.

    Runs in its own process. Connections are opened and used once beforehand, so the
    figure is the server's time to answer, not TCP setup or the client's own work.
    """
    parts = urlsplit(url)
    host, port = parts.hostname or "127.0.0.1", parts.port or 80

    def request(body: str) -> bytes:
        head = [f"POST {parts.path} HTTP/1.1", f"Host: {host}:{port}"]
        head += [f"{k}: {v}" for k, v in signed(body).items()]
        head += [f"Content-Length: {len(body.encode())}", "", ""]
        return "\r\n".join(head).encode() + body.encode()

    async def answer(reader: asyncio.StreamReader) -> int:
        head = (await reader.readuntil(b"\r\n\r\n")).decode()
        length = next(
            (
                int(line.split(":")[1])
                for line in head.split("\r\n")
                if line.lower().startswith("content-length:")
            ),
            0,
        )
        await reader.readexactly(length)
        return int(head.split(" ", 2)[1])

    conns = [await asyncio.open_connection(host, port) for _ in range(n)]
    warm = json.dumps({"type": "url_verification", "challenge": "warm", "token": "t"})
    for reader, writer in conns:
        writer.write(request(warm).replace(b"x-www-form-urlencoded", b"json"))
        assert await answer(reader) == 200
    payloads = [request(command(i)) for i in range(n)]
    started = [0.0] * n

    async def one(i: int) -> float:
        reader, _writer = conns[i]
        assert await answer(reader) == 200
        return (time.perf_counter() - started[i]) * 1000

    for i, (_, writer) in enumerate(conns):
        started[i] = time.perf_counter()
        writer.write(payloads[i])
    latencies = await asyncio.gather(*(one(i) for i in range(n)))
    for _, writer in conns:
        writer.close()
    return latencies


async def burst(url: str, n: int) -> list[float]:
    """Fire n concurrent commands from a separate process, so the servers' loop is theirs."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        __file__,
        "--client",
        url,
        "--concurrency",
        str(n),
        stdout=asyncio.subprocess.PIPE,
    )
    out, _ = await proc.communicate()
    assert proc.returncode == 0
    return json.loads(out)


async def plain_ok(request: web.Request) -> web.Response:
    await request.read()
    return web.Response()


def card_of(call: Any) -> str | None:
    """The investigation an E1 card belongs to, or None for any other call."""
    meta = call.params.get("metadata") if call.method == "chat.postMessage" else None
    if isinstance(meta, str):
        meta = json.loads(meta)
    payload = (meta or {}).get("event_payload") or {}
    return payload.get("investigation_id") if payload.get("key") == "E1" else None


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


async def main(concurrency: int, rounds: int, runs: int) -> None:
    with tempfile.TemporaryDirectory(prefix="bench-ack-") as tmp_name:
        tmp = Path(tmp_name)
        folder = build_scenario(ROOT / "bot" / "demo" / "orders", tmp / "orders")
        scenario = load_scenario(folder)
        project = Project.for_scope(scenario.scope, channels=["*"])
        projects = Projects(projects={project.key: project})
        engine = create_engine(f"sqlite+aiosqlite:///{tmp / 'bench.db'}")
        await create_schema(engine)
        repo = await clone(scenario, tmp)
        runtime = Runtime.recorded(scenario, repo)
        await runtime.start()
        stop = asyncio.Event()
        async with FakeSlack(start_ts=f"{time.time():.6f}") as slack:
            client = slack_client(
                Settings(slack_bot_token="xoxb-test", slack_api_url=slack.api_url)
            )
            bot = assemble(client, engine, runtime, projects, SECRET)
            store, jobs = bot.store, bot.jobs
            claimed: dict[str, float] = {}
            claim = jobs.claim

            async def timed_claim(worker: str, lease: float):
                job = await claim(worker, lease)
                if job is not None:
                    claimed.setdefault(job.investigation_id, time.perf_counter())
                return job

            jobs.claim = timed_claim  # type: ignore[method-assign]
            bare = bare_bolt(slack.api_url)

            async def settle() -> None:
                """Until no investigation runs and the fake Slack has been quiet for 1 s."""
                while any(  # noqa: ASYNC110 - polling the database, not an in-process flag
                    x.state in (State.QUEUED, State.RUNNING)
                    for x in await store.recent(None, concurrency + 5)
                ):
                    await asyncio.sleep(0.2)
                posted = -1
                while posted != len(slack.calls):
                    posted = len(slack.calls)
                    await asyncio.sleep(1.0)
                # The fake's record of calls lives in this process: it is not the app's to
                # carry (nor to collect garbage through) in the next round.
                slack.calls.clear()

            tasks = bot.run(stop)
            runner, url = await serve(bot.web_app())
            bare_runner, bare_url = await serve(bare.web_app())
            floor_app = web.Application()
            floor_app.router.add_post("/slack/events", plain_ok)
            floor_runner, floor_url = await serve(floor_app)
            pair, pair_url = await bare_processes(2, slack.api_url)
            try:
                await burst(bare_url, 5)  # warm both up (auth.test, imports)
                await burst(pair_url, 20)
                await burst(url, 1)
                await settle()
                rows: dict[str, list[tuple[float, float]]] = {}
                print(f"/investigate ack latency, {concurrency} concurrent commands, p50/p99 ms")
                for i in range(rounds):
                    # The references first, while the process is idle: the app's burst
                    # leaves 200 investigations running in it.
                    got = {
                        "no Bolt (aiohttp answering 200, unsigned)": await burst(
                            floor_url, concurrency
                        ),
                        "bare Bolt": await burst(bare_url, concurrency),
                        "bare Bolt, 2 processes": await burst(pair_url, concurrency),
                        "incident-bot": await burst(url, concurrency),
                    }
                    line = []
                    for name, ms in got.items():
                        rows.setdefault(name, []).append((pct(ms, 50), pct(ms, 99)))
                        line.append(f"{name.split(' (')[0]} {pct(ms, 50):.0f}/{pct(ms, 99):.0f}")
                    print(f"  round {i + 1}: " + ", ".join(line))
                    await settle()  # the burst's investigations and their threads
                print("  median of rounds:")
                for name, values in rows.items():
                    p50 = statistics.median(v[0] for v in values)
                    p99 = statistics.median(v[1] for v in values)
                    print(f"    {name:44} p50 {p50:6.1f}   p99 {p99:6.1f}")
                ratios = [
                    app[1] / bare[1]
                    for app, bare in zip(rows["incident-bot"], rows["bare Bolt"], strict=True)
                ]
                print(
                    "  p99 incident-bot / bare Bolt: "
                    + ", ".join(f"{r:.2f}×" for r in ratios)
                    + f" (median {statistics.median(ratios):.2f}×; goal ≤ 1.2×, p99 ≤ 50 ms)"
                )
                delays = []
                http = aiohttp.ClientSession()
                for i in range(runs):
                    before = len(slack.calls)
                    body = command(10_000 + i)
                    async with http.post(url, data=body.encode(), headers=signed(body)) as r:
                        assert r.status == 200

                    def first_card(sl: FakeSlack, since: int = before) -> bool:
                        return any(card_of(c) for c in sl.calls[since:])

                    await slack.wait_for(first_card, timeout=20)
                    # The ack comes before the investigation is stored: the card names it.
                    card = next(c for c in slack.calls[before:] if card_of(c))
                    posted_at = time.perf_counter()
                    delays.append((posted_at - claimed[card_of(card)]) * 1000)

                    def thread_done(sl: FakeSlack, since: int = before) -> bool:
                        return any(
                            '"key": "draft"' in str(c.params.get("metadata")).replace("'", '"')
                            for c in sl.calls[since:]
                        )

                    await slack.wait_for(thread_done, timeout=20)
                await http.close()
                print(f"\njob claim → first evidence card in Slack, {runs} runs")
                print(
                    f"  p50 {pct(delays, 50):6.1f} ms   p90 {pct(delays, 90):6.1f} ms"
                    "   (goal ≤ 300 ms)"
                )
                await cold_start(projects, tmp, concurrency)
            finally:
                for proc in pair:
                    proc.kill()
                    await proc.wait()
                stop.set()
                await asyncio.gather(*tasks, return_exceptions=True)
                await runner.cleanup()
                await bare_runner.cleanup()
                await floor_runner.cleanup()
                await runtime.aclose()
                await engine.dispose()


SLOW_AUTH_TEST = 4.0


@contextlib.asynccontextmanager
async def cold_app(
    kind: str, tmp: Path, projects: Projects
) -> AsyncIterator[tuple[str, FakeSlack]]:
    """A fresh app, never started before, and its fake Slack whose auth.test answers
    SLOW_AUTH_TEST late: ours as `serve --no-workers` runs it (the same ack path as with
    workers), or bare Bolt."""
    async with FakeSlack(start_ts=f"{time.time():.6f}") as slack:
        slack.slow_next("auth.test", SLOW_AUTH_TEST, count=10_000)
        if kind == "bare Bolt":
            runner, url = await serve(bare_bolt(slack.api_url).web_app())
            try:
                yield url, slack
            finally:
                await runner.cleanup()
            return
        engine = create_engine(f"sqlite+aiosqlite:///{tmp / f'cold-{time.time_ns()}.db'}")
        await create_schema(engine)
        stop = asyncio.Event()
        client = slack_client(Settings(slack_bot_token="xoxb-test", slack_api_url=slack.api_url))
        bot = assemble(client, engine, None, projects, SECRET, workers=0)
        tasks = bot.run(stop)
        runner, url = await serve(bot.web_app())
        try:
            yield url, slack
        finally:
            stop.set()
            await runner.cleanup()
            await bot.acks.finish()
            await asyncio.gather(*tasks, return_exceptions=True)
            await engine.dispose()


async def cold_start(projects: Projects, tmp: Path, concurrency: int) -> None:
    """The first command's ack on a fresh app, and a burst at cold start on another: its
    latencies and the auth.test calls it made."""
    print(f"\ncold start, auth.test answering {SLOW_AUTH_TEST:.0f} s late")
    for kind in ("incident-bot", "bare Bolt"):
        async with cold_app(kind, tmp, projects) as (url, _):
            (first,) = await burst(url, 1)
        async with cold_app(kind, tmp, projects) as (url, slack):
            rest = await burst(url, concurrency)
            calls = len(slack.calls_to("auth.test"))
        goal = " (goal < 3000 ms)" if kind == "incident-bot" else ""
        print(
            f"  {kind:13} first ack {first:7.1f} ms{goal}; {concurrency} at once:"
            f" p50 {pct(rest, 50):.0f} / p99 {pct(rest, 99):.0f} ms, auth.test calls {calls}"
        )


async def cold_start_only(concurrency: int) -> None:
    with tempfile.TemporaryDirectory(prefix="bench-cold-") as tmp_name:
        tmp = Path(tmp_name)
        folder = build_scenario(ROOT / "bot" / "demo" / "orders", tmp / "orders")
        project = Project.for_scope(load_scenario(folder).scope, channels=["*"])
        await cold_start(Projects(projects={project.key: project}), tmp, concurrency)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--concurrency", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--cold-start-only", action="store_true")
    parser.add_argument("--client", help=argparse.SUPPRESS)
    parser.add_argument("--bare", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.client:
        print(json.dumps(asyncio.run(client(args.client, args.concurrency))))
    elif args.bare:
        port, api_url = args.bare.split()
        asyncio.run(bare_process(int(port), api_url))
    elif args.cold_start_only:
        asyncio.run(cold_start_only(args.concurrency))
    else:
        asyncio.run(main(args.concurrency, args.rounds, args.runs))
