"""`incident-bot serve` with no --scenario: two projects of a projects file, read live.

The real @sentry/mcp-server reads the fake Sentry (both projects); each project's code is
a bare repository (file://) the bot mirrors, to which the test pushes the running release
after the bot started; the docs come from the mirror; Slack and GitHub are fakes.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import aiohttp
import pytest
import pytest_asyncio

from tests.bot.live_world import (
    ENTRY,
    SECRETS,
    LiveProject,
    git,
    live_project,
    projects_file,
)
from tests.bot.test_serve import free_port
from tests.conftest import Built
from tests.fakes.github import FakeGitHub
from tests.fakes.sentry import FakeSentry
from tests.fakes.slack import FakeSlack, signed_headers

if not ENTRY.is_file():
    pytest.skip(
        "@sentry/mcp-server is not installed (node_modules is absent: run `make setup`)",
        allow_module_level=True,
    )

pytestmark = pytest.mark.asyncio(loop_scope="module")

ELSEWHERE = "C0ELSEWHERE"
BOT = str(Path(sys.executable).with_name("incident-bot"))


@dataclass
class World:
    root: Path
    orders: LiveProject
    catalog: LiveProject
    sentry: FakeSentry
    github: FakeGitHub
    config: Path

    @property
    def projects(self) -> list[LiveProject]:
        return [self.orders, self.catalog]

    def env(self, slack: FakeSlack, name: str, **extra: str) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "GITHUB_"))}
        return {
            **env,
            **SECRETS,
            "SLACK_API_URL": slack.api_url,
            "GITHUB_API_URL": self.github.api_url,
            "SENTRY_API_URL": f"http://{self.sentry.host}",
            "INCIDENT_BOT_CONFIG": str(self.config),
            "INCIDENT_BOT_DATA_DIR": str(self.root / f"data-{name}"),
            "DATABASE_URL": f"sqlite+aiosqlite:///{self.root / f'{name}.db'}",
            "LOG_LEVEL": "INFO",
            **extra,
        }


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def world(
    tmp_path_factory: pytest.TempPathFactory, built_scenarios: Built
) -> AsyncIterator[World]:
    root = tmp_path_factory.mktemp("live")
    orders = live_project(
        built_scenarios["orders"], root, "C0ORDERS", issues_repository="acme/orders-tracker"
    )
    catalog = live_project(
        built_scenarios["python-flask-default-arg"], root, "C0CATALOG", tag_releases=True
    )
    sentry = FakeSentry(
        token=SECRETS["INCIDENT_BOT_TEST_SENTRY_TOKEN"], write_token=SECRETS["SENTRY_WRITE_TOKEN"]
    )
    repos = ["acme/orders-tracker", catalog.scenario.scope.repository]
    async with sentry, FakeGitHub(token=SECRETS["GITHUB_TOKEN"], repos=repos) as github:
        for p in (orders, catalog):
            scope = p.scenario.scope
            sentry.add(
                p.sentry_folder, scope.sentry_organization, scope.sentry_project, p.since, p.until
            )
        config = projects_file(root / "projects.toml", [orders, catalog], sentry.host)
        yield World(root, orders, catalog, sentry, github, config)


class Served:
    def __init__(self, port: int, slack: FakeSlack, http: aiohttp.ClientSession) -> None:
        self.base = f"http://127.0.0.1:{port}"
        self.slack = slack
        self.http = http

    async def post(self, payload: dict[str, Any] | str, content_type: str | None = None) -> int:
        body = payload if isinstance(payload, str) else urlencode(payload)
        kwargs = {"content_type": content_type} if content_type else {}
        headers = signed_headers(body, SECRETS["SLACK_SIGNING_SECRET"], **kwargs)
        async with self.http.post(f"{self.base}/slack/events", data=body, headers=headers) as r:
            await r.read()
            return r.status

    async def get(self, path: str) -> tuple[int, str]:
        async with self.http.get(f"{self.base}{path}") as r:
            return r.status, await r.text()

    async def command(self, text: str, channel: str, user: str = "U0ALICE") -> int:
        return await self.post(
            {
                "command": "/investigate",
                "text": text,
                "user_id": user,
                "channel_id": channel,
                "team_id": "T0FAKE",
                "trigger_id": f"trig.{time.time_ns()}",
                "response_url": self.slack.api_url,
            }
        )

    async def approve(self, channel: str, value: dict[str, Any], user: str) -> int:
        payload = {
            "type": "block_actions",
            "user": {"id": user},
            "team": {"id": "T0FAKE"},
            "channel": {"id": channel},
            "trigger_id": "trig.approve",
            "container": {},
            "actions": [
                {
                    "action_id": "draft_approve",
                    "block_id": "b",
                    "value": json.dumps(value),
                    "type": "button",
                }
            ],
        }
        return await self.post({"payload": json.dumps(payload)})


@contextlib.asynccontextmanager
async def serving(
    world: World, slack: FakeSlack, name: str, **extra: str
) -> AsyncIterator[tuple[Served, Any]]:
    port = free_port()
    log = world.root / f"{name}.log"
    with log.open("wb") as stderr:
        proc = await asyncio.create_subprocess_exec(
            *(BOT, "serve", "--offline", "--http", "--port", str(port), "--log-format", "json"),
            env=world.env(slack, name, **extra),
            stdout=asyncio.subprocess.DEVNULL,
            stderr=stderr,
        )
        try:
            async with aiohttp.ClientSession() as http:
                served = Served(port, slack, http)
                async with asyncio.timeout(60):
                    while True:  # until it listens
                        with contextlib.suppress(aiohttp.ClientConnectionError):
                            async with http.get(f"{served.base}/slack/events") as r:
                                await r.read()
                                break
                        if proc.returncode is not None:
                            raise AssertionError(log.read_text()[-3000:])
                        await asyncio.sleep(0.1)
                yield served, proc
        finally:
            if proc.returncode is None:
                proc.send_signal(signal.SIGTERM)
            await asyncio.wait_for(proc.wait(), 30)
    assert proc.returncode == 0, log.read_text()[-3000:]


def investigations(db: Path) -> list[dict[str, Any]]:
    with contextlib.closing(sqlite3.connect(db)) as conn:
        conn.row_factory = sqlite3.Row
        rows = [dict(r) for r in conn.execute("SELECT id, scope FROM investigations")]
    return [{"id": r["id"], "project_key": json.loads(r["scope"])["project_key"]} for r in rows]


def thread_text(slack: FakeSlack, channel: str) -> str:
    return json.dumps(slack.messages(channel), ensure_ascii=False)


async def test_two_projects_in_two_channels_are_investigated_live_each_with_its_own_sources(
    world: World,
) -> None:
    data = world.root / "data-serve"
    async with (
        FakeSlack(token=SECRETS["SLACK_BOT_TOKEN"], start_ts=f"{time.time():.6f}") as slack,
        serving(world, slack, "serve") as (served, _proc),
    ):
        # The bot clones each mirror at start, in the background: /readyz says when every
        # project's sources started. The running releases are pushed only then, so each
        # investigation finds its release missing and fetches it on demand.
        assert (await served.get("/healthz"))[0] == 200
        async with asyncio.timeout(60):
            while (ready := await served.get("/readyz"))[0] != 200:
                assert ready[0] == 503 and "starting" in ready[1], ready
                await asyncio.sleep(0.1)
        assert json.loads(ready[1])["sources"] == {p.key: "ok" for p in world.projects}
        for p in world.projects:
            mirror = data / "mirrors" / f"{p.key}.git"
            held = await asyncio.to_thread(
                subprocess.run, ["git", "-C", str(mirror), "cat-file", "-e", p.release]
            )
            assert held.returncode != 0  # not there yet
            p.push_release()
        slack.fail_next("chat.postMessage", status=429, retry_after=0)  # one rate limit
        for p in world.projects:
            assert await served.command(p.scenario.question, p.channel) == 200
        # A channel no project is mapped to: refused with an ephemeral, nothing stored.
        assert await served.command("errors when saving orders", ELSEWHERE) == 200
        await slack.wait_for(
            lambda s: (
                all("draft" in channel_keys(s, p.channel) for p in world.projects)
                and any(e.get("channel") == ELSEWHERE for e in s.ephemerals)
            ),
            timeout=90,
        )
        refusal = next(e for e in slack.ephemerals if e.get("channel") == ELSEWHERE)
        assert "not authorized" in json.dumps(refusal)
        assert slack.messages(ELSEWHERE) == []

        rows = {r["project_key"]: r for r in investigations(world.root / "serve.db")}
        assert set(rows) == {p.key for p in world.projects}
        for p in world.projects:
            other = next(o for o in world.projects if o is not p)
            text = thread_text(slack, p.channel)
            # Cards of its own project only.
            assert p.scenario.scope.repository in text
            assert other.scenario.scope.repository not in text
            assert other.scenario.scope.sentry_project not in text
            suspect = await suspect_of(world.root / "serve.db", rows[p.key]["id"])
            assert suspect["path"] == p.expected["fault"]["file"], suspect
            assert suspect["commit"] == p.expected["commit"], suspect
            # The release was fetched into the mirror after the start.
            mirror = data / "mirrors" / f"{p.key}.git"
            assert git("-C", str(mirror), "rev-parse", f"{p.release}^{{commit}}") == p.release
        # The catalog's events name tags: the evidence says which commit the release is.
        catalog = await load(world.root / "serve.db", rows[world.catalog.key]["id"])
        (details,) = [e for e in catalog.evidence if e.tool == "sentry__get_issue_details"]
        release = world.catalog.release
        assert f"Release `catalog-api@1.3.0` is commit {release} (tag v1.3.0)" in details.content
        assert details.data["release"]["previous"] == world.catalog.tags["v1.2.0"]
        assert details.data["release"]["previous_via"] == (
            "release catalog-api@1.2.0 among the issue's events"  # Sentry's data first
        )

        # An approved draft publishes one issue, in that project's issue repository.
        orders = await load(world.root / "serve.db", rows[world.orders.key]["id"])
        value = {
            "investigation_id": orders.id,
            "version": orders.draft.version,
            "hash": orders.draft.hash,
        }
        assert await served.approve(world.orders.channel, value, "U0BOB") == 200
        await world.github.wait_for(lambda g: len(g.issues["acme/orders-tracker"]) == 1, 30)
        await slack.wait_for(lambda s: "github" in thread_text(s, world.orders.channel), 30)
        assert world.github.issues[world.catalog.scenario.scope.repository] == []
        (issue,) = world.github.issues["acme/orders-tracker"]
        assert f"investigation={orders.id}" in issue["body"]

        async with asyncio.timeout(30):  # the saga's last steps (labels, the Sentry note)
            while True:
                if (await load(world.root / "serve.db", orders.id)).state.value == "PUBLISHED":
                    break
                await asyncio.sleep(0.1)
        assert sum(len(notes) for notes in world.sentry.notes.values()) == 1  # the backlink
        status, text = await served.get("/metrics")
        assert status == 200
        metrics = parse_metrics(text)
        assert metrics['incident_bot_investigations{state="PUBLISHED"}'] == 1
        assert metrics['incident_bot_investigations{state="COMPLETED"}'] == 1
        assert metrics['incident_bot_publications{outcome="published"}'] == 1
        assert metrics['incident_bot_queue_depth{kind="investigate"}'] == 0
        assert metrics["incident_bot_queue_oldest_seconds"] == 0
        finished = sum(v for k, v in metrics.items() if k.startswith(FINISHED + "{"))
        assert finished == 2 and metrics["incident_bot_investigation_seconds_count"] == 2
        ok = 'incident_bot_tool_calls_total{outcome="ok",tool="sentry__get_issue_details"}'
        assert metrics[ok] == 2
        latency = 'incident_bot_tool_seconds_count{tool="sentry__get_issue_details"}'
        assert metrics[latency] == 2
        assert metrics['incident_bot_slack_api_errors_total{status="429"}'] == 1
        assert metrics['incident_bot_slack_api_retries_total{reason="RateLimitError"}'] == 1
    no_secret_anywhere(world, slack, "serve")
    # Structured logs: each of the bot's lines is one JSON object; a job's name its investigation.
    lines = (world.root / "serve.log").read_text().splitlines()
    ours = [json.loads(line) for line in lines if line.startswith("{")]
    assert ours and all({"time", "level", "logger", "message"} <= set(o) for o in ours)
    named = {o["investigation_id"] for o in ours if o["investigation_id"]}
    assert {r["id"] for r in rows.values()} <= named


FINISHED = "incident_bot_investigations_finished_total"


def parse_metrics(text: str) -> dict[str, float]:
    """Prometheus text format: `name{labels} value` per sample line."""
    out = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            name, _, value = line.rpartition(" ")
            out[name] = float(value)
    return out


def channel_keys(slack: FakeSlack, channel: str) -> list[str]:
    out = []
    for message in slack.messages(channel):
        meta = message.get("metadata") or {}
        if meta.get("event_type") == "incident_bot":
            out.append(meta["event_payload"]["key"])
    return out


async def load(db: Path, inv_id: str) -> Any:
    from storage.db import create_engine
    from storage.store import SqlStore

    engine = create_engine(f"sqlite+aiosqlite:///{db}")
    try:
        return await SqlStore(engine).load(inv_id)
    finally:
        await engine.dispose()


async def suspect_of(db: Path, inv_id: str) -> dict[str, Any]:
    inv = await load(db, inv_id)
    assert inv.diagnosis is not None and inv.diagnosis.suspect is not None, inv.state
    return inv.diagnosis.suspect.model_dump()


def no_secret_anywhere(world: World, slack: FakeSlack, name: str) -> None:
    """No marker value in the process's log, the fakes' traffic or the database."""
    places = {
        "log": (world.root / f"{name}.log").read_bytes().decode(errors="replace"),
        "slack": json.dumps([c.params for c in slack.calls], default=str),
        "github": json.dumps([c.body for c in world.github.calls], default=str),
        "sentry": json.dumps([list(c) for c in world.sentry.calls], default=str),
    }
    for suffix in ("", "-wal"):  # what the last checkpoint left in the write-ahead log too
        db = world.root / f"{name}.db{suffix}"
        if db.exists():
            places[f"database{suffix}"] = db.read_bytes().decode("latin-1")
    assert "database" in places
    mirrors = world.root / f"data-{name}" / "mirrors"
    for config in mirrors.glob("*.git/config"):
        places[str(config)] = config.read_text()
    for where, text in places.items():
        for variable, secret in SECRETS.items():
            assert secret not in text, f"{variable} appears in {where}"


async def investigate(world: World, config: Path, name: str, *args: str) -> tuple[int, str, str]:
    env = world.env(FakeSlackless(), name, INCIDENT_BOT_CONFIG=str(config))
    proc = await asyncio.create_subprocess_exec(
        *(BOT, "investigate", "--offline", "--json", *args),
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), 120)
    return proc.returncode or 0, out.decode(), err.decode()


class FakeSlackless:
    """No Slack for the CLI."""

    api_url = "http://127.0.0.1:9/api/"


def untagged(world: World) -> tuple[Path, str]:
    """A projects file whose catalog reads its code from a copy without the tags its events
    name (`catalog-api@1.3.0` is no tag or commit there), and that copy's default branch."""
    catalog = world.catalog
    copy = world.root / "catalog-untagged.git"
    if not copy.exists():
        git("clone", "-q", "--bare", str(catalog.source), str(copy))
        for tag in catalog.tags:
            git("-C", str(copy), "tag", "-d", tag)
    config = projects_file(
        world.root / "untagged.toml",
        [catalog],
        world.sentry.host,
        **{catalog.key: {"code_url": copy.resolve().as_uri()}},
    )
    return config, git("-C", str(copy), "rev-parse", "HEAD")


def revisions_read(inv: Any) -> set[str]:
    """The revisions the code tools were asked to read."""
    args = [c.arguments for m in inv.messages for c in m.tool_calls]
    found = {str(a.get("revision") or a.get("head") or "") for a in args}
    return {r.split(":", 1)[0] for r in found if r}


def says_the_default_branch_was_read(uncertainties: list[str], default: str) -> None:
    said = [u for u in uncertainties if "names no commit or tag" in u]
    assert said and "`catalog-api@1.3.0`" in said[0] and default[:12] in said[0], uncertainties
    assert "may not be what was running" in said[0]


async def test_serve_reads_the_default_branch_of_a_release_that_names_nothing_and_says_so(
    world: World,
) -> None:
    """Live serving, a release that is no tag or commit of the repository: the answer reads
    the default branch instead of asking in the thread, and says so among the uncertainties."""
    catalog = world.catalog
    config, default = untagged(world)
    db = world.root / "untagged-serve.db"
    async with (
        FakeSlack(token=SECRETS["SLACK_BOT_TOKEN"], start_ts=f"{time.time():.6f}") as slack,
        serving(world, slack, "untagged-serve", INCIDENT_BOT_CONFIG=str(config)) as (served, _),
    ):
        assert await served.command(catalog.scenario.question, catalog.channel) == 200
        async with asyncio.timeout(90):
            while True:  # until the run stops, whichever way
                rows = investigations(db)
                inv = await load(db, rows[0]["id"]) if rows else None
                if inv is not None and inv.state.value not in ("QUEUED", "RUNNING"):
                    break
                await asyncio.sleep(0.2)
        assert inv.state.value == "COMPLETED", (inv.state, inv.pending_question)
        await slack.wait_for(lambda s: "names no commit or tag" in thread_text(s, catalog.channel))
    assert not [c for m in inv.messages for c in m.tool_calls if c.name == "ask_clarification"]
    assert inv.diagnosis is not None and inv.diagnosis.suspect is not None
    assert inv.diagnosis.suspect.path == catalog.expected["fault"]["file"]
    assert revisions_read(inv) == {default}
    assert inv.diagnosis.confidence != "high"
    says_the_default_branch_was_read(inv.diagnosis.uncertainties, default)
    assert default[:12] in thread_text(slack, catalog.channel)
    no_secret_anywhere(world, slack, "untagged-serve")


async def test_investigate_a_project_live_whose_release_names_nothing_in_the_repository(
    world: World,
) -> None:
    """`investigate --project KEY "question"`: the catalog's events name tags, but its code
    is read from a copy without them: the release cannot be resolved, the default branch
    is read, and the answer says so."""
    catalog = world.catalog
    config, default = untagged(world)
    code, out, err = await investigate(
        world, config, "untagged", "--project", catalog.key, catalog.scenario.question
    )
    assert code == 0, err[-2000:]
    doc = json.loads(out)
    assert {"status", "diagnosis", "evidence", "draft", "stats"} <= set(doc)
    assert doc["status"] == "COMPLETED"
    says_the_default_branch_was_read(doc["diagnosis"]["uncertainties"], default)
    assert doc["diagnosis"]["confidence"] != "high"
    inv = await load(world.root / "untagged.db", doc["investigation_id"])
    assert revisions_read(inv) == {default}
    (details,) = [e for e in inv.evidence if e.tool == "sentry__get_issue_details"]
    assert "Release `catalog-api@1.3.0` names no commit or tag" in details.content
    assert details.data["release"]["commit"] is None
    assert details.data["event"]["release"] is None  # no guessed commit reaches the chain
    # Bad input: an unknown project is one line and exit 2, nothing stored.
    code, out, err = await investigate(world, config, "unknown", "--project", "nope", "why?")
    assert code == 2 and "unknown project `nope`" in err and out == ""


async def run_check(world: World, slack: FakeSlack, name: str, **env: str) -> tuple[int, str]:
    proc = await asyncio.create_subprocess_exec(
        BOT,
        "check",
        env=world.env(slack, name, **env),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), 120)
    text = out.decode() + err.decode()
    for variable, secret in SECRETS.items():
        assert secret not in text, f"check printed {variable}"
    return proc.returncode or 0, out.decode()


def marks(out: str) -> list[str]:
    return [line for line in out.splitlines() if line[:1] in "✓✗"]


async def test_check_passes_on_a_good_setup_and_names_the_fix_of_each_broken_piece(
    world: World,
) -> None:
    for p in world.projects:
        p.push_release()  # the running releases are there (idempotent)
    channels = [p.channel for p in world.projects]
    async with FakeSlack(token=SECRETS["SLACK_BOT_TOKEN"], channels=channels) as slack:
        code, out = await run_check(world, slack, "check")
        lines = marks(out)
        assert code == 0 and all(line.startswith("✓") for line in lines), out
        for p in world.projects:
            mine = [line for line in lines if line.startswith(f"✓ {p.key}: ")]
            assert [line.split(": ")[1] for line in mine] == [
                f"channel {p.channel}",
                "Sentry",
                "code",
                "releases",
                "docs",
                f"GitHub {p.issues_repository or p.scenario.scope.repository}",
            ], out
        assert "1 of 1 resolve" in out or "resolve (" in out
        assert "section(s) indexed" in out

        # Two broken setups, each line read: the app's credentials (a bad Slack token,
        # a refused Sentry token, a GitHub token that may only read), then the projects'
        # own pieces (an unreachable code_url, a channel that does not exist).
        orders, catalog = world.orders, world.catalog
        world.github.grants["issues"] = "read"  # a fine-grained token that may not write
        try:
            credentials = await run_check(
                world,
                slack,
                "check",
                SLACK_BOT_TOKEN="xoxb-not-the-token",
                INCIDENT_BOT_TEST_SENTRY_TOKEN="sntrys-refused",
            )
        finally:
            world.github.grants["issues"] = "write"
        pieces = projects_file(
            world.root / "broken.toml",
            world.projects,
            world.sentry.host,
            **{
                orders.key: {"code_url": (world.root / "nowhere.git").as_uri()},
                catalog.key: {"channels": ["C0NOWHERE"]},
            },
        )
        slack.scopes.remove("groups:read")  # and a scope the manifest asks for, not granted
        projects = await run_check(world, slack, "broken", INCIDENT_BOT_CONFIG=str(pieces))
    expected = {
        credentials: [
            "✗ Slack: auth.test refused the token (invalid_auth) — fix: set SLACK_BOT_TOKEN",
            # How many catalog tools a refused token still resolves varies: not the point.
            f"✗ {orders.key}: Sentry: ",
            f"✗ {catalog.key}: Sentry: ",
            f"✓ {orders.key}: code: ",
            f"✗ {orders.key}: GitHub acme/orders-tracker: readable, but the token may not "
            "create issues (GitHub wants issues=write) — fix: give GITHUB_TOKEN issues:write",
        ],
        projects: [
            "✓ Slack: auth.test",
            "✗ Slack scopes: missing groups:read — fix: add them under OAuth & Permissions",
            f"✗ {orders.key}: code: cannot clone",
            f"✗ {orders.key}: docs: ",
            f"✓ {catalog.key}: code: ",
            f"✗ {catalog.key}: channel C0NOWHERE: not found (channel_not_found) — fix: put the",
            f"✓ {catalog.key}: GitHub",
        ],
    }
    for (code, out), starts in expected.items():
        assert code == 1, out
        for start in starts:
            found = [x for x in marks(out) if x.startswith(start)]
            assert len(found) == 1, (start, out)
            assert found[0].startswith("✓") or "— fix: " in found[0], found[0]
    refused = [x for x in marks(credentials[1]) if ": Sentry: " in x]
    assert refused and all("tools, but reading the issues of " in x for x in refused), refused


async def test_a_worker_process_with_no_scenario_investigates_from_the_projects_file(
    world: World,
) -> None:
    """`incident-bot worker` beside a web front: it claims a stored request and reads the
    project's live sources, as serve's own workers do."""
    from agent.domain import Investigation, default_window, utcnow
    from bot.config import Projects
    from storage.db import create_engine, create_schema
    from storage.jobs import SqlJobQueue
    from storage.store import SqlStore

    orders = world.orders
    orders.push_release()
    db = world.root / "worker.db"
    engine = create_engine(f"sqlite+aiosqlite:///{db}")
    await create_schema(engine)
    project = Projects.load(world.config).projects[orders.key]
    scope = project.scope(*default_window(utcnow()), asked_at=utcnow())
    inv = Investigation.open(orders.scenario.question, scope, requester="U0ALICE")
    await SqlStore(engine).create(inv)
    await SqlJobQueue(engine).enqueue("investigate", inv.id)
    await engine.dispose()
    async with FakeSlack(token=SECRETS["SLACK_BOT_TOKEN"]) as slack:
        proc = await asyncio.create_subprocess_exec(
            *(BOT, "worker", "--offline"),
            env=world.env(slack, "worker"),
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.PIPE,
        )
        try:
            async with asyncio.timeout(60):
                while (done := await load(db, inv.id)).state.value != "COMPLETED":
                    assert proc.returncode is None
                    await asyncio.sleep(0.2)
        finally:
            proc.send_signal(signal.SIGTERM)
            _, err = await asyncio.wait_for(proc.communicate(), 30)
        assert proc.returncode == 0, err.decode()[-2000:]
    assert done.diagnosis is not None and done.diagnosis.suspect is not None
    assert done.diagnosis.suspect.commit == orders.expected["commit"]
    assert done.draft is not None and done.draft.repository == "acme/orders-tracker"
