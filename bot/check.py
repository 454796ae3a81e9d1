"""`incident-bot check`: the setup doctor. One line per check, ✓ or ✗ with the fix.

For the app: Slack (auth.test; the scopes manifest.yml asks for are granted). For each
project of the projects file: its channels (they exist, the bot is in them), Sentry
(the declared MCP server starts, lists its tools, reads the project's issues), the code
(the mirror clones or fetches; the releases of the project's recent events resolve to
commits), the docs (the index builds; how many sections), GitHub (the repository to
publish to is readable and the token may create issues there: a classic token by its
scopes and its account's role, a fine-grained one by a request GitHub refuses either way
— never by creating one). Exit 1 when a required check fails.
No secret is printed: every line is scrubbed of the values of the secrets configured.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from agent.errors import InputError
from agent.tools.mcp import McpToolset
from agent.tools.sentry_mcp import sentry_pins
from bot.config import Project, Projects, Settings
from bot.mcp_servers import ServerConfig, load_servers
from bot.mirror import Mirror
from bot.releases import Releases, ResolvedReleases
from bot.sources import docs_of, mirror_of, sentry_config_of

# The bot scopes manifest.yml asks for (tests/bot/test_check.py keeps the two equal).
SCOPES = (
    "commands",
    "chat:write",
    "channels:history",
    "groups:history",
    "usergroups:read",
    "channels:read",
    "groups:read",
)
ISSUE_PERMISSIONS = ("admin", "maintain", "push", "triage")
RELEASES_SAMPLED = 3


@dataclass
class Line:
    ok: bool
    what: str
    detail: str
    fix: str = ""
    required: bool = True

    def render(self) -> str:
        mark = "✓" if self.ok else "✗"
        detail = " ".join(self.detail.split())  # one line, whatever a server answered
        if len(detail) > 240:
            detail = detail[:239] + "…"
        text = f"{mark} {self.what}: {detail}"
        if not self.ok and self.fix:
            text += f" — fix: {self.fix}"
        if not self.ok and not self.required:
            text += " (not required)"
        return text


class Doctor:
    def __init__(self, settings: Settings, environ: Mapping[str, str]) -> None:
        self.settings = settings
        self.environ = environ
        self.lines: list[Line] = []
        self.secrets: set[str] = set()
        for value in (
            settings.slack_bot_token,
            settings.slack_signing_secret,
            settings.slack_app_token,
            settings.github_token,
            settings.sentry_write_token,
        ):
            if value is not None and value.get_secret_value():
                self.secrets.add(value.get_secret_value())

    def add(self, line: Line) -> None:
        self.lines.append(line)
        print(self.scrub(line.render()), flush=True)

    def scrub(self, text: str) -> str:
        for secret in sorted(self.secrets, key=len, reverse=True):
            if len(secret) >= 4:
                text = text.replace(secret, "***")
        return text

    # -- Slack -------------------------------------------------------------------------

    async def slack(self, projects: Projects) -> None:
        token = self.settings.slack_bot_token
        if token is None or not token.get_secret_value():
            self.add(Line(False, "Slack", "SLACK_BOT_TOKEN is not set", "export the bot token"))
            return
        client = AsyncWebClient(
            token=token.get_secret_value(), base_url=self.settings.slack_api_url
        )
        try:
            auth = await client.auth_test()
        except SlackApiError as exc:
            error = exc.response.get("error") if exc.response is not None else "error"
            self.add(
                Line(
                    False,
                    "Slack",
                    f"auth.test refused the token ({error})",
                    "set SLACK_BOT_TOKEN to the app's Bot User OAuth Token (xoxb-…) from "
                    "OAuth & Permissions, and reinstall the app if it was revoked",
                )
            )
            return
        except (aiohttp.ClientError, TimeoutError) as exc:
            self.add(
                Line(
                    False,
                    "Slack",
                    f"cannot reach {self.settings.slack_api_url}: {exc}",
                    "check SLACK_API_URL and the network",
                )
            )
            return
        self.add(Line(True, "Slack", f"auth.test: {auth.get('user')} in {auth.get('team')}"))
        granted = _header(auth.headers, "x-oauth-scopes")
        scopes = {s.strip() for s in (granted or "").split(",") if s.strip()}
        missing = [s for s in SCOPES if s not in scopes]
        if granted is None:
            self.add(
                Line(
                    False,
                    "Slack scopes",
                    "Slack did not say which scopes are granted",
                    "check the token is a bot token",
                    required=False,
                )
            )
        elif missing:
            self.add(
                Line(
                    False,
                    "Slack scopes",
                    f"missing {', '.join(missing)}",
                    "add them under OAuth & Permissions (or recreate the app from "
                    "manifest.yml) and reinstall it",
                )
            )
        else:
            self.add(Line(True, "Slack scopes", ", ".join(SCOPES)))
        for project in projects.projects.values():
            for channel in project.channels:
                await self._channel(client, project, channel)

    async def _channel(self, client: AsyncWebClient, project: Project, channel: str) -> None:
        what = f"{project.key}: channel {channel}"
        if channel == "*":
            self.add(Line(True, what, "any channel may investigate this project"))
            return
        try:
            info = (await client.conversations_info(channel=channel))["channel"]
        except SlackApiError as exc:
            error = exc.response.get("error") if exc.response is not None else "error"
            self.add(
                Line(
                    False,
                    what,
                    f"not found ({error})",
                    "put the channel's id (C…, from the channel's details) in `channels`",
                )
            )
            return
        if not info.get("is_member"):
            self.add(
                Line(
                    False,
                    what,
                    f"#{info.get('name')} exists but the bot is not in it",
                    f"/invite @incident-bot in #{info.get('name')}",
                )
            )
            return
        self.add(Line(True, what, f"#{info.get('name')}, the bot is a member"))

    # -- Sentry ------------------------------------------------------------------------

    async def sentry(
        self, project: Project, servers: Mapping[str, ServerConfig], started: dict[str, Any]
    ) -> Any:
        """The project's pinned Sentry view, or None when it cannot read the issues."""
        what = f"{project.key}: Sentry"
        try:
            config = sentry_config_of(project, servers)
            if config.name not in started:
                toolset = config.toolset(self.environ)
                started[config.name] = toolset
                await toolset.start()
            server: McpToolset = started[config.name]
        except Exception as exc:
            self.add(
                Line(
                    False,
                    what,
                    f"the MCP server does not start: {exc}",
                    "check [servers.*] in the projects file and `make setup` (npm ci)",
                )
            )
            return None
        view = server.view(pinned=sentry_pins(project.sentry_organization, project.sentry_project))
        tools = await view.get_tools()
        result = await view.call_tool(
            "search_issues", {"query": "is:unresolved", "sort": "date", "limit": 10}
        )
        if result.is_error:
            self.add(
                Line(
                    False,
                    what,
                    f"{len(tools)} tools, but reading the issues of "
                    f"{project.sentry_organization}/{project.sentry_project} failed: "
                    f"{result.text.strip()}",
                    "give the server's token (named in [servers.*].env) the org:read, "
                    "project:read and event:read scopes, and check sentry_organization and "
                    "sentry_project",
                )
            )
            return None
        issues = (result.data or {}).get("issues") or []
        self.add(Line(True, what, f"{len(tools)} tools; {len(issues)} unresolved issue(s) read"))
        return view, issues

    # -- code --------------------------------------------------------------------------

    async def code(self, project: Project, data_dir: Path) -> Mirror | None:
        what = f"{project.key}: code"
        try:
            mirror = mirror_of(project, data_dir, self.environ)
            existed = mirror.path.exists()
            await mirror.start()
        except InputError as exc:
            self.add(
                Line(
                    False,
                    what,
                    str(exc),
                    "check code_url (and code_token_env for a "
                    "private repository: a token with contents:read)",
                )
            )
            return None
        if existed and mirror.last_error:
            self.add(
                Line(
                    False,
                    what,
                    f"fetching {project.code_url} failed: {mirror.last_error}",
                    "check code_url and the token of code_token_env",
                )
            )
            return None
        head = await mirror.commit_of("HEAD")
        verb = "fetched" if existed else "cloned"
        self.add(Line(True, what, f"{verb} {mirror.path} (default branch at {(head or '?')[:12]})"))
        return mirror

    async def releases(self, project: Project, mirror: Mirror, view: Any, issues: list) -> None:
        what = f"{project.key}: releases"
        resolver = ResolvedReleases(view, Releases(mirror, project.release_prefix))
        seen: dict[str, str | None] = {}
        for issue in issues[:RELEASES_SAMPLED]:
            ref = str(issue.get("shortId") or issue.get("id"))
            result = await resolver.call_tool("get_issue_details", {"issueId": ref})
            release = (result.data or {}).get("release") if not result.is_error else None
            if release:
                seen[release["version"]] = release["commit"]
        if not seen:
            self.add(Line(True, what, "no recent event names a release (nothing to resolve)"))
            return
        bad = [v for v, c in seen.items() if c is None]
        if bad:
            self.add(
                Line(
                    False,
                    what,
                    f"{len(seen) - len(bad)} of {len(seen)} resolve; `{bad[0]}` names no commit "
                    "or tag of the repository",
                    "set release_prefix so that prefix + SHA is the release, or tag each "
                    "release in the repository (v1.4.2, 1.4.2 or app@1.4.2) and push the tags",
                )
            )
            return
        named = ", ".join(f"{v} → {c[:12]}" for v, c in seen.items() if c)
        self.add(Line(True, what, f"{len(seen)} of {len(seen)} resolve ({named})"))

    # -- docs --------------------------------------------------------------------------

    async def docs(self, project: Project, mirror: Mirror | None, data_dir: Path) -> None:
        what = f"{project.key}: docs"
        try:
            retriever: Any = await docs_of(project, mirror, data_dir)
            index = retriever.retriever if project.docs_corpus else await retriever.retriever()
            sections = index.index.doc_count
        except Exception as exc:
            self.add(
                Line(
                    False,
                    what,
                    f"the index does not build: {exc}",
                    "check docs_paths (or docs_corpus)",
                )
            )
            return
        where = str(project.docs_corpus) if project.docs_corpus else ", ".join(project.docs_paths)
        if sections == 0:
            self.add(
                Line(
                    False,
                    what,
                    f"no Markdown under {where}",
                    "set docs_paths to where the project's Markdown docs live",
                    required=False,
                )
            )
            return
        self.add(Line(True, what, f"{sections} section(s) indexed from {where}"))

    # -- GitHub ------------------------------------------------------------------------

    async def github(self, project: Project) -> None:
        repo = project.publishes_to
        what = f"{project.key}: GitHub {repo}"
        token = self.settings.github_token
        if token is None or not token.get_secret_value():
            self.add(
                Line(
                    False,
                    what,
                    "GITHUB_TOKEN is not set",
                    "a fine-grained token with contents:read and issues:write on it",
                )
            )
            return
        url = f"{self.settings.github_api_url.rstrip('/')}/repos/{repo}"
        headers = {
            "Authorization": f"Bearer {token.get_secret_value()}",
            "Accept": "application/vnd.github+json",
        }
        probe: tuple[int, str | None] = (0, None)
        limited: str | None = None
        try:
            async with aiohttp.ClientSession(
                timeout=aiohttp.ClientTimeout(total=20), headers=headers
            ) as http:
                async with http.get(url) as response:
                    answer = await response.json(content_type=None)
                    body = answer if isinstance(answer, dict) else {}
                    status = response.status
                    # Scopes name a classic (or OAuth) token; an empty header tells nothing.
                    scopes = response.headers.get("X-OAuth-Scopes", "").strip() or None
                    limited = rate_limited(status, response.headers)
                if status == 200 and scopes is None and body.get("has_issues") is not False:
                    async with http.post(f"{url}/issues", json={}) as response:
                        await response.read()
                        wanted = response.headers.get("X-Accepted-GitHub-Permissions")
                        probe = (response.status, wanted)
                        limited = rate_limited(response.status, response.headers)
        except (aiohttp.ClientError, TimeoutError, ValueError) as exc:
            self.add(
                Line(
                    False,
                    what,
                    f"cannot reach {self.settings.github_api_url}: {exc}",
                    "check GITHUB_API_URL",
                )
            )
            return
        if limited is not None:
            self.add(
                Line(
                    False,
                    what,
                    f"GitHub is rate limiting the token ({limited})",
                    "run check again then",
                )
            )
        elif status in (401, 403, 404):
            granted = {s.strip() for s in (scopes or "").split(",") if s.strip()}
            if scopes is not None and "repo" not in granted:  # a classic token, too narrow
                detail = f": its scopes ({', '.join(sorted(granted)) or 'none'}) lack repo"
                fix = "give GITHUB_TOKEN the repo scope, or use a fine-grained token"
            else:
                detail, fix = "", "give GITHUB_TOKEN access to this repository"
            self.add(
                Line(
                    False,
                    what,
                    f"not readable with the token (HTTP {status}){detail}",
                    f"{fix} (contents:read, issues:write)",
                )
            )
        elif status != 200:
            self.add(Line(False, what, f"GitHub answered HTTP {status}", "try again later"))
        elif body.get("has_issues") is False:
            self.add(Line(False, what, "issues are turned off", "turn Issues on in its settings"))
        elif scopes is not None:
            self.add(classic(what, scopes, body))
        else:
            self.add(fine_grained(what, *probe))


def rate_limited(status: int, headers: Mapping[str, str]) -> str | None:
    """How long GitHub asks to wait, when a 403 or 429 is its rate limit and not a refusal."""
    if status not in (403, 429):
        return None
    if headers.get("Retry-After"):
        return f"retry after {headers['Retry-After']} s"
    if headers.get("X-RateLimit-Remaining") == "0":
        return f"the limit resets at {headers.get('X-RateLimit-Reset', '?')} (epoch seconds)"
    return "HTTP 429" if status == 429 else None


def fine_grained(what: str, status: int, wanted: str | None) -> Line:
    """What an issue with no title got: a fine-grained (or app) token's permissions can be read
    nowhere, but GitHub checks them before it reads the request, so that issue is refused with
    403 (X-Accepted-GitHub-Permissions naming what is missing) when the token may not create
    issues, and with 422 — nothing created — when it may."""
    if status == 422:
        return Line(True, what, "readable; the token may create issues (a dry request)")
    if status in (403, 404):
        return Line(
            False,
            what,
            "readable, but the token may not create issues "
            f"({f'GitHub wants {wanted}' if wanted else f'HTTP {status}'})",
            "give GITHUB_TOKEN issues:write on this repository",
        )
    return Line(
        False, what, f"GitHub answered HTTP {status} to a dry request for issues", "try again later"
    )


def classic(what: str, header: str, body: dict[str, Any]) -> Line:
    """A classic token (or an OAuth app's): its scopes come with every answer, the role of its
    account in the repository is the repository's `permissions`."""
    scopes = {s.strip() for s in header.split(",") if s.strip()}
    if "repo" not in scopes and ("public_repo" not in scopes or body.get("private", True)):
        return Line(
            False,
            what,
            f"readable, but the token's scopes ({', '.join(sorted(scopes)) or 'none'}) may not "
            "create issues",
            "give GITHUB_TOKEN the repo scope, or use a fine-grained token with issues:write",
        )
    permissions = body.get("permissions") or {}
    if not any(permissions.get(p) for p in ISSUE_PERMISSIONS):
        return Line(
            False,
            what,
            "readable, but the token's account may only read it (read-only access): issues "
            "would lose their labels",
            "give the account triage or write access to this repository",
        )
    return Line(True, what, "readable; the token's scopes and its account may create issues")


def _header(headers: Any, name: str) -> str | None:
    for key, value in dict(headers or {}).items():
        if key.lower() == name:
            return ", ".join(value) if isinstance(value, list) else str(value)
    return None


async def check(settings: Settings | None = None, environ: Mapping[str, str] | None = None) -> int:
    environ = os.environ if environ is None else environ
    settings = settings or Settings()
    if settings.incident_bot_config is None:
        print(
            "✗ projects file: INCIDENT_BOT_CONFIG is not set — fix: export "
            "INCIDENT_BOT_CONFIG=/path/to/projects.toml (format in bot/config.py)"
        )
        return 1
    projects = Projects.load(settings.incident_bot_config)
    servers = load_servers(settings.incident_bot_config)
    doctor = Doctor(settings, environ)
    for project in projects.projects.values():
        if project.code_token_env and environ.get(project.code_token_env):
            doctor.secrets.add(environ[project.code_token_env])
    for config in servers.values():
        doctor.secrets.update(v for k in config.env.values() if (v := environ.get(k)))
    print(
        f"incident-bot check: {len(projects.projects)} project(s) in {settings.incident_bot_config}"
    )
    data_dir = settings.incident_bot_data_dir.absolute()
    await doctor.slack(projects)
    started: dict[str, McpToolset] = {}
    try:
        for project in projects.projects.values():
            sentry = await doctor.sentry(project, servers, started)
            mirror = await doctor.code(project, data_dir)
            if mirror is not None and sentry is not None:
                await doctor.releases(project, mirror, *sentry)
            await doctor.docs(project, mirror, data_dir)
            await doctor.github(project)
    finally:
        await asyncio.gather(*(s.aclose() for s in started.values()), return_exceptions=True)
    failed = [line for line in doctor.lines if not line.ok and line.required]
    print(f"{len(failed)} required check(s) failed" if failed else "all required checks pass")
    return 1 if failed else 0
