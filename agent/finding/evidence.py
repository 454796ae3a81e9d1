"""The evidence as the finding reads it: by the shape of each item's data, not by tool
name; the issue followed, its events, the stack, blame and the release."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from agent import stacktrace, trigger
from agent.domain import Evidence, Message

# -- the evidence, by shape ---------------------------------------------------------------


@dataclass(frozen=True)
class Record:
    """One stored evidence item as this module reads it."""

    id: str
    tool: str
    data: Any
    content: str
    path: str | None = None
    revision: str | None = None

    def has(self, key: str, kind: type = list) -> bool:
        return isinstance(self.data, Mapping) and isinstance(self.data.get(key), kind)


def from_evidence(items: Iterable[Evidence]) -> list[Record]:
    return [
        Record(ev.id, ev.tool, ev.data, ev.content, ev.path, ev.revision)
        for ev in items
        if ev.source != "local"
    ]


def from_results(results: Iterable[Any]) -> list[Record]:
    """Records from results shaped like the offline investigator's (name, arguments,
    content, data, evidence_id, is_error), in the order given."""
    out = []
    for r in results:
        if r.is_error or not r.evidence_id:
            continue
        path, revision = _call_target(r.arguments or {})
        out.append(Record(r.evidence_id, r.name, r.data, r.content, path, revision))
    return sorted(out, key=lambda rec: _evidence_number(rec.id))


def from_messages(messages: Sequence[Message]) -> list[Record]:
    """Records from a transcript: tool messages that stored evidence, with their calls."""
    calls = {c.id: c for m in messages for c in m.tool_calls}
    out = []
    for m in messages:
        if m.role != "tool" or not m.evidence_id or m.content.startswith("ERROR:"):
            continue
        call = calls.get(m.tool_call_id or "")
        path, revision = _call_target(call.arguments if call else {})
        content = m.content.split("\n", 1)[1] if m.content.startswith("[E") else m.content
        out.append(Record(m.evidence_id, m.name or "", m.data, content, path, revision))
    return out


def _call_target(arguments: Mapping[str, Any]) -> tuple[str | None, str | None]:
    revision = str(arguments.get("revision") or arguments.get("head") or "") or None
    path = arguments.get("path")
    if revision and ":" in revision:
        revision, _, path = revision.partition(":")
    return (str(path) if path else None), revision


def _evidence_number(evidence_id: str) -> int:
    digits = re.sub(r"\D", "", evidence_id)
    return int(digits) if digits else 0


@dataclass
class Items:
    """The evidence sorted by kind; the newest item of each kind last."""

    details: list[Record] = field(default_factory=list)
    searches: list[Record] = field(default_factory=list)
    event_lists: list[Record] = field(default_factory=list)
    changes: list[Record] = field(default_factory=list)
    blames: list[Record] = field(default_factory=list)
    listings: list[Record] = field(default_factory=list)
    matches: list[Record] = field(default_factory=list)
    docs: list[Record] = field(default_factory=list)
    files: list[Record] = field(default_factory=list)
    patches: list[Record] = field(default_factory=list)

    @classmethod
    def sort(cls, records: Iterable[Record]) -> Items:
        ev = cls()
        for r in records:
            if isinstance(r.data, Mapping) and isinstance(r.data.get("event"), Mapping):
                ev.details.append(r)
            elif r.has("issues"):
                ev.searches.append(r)
            elif r.has("events"):
                ev.event_lists.append(r)
            elif r.has("commits"):
                ev.changes.append(r)
            elif r.has("lines") and r.has("path", str):
                ev.blames.append(r)
            elif r.has("entries"):
                ev.listings.append(r)
            elif r.has("matches"):
                ev.matches.append(r)
            elif r.has("passages"):
                ev.docs.append(r)
            elif r.tool.endswith("git_show") and "diff --git" in r.content:
                ev.patches.append(r)
            elif r.tool.endswith("git_show") and r.path:
                ev.files.append(r)
        return ev

    def file(self, path: str) -> Record | None:
        for r in reversed(self.files):
            if r.path == path:
                return r
        return None

    def repo_files(self) -> list[str]:
        known: dict[str, None] = {}
        for r in self.listings:
            known.update(
                dict.fromkeys(str(e) for e in r.data["entries"] if not str(e).endswith("/"))
            )
        for r in [*self.files, *self.blames]:
            if r.path:
                known[r.path] = None
        for r in self.changes:
            for c in r.data["commits"]:
                known.update(
                    dict.fromkeys(f.get("path") for f in c.get("files") or [] if f.get("path"))
                )
        return list(known)


# -- the issue and its events --------------------------------------------------------------


def events_of(ev: Items) -> tuple[dict[str, Any], list[dict[str, Any]], list[str]]:
    """The issue followed (the newest details read), its events newest first, and the ids."""
    if not ev.details:
        return {}, [], []
    last = ev.details[-1]
    issue = dict(last.data.get("issue") or {})
    same = [
        r for r in ev.details if str((r.data.get("issue") or {}).get("id")) == str(issue.get("id"))
    ]
    pairs: dict[str, tuple[dict[str, Any], str]] = {}
    for r in same:
        e = r.data["event"]
        pairs.setdefault(str(e.get("eventID") or e.get("id") or r.id), (e, r.id))
    ordered = sorted(pairs.values(), key=lambda p: str(p[0].get("dateCreated") or ""), reverse=True)
    return issue, [e for e, _ in ordered], list(dict.fromkeys(i for _, i in ordered))


def stack_of(
    excs: list[stacktrace.ExceptionInfo], files: list[str]
) -> list[tuple[stacktrace.Frame, str]]:
    """Application frames that map to repository files, crash end first, every exception."""
    out: dict[tuple[str, int | None], tuple[stacktrace.Frame, str]] = {}
    for exc in reversed(excs):
        for frame, p in stacktrace.stack_paths(exc, files):
            out.setdefault((p, frame.lineno), (frame, p))
    if not out:  # no listing read: frames whose own path is a known file
        for exc in reversed(excs):
            for frame in reversed(exc.frames):
                p = stacktrace.normalize_path(frame.filename or "")
                if p in files and not stacktrace.is_library(frame):
                    out.setdefault((p, frame.lineno), (frame, p))
    return list(out.values())


def blamed(ev: Items, path: str, line: int) -> str | None:
    for r in reversed(ev.blames):
        if r.data.get("path") != path:
            continue
        for row in r.data["lines"]:
            # The oldest commit of a root or cut history holds the whole tree: not a change.
            if row.get("line") == line and row.get("commit") and not row.get("boundary"):
                return str(row["commit"])
    return None


# -- when ----------------------------------------------------------------------------------


def parse_time(value: Any) -> datetime | None:
    if isinstance(value, datetime):
        return value
    if not value:
        return None
    try:
        return datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        return None


def release_version(event: Mapping[str, Any]) -> str | None:
    release = event.get("release")
    if isinstance(release, Mapping):
        return str(release.get("version") or "") or None
    if isinstance(release, str) and release:
        return release
    return trigger._tags(event).get("release")


def release_time(event: Mapping[str, Any]) -> datetime | None:
    release = event.get("release")
    if not isinstance(release, Mapping):
        return None
    deploy = release.get("lastDeploy") if isinstance(release.get("lastDeploy"), Mapping) else {}
    for value in (
        release.get("dateReleased"),
        deploy.get("dateFinished"),
        release.get("dateCreated"),
    ):
        when = parse_time(value)
        if when is not None:
            return when
    return None
