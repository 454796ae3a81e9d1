"""Configuration: secrets and addresses from the environment, projects from a TOML file.

A projects file (INCIDENT_BOT_CONFIG) looks like:

    [projects.orders]
    repository = "acme/orders"
    sentry_organization = "acme"
    sentry_project = "orders"
    release_prefix = "orders@"
    language = "es"
    channels = ["C0123456789"]      # "*" allows any channel
    approvers = ["U0123456789"]     # Slack user ids
    approver_group = "S0123456789"  # optional user group
    require_other_approver = true   # the requester may not approve their own draft
    code_mirror = "/var/lib/incident-bot/orders.git"  # a `git clone --mirror`, kept fresh
    code_url = "https://github.com/acme/orders.git"   # cloned from here when it is missing
    fetch_interval_seconds = 60     # at most one on-demand fetch per interval
    docs_corpus = "/var/lib/incident-bot/orders-docs" # `incident-bot export-corpus --out`
    docs_paths = ["docs/", "README.md"]   # else: the Markdown of the mirror at the release
    issues_repository = "acme/orders-issues"  # where drafts are published (default: repository)
    sentry_server = "sentry"        # the [servers.NAME] Sentry is read through (bot/mcp_servers.py)
    code_token_env = "ORDERS_GIT_TOKEN"  # the variable holding a token for a private code_url
    alert_channel = "C0ALERTS"      # where investigations started by alerts open their thread
    sentry_project_id = "4644290483746556"  # matches event alerts, which name the id only
    min_level = "error"             # alerts below this Sentry level are ignored (nothing stored)
    max_concurrent = 3              # runs at work at once; over it, a SKIPPED record

Without `code_mirror` the mirror is kept under INCIDENT_BOT_DATA_DIR (default
`.incident-bot/`), as are the docs indexes, one per revision.
"""

from __future__ import annotations

import tomllib
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, SecretStr, ValidationError
from pydantic_settings import BaseSettings, SettingsConfigDict

from agent.domain import Scope
from agent.errors import InputError


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="", extra="ignore")

    slack_bot_token: SecretStr | None = None
    slack_signing_secret: SecretStr | None = None
    slack_app_token: SecretStr | None = None
    slack_api_url: str = "https://slack.com/api/"
    github_api_url: str = "https://api.github.com"
    github_token: SecretStr | None = None
    # The login the token creates issues as (`my-app[bot]` for a GitHub App, whose token
    # cannot read GET /user); without it the publisher asks GET /user once.
    github_login: str | None = None
    # A note on the Sentry issue linking the published one (agent.publish.sentry); this
    # token writes, and is not the read token of the Sentry MCP server.
    sentry_api_url: str = "https://sentry.io"
    sentry_write_token: SecretStr | None = None
    # Sentry's integration webhooks (POST /hooks/sentry) are signed with its client secret.
    sentry_client_secret: SecretStr | None = None
    database_url: str | None = None
    incident_bot_config: Path | None = None
    # Mirrors and docs indexes of the projects that name no path of their own.
    incident_bot_data_dir: Path = Path(".incident-bot")
    # How long a job or a thread stays with a process that stopped answering.
    incident_bot_lease_seconds: float = Field(default=30.0, gt=0)
    # How often workers look for jobs when other processes' jobs wake them (PostgreSQL).
    incident_bot_poll_seconds: float = Field(default=2.0, gt=0)
    # Runs at work at once across all projects (None: no cap); over it, a SKIPPED record.
    incident_bot_max_concurrent: int | None = Field(default=None, ge=1)
    # An alert for a Sentry issue investigated (or skipped) this recently joins that record.
    incident_bot_coalesce_minutes: float = Field(default=60.0, ge=0)
    # At start, Sentry issues first seen this long ago or less with no investigation are
    # queued (0: no backfill).
    incident_bot_backfill_hours: float = Field(default=24.0, ge=0)


class Project(BaseModel):
    key: str
    repository: str
    sentry_organization: str
    sentry_project: str
    release_prefix: str = ""
    language: str = "en"
    channels: list[str] = Field(default_factory=list)
    approvers: list[str] = Field(default_factory=list)
    approver_group: str | None = None
    require_other_approver: bool = False
    window_hours: int = 24
    # The code: a local mirror clone the bot fetches at start and when a release is missing.
    code_mirror: Path | None = None
    code_url: str | None = None
    fetch_interval_seconds: float = Field(default=60.0, ge=0)
    # The docs: a folder written by `incident-bot export-corpus` (docs + manifest + index),
    # else the Markdown under docs_paths in the mirror, at the revision that ran.
    docs_corpus: Path | None = None
    docs_paths: list[str] = Field(default_factory=lambda: ["docs/", "README.md"])
    # Where approved drafts are published; the code repository when unset.
    issues_repository: str | None = None
    # The declared MCP server ([servers.NAME]) Sentry is read through; the one declared
    # Sentry server when unset.
    sentry_server: str | None = None
    # The environment variable holding a token for a private code_url (never the token).
    code_token_env: str | None = Field(default=None, pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")

    @property
    def publishes_to(self) -> str:
        return self.issues_repository or self.repository

    # Alerts (bot/usecases/alerts.py): the channel their threads open in, the Sentry project
    # id event alerts name, the lowest Sentry level investigated, and a concurrency cap.
    alert_channel: str | None = None
    sentry_project_id: str | None = None
    min_level: Literal["debug", "info", "warning", "error", "fatal"] = "error"
    max_concurrent: int | None = Field(default=None, ge=1)

    @classmethod
    def for_scope(cls, scope: Scope, **settings: Any) -> Project:
        """The project a recorded incident's scope describes (serving it offline, tests)."""
        hours = int((scope.until - scope.since).total_seconds() // 3600) or 24
        return cls(
            key=scope.project_key,
            repository=scope.repository,
            sentry_organization=scope.sentry_organization,
            sentry_project=scope.sentry_project,
            release_prefix=scope.release_prefix,
            language=scope.language,
            **({"window_hours": hours} | settings),
        )

    def scope(self, since: datetime, until: datetime, asked_at: datetime | None = None) -> Scope:
        """What an investigation of this project may read, over a time window."""
        return Scope(
            project_key=self.key,
            repository=self.repository,
            sentry_organization=self.sentry_organization,
            sentry_project=self.sentry_project,
            release_prefix=self.release_prefix,
            language=self.language,
            since=since,
            until=until,
            asked_at=asked_at,
            issues_repository=self.issues_repository,
        )

    def allows(self, channel: str) -> bool:
        return "*" in self.channels or channel in self.channels


class Projects(BaseModel):
    projects: dict[str, Project]

    @classmethod
    def load(cls, path: Path) -> Projects:
        try:
            raw = tomllib.loads(path.read_text(encoding="utf-8"))
        except (OSError, tomllib.TOMLDecodeError) as exc:
            raise InputError(f"cannot read the projects file {path}: {exc}") from None
        try:
            return cls(
                projects={
                    key: Project(key=key, **value)
                    for key, value in (raw.get("projects") or {}).items()
                }
            )
        except (ValidationError, TypeError) as exc:
            raise InputError(f"the projects file {path} is not valid: {exc}") from None

    def for_channel(self, channel: str) -> list[Project]:
        return [p for p in self.projects.values() if p.allows(channel)]

    def choose(self, channel: str, name: str | None) -> Project:
        """The project a request in `channel` is about; InputError says why none fits."""
        allowed = self.for_channel(channel)
        if name is not None:
            project = self.projects.get(name)
            if project is None:
                known = ", ".join(sorted(p.key for p in allowed)) or "none"
                raise InputError(f"unknown project `{name}` (projects here: {known})")
            if project not in allowed:
                raise InputError(f"project `{name}` may not be investigated from this channel")
            return project
        if not allowed:
            raise InputError("this channel is not authorized for any project")
        if len(allowed) > 1:
            names = ", ".join(sorted(p.key for p in allowed))
            raise InputError(f"name the project first: one of {names}")
        return allowed[0]
