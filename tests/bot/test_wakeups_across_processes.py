"""A `worker` process on PostgreSQL is woken by a job another process queues (LISTEN/NOTIFY),
not by its polling: here the poll is 10 minutes, longer than the test may take."""

import asyncio
import os
import sys
import time
from pathlib import Path

from agent.domain import Investigation, State
from bot.usecases.intake import open_once
from recorded.scenario import load_scenario
from storage import SqlJobQueue, SqlStore, create_engine, create_schema
from tests.fakes.slack import FakeSlack

BIN = Path(sys.executable).with_name("incident-bot")


async def settled(store: SqlStore, inv_id: str) -> State:
    async with asyncio.timeout(30):
        while True:
            state, _ = await store.state_of(inv_id)
            if state in (State.COMPLETED, State.STOPPED):
                return state
            await asyncio.sleep(0.05)


async def test_a_job_queued_elsewhere_wakes_an_idle_worker_process(built_scenarios, pg_url):
    folder = built_scenarios["orders"]
    scope = load_scenario(folder).scope
    engine = create_engine(pg_url)
    await create_schema(engine)
    store, jobs = SqlStore(engine), SqlJobQueue(engine)
    async with FakeSlack(start_ts=f"{time.time():.6f}") as slack:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("GROQ_", "GITHUB_"))}
        env.update(
            DATABASE_URL=pg_url,
            SLACK_BOT_TOKEN="xoxb-test",
            SLACK_API_URL=slack.api_url,
            INCIDENT_BOT_POLL_SECONDS="600",
        )
        proc = await asyncio.create_subprocess_exec(
            str(BIN),
            "worker",
            "--scenario",
            str(folder),
            "--offline",
            env=env,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.PIPE,
        )
        try:
            # The first run may be found by the worker's first look at the queue; the
            # second is queued once the worker is idle, waiting its 10 minutes.
            for _ in range(2):
                inv, _ = await open_once(
                    store, jobs, None, Investigation.open("errores al guardar pedidos", scope)
                )
                assert await settled(store, inv.id) is State.COMPLETED
        finally:
            if proc.returncode is None:
                proc.terminate()
            _, err = await asyncio.wait_for(proc.communicate(), 20)
            await engine.dispose()
        assert proc.returncode == 0, err.decode()[-2000:]
