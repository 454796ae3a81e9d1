"""`incident-bot serve`: the Slack app, its workers and the thread sync in one process.

`serve --no-workers` is the web front alone and `incident-bot worker` the workers alone
(both keep a thread sync); any number of each may share one DATABASE_URL.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

from aiohttp import web
from pydantic import ValidationError
from slack_bolt.async_app import AsyncApp
from slack_sdk.http_retry.builtin_async_handlers import (
    AsyncRateLimitErrorRetryHandler,
    AsyncServerErrorRetryHandler,
)
from slack_sdk.web.async_client import AsyncWebClient
from sqlalchemy.ext.asyncio import AsyncEngine

from agent.budget import Limits
from agent.domain import Scope
from agent.errors import InputError
from agent.publish.github import GitHubIssues
from agent.publish.publisher import Backlink
from agent.publish.sentry import SentryNote
from bot import backfill, llm
from bot.cli import groq_from_env
from bot.config import Project, Projects, Settings
from bot.http import mount as http_api
from bot.mcp_servers import load_servers, sentry_server
from bot.mirror import sources_for
from bot.recorded import clone, load_scenario
from bot.runtime import ScenarioRuntime
from bot.slack.app import AfterAck, Deps, build_app
from bot.slack.directory import SlackDirectory
from bot.slack.sync import SlackSync
from bot.usecases.access import Access
from bot.usecases.gates import Gates
from bot.usecases.investigations import Investigations
from bot.usecases.ports import Callbacks
from bot.worker import Publisher, Worker
from storage.db import create_engine, create_schema, default_url
from storage.idempotency import SqlIdempotency
from storage.jobs import SqlJobQueue
from storage.leases import SqlLeases
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
    listen: bool = True  # False: `incident-bot worker`, no Slack listener at all
    lease_seconds: float | None = None  # None: INCIDENT_BOT_LEASE_SECONDS


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
    acks: AfterAck  # the work of requests already answered
    cases: Investigations  # the use cases the listeners call

    def run(self, stop: asyncio.Event) -> list[asyncio.Task[None]]:
        tasks = [asyncio.create_task(w.run_forever(stop)) for w in self.workers]
        tasks.append(asyncio.create_task(self.sync.run(stop)))
        return tasks


def assemble(
    client: AsyncWebClient,
    engine: AsyncEngine,
    runtime: ScenarioRuntime | None,
    projects: Projects,
    signing_secret: str,
    *,
    publisher: Publisher | None = None,
    links: Sequence[Backlink] = (),
    workers: int = 1,
    lease_seconds: float = 30.0,
    max_concurrent: int | None = None,
    tokens_per_day: int | None = None,
    coalesce_minutes: float = 60.0,
) -> Bot:
    store, jobs, shown = SqlStore(engine), SqlJobQueue(engine), SqlSurfaceMessages(engine)
    sync = SlackSync(client, store, shown, leases=SqlLeases(engine), lease_seconds=lease_seconds)
    if workers and runtime is None:
        raise ValueError("workers need a runtime")
    pool = [
        Worker(
            store,
            jobs,
            runtime.loop_for,
            publisher=publisher,
            links=[sync, *links],  # the saga's link-back steps: Slack, then the others
            changed=sync.kick,
            lease_seconds=lease_seconds,
        )
        for _ in range(workers)
        if runtime is not None
    ]

    def wake() -> None:
        for w in pool:
            w.wake.set()

    cases = Investigations(
        store,
        jobs,
        Access(projects, SlackDirectory(client)),
        Callbacks(wake, sync.kick),
        keys=SqlIdempotency(engine),
        gates=Gates(
            store, projects, max_concurrent, tokens_per_day, timedelta(minutes=coalesce_minutes)
        ),
    )
    acks = AfterAck()
    app = build_app(client, signing_secret, Deps(cases, store, shown), acks)
    return Bot(app, store, jobs, shown, sync, pool, acks, cases)


def backlinks(settings: Settings) -> list[Backlink]:
    """The link-back steps besides Slack's: a note on the Sentry issue when a Sentry
    write token is set."""
    secret = settings.sentry_write_token
    token = secret.get_secret_value() if secret else ""
    return [SentryNote(settings.sentry_api_url, token)] if token else []


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
    try:
        settings = settings or Settings()
    except ValidationError as exc:  # e.g. INCIDENT_BOT_LEASE_SECONDS=abc
        first = exc.errors()[0]
        raise InputError(f"bad setting {first['loc'][0]}: {first['msg']}") from None
    if options.scenario is None:
        raise InputError("this version serves recorded incidents only: --scenario DIR")
    if options.workers < 0 or (not options.listen and options.workers < 1):
        raise InputError("a worker process needs at least one worker")
    if options.listen and options.http and settings.slack_signing_secret is None:
        raise InputError("SLACK_SIGNING_SECRET is not set")
    if options.listen and not options.http and settings.slack_app_token is None:
        raise InputError("SLACK_APP_TOKEN is not set (or pass --http)")
    lease = options.lease_seconds
    if lease is None:
        lease = settings.incident_bot_lease_seconds
    if lease <= 0:
        raise InputError("the lease must be a positive number of seconds")
    # The offline investigator, or the configured chat model (GROQ_API_KEY, GROQ_BASE_URL)
    # with its pass-2 model, pre-fetch and token budgets (bot/llm.py).
    chat = not options.offline and options.workers > 0
    model = groq_from_env(os.environ) if chat else None
    limits = Limits(**llm.token_limits_from_env(os.environ))
    servers = load_servers(settings.incident_bot_config) if settings.incident_bot_config else {}
    declared = sentry_server(servers, os.environ) if options.workers else None
    scenario = load_scenario(options.scenario)
    client = slack_client(settings)
    projects = served_projects(scenario.scope, settings.incident_bot_config)
    engine = create_engine(settings.database_url or default_url(Path.cwd()))
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    async with contextlib.AsyncExitStack() as stack:
        tmp = stack.enter_context(tempfile.TemporaryDirectory(prefix="incident-bot-serve-"))
        runtime = None
        if options.workers:  # a web front alone needs no sources
            # A project may read its code from a mirror clone and its docs from an export.
            mirror, docs = await sources_for(projects.projects.get(scenario.scope.project_key))
            repo = mirror.path if mirror else await clone(scenario, Path(tmp))
            sentry = declared[1] if declared else None  # else the scenario's recording
            if sentry is not None:
                await stack.enter_async_context(sentry)
            runtime = ScenarioRuntime(
                scenario,
                repo,
                model=model,
                limits=limits,
                extract_model=llm.extract_from_env(os.environ) if chat else None,
                prefetch=llm.prefetch_from_env(os.environ),
                sentry=sentry,
                mirror=mirror,
                docs=docs,
            )
            await asyncio.gather(runtime.start(), create_schema(engine))
        else:
            await create_schema(engine)
        publisher = (
            GitHubIssues(
                settings.github_api_url,
                settings.github_token.get_secret_value(),
                login=settings.github_login,
            )
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
            links=backlinks(settings),
            workers=options.workers,
            lease_seconds=lease,
            max_concurrent=settings.incident_bot_max_concurrent,
            tokens_per_day=limits.tokens_per_day,
            coalesce_minutes=settings.incident_bot_coalesce_minutes,
        )
        if runtime is not None:
            runtime.ledger = bot.store  # the daily token budget counts what is stored
        # After a restart, every thread still in flight is brought up to date.
        for summary in await bot.store.recent(None, 500):
            bot.sync.kick(summary.id)
        tasks = bot.run(stop)
        if options.listen and settings.incident_bot_backfill_hours:  # what came in while down
            lister = backfill.lister_for(
                os.environ, settings.sentry_api_url, scenario.sentry, scenario.scope.sentry_project
            )
            hours = settings.incident_bot_backfill_hours
            tasks.append(
                asyncio.create_task(backfill.at_start(bot.cases, bot.store, lister, hours))
            )
        runner = None
        socket_handler = None
        try:
            if not options.listen:
                log.warning("%d worker(s) and the thread sync running", options.workers)
            elif options.http:
                web_app = bot.app.web_app(path="/slack/events", port=options.port)
                http_api.attach(
                    web_app, bot.cases, bot.store, os.environ, settings.incident_bot_config
                )
                runner = web.AppRunner(web_app)
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
            await bot.acks.finish()  # no request comes in now; what was acked is stored
            for task in tasks:
                with contextlib.suppress(Exception):
                    await task
            if runtime is not None:
                await runtime.aclose()
            await engine.dispose()
