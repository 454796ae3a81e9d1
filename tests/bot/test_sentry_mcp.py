"""Sentry through the real @sentry/mcp-server (npm, over stdio) against the fake Sentry REST API.

One server process and one fake for the whole module (the server takes seconds to
start); the fake serves the shared incidents and every fixture recipe side by side, a
project each. The server's clock is moved to each recording's time (tests/fakes/
node_clock.cjs), as its issue list gives times relative to it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import signal
import sys
import tempfile
import time
import tomllib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import aiohttp
import pytest
import pytest_asyncio

from agent.domain import Investigation
from agent.tools.mcp import McpToolset
from agent.tools.sentry_mcp import (
    PACKAGE_ENTRY,
    SENTRY_CATALOG,
    parse_issue_details,
    parse_issue_list,
)
from bot.mcp_servers import ServerConfig, parse_servers, scope_pins, sentry_server
from bot.runtime import Runtime, git_server
from recorded.scenario import Scenario, clone, load_scenario
from recorded.sentry import RecordedSentry
from tests.bot.test_serve import SECRET, free_port, keys, signed
from tests.conftest import NOT_YET_FOUND, RECIPES, ROOT, SHARED, Built, not_yet
from tests.fakes.sentry import FakeSentry
from tests.fakes.slack import FakeSlack

ENTRY = ROOT / PACKAGE_ENTRY
if not ENTRY.is_file():
    pytest.skip(
        "@sentry/mcp-server is not installed (node_modules is absent: run `make setup`)",
        allow_module_level=True,
    )

pytestmark = pytest.mark.asyncio(loop_scope="module")

# ../shared is an extra: a clone without it runs the recipes alone.
SHARED_SCENARIOS = [n for n in ("orders-npe", "python-keyerror") if (SHARED / n).is_dir()]
# The orders incident: the shared recording, else the bundled demo built from its recipe.
ORDERS = "orders-npe" if SHARED_SCENARIOS else "orders"
# And every fixture recipe (tests/fixtures/scenarios), built on first use.
RECIPE_SCENARIOS = sorted(p.name for p in RECIPES.iterdir() if (p / "recipe.json").is_file())
SCENARIOS = SHARED_SCENARIOS + RECIPE_SCENARIOS
TOKEN_VARIABLE = "INCIDENT_BOT_TEST_SENTRY_TOKEN"
TOKEN = "sntrys-fake-token-0123456789"
# The server's clock is set to each recording's time (its list says "3 hours ago").
CLOCK_SHIM = ROOT / "tests" / "fakes" / "node_clock.cjs"

# The server as the projects file declares it. The allowlist names update_issue on
# purpose: a tool the server marks as a write is never offered, whatever it says.
CONFIG = f"""
[servers.sentry]
preset = "sentry"
command = "node"
args = ["{ENTRY}", "--insecure-http"]
env = {{ SENTRY_ACCESS_TOKEN = "{TOKEN_VARIABLE}" }}
allow = [
  "search_issues", "get_issue_details", "search_issue_events", "find_releases", "update_issue"
]
"""


class ReplayClock:
    """The clock of the server (through CLOCK_SHIM) and of our reading of its answers:
    the real one, moved to the time a recording was asked at."""

    def __init__(self, file: Path) -> None:
        self.file, self.offset = file, timedelta(0)
        self.set(datetime.now(UTC))

    def set(self, at: datetime) -> None:
        self.offset = at - datetime.now(UTC)
        self.file.write_text(str(round(self.offset.total_seconds() * 1000)))

    def __call__(self) -> datetime:
        return datetime.now(UTC) + self.offset


@dataclass
class Live:
    fake: FakeSentry
    server: McpToolset
    config: ServerConfig
    scenarios: dict[str, Scenario]
    clock: ReplayClock


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def live(
    tmp_path_factory: pytest.TempPathFactory, built_scenarios: Built
) -> AsyncIterator[Live]:
    scenarios = {name: load_scenario(SHARED / name) for name in SHARED_SCENARIOS}
    built = RECIPE_SCENARIOS if SHARED_SCENARIOS else [ORDERS, *RECIPE_SCENARIOS]
    scenarios |= {name: load_scenario(built_scenarios[name]) for name in built}
    clock = ReplayClock(tmp_path_factory.mktemp("clock") / "offset-ms")
    async with FakeSentry(token=TOKEN) as fake:
        for s in scenarios.values():
            scope = s.scope
            fake.add(s.sentry, scope.sentry_organization, scope.sentry_project, *_window(s))
        config = parse_servers(tomllib.loads(CONFIG))["sentry"]
        config.args.append(f"--host={fake.host}")
        config.args[:0] = ["--require", str(CLOCK_SHIM)]
        config.env["INCIDENT_BOT_CLOCK_FILE"] = "CLOCK_FILE"
        environ = {
            TOKEN_VARIABLE: TOKEN,
            "SENTRY_DSN": "https://leak@x/1",
            "CLOCK_FILE": str(clock.file),
        }
        server = config.toolset(environ, clock=clock)
        async with server:
            yield Live(fake, server, config, scenarios, clock)


def _window(s: Scenario) -> tuple[Any, Any]:
    return s.scope.since, s.scope.until


def _orders(live: Live) -> tuple[Scenario, Any]:
    s = live.scenarios[ORDERS]
    return s, live.server.view(pinned=scope_pins(live.config, s.scope))


async def test_tools_list_offers_the_resolved_read_tools_and_no_writes(live: Live) -> None:
    _, view = _orders(live)
    specs = {spec.name: spec for spec in await view.get_tools()}
    # search_issues is listed by the server; the others only exist behind its catalog.
    assert set(specs) == {
        "search_issues",
        "get_issue_details",
        "search_issue_events",
        "find_releases",
    }
    assert live.server.routed == {"get_issue_details", "search_issue_events", "find_releases"}
    for spec in specs.values():
        properties = spec.parameters["properties"]
        for hidden in ("organizationSlug", "projectSlugOrId", "projectSlug", "regionUrl"):
            assert hidden not in properties, (spec.name, hidden)
        assert "issueUrl" not in properties
        assert "organizationSlug" not in spec.parameters.get("required", [])
    assert "issueId" in specs["get_issue_details"].parameters["properties"]
    assert "query" in specs["search_issues"].parameters["properties"]

    # The write the allowlist names is refused without reaching Sentry.
    before = len(live.fake.calls)
    r = await view.call_tool("update_issue", {"issueId": "ORDERS-INCIDENT-DEMO-2K"})
    assert r.is_error and "not available" in r.text
    r = await view.call_tool("execute_sentry_tool", {"name": "update_issue", "arguments": {}})
    assert r.is_error
    assert live.fake.calls[before:] == []
    assert all(c.method == "GET" for c in live.fake.calls)


async def test_catalog_and_execute_tools_cannot_be_allowed() -> None:
    with pytest.raises(ValueError, match="cannot be allowed"):
        McpToolset(
            "sentry",
            "node",
            [str(ENTRY)],
            None,
            {"search_issues", SENTRY_CATALOG.execute},
            {},
            "sentry",
            catalog=SENTRY_CATALOG,
        )


async def test_configuration_holds_variable_names_not_secrets() -> None:
    with pytest.raises(Exception, match="must name an environment variable"):
        parse_servers(tomllib.loads(CONFIG.replace(f'"{TOKEN_VARIABLE}"', '"sntrys abc/def"')))
    with pytest.raises(Exception, match="secret"):
        parse_servers(tomllib.loads(CONFIG.replace('"--insecure-http"', '"--access-token=x"')))
    servers = parse_servers(tomllib.loads(CONFIG))
    config = servers["sentry"]
    with pytest.raises(Exception, match=TOKEN_VARIABLE):
        config.toolset({})
    found = sentry_server(servers, {TOKEN_VARIABLE: TOKEN})
    assert found is not None and found[1].routed == frozenset()  # built, not started
    assert found[1].allow == {
        "search_issues",
        "get_issue_details",
        "search_issue_events",
        "find_releases",
        "update_issue",
    }
    # Only the named variable reaches the child; SENTRY_DSN never does.
    assert config.child_env({TOKEN_VARIABLE: TOKEN, "SENTRY_DSN": "x"}) == {
        "SENTRY_ACCESS_TOKEN": TOKEN
    }


async def test_the_pinned_organization_and_project_win(live: Live) -> None:
    s, view = _orders(live)
    before = len(live.fake.calls)
    r = await view.call_tool(
        "search_issues",
        {
            "organizationSlug": "evil-corp",
            "projectSlugOrId": "payroll",
            "regionUrl": "http://evil.example",
            "query": "is:unresolved",
        },
    )
    assert not r.is_error, r.text
    shorts = [i["shortId"] for i in r.data["issues"]]
    assert shorts and all(x.startswith("ORDERS-INCIDENT-DEMO-") for x in shorts)
    assert r.link and r.link.startswith(f"http://{live.fake.host}/organizations/acme/issues/")

    # An issue URL names its own organization: only the issue it points at is kept.
    r = await view.call_tool(
        "get_issue_details",
        {
            "issueUrl": "https://evil-corp.sentry.io/organizations/evil-corp/issues/ORDERS-INCIDENT-DEMO-2K/"
        },
    )
    assert not r.is_error, r.text
    assert r.data["issue"]["shortId"] == "ORDERS-INCIDENT-DEMO-2K"

    calls = live.fake.calls[before:]
    assert calls
    for call in calls:
        assert "evil" not in call.path and "payroll" not in call.path, call
        if call.path.startswith(("/api/0/organizations/", "/api/0/projects/")):
            assert call.path.split("/")[4] == s.scope.sentry_organization, call
    searches = [c for c in calls if c.path == "/api/0/organizations/acme/issues/"]
    project_id = live.fake.exports[0].project["id"]
    assert searches and all(c.query.get("project") == project_id for c in searches)


async def test_issue_details_read_back_into_the_recorded_shapes(live: Live) -> None:
    s, view = _orders(live)
    expected = json.loads((s.folder / "expected.json").read_text())
    r = await view.call_tool("get_issue_details", {"issueId": "ORDERS-INCIDENT-DEMO-2K"})
    assert not r.is_error, r.text
    event = r.data["event"]
    recorded = json.loads((s.sentry / "events" / f"{expected['issue_id']}.json").read_text())
    newest = max(recorded, key=lambda e: e["dateCreated"])
    assert event["eventID"] == newest["eventID"]
    assert event["release"]["version"] == newest["release"]["version"]
    (exc,) = event["entries"][0]["data"]["values"]
    (want,) = newest["entries"][0]["data"]["values"]
    assert (exc["type"], exc["value"]) == (want["type"], want["value"])
    got = [(f["filename"], f["function"], f["lineNo"]) for f in exc["stacktrace"]["frames"]]
    wanted = [(f["filename"], f["function"], f["lineNo"]) for f in want["stacktrace"]["frames"]]
    assert got == wanted
    crash = exc["stacktrace"]["frames"][-1]
    assert crash["inApp"] is True
    assert [14, "        value = value.strip();"] in crash["context"]

    # The text is capped; the crash frame at the very end of the trace was still read.
    cap, live.server.result_cap = live.server.result_cap, 1500
    try:
        r = await view.call_tool("get_issue_details", {"issueId": "ORDERS-INCIDENT-DEMO-2K"})
    finally:
        live.server.result_cap = cap
    assert "[truncated:" in r.text and len(r.text) < 1600
    frames = r.data["event"]["entries"][0]["data"]["values"][0]["stacktrace"]["frames"]
    assert frames[-1]["filename"] == "CustomerReference.java" and frames[-1]["lineNo"] == 14

    r = await view.call_tool("search_issue_events", {"issueId": "ORDERS-INCIDENT-DEMO-2K"})
    assert not r.is_error, r.text
    assert newest["eventID"] in r.text
    assert live.fake.calls_to("/issues/ORDERS-INCIDENT-DEMO-2K/events/")


async def test_the_servers_releases_are_the_recordings(live: Live) -> None:
    # Sentry's list of releases, through the server, as the recorded export lists them: the
    # window's previous release comes from it when no tag marks one (bot/releases.py).
    several = 0
    for s in live.scenarios.values():
        scope = s.scope
        view = live.server.view(pinned=scope_pins(live.config, scope))
        r = await view.call_tool("find_releases", {})
        assert not r.is_error, r.text
        export = RecordedSentry(
            s.sentry, scope.sentry_organization, scope.sentry_project, scope.since, scope.until
        )
        recorded = await export.call_tool(
            "find_releases", {"organizationSlug": scope.sentry_organization}
        )
        versions = [row["version"] for row in r.data["releases"]]
        assert versions == [row["version"] for row in recorded.data["releases"]], s.folder
        assert all(v.startswith(s.raw["release_prefix"]) for v in versions)
        several += len(versions) >= 2
    assert several and live.fake.calls_to("/releases/")


async def test_markdown_of_a_chained_python_exception() -> None:
    text = "\n".join(
        [
            "# Issue APP-1 in **acme**",
            "",
            "**Description**: KeyError: 'x'",
            "**First Seen**: 2026-10-14T08:00:00.000Z",
            "**Platform**: python",
            "**URL**: https://acme.sentry.io/issues/APP-1",
            "",
            "## Event Details",
            "",
            "**Event ID**: 0123456789abcdef0123456789abcdef",
            "**Occurred At**: 2026-10-14T09:00:00.000Z",
            "",
            "### Error",
            "",
            "```",
            "KeyError: 'x'",
            "```",
            "",
            "**Stacktrace:**",
            "```",
            '  File "app/views.py", line 12, in create',
            "    from app import db",
            '  File "app/build.py", line 30, in build',
            "```",
            "",
            "**During handling of the above exception, another exception occurred:**",
            "",
            "### ValueError: bad",
            "",
            "**Stacktrace:**",
            "```",
            '  File "app/parse.py", line 5, in parse',
            "```",
            "",
            "### Tags",
            "",
            "**release**: app@abc1234",
        ]
    )
    issue, event = parse_issue_details(text)
    assert issue["shortId"] == "APP-1" and issue["metadata"]["type"] == "KeyError"
    assert event is not None and event["release"] == {"version": "app@abc1234"}
    cause, raised = event["entries"][0]["data"]["values"]
    assert (cause["type"], raised["type"]) == ("ValueError", "KeyError")
    first, second = raised["stacktrace"]["frames"]
    assert first["context"] == [[12, "    from app import db"]]  # source, not a Ruby frame
    assert (second["filename"], second["lineNo"], second["module"]) == (
        "app/build.py",
        30,
        "app.build",
    )


async def test_relative_times_of_the_issue_list_become_times() -> None:
    def issue(n: int, first: str, last: str) -> str:
        return "\n".join(
            [
                f"## {n}. [APP-{n}](https://acme.sentry.io/issues/APP-{n})",
                "",
                f"**Error {n}**",
                "",
                "- **Status**: unresolved",
                f"- **First seen**: {first}",
                f"- **Last seen**: {last}",
                "",
            ]
        )

    text = "Found **3** issues:\n\n" + "\n".join(
        [
            issue(1, "3 hours ago", "0 minutes ago"),
            issue(2, "1 day ago", "45 minutes ago"),
            issue(3, "2025-03-14", "N/A"),
        ]
    )
    now = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
    first, second, third = parse_issue_list(text, now)
    # The middle of the span the server rounded down to.
    assert first["firstSeen"] == "2026-11-30T08:30:00+00:00"
    assert first["lastSeen"] == "2026-11-30T11:59:30+00:00"
    assert second["firstSeen"] == "2026-11-29T00:00:00+00:00"  # 24 to 48 hours ago
    assert second["lastSeen"] == "2026-11-30T11:14:30+00:00"
    assert third["firstSeen"] == "2025-03-14T12:00:00+00:00"
    assert "lastSeen" not in third


async def _investigate(runtime: Runtime, inv: Investigation) -> Investigation:
    async def save(_: Investigation) -> None:
        return None

    loop = await runtime.loop_for(inv, save)
    return await loop.run(inv)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def git() -> AsyncIterator[McpToolset]:
    server = git_server()
    async with server:
        yield server


# Blind fixtures where the answer through the server differs from the recording's (issue 12).
SERVER_DIFFERS: frozenset[str] = frozenset()


@pytest.mark.parametrize(
    "name", [not_yet(n, SERVER_DIFFERS, "another suspect through the server") for n in SCENARIOS]
)
async def test_the_real_server_leads_to_the_same_suspect_as_the_recording(
    live: Live, git: McpToolset, name: str
) -> None:
    s = live.scenarios[name]
    expected = json.loads((s.folder / "expected.json").read_text())
    tmp = Path(tempfile.mkdtemp())
    try:
        repo = await clone(s, tmp)
        results = {}
        live.clock.set(s.scope.asked_at)
        for how, sentry in (("recorded", None), ("live", live.server)):
            runtime = Runtime.recorded(s, repo, git=git, sentry=sentry, can_ask=False)
            inv = await _investigate(runtime, Investigation.open(s.question, s.scope))
            assert inv.diagnosis is not None and inv.diagnosis.suspect is not None, how
            results[how] = inv
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    recorded, live_inv = results["recorded"], results["live"]
    want = recorded.diagnosis.suspect  # type: ignore[union-attr]
    got = live_inv.diagnosis.suspect  # type: ignore[union-attr]
    assert (got.path, got.line_start, got.commit) == (want.path, want.line_start, want.commit)
    if name not in NOT_YET_FOUND:  # the same answer either way; right where it is found
        assert got.path == expected["fault"]["file"]
        assert got.commit == expected["commit"]

    # The live run read Sentry through the server: evidence with links to it.
    sentry = [e for e in live_inv.evidence if e.source == "sentry"]
    assert [e.tool for e in sentry] == ["sentry__search_issues", "sentry__get_issue_details"]
    assert all(e.link and e.link.startswith(f"http://{live.fake.host}/") for e in sentry)
    assert "## Event Details" in sentry[1].content


@pytest.mark.skipif(
    not (SHARED / "orders-npe").is_dir(), reason="needs ../shared/scenarios/orders-npe"
)
async def test_serve_reads_sentry_through_the_server_the_projects_file_declares(
    live: Live, tmp_path: Path
) -> None:
    """`incident-bot serve` starts the declared server once and investigates through it."""
    s = live.scenarios[ORDERS]
    scope = s.scope
    config = tmp_path / "projects.toml"
    config.write_text(
        f"""
[projects.{scope.project_key}]
repository = "{scope.repository}"
sentry_organization = "{scope.sentry_organization}"
sentry_project = "{scope.sentry_project}"
release_prefix = "{scope.release_prefix}"
language = "{scope.language}"
channels = ["*"]
{CONFIG}
""".replace('"--insecure-http"', f'"--insecure-http", "--host={live.fake.host}"')
    )
    port = free_port()
    before = len(live.fake.calls)
    async with FakeSlack(start_ts=f"{time.time():.6f}") as slack:
        env = {
            **os.environ,
            "SLACK_BOT_TOKEN": "xoxb-test",
            "SLACK_SIGNING_SECRET": SECRET,
            "SLACK_API_URL": slack.api_url,
            "DATABASE_URL": f"sqlite+aiosqlite:///{tmp_path / 'b.db'}",
            "INCIDENT_BOT_CONFIG": str(config),
            TOKEN_VARIABLE: TOKEN,
        }
        env.pop("GITHUB_TOKEN", None)
        proc = await asyncio.create_subprocess_exec(
            *(str(Path(sys.executable).with_name("incident-bot")), "serve", "--offline"),
            *("--scenario", str(SHARED / "orders-npe"), "--http", "--port", str(port)),
            env=env,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.PIPE,
        )
        try:
            body = urlencode(
                {
                    "command": "/investigate",
                    "text": s.question,
                    "user_id": "U1",
                    "channel_id": "C1",
                    "team_id": "T0FAKE",
                    "trigger_id": "t",
                    "response_url": slack.api_url,
                }
            )
            url = f"http://127.0.0.1:{port}/slack/events"
            async with aiohttp.ClientSession() as http, asyncio.timeout(60):
                while True:  # until the server listens
                    with contextlib.suppress(aiohttp.ClientConnectionError):
                        async with http.post(url, data=body, headers=signed(body)) as r:
                            assert r.status == 200
                            break
                    await asyncio.sleep(0.2)
            await slack.wait_for(lambda sl: "draft" in keys(sl), timeout=60)
        finally:
            proc.send_signal(signal.SIGTERM)
            _, err = await asyncio.wait_for(proc.communicate(), 30)
        assert proc.returncode == 0, err.decode()[-2000:]
    served = live.fake.calls[before:]
    assert any("/issues/" in c.path for c in served), served
    expected = json.loads((SHARED / "orders-npe" / "expected.json").read_text())
    (diagnosis,) = [
        json.dumps(m)
        for m in slack.messages("C1")
        if (m.get("metadata") or {}).get("event_payload", {}).get("key") == "diagnosis"
    ]
    assert expected["fault"]["file"].rsplit("/", 1)[-1] in diagnosis
    assert expected["commit"][:7] in diagnosis
