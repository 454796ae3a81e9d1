"""Sentry releases → commits of the project's mirror.

A release is `release_prefix` + a full SHA, a short SHA, or a version string named by a
tag of the repository (`v1.4.2`, `1.4.2`, `app@1.4.2`). The previous release is the
newest earlier release among the issue's events (Sentry's list of them), else the newest
tag before the running commit, else the newest earlier release in Sentry's list of the
project's releases (`find_releases`), else its parent. A tag bounds the change window,
previous..running; the release Sentry lists before ran without the issue's errors, so what
it held counts for less; an earlier release of the issue's own events already failed, and a
parent is no release: the window is then the commits before the errors.
A release that names nothing the mirror holds (after one fetch) is unresolved: no commit
is guessed for it, the evidence says so, and the investigator asks for the commit or
reads the default branch and says so.

`ResolvedReleases` wraps the Sentry toolset: the event of `get_issue_details` gets the
resolved commit as its release (`prefix + sha`, the form the investigators read), the
release as Sentry named it kept beside it, and the text the model reads gains one
line saying what the release was resolved to. The release's data also names `errors_in`,
the commit of the oldest release among the issue's events: it held the fault, so what it
held may be the cause even when it landed after the issue's first event (an old error whose
newer events a change brought back), and nothing newer is.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from agent.models.relevance import parse_time
from agent.ports import ToolResult, Toolset, ToolSpec
from agent.stacktrace import release_sha
from bot.mirror import Mirror

_SHA = re.compile(r"^[0-9a-fA-F]{7,40}$")
# How a previous release found in Sentry's list of releases is named (`previous_via`).
LISTED = "listed by Sentry as the release before it:"
_TAG = re.compile(r"^[\w.@+/-]{1,200}$")


@dataclass(frozen=True)
class Release:
    version: str  # as Sentry named it
    commit: str | None  # None: unresolved
    via: str  # "sha", "tag v1.4.2", or why it is unresolved
    previous: str | None = None
    previous_via: str | None = None
    default_branch: str | None = None  # what is read instead when unresolved

    def note(self) -> str:
        if self.commit is None:
            where = self.default_branch[:12] if self.default_branch else "HEAD"
            return (
                f"Release `{self.version}` names no commit or tag of the repository ({self.via}): "
                f"read the code at the default branch ({where}) instead of asking which commit "
                "ran, and say among the uncertainties that it may not be what was running."
            )
        text = f"Release `{self.version}` is commit {self.commit} ({self.via})."
        if self.previous:
            text += (
                f" The previous release is {self.previous} ({self.previous_via}): the change "
                f"window is {self.previous[:12]}..{self.commit[:12]}."
            )
        return text

    def data(self) -> dict[str, Any]:
        via = (self.previous_via or "") if self.previous else ""
        return {
            "version": self.version,
            "commit": self.commit,
            "via": self.via,
            "previous": self.previous,
            "previous_via": self.previous_via,
            # previous..commit is the change window when a tag marks the release before.
            # The release Sentry lists before it ran without this issue's errors: what it
            # already held is weighed down, not cut (its code is the context of the rest).
            # A parent commit or an earlier release of the issue's own events (it already
            # failed there) is neither.
            "window_base": self.previous if via.startswith("tag ") else None,
            "released_before": self.previous if via.startswith(LISTED) else None,
            "default_branch": self.default_branch,
        }


class Releases:
    """Resolves the releases of one project against its mirror."""

    def __init__(self, mirror: Mirror, prefix: str = "") -> None:
        self.mirror = mirror
        self.prefix = prefix

    def unprefixed(self, version: str) -> str:
        return version.removeprefix(self.prefix) if self.prefix else version

    def candidates(self, version: str) -> list[str]:
        """Tag names a version string may be: `1.4.2` ↔ `v1.4.2`, `app@1.4.2` → both."""
        bare = (
            version[len(self.prefix) :]
            if self.prefix and version.startswith(self.prefix)
            else version
        )
        names = [bare, version]
        if "@" in bare:
            names.append(bare.rsplit("@", 1)[1])
        out: list[str] = []
        for name in names:
            for form in (name, name[1:] if name[:1] in "vV" else f"v{name}"):
                if form and _TAG.match(form) and ".." not in form and form not in out:
                    out.append(form)
        return out

    async def resolve(self, version: str) -> Release:
        version = version.strip()
        release = await self._lookup(version)
        if release is None and await self.mirror.fetch():  # a release deployed since
            release = await self._lookup(version)
        if release is None:
            default = await self.mirror.commit_of("HEAD")
            return Release(version, None, "not in the mirror", default_branch=default)
        return release

    async def commit_of(self, version: str) -> str | None:
        """The commit a release names in the mirror as it is (no fetch), or None."""
        found = await self._lookup(version, previous=False)
        return found.commit if found is not None else None

    async def previous_among(self, running: str, versions: list[str]) -> tuple[str, str] | None:
        """The newest of the releases Sentry saw (`versions`) that came before `running`:
        (commit, version), or None when none of them is an earlier commit."""
        best: tuple[str, str] | None = None
        for version in versions:
            found = await self._lookup(version, previous=False)
            if found is None or found.commit in (None, running):
                continue
            commit = found.commit
            assert commit is not None
            if not await self.mirror.is_ancestor(commit, running):
                continue
            if best is None or await self.mirror.is_ancestor(best[0], commit):
                best = (commit, version)
        return best

    async def _lookup(self, version: str, *, previous: bool = True) -> Release | None:
        sha = release_sha({"release": {"version": version}}, self.prefix)
        bare = (
            version[len(self.prefix) :]
            if self.prefix and version.startswith(self.prefix)
            else version
        )
        if sha is None and _SHA.match(bare):
            sha = bare.lower()
        if sha is not None:
            commit = await self.mirror.commit_of(sha)
            if commit is not None:
                found = Release(version, commit, "sha")
                return await self._with_previous(found) if previous else found
        for tag in self.candidates(version):
            commit = await self.mirror.commit_of(f"refs/tags/{tag}")
            if commit is not None:
                found = Release(version, commit, f"tag {tag}")
                return await self._with_previous(found) if previous else found
        return None

    async def _with_previous(self, release: Release) -> Release:
        assert release.commit is not None
        # With no tag at all, `git describe` would walk the whole history to say so.
        code, tags = await self.mirror.git("for-each-ref", "--count=1", "refs/tags")
        if code == 0 and tags:
            code, tag = await self.mirror.git(
                "describe", "--tags", "--abbrev=0", f"{release.commit}^"
            )
        else:
            code, tag = 1, ""
        if code == 0 and tag:
            previous = await self.mirror.commit_of(f"refs/tags/{tag}")
            if previous is not None:
                return _replace(release, previous=previous, previous_via=f"tag {tag}")
        parent = await self.mirror.commit_of(f"{release.commit}^")
        if parent is not None:
            return _replace(release, previous=parent, previous_via="parent commit")
        return release


def _replace(release: Release, **changes: Any) -> Release:
    return Release(**{**release.__dict__, **changes})


class ResolvedReleases:
    """A Sentry toolset whose events carry the commit their release resolves to."""

    def __init__(self, inner: Toolset, releases: Releases) -> None:
        self.name = inner.name
        self.inner = inner
        self.releases = releases

    @property
    def pinned(self) -> dict[str, Any]:
        pinned = getattr(self.inner, "pinned", None)
        return pinned if isinstance(pinned, dict) else {}

    async def get_tools(self) -> list[ToolSpec]:
        return await self.inner.get_tools()

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> ToolResult:
        result = await self.inner.call_tool(name, arguments)
        data = result.data if isinstance(result.data, dict) else None
        event = data.get("event") if data else None
        if result.is_error or not isinstance(event, dict):
            return result
        version = _version(event)
        if not version:
            return result
        release = await self.releases.resolve(version)
        errors_in = None
        if release.commit is not None:
            rows = await self._events_seen(data, arguments)
            seen = list(dict.fromkeys(version for version, _ in rows if version))
            oldest = oldest_release(rows)
            if oldest == version:
                errors_in = release.commit
            elif oldest is not None:
                errors_in = await self.releases.commit_of(oldest)
            earlier = await self.releases.previous_among(release.commit, seen)
            if earlier is not None:
                release = _replace(
                    release,
                    previous=earlier[0],
                    previous_via=f"release {earlier[1]} among the issue's events",
                )
            elif not str(release.previous_via or "").startswith("tag "):
                # No tag marks the release before: Sentry's own list of releases does.
                listed = await self.releases.previous_among(release.commit, await self._listed())
                if listed is not None:
                    release = _replace(
                        release, previous=listed[0], previous_via=f"{LISTED} {listed[1]}"
                    )
        event = copy.deepcopy(event)
        if release.commit is not None:
            event["release"] = {"version": f"{self.releases.prefix}{release.commit}"}
        else:
            event["release"] = None  # nothing that ran is known: never a guessed commit
            event["tags"] = [
                t
                for t in event.get("tags") or []
                if not (isinstance(t, dict) and t.get("key") == "release")
            ]
        return result.model_copy(
            update={
                "text": f"{result.text}\n\n**Release (incident-bot):** {release.note()}",
                "data": {
                    **data,
                    "event": event,
                    "release": {**release.data(), "errors_in": errors_in},
                },
            }
        )

    async def _events_seen(
        self, data: dict[str, Any], arguments: dict[str, Any]
    ) -> list[tuple[str | None, datetime | None]]:
        """The issue's events as Sentry lists them (newest first): each one's release and
        when it occurred."""
        issue = data.get("issue") if isinstance(data.get("issue"), dict) else {}
        ref = arguments.get("issueId") or issue.get("shortId") or issue.get("id")
        if not ref:
            return []
        try:
            events = await self.inner.call_tool(
                "search_issue_events", {"issueId": str(ref), "limit": 100}
            )
        except Exception:  # Sentry's list is a refinement: the tags still name a previous
            return []
        if events.is_error:
            return []
        # The recording lists them as data; the server only in its Markdown.
        rows = (events.data or {}).get("events") if isinstance(events.data, dict) else None
        if rows:
            return [
                (str(e["release"]) if e.get("release") else None, _time(e.get("dateCreated")))
                for e in rows
                if isinstance(e, dict)
            ]
        return events_in(events.text)

    async def _listed(self) -> list[str]:
        """The project's releases as Sentry lists them (newest first)."""
        try:
            found = await self.inner.call_tool("find_releases", {})
        except Exception:  # a refinement: without it the window is the commits before the errors
            return []
        data = found.data if isinstance(found.data, dict) else {}
        rows = data.get("releases") if not found.is_error else None
        return [str(r["version"]) for r in rows or [] if isinstance(r, dict) and r.get("version")]


_RELEASE_JSON = re.compile(r'"version"\s*:\s*"([^"]+)"')
_RELEASE_TAG = re.compile(r"(?:^|[\s,])release=([^,\s]+)")


def oldest_release(rows: list[tuple[str | None, datetime | None]]) -> str | None:
    """The release of the oldest event listed (newest first, as Sentry lists them)."""
    named = [(when, i, version) for i, (version, when) in enumerate(rows) if version]
    if not named:
        return None
    if all(when is not None for when, _, _ in named):
        return min(named, key=lambda r: r[0])[2]  # type: ignore[arg-type,return-value]
    return named[-1][2]


_WHEN = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d(?::\d\d(?:\.\d+)?)?(?:Z|[+-]\d\d:?\d\d)?")


def events_in(text: str) -> list[tuple[str | None, datetime | None]]:
    """The (release, time) of each event of a Markdown listing: one `## ` section each."""
    out: list[tuple[str | None, datetime | None]] = []
    for section in re.split(r"^## ", text, flags=re.MULTILINE)[1:]:
        found = releases_in(section)
        when = _WHEN.search(section)
        out.append((found[0] if found else None, _time(when.group(0) if when else None)))
    if not any(version for version, _ in out):  # not one section per event: releases alone
        return [(version, None) for version in releases_in(text)]
    return out


def _time(value: Any) -> datetime | None:
    """An event's time; None without a zone, which could not be compared with the others."""
    when = parse_time(value)
    return when if when is not None and when.tzinfo is not None else None


def releases_in(text: str) -> list[str]:
    """Release versions in an event listing (the server's `**release**: {...}` lines and
    `release=` tags), each once, in order."""
    out: list[str] = []
    for line in text.splitlines():
        if line.startswith("**release**:"):
            value = line.split(":", 1)[1].strip()
            found = _RELEASE_JSON.findall(value) if value.startswith("{") else [value]
        elif line.startswith("**tags**:"):
            found = _RELEASE_TAG.findall(line)
        else:
            continue
        out += [v for v in found if v and v not in out]
    return out


def _version(event: dict[str, Any]) -> str | None:
    release = event.get("release")
    if isinstance(release, dict) and isinstance(release.get("version"), str):
        return release["version"]
    if isinstance(release, str) and release:
        return release
    for tag in event.get("tags") or []:
        if isinstance(tag, dict) and tag.get("key") == "release" and tag.get("value"):
            return str(tag["value"])
    return None
