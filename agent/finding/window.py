"""When: the window the errors were seen in, events per hour around the release; and the
other issues of the window that share frames, the entry point or the release."""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

from agent import stacktrace
from agent.domain import AffectedWindow, RelatedIssue
from agent.finding.assess import stacktrace_last
from agent.finding.evidence import Items, parse_time, release_time, release_version

MAX_RELATED = 5


def window_of(
    issue: Mapping[str, Any], event: Mapping[str, Any] | None, cited: list[str]
) -> AffectedWindow | None:
    if not issue:
        return None
    first, last = parse_time(issue.get("firstSeen")), parse_time(issue.get("lastSeen"))
    try:
        count: int | None = int(issue.get("count"))  # type: ignore[arg-type]
    except (TypeError, ValueError):
        count = None
    release = release_version(event) if event else None
    deployed = release_time(event) if event else None
    w = AffectedWindow(
        first_seen=first, last_seen=last, events=count, release=release, release_at=deployed,
        evidence=cited[:1],
    )  # fmt: skip
    if first and last and count is not None:
        w.per_hour = round(count / max(1.0, (last - first).total_seconds() / 3600), 2)
    buckets = _buckets(issue)
    if deployed and buckets:
        before = [n for at, n in buckets if deployed - timedelta(hours=24) <= at < deployed]
        after = [n for at, n in buckets if deployed <= at <= deployed + timedelta(hours=24)]
        w.per_hour_before = round(sum(before) / max(1, len(before)), 2) if before else None
        w.per_hour_after = round(sum(after) / max(1, len(after)), 2) if after else None
    elif deployed and first and last and count is not None and first >= deployed:
        # No event of this issue before the release; the rate after it from its own span.
        w.per_hour_before = 0.0
        w.per_hour_after = round(count / max(1.0, (last - deployed).total_seconds() / 3600), 2)
    return w


def _buckets(issue: Mapping[str, Any]) -> list[tuple[datetime, int]]:
    """Sentry's `stats` of an issue ({"24h": [[epoch, n], ...]}) as hourly buckets."""
    stats = issue.get("stats")
    if not isinstance(stats, Mapping):
        return []
    out = []
    for series in stats.values():
        for point in series or []:
            try:
                out.append((datetime.fromtimestamp(int(point[0]), tz=UTC), int(point[1])))
            except (TypeError, ValueError, IndexError):
                continue
    return sorted(out)


# -- related issues --------------------------------------------------------------------------


def related(
    ev: Items,
    issue: Mapping[str, Any],
    stack: list[tuple[stacktrace.Frame, str]],
    window: AffectedWindow | None,
    t: dict[str, str],
) -> list[RelatedIssue]:
    if not ev.searches or not issue:
        return []
    own = str(issue.get("id"))
    # A file is named by its last two path components (a module path or a file path);
    # a function by its bare name, when it is specific enough to mean the same code.
    files = {"/".join(p.rsplit(".", 1)[0].split("/")[-2:]).lower() for _, p in stack}
    functions = {
        stacktrace_last(fr.function or "").lower()
        for fr, _ in stack
        if len(stacktrace_last(fr.function or "")) >= 4
    }
    release = window.release if window else None
    deployed = window.release_at if window else None
    same_release: dict[str, str] = {}
    for r in ev.event_lists:
        for e in r.data["events"]:
            if release and e.get("issue_id") and e.get("release") == release:
                same_release.setdefault(str(e["issue_id"]), r.id)
    out: list[RelatedIssue] = []
    search = ev.searches[-1]
    for other in search.data["issues"]:
        oid = str(other.get("id"))
        if oid == own:
            continue
        meta = other.get("metadata") if isinstance(other.get("metadata"), Mapping) else {}
        where = " ".join(str(x or "") for x in (other.get("culprit"), meta.get("filename")))
        where = re.sub(r"[.\\:]+", "/", where.lower())
        shared = sorted(f for f in files if "/" in f and f in where)
        names = {stacktrace_last(str(meta.get("function") or "")).lower()}
        names.add(stacktrace_last(str(other.get("culprit") or "").split(" in ")[-1]).lower())
        shared += sorted(functions & names)
        reasons, cited = [], [search.id]
        if shared:
            reasons.append(t["shares-frame"].format(names=", ".join(shared[:3])))
        if other.get("culprit") and other.get("culprit") == issue.get("culprit"):
            reasons.append(t["same-entry"].format(entry=other["culprit"]))
        if oid in same_release and release:
            reasons.append(t["same-release"].format(release=release))
            cited.append(same_release[oid])
        seen = parse_time(other.get("firstSeen"))
        if deployed and seen and seen >= deployed and release:
            reasons.append(t["after-release"].format(release=release))
        if not reasons:
            continue
        try:
            count: int | None = int(other.get("count"))
        except (TypeError, ValueError):
            count = None
        out.append(
            RelatedIssue(
                id=oid,
                short_id=other.get("shortId"),
                title=str(other.get("title") or "")[:200],
                count=count,
                link=other.get("permalink"),
                reasons=reasons,
                evidence=cited,
            )
        )
    out.sort(key=lambda r: (-len(r.reasons), -(r.count or 0)))
    return out[:MAX_RELATED]
