"""The runtime over configured projects: what a bad projects file says, one Sentry server
per configuration, and a project whose sources did not start."""

from __future__ import annotations

import asyncio
import gc
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from agent.domain import Investigation, Scope, utcnow
from agent.errors import InputError, SourceUnavailable
from agent.ports import ToolResult, ToolSpec
from agent.sources import Sources
from bot.cli import main
from bot.config import Projects
from bot.mcp_servers import parse_servers
from bot.runtime import Runtime
from bot.sources import live_runtime, sentry_config_of

SERVER = """
[servers.{name}]
preset = "sentry"
command = "node"
args = ["x.js"]
env = {{ SENTRY_ACCESS_TOKEN = "TOKEN_{name}" }}
"""
PROJECT = """
[projects.{key}]
repository = "acme/{key}"
sentry_organization = "acme"
sentry_project = "{key}"
channels = ["C{key}"]
code_url = "file:///nowhere/{key}.git"
{extra}
"""


def projects_file(tmp_path: Path, servers: list[str], projects: dict[str, str]) -> Path:
    text = "".join(SERVER.format(name=n) for n in servers)
    text += "".join(PROJECT.format(key=k, extra=e) for k, e in projects.items())
    path = tmp_path / "projects.toml"
    path.write_text(text)
    return path


def load(path: Path) -> tuple[Projects, dict[str, Any]]:
    import tomllib

    return Projects.load(path), parse_servers(tomllib.loads(path.read_text()))


async def test_projects_share_the_server_of_their_sentry_configuration(tmp_path: Path) -> None:
    path = projects_file(
        tmp_path,
        ["eu", "us"],
        {
            "orders": 'sentry_server = "eu"',
            "billing": 'sentry_server = "eu"',
            "search": 'sentry_server = "us"',
        },
    )
    projects, servers = load(path)
    environ = {"TOKEN_eu": "sntrys-eu-token", "TOKEN_us": "sntrys-us-token"}
    runtime = await live_runtime(projects, servers, tmp_path / "data", environ)
    sentries = [s for s in runtime.shared if getattr(s, "name", "") in ("eu", "us")]
    assert sorted(s.name for s in sentries) == ["eu", "us"]  # two servers for three projects
    views = {k: v.sentry.inner for k, v in runtime.projects.items()}  # type: ignore[attr-defined]
    assert views["orders"].server is views["billing"].server is not views["search"].server
    assert views["orders"].pinned["projectSlugOrId"] == "orders"
    assert views["billing"].pinned["projectSlugOrId"] == "billing"
    assert runtime.sources("search").docs is not None
    assert runtime.ready() == {"orders": "starting", "billing": "starting", "search": "starting"}


def test_a_projects_file_that_cannot_serve_says_what_to_fix(tmp_path: Path) -> None:
    projects, servers = load(projects_file(tmp_path, ["eu", "us"], {"orders": ""}))
    with pytest.raises(InputError, match="several Sentry servers"):
        sentry_config_of(projects.projects["orders"], servers)
    projects, servers = load(projects_file(tmp_path, [], {"orders": ""}))
    with pytest.raises(InputError, match='preset = "sentry"'):
        sentry_config_of(projects.projects["orders"], servers)
    projects, servers = load(projects_file(tmp_path, ["eu"], {"orders": 'sentry_server = "x"'}))
    with pytest.raises(InputError, match="does not declare"):
        sentry_config_of(projects.projects["orders"], servers)
    with pytest.raises(InputError, match="code_token_env"):
        load(projects_file(tmp_path, ["eu"], {"orders": 'code_token_env = "ghp_abc def"'}))


def test_serve_and_worker_without_a_scenario_need_the_projects_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("INCIDENT_BOT_CONFIG", raising=False)
    monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxb-test")
    monkeypatch.setenv("SLACK_SIGNING_SECRET", "s")
    assert main(["serve", "--offline", "--http"]) == 2
    assert "INCIDENT_BOT_CONFIG" in capsys.readouterr().err
    path = projects_file(tmp_path, ["eu"], {"orders": ""})
    path.write_text(path.read_text().replace('code_url = "file:///nowhere/orders.git"', ""))
    monkeypatch.setenv("INCIDENT_BOT_CONFIG", str(path))
    monkeypatch.setenv("TOKEN_eu", "sntrys-eu")
    monkeypatch.setenv("DATABASE_URL", f"sqlite+aiosqlite:///{tmp_path / 'w.db'}")
    assert main(["worker", "--offline"]) == 2
    assert "project `orders` needs code_url" in capsys.readouterr().err
    gc.collect()  # a database connection left open would warn here (warnings are errors)


class Tools:
    def __init__(self, name: str) -> None:
        self.name = name
        self.calls = 0

    async def get_tools(self) -> list[ToolSpec]:
        return [ToolSpec(name="read")]

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> ToolResult:
        self.calls += 1
        return ToolResult(text="ok", title="ok", source="code")


async def test_a_project_whose_sources_did_not_start_stops_its_run_saying_why() -> None:
    attempts = []

    async def clone() -> None:
        attempts.append(1)
        if len(attempts) == 1:
            raise InputError("cannot clone https://example.invalid/orders.git")

    code = Tools("code")
    sources = Sources(sentry=Tools("sentry"), code=[code], files=None, docs=None, starts=[clone])  # type: ignore[arg-type]
    runtime = Runtime({"orders": sources})
    await runtime.start(wait=False)
    await asyncio.sleep(0)
    assert runtime.ready()["orders"] == "cannot clone https://example.invalid/orders.git"
    now = utcnow()
    scope = Scope(
        project_key="orders",
        repository="acme/orders",
        sentry_organization="acme",
        sentry_project="orders",
        since=now - timedelta(hours=1),
        until=now,
    )
    inv = Investigation.open("why?", scope)

    async def save(_: Investigation) -> None:
        return None

    loop = await runtime.loop_for(inv, save)  # the start is tried again: it works now
    assert len(attempts) == 2 and runtime.ready()["orders"] is None
    assert (await loop.catalog.call("code__read", {})).text == "ok"

    async def down() -> None:
        raise InputError("cannot clone https://example.invalid/orders.git")

    broken = Runtime({"orders": Sources(Tools("sentry"), [Tools("code")], None, None, [down])})  # type: ignore[arg-type]
    await broken.start(wait=False)
    loop = await broken.loop_for(inv, save)  # tried again, fails again
    with pytest.raises(SourceUnavailable, match="the code of project `orders`: cannot clone"):
        await loop.catalog.call("code__read", {})
    assert (await loop.catalog.call("sentry__read", {})).text == "ok"  # Sentry still answers
    await broken.aclose()
    await runtime.aclose()
    with pytest.raises(InputError, match="no sources are configured for project `billing`"):
        runtime.sources("billing")
