"""Two live projects for `serve`, `investigate --project` and `check` against fakes.

Each project's Sentry data is a recorded incident moved to the present (so that "the last
24 hours" of a live run holds it), served by one fake Sentry to the real
@sentry/mcp-server; its code is a local bare repository (file://) whose newest release
commit is held back, to be pushed once the bot has cloned its mirror. The catalog
project names its releases by tags (`catalog-api@1.3.0` for tag v1.3.0).
"""

from __future__ import annotations

import json
import re
import subprocess
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from agent.tools.sentry_mcp import PACKAGE_ENTRY
from recorded.scenario import Scenario, load_scenario
from tests.conftest import ROOT

ENTRY = ROOT / PACKAGE_ENTRY
SENTRY_VARIABLE = "INCIDENT_BOT_TEST_SENTRY_TOKEN"
# Marker values for every secret: none may show up in a log, a fake's traffic or the database.
SECRETS = {
    "SLACK_BOT_TOKEN": "xoxb-MARKER-slack-bot-91c2",
    "SLACK_SIGNING_SECRET": "MARKER-signing-secret-5d1e",
    "GITHUB_TOKEN": "ghs-MARKER-github-2b8d",
    SENTRY_VARIABLE: "sntrys-MARKER-sentry-read-7f3a",
    "SENTRY_WRITE_TOKEN": "sntrys-MARKER-sentry-write-1a9c",
    "ORDERS_GIT_TOKEN": "MARKER-git-token-4e6f",
    # Set though the run has no use for them (--http; no Sentry webhook): still never shown.
    "SLACK_APP_TOKEN": "xapp-MARKER-slack-app-6b0e",
    "SENTRY_CLIENT_SECRET": "MARKER-sentry-client-secret-8d2a",
}
_ISO = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:?\d{2})?$")


def git(*args: str, cwd: Path | None = None) -> str:
    done = subprocess.run(
        ["git", *args], cwd=cwd, capture_output=True, text=True, check=False, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


@dataclass
class LiveProject:
    key: str
    channel: str
    scenario: Scenario
    upstream: Path  # the bare repository code_url names
    source: Path  # every commit, to push from
    release: str  # the running commit, held back until `push_release`
    tags: dict[str, str] = field(default_factory=dict)  # tag -> commit
    issues_repository: str | None = None
    sentry_folder: Path = Path()
    expected: dict[str, Any] = field(default_factory=dict)
    since: datetime = datetime.min
    until: datetime = datetime.min

    @property
    def code_url(self) -> str:
        return self.upstream.resolve().as_uri()

    def push_release(self) -> None:
        source, upstream = str(self.source), str(self.upstream)
        git("-C", source, "push", "-q", upstream, f"{self.release}:refs/heads/main")
        for tag in [t for t, sha in self.tags.items() if sha == self.release]:
            git("-C", source, "push", "-q", upstream, f"refs/tags/{tag}")


def _shift(value: Any, delta: timedelta, versions: dict[str, str]) -> Any:
    if isinstance(value, dict):
        return {k: _shift(v, delta, versions) for k, v in value.items()}
    if isinstance(value, list):
        return [_shift(v, delta, versions) for v in value]
    if isinstance(value, str):
        if value in versions:
            return versions[value]
        if _ISO.match(value):
            moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
            aware = moment if moment.tzinfo else moment.replace(tzinfo=UTC)
            moved = (aware + delta).astimezone(UTC)
            return moved.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
    return value


def live_project(
    folder: Path,
    out: Path,
    channel: str,
    *,
    tag_releases: bool = False,
    issues_repository: str | None = None,
) -> LiveProject:
    scenario = load_scenario(folder)
    scope = scenario.scope
    work = out / scope.project_key
    work.mkdir(parents=True)
    source = work / "source.git"
    git("clone", "-q", "--bare", str(scenario.bundle.resolve()), str(source))
    commits = git("-C", str(source), "rev-list", "--reverse", "main").split()
    expected = json.loads((folder / "expected.json").read_text())
    release = commits[-1]
    upstream = work / "upstream.git"
    git("init", "-q", "--bare", "-b", "main", str(upstream))
    git("-C", str(source), "push", "-q", str(upstream), f"{release}~1:refs/heads/main")
    tags: dict[str, str] = {}
    versions: dict[str, str] = {}
    if tag_releases:
        for i, sha in enumerate(commits):
            tag = f"v1.{i}.0"
            git("-C", str(source), "tag", tag, sha)
            tags[tag] = sha
            versions[f"{scope.release_prefix}{sha}"] = f"{scope.release_prefix}1.{i}.0"
            if sha != release:
                git("-C", str(source), "push", "-q", str(upstream), f"refs/tags/{tag}")
    # The recording moved to now: its question is asked at this moment.
    asked = scope.asked_at or scope.until
    delta = datetime.now(UTC) - asked
    sentry = work / "sentry"
    for path in scenario.sentry.rglob("*.json"):
        target = sentry / path.relative_to(scenario.sentry)
        target.parent.mkdir(parents=True, exist_ok=True)
        data = _shift(json.loads(path.read_text("utf-8")), delta, versions)
        target.write_text(json.dumps(data), "utf-8")
    return LiveProject(
        key=scope.project_key,
        channel=channel,
        scenario=scenario,
        upstream=upstream,
        source=source,
        release=release,
        tags=tags,
        issues_repository=issues_repository,
        sentry_folder=sentry,
        expected=expected,
        since=scope.since + delta,
        until=scope.until + delta,
    )


def projects_file(
    path: Path, projects: list[LiveProject], sentry_host: str, **overrides: dict[str, Any]
) -> Path:
    """The projects file a team would write, for these projects and the fake Sentry."""
    lines = [
        "[servers.sentry]",
        'preset = "sentry"',
        'command = "node"',
        f'args = ["{ENTRY}", "--insecure-http", "--host={sentry_host}"]',
        f'env = {{ SENTRY_ACCESS_TOKEN = "{SENTRY_VARIABLE}" }}',
        "",
    ]
    for p in projects:
        scope = p.scenario.scope
        values: dict[str, Any] = {
            "repository": scope.repository,
            "sentry_organization": scope.sentry_organization,
            "sentry_project": scope.sentry_project,
            "release_prefix": scope.release_prefix,
            "language": scope.language,
            "channels": [p.channel],
            "code_url": p.code_url,
            "code_token_env": "ORDERS_GIT_TOKEN",
            # Every missing release may fetch at once: the test pushes one after the start.
            "fetch_interval_seconds": 0,
        }
        if p.issues_repository:
            values["issues_repository"] = p.issues_repository
        values |= overrides.get(p.key, {})
        lines.append(f'[projects."{p.key}"]')
        lines += [f"{k} = {json.dumps(v)}" for k, v in values.items()]
        lines.append("")
    path.write_text("\n".join(lines), "utf-8")
    return path
