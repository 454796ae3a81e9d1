"""Releases → commits through a real mirror: SHAs, short SHAs, tags in their usual spellings,
the previous release, and the release nothing in the repository names."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any, ClassVar

import pytest

from agent.ports import ToolResult, ToolSpec
from bot.mirror import Mirror, askpass
from bot.releases import Releases, ResolvedReleases, events_in, oldest_release, releases_in
from tests.gitrepo import git


@pytest.fixture
def upstream(tmp_path: Path) -> dict[str, Any]:
    work = tmp_path / "work"
    git(tmp_path, "init", "-q", "-b", "main", str(work))
    shas = []
    for i in range(4):
        (work / "app.py").write_text(f"VERSION = {i}\n")
        git(work, "add", "-A")
        git(work, "commit", "-q", "-m", f"release {i}")
        shas.append(git(work, "rev-parse", "HEAD"))
    git(work, "tag", "v1.4.1", shas[1])
    git(work, "tag", "v1.4.2", shas[2])
    git(work, "tag", "app@2.0.0", shas[3])
    return {"url": work.resolve().as_uri(), "shas": shas, "work": work}


async def mirror_of(upstream: dict[str, Any], tmp_path: Path) -> Mirror:
    mirror = Mirror(tmp_path / "mirror.git", upstream["url"], min_interval=0)
    await mirror.start()
    return mirror


@pytest.mark.parametrize(
    ("version", "commit", "via"),
    [
        ("app@{2}", 2, "sha"),  # prefix + full SHA
        ("app@{2:7}", 2, "sha"),  # prefix + short SHA
        ("{2:10}", 2, "sha"),  # a bare short SHA
        ("app@v1.4.2", 2, "tag v1.4.2"),
        ("app@1.4.2", 2, "tag v1.4.2"),  # the tag has a v, the release not
        ("1.4.2", 2, "tag v1.4.2"),  # without the prefix
        ("app@2.0.0", 3, "tag app@2.0.0"),  # the tag carries the app's name
    ],
)
async def test_a_release_names_a_commit_by_sha_or_by_tag(
    upstream: dict[str, Any], tmp_path: Path, version: str, commit: int, via: str
) -> None:
    shas = upstream["shas"]
    version = version.replace("{2}", shas[2]).replace("{2:7}", shas[2][:7])
    version = version.replace("{2:10}", shas[2][:10])
    releases = Releases(await mirror_of(upstream, tmp_path), "app@")
    release = await releases.resolve(version)
    assert (release.commit, release.via) == (shas[commit], via)


async def test_the_previous_release_is_the_previous_tag_else_the_parent(
    upstream: dict[str, Any], tmp_path: Path
) -> None:
    shas = upstream["shas"]
    releases = Releases(await mirror_of(upstream, tmp_path), "app@")
    tagged = await releases.resolve("app@1.4.2")
    assert (tagged.previous, tagged.previous_via) == (shas[1], "tag v1.4.1")
    first = await releases.resolve(f"app@{shas[1]}")
    assert (first.previous, first.previous_via) == (shas[0], "parent commit")
    assert f"{shas[1][:12]}..{shas[2][:12]}" in tagged.note()


async def test_a_release_tagged_after_the_last_fetch_is_fetched_once(
    upstream: dict[str, Any], tmp_path: Path
) -> None:
    mirror = await mirror_of(upstream, tmp_path)
    releases = Releases(mirror, "app@")
    git(upstream["work"], "tag", "v1.5.0", upstream["shas"][3])
    before = mirror.fetches
    assert (await releases.resolve("app@1.5.0")).commit == upstream["shas"][3]
    assert mirror.fetches == before + 1


async def test_an_unresolvable_release_reads_the_default_branch_and_says_so(
    upstream: dict[str, Any], tmp_path: Path
) -> None:
    mirror = await mirror_of(upstream, tmp_path)
    release = await Releases(mirror, "app@").resolve("app@9.9.9")
    assert release.commit is None and release.default_branch == upstream["shas"][3]
    assert "names no commit or tag" in release.note()
    # What a model reads: which revision to read instead, not to ask, and to say so.
    assert f"read the code at the default branch ({upstream['shas'][3][:12]})" in release.note()
    assert "instead of asking" in release.note() and "uncertainties" in release.note()

    class Details:
        name = "sentry"
        pinned: ClassVar[dict[str, str]] = {"organizationSlug": "acme"}

        async def get_tools(self) -> list[ToolSpec]:
            return []

        async def call_tool(self, name: str, arguments: dict[str, Any]) -> ToolResult:
            event = {
                "release": {"version": "app@9.9.9"},
                "tags": [{"key": "release", "value": "app@9.9.9"}, {"key": "env", "value": "p"}],
            }
            return ToolResult(text="# Issue", title="x", source="sentry", data={"event": event})

    wrapped = ResolvedReleases(Details(), Releases(mirror, "app@"))
    assert wrapped.pinned == {"organizationSlug": "acme"}
    result = await wrapped.call_tool("get_issue_details", {})
    assert result.data["event"]["release"] is None
    assert result.data["event"]["tags"] == [{"key": "env", "value": "p"}]
    assert "names no commit or tag" in result.text and result.text.startswith("# Issue")


async def test_the_token_of_a_private_remote_reaches_git_only_through_askpass(
    upstream: dict[str, Any], tmp_path: Path
) -> None:
    token = "MARKER-private-token-0c3d"
    mirror = Mirror(tmp_path / "private.git", upstream["url"], min_interval=0, token=lambda: token)
    await mirror.start()
    assert await mirror.fetch(force=True)
    config = (tmp_path / "private.git" / "config").read_text()
    assert token not in config and "credential" not in config
    assert token not in upstream["url"]
    script = askpass()
    assert token not in script.read_text()
    env = {**os.environ, "INCIDENT_BOT_GIT_TOKEN": token}
    assert ask(script, "Password for 'https://x-access-token@github.com': ", env) == token
    assert ask(script, "Username for 'https://github.com': ", env) == "x-access-token"


def ask(script: Path, prompt: str, env: dict[str, str]) -> str:
    done = subprocess.run(
        [str(script), prompt], env=env, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


async def test_a_mirror_follows_the_code_url_configuration_names(
    upstream: dict[str, Any], tmp_path: Path
) -> None:
    await mirror_of(upstream, tmp_path)
    moved = tmp_path / "moved.git"
    git(tmp_path, "clone", "-q", "--bare", str(upstream["work"]), str(moved))
    mirror = Mirror(tmp_path / "mirror.git", moved.resolve().as_uri(), min_interval=0)
    await mirror.start()
    assert git(tmp_path / "mirror.git", "config", "remote.origin.url") == moved.resolve().as_uri()
    assert mirror.last_error is None


def test_the_releases_of_an_event_listing_are_read_from_the_servers_markdown() -> None:
    text = "\n".join(
        [
            "## KeyError: 'sku'",
            '**release**: {"id":5,"version":"app@1.4.2","ref":null,"url":null,"dateCre...',
            "**tags**: environment=production, release=app@1.4.2, runtime=CPython",
            "## KeyError: 'sku'",
            "**release**: app@1.4.1",
            "**tags**: level=error, release=app@1.4.0",
            '**release**: {"id":7,"ref":null,"url":null,"dateCreated":"2026-11-27T09:...',
        ]
    )
    assert releases_in(text) == ["app@1.4.2", "app@1.4.1", "app@1.4.0"]


async def test_the_previous_release_is_the_newest_earlier_one_sentry_saw(
    upstream: dict[str, Any], tmp_path: Path
) -> None:
    shas = upstream["shas"]
    releases = Releases(await mirror_of(upstream, tmp_path), "app@")
    seen = ["app@2.0.0", f"app@{shas[0]}", "app@1.4.1", "app@9.9.9", "app@1.4.2"]
    # 2.0.0 is the running one, 9.9.9 names nothing: of the rest, 1.4.2 is the newest.
    assert await releases.previous_among(shas[3], seen) == (shas[2], "app@1.4.2")
    assert await releases.previous_among(shas[1], seen) == (shas[0], f"app@{shas[0]}")
    assert await releases.previous_among(shas[0], seen) is None  # nothing came before


class ListedSentry:
    """Sentry for one issue: its events' releases and the project's list of releases."""

    name = "sentry"
    pinned: ClassVar[dict[str, str]] = {}

    def __init__(self, running: str, seen: list[str], listed: list[str] | Exception) -> None:
        self.running, self.seen, self.listed = running, seen, listed

    async def get_tools(self) -> list[ToolSpec]:
        return []

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> ToolResult:
        if name == "get_issue_details":
            event = {"release": {"version": f"app@{self.running}"}}
            data = {"issue": {"id": "7", "shortId": "APP-7"}, "event": event}
            return ToolResult(text="# Issue", title="x", source="sentry", data=data)
        if name == "search_issue_events":
            text = "".join(f"**release**: app@{v}\n" for v in self.seen)
            return ToolResult(text=text, title="events", source="sentry")
        assert name == "find_releases"
        if isinstance(self.listed, Exception):
            raise self.listed
        rows = [{"version": f"app@{v}"} for v in self.listed]
        return ToolResult(text="# Releases", title="r", source="sentry", data={"releases": rows})


async def test_with_no_tag_the_release_sentry_lists_before_the_running_one_ran_without_the_errors(
    tmp_path: Path,
) -> None:
    work = tmp_path / "untagged"
    git(tmp_path, "init", "-q", "-b", "main", str(work))
    shas = []
    for i in range(4):
        (work / "app.py").write_text(f"VERSION = {i}\n")
        git(work, "add", "-A")
        git(work, "commit", "-q", "-m", f"change {i}")
        shas.append(git(work, "rev-parse", "HEAD"))
    mirror = Mirror(tmp_path / "m.git", work.resolve().as_uri(), min_interval=0)
    await mirror.start()

    async def release_of(seen: list[str], listed: list[str] | Exception) -> dict[str, Any]:
        sentry = ListedSentry(shas[3], seen, listed)
        wrapped = ResolvedReleases(sentry, Releases(mirror, "app@"))
        result = await wrapped.call_tool("get_issue_details", {"issueId": "APP-7"})
        return result.data["release"]

    # Sentry lists the running release, one before it, and one it cannot map to a commit.
    listed = await release_of([shas[3]], [shas[3], "0.9-unknown", shas[1], shas[0]])
    assert (listed["previous"], listed["released_before"]) == (shas[1], shas[1])
    assert listed["window_base"] is None  # weighed, not cut: only a tag bounds the window
    assert listed["previous_via"].endswith(f"app@{shas[1]}")
    assert listed["errors_in"] == shas[3]  # the oldest release its events name
    # The issue's own events show an earlier release: it failed there already, no bound.
    failed = await release_of([shas[3], shas[2]], [shas[3], shas[1]])
    assert failed["errors_in"] == shas[2]
    assert (failed["previous"], failed["window_base"], failed["released_before"]) == (
        shas[2],
        None,
        None,
    )
    # No list (the tool refused, or Sentry is down): the parent, which bounds nothing.
    for broken in ([], RuntimeError("502 from Sentry")):
        parent = await release_of([shas[3]], broken)
        assert (parent["previous"], parent["previous_via"], parent["released_before"]) == (
            shas[2],
            "parent commit",
            None,
        )


def test_the_oldest_event_names_the_release_that_already_failed() -> None:
    # Sentry lists newest first, but by time is what counts; without times, the last one.
    rows = [("app@c", None), ("app@b", None), (None, None), ("app@a", None)]
    assert oldest_release(rows) == "app@a"
    text = (
        "# Events\n\n## 1. Event `e3`\n\n- **Occurred At**: 2026-12-01T10:04:48Z\n"
        "**release**: app@new\n\n## 2. Event `e2`\n\n- **Occurred At**: 2026-11-27T22:41:16Z\n"
        "**release**: app@old\n\n## 3. Event `e1`\n\n- **Occurred At**: 2026-11-30T09:00:00Z\n"
        "**release**: app@mid\n"
    )
    listed = events_in(text)
    assert [v for v, _ in listed] == ["app@new", "app@old", "app@mid"]
    assert oldest_release(listed) == "app@old"
    assert oldest_release([]) is None
    # A listing that is not one section per event still gives its releases.
    assert events_in("**release**: app@x\n**release**: app@y\n") == [
        ("app@x", None),
        ("app@y", None),
    ]
