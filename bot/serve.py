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
from typing import Any

from aiohttp import web
from pydantic import ValidationError
from slack_bolt.async_app import AsyncApp
from slack_sdk.web.async_client import AsyncWebClient
from sqlalchemy.ext.asyncio import AsyncEngine

from agent.budget import Limits
from agent.domain import Scope
from agent.errors import InputError
from agent.publish.github import GitHubIssues
from agent.publish.publisher import Backlink
from agent.publish.sentry import SentryNote
from bot import backfill, llm, metrics
from bot.config import Project, Projects, Settings
from bot.http import mount as http_api
from bot.mcp_servers import ServerConfig, load_servers, sentry_server
from bot.mirror import sources_for
from bot.runtime import Runtime
from bot.slack.app import AfterAck, Deps, build_app
from bot.slack.directory import SlackDirectory
from bot.slack.http import web_app
from bot.slack.identity import BotIdentity
from bot.slack.retry import SlackRetry
from bot.slack.sync import SlackSync
from bot.sources import live_runtime
from bot.usecases.access import Access
from bot.usecases.alerts import Alerts
from bot.usecases.gates import Gates
from bot.usecases.inbox import Inbox
from bot.usecases.investigations import Investigations
from bot.usecases.ports import Callbacks
from bot.worker import Publisher, Worker
from recorded.scenario import Scenario, clone, load_scenario
from storage.admission import SqlAdmission
from storage.db import create_engine, default_url, open_database
from storage.deliveries import SqlDeliveries
from storage.idempotency import SqlIdempotency
from storage.jobs import SqlJobQueue
from storage.leases import SqlLeases
from storage.store import SqlStore
from storage.surface import SqlSurfaceMessages
from storage.wakeups import JOBS, Wakeups

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
    # Rate limits are waited out for every call; an unknown outcome (5xx, a dropped
    # connection) re-sends only reads and idempotent writes: a post whose answer was lost
    # is looked for in the thread by the sync, never sent blindly again (bot/slack/retry.py).
    return AsyncWebClient(
        token=settings.slack_bot_token.get_secret_value(),
        base_url=settings.slack_api_url,
        retry_handlers=[SlackRetry()],
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
    identity: BotIdentity  # auth.test, resolved in the background from the start
    signing_secret: str
    inbox: Inbox  # the Sentry webhook deliveries answered and not yet taken in

    def run(self, stop: asyncio.Event) -> list[asyncio.Task[None]]:
        tasks = [asyncio.create_task(self.identity.run(stop))]
        tasks.append(asyncio.create_task(self.inbox.run(stop)))
        tasks += [asyncio.create_task(w.run_forever(stop)) for w in self.workers]
        tasks.append(asyncio.create_task(self.sync.run(stop)))
        return tasks

    def web_app(self, path: str = "/slack/events") -> web.Application:
        """The HTTP front: signatures checked on the raw body before Bolt parses it."""
        return web_app(self.app, self.signing_secret, path)


def assemble(
    client: AsyncWebClient,
    engine: AsyncEngine,
    runtime: Runtime | None,
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
    identity = BotIdentity(client)
    sync = SlackSync(
        client,
        store,
        shown,
        leases=SqlLeases(engine),
        lease_seconds=lease_seconds,
        identity=identity,
    )
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
            SqlAdmission(engine, store),
            projects,
            max_concurrent,
            tokens_per_day,
            timedelta(minutes=coalesce_minutes),
        ),
    )
    acks = AfterAck()
    app = build_app(client, signing_secret, Deps(cases, store, shown), acks, identity)
    inbox = Inbox(SqlDeliveries(engine), Alerts(cases), lease_seconds=lease_seconds)
    return Bot(app, store, jobs, shown, sync, pool, acks, cases, identity, signing_secret, inbox)


async def wake_on_jobs(
    stack: contextlib.AsyncExitStack,
    engine: AsyncEngine,
    pool: Sequence[Worker],
    poll_seconds: float,
) -> None:
    """A job queued by any process wakes these workers (LISTEN/NOTIFY on PostgreSQL): their
    polling is then only the slow fallback (`poll_seconds`). On SQLite other processes are
    polled for as before."""
    if not pool:
        return
    wakeups = Wakeups(engine)
    wakeups.listen(JOBS, lambda _job: [w.wake.set() for w in pool])
    await wakeups.start()
    stack.push_async_callback(wakeups.aclose)
    if wakeups.cross_process:
        for worker in pool:
            worker.poll_seconds = poll_seconds


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


async def recorded_runtime(
    scenario: Scenario,
    projects: Projects,
    servers: dict[str, ServerConfig],
    stack: contextlib.AsyncExitStack,
    **options: Any,
) -> Runtime:
    """The recorded incident as the one project; Sentry through the declared server when
    there is one (it serves the recording's data), code and docs as the project says."""
    declared = sentry_server(servers, os.environ)
    sentry = declared[1] if declared else None  # else the scenario's recording
    if sentry is not None:
        await stack.enter_async_context(sentry)
    # A project may read its code from a mirror clone and its docs from an export.
    mirror, docs = await sources_for(projects.projects.get(scenario.scope.project_key))
    tmp = stack.enter_context(tempfile.TemporaryDirectory(prefix="incident-bot-serve-"))
    repo = mirror.path if mirror else await clone(scenario, Path(tmp))
    return Runtime.recorded(scenario, repo, sentry=sentry, mirror=mirror, docs=docs, **options)


async def serve(options: Options, settings: Settings | None = None) -> None:
    try:
        settings = settings or Settings()
    except ValidationError as exc:  # e.g. INCIDENT_BOT_LEASE_SECONDS=abc
        first = exc.errors()[0]
        raise InputError(f"bad setting {first['loc'][0]}: {first['msg']}") from None
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
    model = llm.groq_from_env(os.environ) if chat else None
    limits = Limits(**llm.token_limits_from_env(os.environ))
    config = settings.incident_bot_config
    servers = load_servers(config) if config else {}
    scenario = load_scenario(options.scenario) if options.scenario else None
    if scenario is None and config is None:
        raise InputError(
            "set INCIDENT_BOT_CONFIG to a projects file (format in bot/config.py), "
            "or serve a recorded incident with --scenario DIR"
        )
    client = metrics.instrument_slack(slack_client(settings))
    projects = served_projects(scenario.scope, config) if scenario else Projects.load(config)
    engine = create_engine(settings.database_url or default_url(Path.cwd()))
    try:  # before anything is acked: a database that cannot store requests refuses to start
        await open_database(engine)
    except BaseException:
        await engine.dispose()
        raise
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    async with contextlib.AsyncExitStack() as stack:
        # Last out, whichever step fails: a runtime that cannot be built leaves no connection.
        stack.push_async_callback(engine.dispose)
        runtime = None
        if options.workers:  # a web front alone needs no sources
            options_of_runtime: dict[str, Any] = {
                "model": model,
                "limits": limits,
                "extract_model": llm.extract_from_env(os.environ) if chat else None,
                "prefetch": llm.prefetch_from_env(os.environ),
                "ledger": SqlStore(engine),  # the daily token budget counts what is stored
            }
            if scenario is None:
                runtime = await live_runtime(
                    projects, servers, settings.incident_bot_data_dir, **options_of_runtime
                )
            else:
                runtime = await recorded_runtime(
                    scenario, projects, servers, stack, **options_of_runtime
                )
            # A live project's clone may take minutes: it goes on in the background, and
            # each investigation waits for its own project's sources only.
            await runtime.start(wait=scenario is not None)
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
        # After a restart, every thread still in flight is brought up to date.
        await wake_on_jobs(stack, engine, bot.workers, settings.incident_bot_poll_seconds)
        for summary in await bot.store.recent(None, 500):
            bot.sync.kick(summary.id)
        tasks = bot.run(stop)
        if options.listen and settings.incident_bot_backfill_hours:  # what came in while down
            recording = (scenario.sentry, scenario.scope.sentry_project) if scenario else None
            lister = backfill.lister_for(os.environ, settings.sentry_api_url, recording)
            hours = settings.incident_bot_backfill_hours
            if lister is not None:
                tasks.append(
                    asyncio.create_task(backfill.at_start(bot.cases, bot.store, lister, hours))
                )
        runner = None
        socket_handler = None
        try:
            if not options.listen:
                log.warning("%d worker(s) and the thread sync running", options.workers)
            elif options.http:
                front = bot.web_app(path="/slack/events")
                metrics.add_routes(front, engine, runtime.ready if runtime else dict)
                http_api.attach(
                    front, bot.cases, bot.store, os.environ, settings.incident_bot_config, bot.inbox
                )
                runner = web.AppRunner(front)
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
