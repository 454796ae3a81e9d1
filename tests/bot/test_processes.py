"""Several processes on one PostgreSQL: two `serve --no-workers` web fronts take signed
/investigate commands spread over both, three `worker` processes run them, and one worker is
killed with SIGKILL in the middle of a run. Every investigation completes, every card is in
Slack exactly once, and no job was held by two workers at the same time (from the workers'
log of claims, tests/claims.py)."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import time
from collections import Counter, defaultdict
from collections.abc import AsyncIterator, Awaitable, Callable

import aiohttp
from sqlalchemy import select

from agent.domain import State
from storage import SqlStore, create_engine, create_schema
from storage.tables import jobs
from tests.bot.test_durability import BIN, CHANNEL, command, environment, free_port, post
from tests.claims import double_claims, spans
from tests.conftest import orders_finish
from tests.fakes.chat import FakeChat
from tests.fakes.policy import Searcher
from tests.fakes.slack import FakeSlack

KEY = "gsk-processes"
COMMANDS = 15
# Seconds: the killed worker's job is taken over this soon. A live worker renews every third
# of it; on a loaded machine a 1 s lease let a starved worker lose its job while running it.
LEASE = "3"


class Process:
    """incident-bot as a child process whose stderr lines are kept as they come."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self.lines: list[str] = []
        self.reader = asyncio.create_task(self._read())

    async def _read(self) -> None:
        assert self.proc.stderr is not None
        async for raw in self.proc.stderr:
            self.lines.append(raw.decode(errors="replace"))

    def said(self, words: str) -> bool:
        return any(words in line for line in self.lines)


@contextlib.asynccontextmanager
async def started(env: dict[str, str], *args: str) -> AsyncIterator[Process]:
    proc = await asyncio.create_subprocess_exec(
        str(BIN),
        *args,
        "--log-format",
        "json",
        env=env,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    child = Process(proc)
    try:
        yield child
    finally:
        if proc.returncode is None:
            proc.send_signal(signal.SIGTERM)
        await asyncio.wait_for(proc.wait(), 20)
        await child.reader
        if proc.returncode != -signal.SIGKILL:
            assert proc.returncode == 0, "".join(child.lines)[-3000:]


def cards(slack: FakeSlack) -> dict[str, list[str]]:
    """Our items in the channel, per investigation, in the order they landed."""
    out: dict[str, list[str]] = defaultdict(list)
    for message in slack.messages(CHANNEL):
        meta = message.get("metadata") or {}
        if meta.get("event_type") == "incident_bot":
            payload = meta["event_payload"]
            out[payload["investigation_id"]].append(payload["key"])
    return out


async def until(check: Callable[[], Awaitable[bool]], timeout: float) -> None:  # noqa: ASYNC109
    async with asyncio.timeout(timeout):
        while True:
            if await check():
                return
            await asyncio.sleep(0.05)


async def test_two_fronts_and_three_workers_with_one_killed_complete_every_run_once(
    built_scenarios, pg_url
):
    folder = built_scenarios["orders"]
    engine = create_engine(pg_url)
    await create_schema(engine)
    store = SqlStore(engine)
    policy = Searcher(orders_finish(folder))
    async with (
        FakeSlack(start_ts=f"{time.time():.6f}") as slack,
        # 300 ms a model call: every run lasts over a second, so the kill lands mid-run.
        FakeChat(api_key=KEY, policy=policy, delay=0.3) as chat,
        aiohttp.ClientSession() as http,
        contextlib.AsyncExitStack() as stack,
    ):
        env = environment(slack, pg_url, GROQ_API_KEY=KEY, GROQ_BASE_URL=chat.base_url)
        env.update(INCIDENT_BOT_PREFETCH="0", INCIDENT_BOT_LEASE_SECONDS=LEASE, LOG_LEVEL="INFO")
        ports = [free_port(), free_port()]
        for port in ports:
            front = ("serve", "--no-workers", "--scenario", str(folder), "--http")
            await stack.enter_async_context(started(env, *front, "--port", str(port)))
        workers = [
            await stack.enter_async_context(started(env, "worker", "--scenario", str(folder)))
            for _ in range(3)
        ]
        urls = [f"http://127.0.0.1:{port}/slack/events" for port in ports]
        statuses = await asyncio.gather(
            *(
                post(http, urls[n % 2], command(f"trig.{n}", f"pedidos {n}"))
                for n in range(COMMANDS)
            )
        )
        assert statuses == [200] * COMMANDS

        victim = workers[0]

        async def victim_runs() -> bool:
            return victim.said(" runs the investigate job ")

        await until(victim_runs, 60)
        await asyncio.sleep(0.5)  # its run is under way: four model calls take 1.2 s
        victim.proc.kill()
        await victim.proc.wait()
        killed_at = time.time()
        await victim.reader

        async def all_done() -> bool:
            summaries = await store.recent(None, 100)
            if len(summaries) < COMMANDS:
                return False
            for s in summaries:
                if s.state is not State.COMPLETED:
                    return False
                if "draft" not in cards(slack).get(s.id, []):
                    return False
            return True

        await until(all_done, 60)
        await asyncio.sleep(0.5)  # a card posted twice would land now

    try:
        summaries = await store.recent(None, 100)
        assert len(summaries) == COMMANDS
        posted = cards(slack)
        for s in summaries:
            inv = await store.load(s.id)
            assert inv.state is State.COMPLETED, inv.stop_reason
            expected = ["root", *(ev.id for ev in inv.evidence), "diagnosis", "draft"]
            assert posted[s.id] == expected, Counter(posted[s.id])
        assert set(posted) == {s.id for s in summaries}
        async with engine.connect() as conn:
            rows = (await conn.execute(select(jobs))).all()
    finally:
        await engine.dispose()

    assert chat.problems == []
    assert [r.status for r in rows] == ["done"] * COMMANDS
    lines = [line for w in workers for line in w.lines]
    pid = victim.proc.pid
    held = spans(lines, {pid: killed_at})
    assert double_claims(lines, {pid: killed_at}) == 0
    # The kill landed mid-run: the victim's job was taken over and finished by another.
    taken = [r for r in rows if r.attempts > 1]
    assert taken, "no job was taken over from the killed worker"
    for r in taken:
        assert f":{pid}:" in held[str(r.id)][0][2]
        assert f":{pid}:" not in held[str(r.id)][-1][2]
    assert max(r.attempts for r in rows) == 2
