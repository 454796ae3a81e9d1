"""`incident-bot serve`: the Slack app, its workers and the thread sync in one process."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import tempfile
from dataclasses import dataclass
from pathlib import Path

from aiohttp import web
from slack_bolt.async_app import AsyncApp
from slack_sdk.http_retry.builtin_async_handlers import (
    AsyncRateLimitErrorRetryHandler,
    AsyncServerErrorRetryHandler,
)
from slack_sdk.web.async_client import AsyncWebClient
from sqlalchemy.ext.asyncio import AsyncEngine

from agent.domain import Scope
from agent.errors import InputError
from agent.publish.github import GitHubIssues
from bot.config import Project, Projects, Settings
from bot.recorded import clone, load_scenario
from bot.runtime import ScenarioRuntime
from bot.slack.app import Deps, build_app
from bot.slack.sync import SlackSync
from bot.worker import Publisher, Worker
from storage.db import create_engine, create_schema, default_url
from storage.jobs import SqlJobQueue
from storage.store import SqlStore
from storage.surface import SqlSurfaceMessages

log = logging.getLogger(__name__)


@dataclass
class Options:
    scenario: Path | None
    offline: bool
    http: bool
    port: int
    host: str = "127.0.0.1"
    workers: int = 1


def slack_client(settings: Settings) -> AsyncWebClient:
    if settings.slack_bot_token is None:
        raise InputError("SLACK_BOT_TOKEN is not set")
    # No retry on connection errors: a lost answer to chat.postMessage must be looked for
    # in the thread, never posted blindly again (the sync does that).
    return AsyncWebClient(
        token=settings.slack_bot_token.get_secret_value(),
        base_url=settings.slack_api_url,
        retry_handlers=[
            AsyncRateLimitErrorRetryHandler(max_retry_count=5),
            AsyncServerErrorRetryHandler(max_retry_count=3),
        ],
    )


@dataclass
class Bot:
    """One process's Slack app, workers and thread sync, wired to one database."""

    app: AsyncApp
    store: SqlStore
    jobs: SqlJobQueue
    shown: SqlSurfaceMessages
    sync: SlackSync
    workers: list[Worker]

    def run(self, stop: asyncio.Event) -> list[asyncio.Task[None]]:
        tasks = [asyncio.create_task(w.run_forever(stop)) for w in self.workers]
        tasks.append(asyncio.create_task(self.sync.run(stop)))
        return tasks


def assemble(
    client: AsyncWebClient,
    engine: AsyncEngine,
    runtime: ScenarioRuntime,
    projects: Projects,
    signing_secret: str,
    *,
    publisher: Publisher | None = None,
    workers: int = 1,
) -> Bot:
    store, jobs, shown = SqlStore(engine), SqlJobQueue(engine), SqlSurfaceMessages(engine)
    sync = SlackSync(client, store, shown)
    pool = [
        Worker(store, jobs, runtime.loop_for, publisher=publisher, changed=sync.kick)
        for _ in range(workers)
    ]

    def wake() -> None:
        for w in pool:
            w.wake.set()

    deps = Deps(
        store=store, jobs=jobs, shown=shown, sync=sync, projects=projects, wake_workers=wake
    )
    return Bot(build_app(client, signing_secret, deps), store, jobs, shown, sync, pool)


def served_projects(scope: Scope, config: Path | None) -> Projects:
    """The recorded incident as the one project: any channel, anyone approves, unless the
    projects file (INCIDENT_BOT_CONFIG) says otherwise for it."""
    if config is None:
        project = Project.for_scope(scope, channels=["*"])
        return Projects(projects={project.key: project})
    projects = Projects.load(config)
    if scope.project_key not in projects.projects:
        raise InputError(f"{config} has no project `{scope.project_key}`")
    return projects


async def serve(options: Options, settings: Settings | None = None) -> None:
    settings = settings or Settings()
    if options.scenario is None or not options.offline:
        raise InputError("this version serves recorded incidents only: --scenario DIR --offline")
    if options.http and settings.slack_signing_secret is None:
        raise InputError("SLACK_SIGNING_SECRET is not set")
    if not options.http and settings.slack_app_token is None:
        raise InputError("SLACK_APP_TOKEN is not set (or pass --http)")
    scenario = load_scenario(options.scenario)
    client = slack_client(settings)
    projects = served_projects(scenario.scope, settings.incident_bot_config)
    engine = create_engine(settings.database_url or default_url(Path.cwd()))
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    with tempfile.TemporaryDirectory(prefix="incident-bot-serve-") as tmp:
        repo = await clone(scenario, Path(tmp))
        runtime = ScenarioRuntime(scenario, repo)
        await asyncio.gather(runtime.start(), create_schema(engine))
        publisher = (
            GitHubIssues(settings.github_api_url, settings.github_token.get_secret_value())
            if settings.github_token
            else None
        )
        secret = settings.slack_signing_secret
        bot = assemble(
            client,
            engine,
            runtime,
            projects,
            secret.get_secret_value() if secret else "",
            publisher=publisher,
            workers=options.workers,
        )
        # After a restart, every thread still in flight is brought up to date.
        for summary in await bot.store.recent(None, 500):
            bot.sync.kick(summary.id)
        tasks = bot.run(stop)
        runner = None
        socket_handler = None
        try:
            if options.http:
                runner = web.AppRunner(bot.app.web_app(path="/slack/events", port=options.port))
                await runner.setup()
                site = web.TCPSite(runner, options.host, options.port)
                await site.start()
                log.warning(
                    "serving Slack events on http://%s:%s/slack/events", options.host, options.port
                )
            else:
                from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler

                assert settings.slack_app_token is not None
                socket_handler = AsyncSocketModeHandler(
                    bot.app, settings.slack_app_token.get_secret_value()
                )
                await socket_handler.connect_async()
            await stop.wait()
        finally:
            stop.set()
            if runner is not None:
                await runner.cleanup()
            if socket_handler is not None:
                with contextlib.suppress(Exception):
                    await socket_handler.close_async()
            for task in tasks:
                with contextlib.suppress(Exception):
                    await task
            await runtime.aclose()
            await engine.dispose()
