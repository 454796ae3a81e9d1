"""Investigations per minute with 1, 2 and 4 `incident-bot worker` processes, on PostgreSQL
and on SQLite, and what the claims and the wake-ups cost.

Every worker process runs the model path (the real groq SDK, no pre-fetch) against
tests/fakes/chat.py answering after 300 ms per call, so the work is I/O bound as with a real
model: each investigation is three knowledge searches and a finish (tests/fakes/policy.py,
Searcher), four model calls. The processes post the thread's cards to tests/fakes/slack.py;
this script is the front: it stores and queues the investigations in the database.

Per database and process count, two phases on the same running processes:
- throughput: `--jobs` investigations per process queued at once; investigations per
  minute from the first enqueue to the last completion;
- latency: `--paced` investigations queued one at a time, each once the one before ended, so
  the workers are idle when it arrives: enqueue → claim (jobs.created_at → jobs.claimed_at)
  says how fast the wake-up is (LISTEN/NOTIFY on PostgreSQL; SQLite polls across processes).
Evidence → card is each evidence's retrieved_at → the moment the fake Slack received its
card, over both phases. Double claims come from the workers' log of claims ("runs the … job
… (attempt n)" and "completed the job …"): a job claimed while another claim of it was not
completed. Lost: queued and not completed when the run ends.

    .venv/bin/python benchmarks/scale.py [--processes 1 2 4] [--jobs 8] [--paced 6]
        [--databases postgresql sqlite]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import signal
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sqlalchemy import select  # noqa: E402

from agent.domain import Investigation, Origin, State  # noqa: E402
from bot.cli import DEMO_RECIPE  # noqa: E402
from bot.usecases.intake import open_once  # noqa: E402
from recorded.build import build_scenario  # noqa: E402
from recorded.scenario import load_scenario  # noqa: E402
from storage import SqlJobQueue, SqlStore, create_engine, create_schema  # noqa: E402
from storage.tables import evidence, jobs  # noqa: E402
from tests.claims import double_claims  # noqa: E402
from tests.conftest import orders_finish  # noqa: E402
from tests.fakes.chat import FakeChat  # noqa: E402
from tests.fakes.policy import Searcher  # noqa: E402
from tests.fakes.slack import FakeSlack  # noqa: E402
from tests.postgres import PostgresServer, server_binaries  # noqa: E402

BIN = Path(sys.executable).with_name("incident-bot")
KEY = "gsk-scale"
TOKEN = "xoxb-scale"
CHANNEL = "C0SCALE"
MODEL_SECONDS = 0.3


class TimedSlack(FakeSlack):
    """The fake Slack, noting when each of our cards arrived: (investigation, key) → time."""

    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)
        self.arrived: dict[tuple[str, str], float] = {}

    def _chat_post_message(self, params: dict[str, Any], human: str | None = None) -> Any:
        answer = super()._chat_post_message(params, human)
        meta = (answer["message"].get("metadata") or {}).get("event_payload") or {}
        if meta.get("key"):
            self.arrived.setdefault((meta["investigation_id"], meta["key"]), time.time())
        return answer


def environment(slack: FakeSlack, chat: FakeChat, db: str) -> dict[str, str]:
    drop = ("GITHUB_", "GROQ_", "SLACK_", "SENTRY_", "DATABASE_URL", "INCIDENT_BOT_")
    env = {k: v for k, v in os.environ.items() if not k.startswith(drop)}
    env.update(
        SLACK_BOT_TOKEN=TOKEN,
        SLACK_API_URL=slack.api_url,
        GROQ_API_KEY=KEY,
        GROQ_BASE_URL=chat.base_url,
        INCIDENT_BOT_PREFETCH="0",
        DATABASE_URL=db,
        LOG_LEVEL="INFO",
    )
    return env


@contextlib.asynccontextmanager
async def workers(
    count: int, folder: Path, env: dict[str, str], logs: list[str]
) -> AsyncIterator[None]:
    """`count` worker processes of one worker each, ready; their log lines go to `logs`."""
    procs = []
    readers = []

    async def read(proc: asyncio.subprocess.Process, ready: asyncio.Event) -> None:
        assert proc.stderr is not None
        async for raw in proc.stderr:
            line = raw.decode(errors="replace")
            logs.append(line)
            if "thread sync running" in line:
                ready.set()

    try:
        for _ in range(count):
            proc = await asyncio.create_subprocess_exec(
                str(BIN),
                "worker",
                "--scenario",
                str(folder),
                "--log-format",
                "json",
                env=env,
                stdout=asyncio.subprocess.DEVNULL,
                stderr=asyncio.subprocess.PIPE,
            )
            ready = asyncio.Event()
            procs.append((proc, ready))
            readers.append(asyncio.create_task(read(proc, ready)))
        async with asyncio.timeout(60):
            for proc, ready in procs:
                waiting = asyncio.create_task(ready.wait())
                await asyncio.wait(
                    {waiting, asyncio.create_task(proc.wait())}, return_when="FIRST_COMPLETED"
                )
                if proc.returncode is not None:
                    raise RuntimeError(
                        f"a worker exited with {proc.returncode}: {''.join(logs)[-3000:]}"
                    )
        yield
    finally:
        for proc, _ in procs:
            if proc.returncode is None:
                proc.send_signal(signal.SIGTERM)
        for proc, _ in procs:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(proc.wait(), 20)
            if proc.returncode is None:
                proc.kill()
        await asyncio.gather(*readers, return_exceptions=True)


def quantiles(values: list[float]) -> tuple[float, float]:
    if len(values) < 2:
        return (values[0], values[0]) if values else (float("nan"), float("nan"))
    deciles = statistics.quantiles(values, n=10)
    return statistics.median(values), deciles[8]


async def settle(store: SqlStore, ids: list[str], timeout: float) -> float:  # noqa: ASYNC109
    """Until every run ended (or the timeout): the moment the last one was seen ending."""
    deadline = time.monotonic() + timeout
    pending = set(ids)
    while pending and time.monotonic() < deadline:
        for inv_id in list(pending):
            state, _ = await store.state_of(inv_id)
            if state in (State.COMPLETED, State.STOPPED):
                pending.discard(inv_id)
        if pending:
            await asyncio.sleep(0.05)
    return time.time()


async def one_config(db: str, count: int, folder: Path, args: argparse.Namespace) -> dict[str, Any]:
    scope = load_scenario(folder).scope
    engine = create_engine(db)
    await create_schema(engine)
    store, queue = SqlStore(engine), SqlJobQueue(engine)
    logs: list[str] = []

    async def enqueue() -> str:
        inv = Investigation.open("errores al guardar pedidos", scope, requester="U0SCALE")
        inv.origin = Origin(surface="slack", channel=CHANNEL, user="U0SCALE")
        await open_once(store, queue, None, inv)
        return inv.id

    try:
        async with (
            TimedSlack(token=TOKEN, start_ts=f"{time.time():.6f}") as slack,
            FakeChat(
                api_key=KEY, policy=Searcher(orders_finish(folder)), delay=MODEL_SECONDS
            ) as chat,
        ):
            async with workers(count, folder, environment(slack, chat, db), logs):
                t0 = time.time()
                batch = [await enqueue() for _ in range(args.jobs * count)]
                t1 = await settle(store, batch, args.timeout)
                paced = []
                for _ in range(args.paced):  # each once the others ended: workers are idle
                    paced.append(await enqueue())
                    await settle(store, paced[-1:], args.timeout)
                await asyncio.sleep(0.5)  # the last cards of the last runs
            model_problems = list(chat.problems)
        ids = batch + paced
        states = [(await store.state_of(i))[0] for i in ids]
        async with engine.connect() as conn:
            waits = {
                r.investigation_id: (r.claimed_at - r.created_at).total_seconds()
                for r in await conn.execute(select(jobs).where(jobs.c.kind == "investigate"))
                if r.claimed_at is not None
            }
            found = await conn.execute(
                select(evidence.c.investigation_id, evidence.c.evidence_id, evidence.c.retrieved_at)
            )
            cards = [
                slack.arrived[(r.investigation_id, r.evidence_id)] - r.retrieved_at.timestamp()
                for r in found
                if (r.investigation_id, r.evidence_id) in slack.arrived
            ]
    finally:
        await engine.dispose()
    completed = sum(1 for s in states if s is State.COMPLETED)
    return {
        "per_minute": len(batch) / (t1 - t0) * 60,
        "completed": completed,
        "runs": len(ids),
        "lost": len(ids) - completed,
        "doubles": double_claims(logs),
        "claim": quantiles([waits[i] for i in paced if i in waits]),
        "card": quantiles(cards),
        "problems": model_problems,
    }


def ms(pair: tuple[float, float]) -> str:
    return f"{pair[0] * 1000:6.0f} {pair[1] * 1000:6.0f}"


async def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--processes", type=int, nargs="+", default=[1, 2, 4])
    p.add_argument("--databases", nargs="+", default=["postgresql", "sqlite"])
    p.add_argument("--jobs", type=int, default=8, help="investigations per process, at once")
    p.add_argument("--paced", type=int, default=5, help="investigations one at a time")
    p.add_argument("--timeout", type=float, default=120, help="seconds a phase may take")
    args = p.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        folder = await asyncio.to_thread(build_scenario, DEMO_RECIPE, Path(tmp) / "orders")
        server = None
        if "postgresql" in args.databases:
            bindir = server_binaries()
            if bindir is None:
                sys.exit("no PostgreSQL server binaries here (Debian's postgresql package)")
            server = PostgresServer(bindir)
            await asyncio.to_thread(server.start)
        try:
            print(
                f"cores: {os.cpu_count()}; model: {MODEL_SECONDS * 1000:.0f} ms a call, "
                f"4 calls an investigation; {args.jobs} at once per process, then {args.paced} "
                "one at a time"
            )
            print(
                f"{'database':<11}{'procs':>5}{'inv/min':>9}{'speedup':>8}{'done':>7}"
                f"{'lost':>5}{'double':>7}  claim p50  p90  card p50  p90 (ms)"
            )
            for kind in args.databases:
                base = None
                for count in args.processes:
                    if kind == "postgresql":
                        assert server is not None
                        db = await asyncio.to_thread(server.create_database)
                    else:
                        db = f"sqlite+aiosqlite:///{Path(tmp) / f'scale-{count}.db'}"
                    r = await one_config(db, count, folder, args)
                    base = base or r["per_minute"]
                    print(
                        f"{kind:<11}{count:>5}{r['per_minute']:>9.1f}"
                        f"{r['per_minute'] / base:>7.2f}x{r['completed']:>4}/{r['runs']:<3}"
                        f"{r['lost']:>4}{r['doubles']:>7}  {ms(r['claim'])}    {ms(r['card'])}",
                        flush=True,
                    )
                    if r["problems"]:
                        print(f"  model problems: {r['problems'][:3]}")
        finally:
            if server is not None:
                await asyncio.to_thread(server.stop)


if __name__ == "__main__":
    asyncio.run(main())
