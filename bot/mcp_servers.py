"""MCP servers declared in the projects file: one long-lived stdio session each.

Next to `[projects.*]` (bot/config.py), the projects file may declare servers:

    [servers.sentry]
    preset = "sentry"                 # the catalog + execute resolution, Markdown reading
    command = "node"
    args = ["node_modules/@sentry/mcp-server/dist/index.js", "--host=sentry.example.com"]
    env = { SENTRY_ACCESS_TOKEN = "SENTRY_ACCESS_TOKEN" }   # child variable = OUR variable
    allow = ["search_issues", "get_issue_details", "search_issue_events", "find_releases"]
    pinned = { regionUrl = "https://us.sentry.io" }         # optional, never secret

`env` names, for each variable the child gets, the variable of this process's
environment its value comes from: configuration never holds a secret (a value
that is not a variable name is refused, and so is `--access-token` in args).
The organization and project are pinned per investigation from the project
(`scope_pins`); everything not in `allow` is hidden from the model.
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Callable, Mapping
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError, field_validator

from agent.domain import Scope, utcnow
from agent.errors import InputError
from agent.tools.mcp import CatalogExecute, McpToolset
from agent.tools.sentry_mcp import (
    SENTRY_CATALOG,
    SENTRY_HIDDEN,
    SENTRY_READ_TOOLS,
    annotate_sentry,
    issue_url_to_id,
    sentry_pins,
)

_VARIABLE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_SECRET_FLAGS = ("--access-token", "--token", "--api-key", "--auth-token")


class Catalog(BaseModel):
    search: str
    execute: str


class ServerConfig(BaseModel):
    name: str
    command: str
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    allow: list[str] = Field(default_factory=list)
    pinned: dict[str, str] = Field(default_factory=dict)
    hide: list[str] = Field(default_factory=list)
    preset: Literal["sentry"] | None = None
    source: Literal["sentry", "code", "docs"] = "sentry"
    catalog: Catalog | None = None
    cwd: str | None = None
    result_cap: int = 12_000
    call_timeout: float = 30.0
    start_timeout: float = 60.0

    @field_validator("env")
    @classmethod
    def _names_only(cls, env: dict[str, str]) -> dict[str, str]:
        for child, ours in env.items():
            if not _VARIABLE.match(child) or not _VARIABLE.match(ours):
                raise ValueError(f"env.{child} must name an environment variable, not hold a value")
        if "SENTRY_DSN" in env:
            raise ValueError("SENTRY_DSN is never passed: the server would send its telemetry")
        return env

    @field_validator("args")
    @classmethod
    def _no_secrets(cls, args: list[str]) -> list[str]:
        for arg in args:
            if arg.split("=", 1)[0] in _SECRET_FLAGS:
                raise ValueError(f"{arg.split('=', 1)[0]} would put a secret in configuration")
        return args

    def child_env(self, environ: Mapping[str, str]) -> dict[str, str]:
        missing = [ours for ours in self.env.values() if not environ.get(ours)]
        if missing:
            raise InputError(
                f"the {self.name} MCP server needs the environment variable(s) "
                f"{', '.join(sorted(missing))}"
            )
        return {child: environ[ours] for child, ours in self.env.items()}

    def toolset(
        self, environ: Mapping[str, str] | None = None, clock: Callable[[], datetime] = utcnow
    ) -> McpToolset:
        """The server's toolset (not started). Secrets are read from `environ` now; `clock`
        is the server's (it answers with times relative to it)."""
        environ = os.environ if environ is None else environ
        sentry = self.preset == "sentry"
        catalog = (
            CatalogExecute(self.catalog.search, self.catalog.execute)
            if self.catalog is not None
            else (SENTRY_CATALOG if sentry else None)
        )
        return McpToolset(
            name=self.name,
            command=self.command,
            args=list(self.args),
            env=self.child_env(environ),
            allow=set(self.allow or (SENTRY_READ_TOOLS if sentry else ())),
            pinned=dict(self.pinned),
            source=self.source,
            annotate=partial(annotate_sentry, clock=clock) if sentry else None,
            result_cap=self.result_cap,
            call_timeout=self.call_timeout,
            start_timeout=self.start_timeout,
            cwd=self.cwd,
            catalog=catalog,
            hide=set(self.hide) | (SENTRY_HIDDEN if sentry else set()),
            rewrite=issue_url_to_id if sentry else None,
        )


def scope_pins(config: ServerConfig, scope: Scope) -> dict[str, Any]:
    """The arguments an investigation's scope pins on a server, over the static ones."""
    pins: dict[str, Any] = {}
    if config.preset == "sentry" or config.source == "sentry":
        pins = sentry_pins(scope.sentry_organization, scope.sentry_project)
    return {**pins, **config.pinned}


def parse_servers(
    raw: Mapping[str, Any], origin: str = "the projects file"
) -> dict[str, ServerConfig]:
    servers = raw.get("servers") or {}
    if not isinstance(servers, Mapping):
        raise InputError(f"{origin}: [servers] must be a table of servers")
    try:
        return {
            name: ServerConfig(name=name, **value)
            for name, value in servers.items()
            if isinstance(value, Mapping)
        }
    except (ValidationError, TypeError) as exc:
        raise InputError(f"{origin}: a server is not valid: {exc}") from None


def load_servers(path: Path) -> dict[str, ServerConfig]:
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise InputError(f"cannot read the projects file {path}: {exc}") from None
    return parse_servers(raw, str(path))


def sentry_server(
    servers: Mapping[str, ServerConfig], environ: Mapping[str, str] | None = None
) -> tuple[ServerConfig, McpToolset] | None:
    """The declared Sentry server and its toolset (not started: a worker starts it once
    and hands it to every investigation, e.g. `Runtime.recorded(sentry=...)`)."""
    for config in servers.values():
        if config.preset == "sentry":
            return config, config.toolset(environ)
    return None
