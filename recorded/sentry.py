"""A recorded Sentry export served as the Sentry MCP server's read tools.

`RecordedSentry` answers `search_issues`, `get_issue_details`,
`search_issue_events`, `search_events` and `find_releases` with the same names
and argument shapes as @sentry/mcp-server, over a scenario's `sentry/` folder
(`issues.json` and `events/<issue id>.json`, REST shapes). Everything is
bounded by the investigation's time window, so an offline run sees what a
live query over that window would have returned; the releases are those the
events name up to the window's end (Sentry lists a release from its creation on).
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlparse

from agent.ports import ToolResult, ToolSpec
from agent.stacktrace import STOPWORDS, ExceptionInfo, Frame, exceptions, is_library

MAX_TEXT_CHARS = 12_000
CONTEXT_RADIUS = 2  # source lines shown either side of a frame's line
MAX_TAGS = 25

Json = dict[str, Any]


class _ToolError(Exception):
    """A failed call that goes back to the model as an error result."""


# -- tool schemas (mirroring @sentry/mcp-server's zod schemas) -----------------------

_ORG = {"type": "string", "description": "The organization's slug."}
_REGION = {
    "type": ["string", "null"],
    "description": "The region URL of the organization, if known (e.g. https://us.sentry.io).",
}
_ISSUE_ID = {
    "type": "string",
    "description": "The issue's short id (e.g. 'PROJECT-123') or numeric id.",
}
_ISSUE_URL = {
    "type": "string",
    "description": "The URL of the issue, e.g. https://my-org.sentry.io/issues/PROJECT-123/",
}
_PERIOD = {
    "type": "string",
    "description": "Time period to search, counted back from now: '24h', '7d', '14d', '30d'.",
}
_EXPLAIN = {
    "type": "boolean",
    "default": False,
    "description": "Include an explanation of how the query was interpreted.",
}


def _schema(properties: Json, required: list[str]) -> Json:
    return {"type": "object", "properties": properties, "required": required}


SEARCH_ISSUES = ToolSpec(
    name="search_issues",
    description=(
        "Search for grouped issues (errors, crashes) in Sentry. Accepts natural language or "
        "Sentry search syntax (is:unresolved, level:error, release:..., firstSeen:-24h).\n\n"
        "Use this to find which issues exist, how often they happen and when they were first "
        "and last seen. Use get_issue_details with an issue id for its stacktrace.\n\n"
        "<examples>\nsearch_issues(organizationSlug='my-org', query='is:unresolved level:error',"
        " sort='freq')\nsearch_issues(organizationSlug='my-org', query='NullPointerException')\n"
        "</examples>"
    ),
    parameters=_schema(
        {
            "organizationSlug": _ORG,
            "query": {
                "type": "string",
                "default": "is:unresolved",
                "description": "Natural language or Sentry search syntax.",
            },
            "sort": {
                "type": "string",
                "enum": ["date", "freq", "new", "user", "recommended"],
                "default": "date",
                "description": "date: last seen; freq: event count; new: first seen; "
                "user: users affected.",
            },
            "projectSlugOrId": {
                "type": ["string", "null"],
                "description": "The project's slug or numeric id, to search one project.",
            },
            "regionUrl": _REGION,
            "limit": {
                "type": "integer",
                "minimum": 1,
                "maximum": 100,
                "default": 10,
                "description": "Maximum number of issues to return.",
            },
            "period": {**_PERIOD, "default": "30d"},
            "includeExplanation": _EXPLAIN,
        },
        ["organizationSlug"],
    ),
)

GET_ISSUE_DETAILS = ToolSpec(
    name="get_issue_details",
    description=(
        "Get detailed information about a specific Sentry issue: its summary and its latest "
        "event with the exception, the stacktrace (application frames with source context), "
        "tags and the HTTP request. Give issueId (or an eventId, or issueUrl).\n\n"
        "<examples>\nget_issue_details(organizationSlug='my-org', issueId='PROJECT-123')\n"
        "get_issue_details(organizationSlug='my-org', eventId='c49541c747cb4d8aa3efb70ca5aba243')"
        "\n</examples>"
    ),
    parameters=_schema(
        {
            "organizationSlug": _ORG,
            "regionUrl": _REGION,
            "issueId": _ISSUE_ID,
            "eventId": {"type": "string", "description": "The ID of the event."},
            "issueUrl": _ISSUE_URL,
        },
        [],
    ),
)

SEARCH_ISSUE_EVENTS = ToolSpec(
    name="search_issue_events",
    description=(
        "List the individual events of one issue, newest first, with their release and time. "
        "Filter with Sentry search syntax (release:..., environment:..., any tag key:value) or "
        "plain words.\n\n<examples>\nsearch_issue_events(organizationSlug='my-org', "
        "issueId='PROJECT-123', query='environment:production')\n</examples>"
    ),
    parameters=_schema(
        {
            "organizationSlug": _ORG,
            "issueId": _ISSUE_ID,
            "issueUrl": _ISSUE_URL,
            "query": {
                "type": "string",
                "default": "",
                "description": "Natural language or Sentry search syntax to filter events.",
            },
            "sort": {
                "type": "string",
                "default": "-timestamp",
                "description": "'-timestamp' (newest first) or 'timestamp' (oldest first).",
            },
            "period": _PERIOD,
            "projectSlug": {"type": ["string", "null"], "description": "The project's slug."},
            "regionUrl": _REGION,
            "limit": {
                "type": "integer",
                "minimum": 1,
                "maximum": 100,
                "default": 50,
                "description": "Maximum number of events to return.",
            },
            "includeExplanation": _EXPLAIN,
        },
        [],
    ),
)

SEARCH_EVENTS = ToolSpec(
    name="search_events",
    description=(
        "Search individual error events across all issues of the organization, newest first. "
        "Accepts plain words or Sentry search syntax (error.type:..., release:..., "
        "environment:..., any tag key:value).\n\n<examples>\nsearch_events("
        "organizationSlug='my-org', query='KeyError environment:production')\n</examples>"
    ),
    parameters=_schema(
        {
            "organizationSlug": _ORG,
            "query": {
                "type": "string",
                "default": "",
                "description": "Natural language or Sentry search syntax.",
            },
            "dataset": {
                "type": "string",
                "enum": ["errors", "logs", "spans"],
                "default": "errors",
                "description": "The dataset to search.",
            },
            "projectSlug": {"type": ["string", "null"], "description": "The project's slug."},
            "regionUrl": _REGION,
            "sort": {
                "type": "string",
                "default": "-timestamp",
                "description": "'-timestamp' (newest first) or 'timestamp' (oldest first).",
            },
            "limit": {
                "type": "integer",
                "minimum": 1,
                "maximum": 100,
                "default": 10,
                "description": "Maximum number of events to return.",
            },
            "period": _PERIOD,
            "includeExplanation": _EXPLAIN,
        },
        ["organizationSlug"],
    ),
)

FIND_RELEASES = ToolSpec(
    name="find_releases",
    description=(
        "Find releases in Sentry, newest first: when each was created and deployed, its first "
        "and last event.\n\n<examples>\nfind_releases(organizationSlug='my-org', "
        "projectSlug='backend')\n</examples>"
    ),
    parameters=_schema(
        {
            "organizationSlug": _ORG,
            "regionUrl": _REGION,
            "projectSlug": {"type": ["string", "null"], "description": "The project's slug."},
            "query": {
                "type": ["string", "null"],
                "description": "Search for versions which contain the provided string.",
            },
        },
        ["organizationSlug"],
    ),
)

TOOLS: tuple[ToolSpec, ...] = (
    SEARCH_ISSUES,
    GET_ISSUE_DETAILS,
    SEARCH_ISSUE_EVENTS,
    SEARCH_EVENTS,
    FIND_RELEASES,
)
RELEASES_LIMIT = 25  # as the server: its RESULT_LIMIT


def _validate(spec: ToolSpec, arguments: Any) -> Json:
    """Check arguments against the tool's schema the way zod would; unknown keys are dropped."""
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, Mapping):
        raise _ToolError("Invalid arguments: expected an object of named arguments.")
    schema = spec.parameters
    required = set(schema.get("required", []))
    out: Json = {}
    for key, prop in schema["properties"].items():
        value = arguments.get(key)
        types = prop["type"] if isinstance(prop["type"], list) else [prop["type"]]
        if isinstance(value, str) and "string" in types:
            value = value.strip()
            if value == "" and key not in ("query",):
                value = None  # an empty optional string means "not given"
        if value is None:
            if key in required:
                raise _ToolError(f"Invalid arguments: `{key}` is required.")
            out[key] = prop.get("default")
            continue
        if "integer" in types:
            if isinstance(value, float) and value.is_integer():
                value = int(value)
            if isinstance(value, bool) or not isinstance(value, int):
                raise _ToolError(f"Invalid arguments: `{key}` must be a number.")
            lo, hi = prop.get("minimum"), prop.get("maximum")
            if (lo is not None and value < lo) or (hi is not None and value > hi):
                raise _ToolError(f"Invalid arguments: `{key}` must be between {lo} and {hi}.")
        elif "boolean" in types:
            if not isinstance(value, bool):
                raise _ToolError(f"Invalid arguments: `{key}` must be true or false.")
        elif "string" in types and not isinstance(value, str):
            raise _ToolError(f"Invalid arguments: `{key}` must be a string.")
        if "enum" in prop and value not in prop["enum"]:
            choices = ", ".join(prop["enum"])
            raise _ToolError(f"Invalid arguments: `{key}` must be one of: {choices}.")
        out[key] = value
    return out


# -- time --------------------------------------------------------------------------

_PERIOD_RE = re.compile(r"^(\d+)\s*([smhdw])$", re.IGNORECASE)
_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks"}


def _aware(moment: datetime) -> datetime:
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _parse_time(value: Any) -> datetime | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        return _aware(datetime.fromisoformat(value.replace("Z", "+00:00")))
    except ValueError:
        return None


def _parse_period(period: str) -> timedelta | None:
    match = _PERIOD_RE.match(period.strip())
    if not match:
        return None
    return timedelta(**{_UNITS[match.group(2).lower()]: int(match.group(1))})


def _iso(moment: datetime | None) -> str:
    if moment is None:
        return "unknown"
    return moment.astimezone(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


# -- queries -----------------------------------------------------------------------

_TOKEN_RE = re.compile(r'(!?)([\w.\-]+):("([^"]*)"|\S+)|"([^"]*)"|(\S+)')


def _wordset(text: str) -> frozenset[str]:
    return frozenset(text.split())


_QUERY_NOISE = _wordset(
    """and or not show find list get give search me all any recent latest last past hour
    hours day days week weeks month months today yesterday unresolved resolved please happening
    happened happen occurring production últimas últimos horas días semana hoy ayer muestra
    busca buscar dame"""
)
_OPERATORS = re.compile(r"^(>=|<=|>|<)?(.*)$")


@dataclass
class _Query:
    words: list[str] = field(default_factory=list)
    filters: list[tuple[str, str, bool]] = field(default_factory=list)  # key, value, negated

    def explain(self, used: list[str], ignored: list[str]) -> str:
        parts = []
        if self.words:
            parts.append("any of the words " + ", ".join(f"'{w}'" for w in self.words))
        if used:
            parts.append("filters " + ", ".join(used))
        if ignored:
            parts.append("ignored (not supported here) " + ", ".join(ignored))
        return "; ".join(parts) or "no filters"


def _parse_query(text: str) -> _Query:
    query = _Query()
    for match in _TOKEN_RE.finditer(text or ""):
        negated, key, raw_value, quoted_value, phrase, word = match.groups()
        if key is not None:
            value = quoted_value if quoted_value is not None else raw_value
            query.filters.append((key.lower(), value, bool(negated)))
        elif phrase is not None:
            if phrase.strip():
                query.words.append(phrase.strip().lower())
        elif word is not None:
            clean = word.strip(".,;:!?()[]{}'\"").lower()
            if len(clean) >= 3 and clean not in STOPWORDS and clean not in _QUERY_NOISE:
                query.words.append(clean)
    return query


def _word_hit(word: str, haystack: str) -> bool:
    if word in haystack:
        return True
    # "orders" should find "order", "errores" should find "error".
    for suffix in ("es", "s"):
        stem = word.removesuffix(suffix)
        if stem != word and len(stem) > 3 and stem in haystack:
            return True
    return False


def _glob(pattern: str, value: str) -> bool:
    pattern, value = pattern.lower(), value.lower()
    if "*" not in pattern:
        return pattern == value
    regex = ".*".join(re.escape(part) for part in pattern.split("*"))
    return re.fullmatch(regex, value, re.DOTALL) is not None


def _values_of(raw: str) -> list[str]:
    raw = raw.strip()
    if raw.startswith("[") and raw.endswith("]"):
        raw = raw[1:-1]
    return [v.strip().strip('"') for v in raw.split(",") if v.strip()]


def _release_hit(wanted: str, version: str | None) -> bool:
    if not version:
        return False
    if _glob(wanted, version):
        return True
    # A short SHA or the part after "name@" names the same release.
    tail = version.rsplit("@", 1)[-1].lower()
    wanted = wanted.lower().rsplit("@", 1)[-1]
    return len(wanted) >= 7 and tail.startswith(wanted)


def _time_hit(raw: str, moment: datetime | None, until: datetime) -> bool | None:
    """`-24h` (within the last 24 h), `+7d` (older than), or `>=2026-11-28T00:00:00`."""
    if moment is None:
        return False
    raw = raw.strip()
    if raw[:1] in "+-" and (span := _parse_period(raw[1:])) is not None:
        return moment >= until - span if raw[0] == "-" else moment < until - span
    op, rest = _split_operator(raw)
    when = _parse_time(rest)
    if when is None:
        return None
    if op is None:
        return moment.date() == when.date()
    return _compare(op, moment, when)


# -- event helpers ------------------------------------------------------------------


def _event_time(event: Mapping[str, Any]) -> datetime | None:
    return _parse_time(event.get("dateCreated")) or _parse_time(event.get("dateReceived"))


def _release(event: Mapping[str, Any]) -> str | None:
    release = event.get("release")
    if isinstance(release, Mapping) and release.get("version"):
        return str(release["version"])
    if isinstance(release, str) and release:
        return release
    return _tags(event).get("release")


def _tags(event: Mapping[str, Any]) -> dict[str, str]:
    out: dict[str, str] = {}
    for tag in event.get("tags") or []:
        if isinstance(tag, Mapping) and tag.get("key") is not None:
            out[str(tag["key"])] = "" if tag.get("value") is None else str(tag["value"])
        elif isinstance(tag, list | tuple) and len(tag) == 2:
            out[str(tag[0])] = str(tag[1])
    return out


def _entry(event: Mapping[str, Any], kind: str) -> Mapping[str, Any] | None:
    for entry in event.get("entries") or []:
        if isinstance(entry, Mapping) and entry.get("type") == kind:
            data = entry.get("data")
            return data if isinstance(data, Mapping) else None
    return None


def _event_summary(event: Mapping[str, Any]) -> Json:
    return {
        "eventID": event.get("eventID"),
        "dateCreated": event.get("dateCreated"),
        "release": _release(event),
        "title": event.get("title"),
        "culprit": event.get("culprit"),
    }


def _event_link(issue: Mapping[str, Any], event: Mapping[str, Any]) -> str | None:
    permalink = issue.get("permalink")
    if not permalink or not event.get("eventID"):
        return permalink
    return f"{str(permalink).rstrip('/')}/events/{event['eventID']}/"


# -- rendering ---------------------------------------------------------------------


def _cap(text: str, limit: int = MAX_TEXT_CHARS) -> str:
    """Cut at a line boundary, close an open code fence, and say that it was cut."""
    if len(text) <= limit:
        return text
    note = "\n\n[Output truncated: showing {shown} of {total} characters.]"
    budget = limit - len(note) - 20
    cut = text.rfind("\n", 0, budget)
    body = text[: cut if cut > budget * 0.8 else budget]
    if body.count("```") % 2:
        body += "\n```"
    return body + note.format(shown=len(body), total=len(text))


def _frame_label(frame: Frame, qualified: bool = False) -> str:
    """The function, prefixed with its module for JVM frames (and library summaries)."""
    func = frame.function or "<unknown>"
    jvm = (frame.filename or "").endswith((".java", ".kt", ".scala", ".groovy"))
    if frame.module and (qualified or jvm or not (frame.filename or frame.abs_path)):
        func = f"{frame.module}.{func}"
    return func


def _frame_header(frame: Frame) -> str:
    where = frame.filename or frame.abs_path or frame.module or "<unknown>"
    line = f":{frame.lineno}" if frame.lineno is not None else ""
    return f"{where}{line} in {_frame_label(frame)}"


def _render_frames(frames: list[Frame]) -> list[str]:
    lines: list[str] = []
    if not any(not is_library(f) for f in frames):
        # No application code at all: show the innermost frames rather than a bare count.
        shown = frames[-30:]
        if len(frames) > len(shown):
            lines.append(f"… {len(frames) - len(shown)} earlier frames omitted")
        return lines + [_frame_header(f) for f in shown]
    pending: list[Frame] = []

    def flush() -> None:
        if not pending:
            return
        first, last = _frame_label(pending[0], True), _frame_label(pending[-1], True)
        span = first if len(pending) == 1 else f"{first} … {last}"
        plural = "s" if len(pending) > 1 else ""
        lines.append(f"… {len(pending)} library frame{plural} ({span})")
        pending.clear()

    for frame in frames:
        if is_library(frame):
            pending.append(frame)
            continue
        flush()
        lines.append(_frame_header(frame))
        if frame.lineno is not None:
            for number, source in frame.context:
                if abs(number - frame.lineno) <= CONTEXT_RADIUS:
                    marker = ">" if number == frame.lineno else " "
                    lines.append(f"  {marker} {number:>5} | {source}")
    flush()
    return lines


def _render_exception(exc: ExceptionInfo, heading: str) -> str:
    name = exc.type or "Error"
    out = f"### {heading}\n\n```\n{name}: {exc.value or ''}\n```\n\n"
    if exc.frames:
        body = "\n".join(_render_frames(exc.frames))
        out += f"**Stacktrace** (most recent call last):\n```\n{body}\n```\n\n"
    return out


def _render_event(event: Mapping[str, Any]) -> str:
    out = "## Event Details\n\n"
    out += f"**Event ID**: {event.get('eventID')}\n"
    out += f"**Occurred At**: {_iso(_event_time(event))}\n"
    out += f"**Release**: {_release(event) or 'none'}\n"
    if event.get("platform"):
        out += f"**Platform**: {event['platform']}\n"
    if event.get("message"):
        out += f"**Message**:\n{event['message']}\n"
    tags = {k: v for k, v in _tags(event).items() if k not in ("release", "level")}
    if tags:
        out += "\n**Tags**:\n"
        for key, value in list(tags.items())[:MAX_TAGS]:
            out += f"- {key}: {value}\n"
    out += "\n"

    excs = exceptions(event)
    # The exception finally raised first, then its causes, as Sentry shows a chain.
    for i, exc in enumerate(reversed(excs)):
        out += _render_exception(exc, "Error" if i == 0 else "Caused by")
    if not excs:
        message = _entry(event, "message")
        if message and (message.get("formatted") or message.get("message")):
            text = message.get("formatted") or message.get("message")
            out += f"### Error\n\n```\n{text}\n```\n\n"

    request = _entry(event, "request")
    if request and request.get("url"):
        out += "### HTTP Request\n\n"
        out += f"**Method:** {request.get('method') or 'unknown'}\n**URL:** {request['url']}\n"
        if request.get("query"):
            out += f"**Query:** {json.dumps(request['query'], ensure_ascii=False)[:300]}\n"
        if request.get("data") not in (None, "", {}, []):
            body = json.dumps(request["data"], ensure_ascii=False, sort_keys=True)
            out += f"**Body:** `{body[:600]}{'…' if len(body) > 600 else ''}`\n"
        out += "\n"

    contexts = event.get("contexts")
    if isinstance(contexts, Mapping) and contexts:
        lines = []
        for name, data in contexts.items():
            if isinstance(data, Mapping):
                values = [
                    f"{k}={v}"
                    for k, v in data.items()
                    if k != "type" and isinstance(v, str | int | float | bool)
                ]
                lines.append(f"- **{name}**: {', '.join(values)[:200]}")
        out += "### Additional Context\n\n" + "\n".join(lines) + "\n\n"
    return out


def _render_issue(issue: Mapping[str, Any], organization: str) -> str:
    project = issue.get("project") if isinstance(issue.get("project"), Mapping) else {}
    out = f"# Issue {issue.get('shortId')} in **{organization}**\n\n"
    out += f"**Description**: {issue.get('title')}\n"
    out += f"**Culprit**: {issue.get('culprit')}\n"
    out += f"**First Seen**: {_iso(_parse_time(issue.get('firstSeen')))}\n"
    out += f"**Last Seen**: {_iso(_parse_time(issue.get('lastSeen')))}\n"
    out += f"**Occurrences**: {issue.get('count')}\n"
    out += f"**Users Impacted**: {issue.get('userCount', 0)}\n"
    out += f"**Level**: {issue.get('level')}\n"
    out += f"**Status**: {issue.get('status')}\n"
    out += f"**Platform**: {issue.get('platform')}\n"
    out += f"**Project**: {project.get('slug') or project.get('name')}\n"
    out += f"**Issue ID**: {issue.get('id')}\n"
    out += f"**URL**: {issue.get('permalink')}\n\n"
    return out


def _issue_item(index: int, issue: Mapping[str, Any]) -> str:
    out = f"## {index}. [{issue.get('shortId')}]({issue.get('permalink')})\n\n"
    out += f"**{issue.get('title')}**\n\n"
    out += f"- **Issue ID**: {issue.get('id')}\n"
    out += f"- **Status**: {issue.get('status')}\n"
    out += f"- **Level**: {issue.get('level')}\n"
    out += f"- **Events**: {issue.get('count', 0)}\n"
    out += f"- **Users**: {issue.get('userCount') or 0}\n"
    out += f"- **First seen**: {_iso(_parse_time(issue.get('firstSeen')))}\n"
    out += f"- **Last seen**: {_iso(_parse_time(issue.get('lastSeen')))}\n"
    if issue.get("culprit"):
        out += f"- **Culprit**: `{issue['culprit']}`\n"
    return out + "\n"


def _event_item(index: int, event: Mapping[str, Any], issue: Mapping[str, Any] | None) -> str:
    out = f"## {index}. Event `{event.get('eventID')}`\n\n"
    if issue is not None:
        out += f"- **Issue**: {issue.get('shortId')} ({issue.get('id')})\n"
    out += f"- **Occurred At**: {_iso(_event_time(event))}\n"
    out += f"- **Release**: {_release(event) or 'none'}\n"
    out += f"- **Title**: {event.get('title')}\n"
    if event.get("culprit"):
        out += f"- **Culprit**: `{event['culprit']}`\n"
    tags = _tags(event)
    shown = [f"{k}={tags[k]}" for k in ("environment", "transaction", "handled") if k in tags]
    shown += [
        f"{k}={v}"
        for k, v in tags.items()
        if k not in ("environment", "transaction", "handled", "release", "level", "url")
        and not k.startswith(("os.", "runtime", "server_name", "browser", "device"))
    ][:6]
    if shown:
        out += f"- **Tags**: {', '.join(shown)}\n"
    for exc in exceptions(event)[-1:]:
        crash = next((f for f in reversed(exc.frames) if not is_library(f)), None)
        if crash is not None:
            out += f"- **Crash frame**: {_frame_header(crash)}\n"
    return out + "\n"


# -- the toolset ---------------------------------------------------------------------


def _read_json(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ValueError(f"cannot read {path}: {exc.strerror or exc}") from exc
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path} is not valid JSON: {exc.msg} at line {exc.lineno}") from exc


def _load_issues(path: Path) -> list[Json]:
    if not path.is_file():
        raise ValueError(f"{path} not found: a recorded Sentry export needs sentry/issues.json")
    data = _read_json(path)
    if not isinstance(data, list) or not all(
        isinstance(i, dict) and i.get("id") is not None for i in data
    ):
        raise ValueError(f"{path} must be a JSON list of Sentry issues, each with an 'id'")
    return data


@dataclass
class _IssueFilters:
    """What a query asks of an issue; event-based filters need the issue's events."""

    issue_checks: list[Callable[[Json], bool]] = field(default_factory=list)
    event_checks: list[tuple[str, str, bool]] = field(default_factory=list)
    used: list[str] = field(default_factory=list)
    ignored: list[str] = field(default_factory=list)


class RecordedSentry:
    """The Sentry MCP server's read tools over a recorded export, bounded by a time window."""

    name = "sentry"

    def __init__(
        self,
        folder: Path,
        organization: str,
        project: str,
        since: datetime,
        until: datetime,
    ) -> None:
        self._folder = Path(folder)
        self._organization = organization
        self._project = project
        self._since = _aware(since)
        self._until = _aware(until)
        if self._since > self._until:
            raise ValueError("the time window is empty: since must come before until")
        self._issues = _load_issues(self._folder / "issues.json")
        self._events: dict[str, list[Json]] = {}
        self._project_keys = {project.lower()}
        for issue in self._issues:
            proj = issue.get("project")
            if isinstance(proj, Mapping):
                self._project_keys.update(
                    str(proj[k]).lower() for k in ("id", "slug") if proj.get(k) is not None
                )
        self._handlers: dict[str, Callable[[Json], Awaitable[ToolResult]]] = {
            "search_issues": self._search_issues,
            "get_issue_details": self._get_issue_details,
            "search_issue_events": self._search_issue_events,
            "search_events": self._search_events,
            "find_releases": self._find_releases,
        }

    # -- Toolset ---------------------------------------------------------------------

    async def get_tools(self) -> list[ToolSpec]:
        return [spec.model_copy(deep=True) for spec in TOOLS]

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> ToolResult:
        handler = self._handlers.get(name)
        spec = next((s for s in TOOLS if s.name == name), None)
        if handler is None or spec is None:
            known = ", ".join(s.name for s in TOOLS)
            return self._error(name, f"Unknown tool '{name}'. Available tools: {known}.")
        try:
            return await handler(_validate(spec, arguments))
        except _ToolError as exc:
            return self._error(name, str(exc))

    # -- shared checks -------------------------------------------------------------------

    @staticmethod
    def _error(tool: str, message: str) -> ToolResult:
        return ToolResult(
            text=f"**Error**\n\n{message}", title=f"{tool}: error", source="sentry", is_error=True
        )

    def _check_org(self, slug: str | None) -> str:
        if slug is None:
            raise _ToolError("Invalid arguments: `organizationSlug` is required.")
        if slug.lower() != self._organization.lower():
            raise _ToolError(
                f"Organization '{slug}' not found (404). "
                f"The organization you can read is '{self._organization}'."
            )
        return self._organization

    def _check_project(self, slug_or_id: str | None) -> None:
        if slug_or_id is not None and slug_or_id.lower() not in self._project_keys:
            raise _ToolError(
                f"Project '{slug_or_id}' not found in organization '{self._organization}' (404). "
                f"The project you can read is '{self._project}'."
            )

    def _window(self, period: str | None) -> tuple[datetime, datetime]:
        since = self._since
        if period:
            span = _parse_period(period)
            if span is None:
                raise _ToolError(
                    f"Invalid period '{period}': use a number and a unit, e.g. '24h', '7d', '30d'."
                )
            since = max(since, self._until - span)
        return since, self._until

    def _in_window(self, issue: Mapping[str, Any], since: datetime, until: datetime) -> bool:
        first, last = _parse_time(issue.get("firstSeen")), _parse_time(issue.get("lastSeen"))
        return last is not None and first is not None and last >= since and first <= until

    def _issue(self, issue_id: str) -> Json:
        wanted = issue_id.strip()
        for issue in self._issues:
            if str(issue.get("id")) == wanted or str(issue.get("shortId", "")).upper() == (
                wanted.upper()
            ):
                if self._in_window(issue, self._since, self._until):
                    return issue
                break
        raise _ToolError(
            f"Issue '{issue_id}' not found in organization '{self._organization}' "
            f"between {_iso(self._since)} and {_iso(self._until)} (404)."
        )

    async def _events_of(self, issue: Mapping[str, Any]) -> list[Json]:
        issue_id = str(issue["id"])
        if issue_id not in self._events:
            path = self._folder / "events" / f"{issue_id}.json"
            if not path.is_file():
                self._events[issue_id] = []
            else:
                try:
                    data = await asyncio.to_thread(_read_json, path)
                except ValueError as exc:
                    raise _ToolError(f"The recorded events could not be read: {exc}") from exc
                if not isinstance(data, list):
                    raise _ToolError(f"The recorded events in {path} are not a JSON list.")
                self._events[issue_id] = [e for e in data if isinstance(e, dict)]
        return self._events[issue_id]

    def _events_in(self, events: list[Json], since: datetime, until: datetime) -> list[Json]:
        out = []
        for event in events:
            moment = _event_time(event)
            if moment is not None and since <= moment <= until:
                out.append(event)
        return out

    def _resolve_issue_ref(
        self, org: str | None, issue_id: str | None, issue_url: str | None
    ) -> tuple[str, str | None, str | None]:
        """(organization, issue id, event id from the URL) from an id or a Sentry issue URL."""
        if issue_url:
            parsed = urlparse(issue_url if "://" in issue_url else f"https://{issue_url}")
            parts = [p for p in parsed.path.split("/") if p]
            url_org = None
            if "organizations" in parts and parts.index("organizations") + 1 < len(parts):
                url_org = parts[parts.index("organizations") + 1]
            host = parsed.hostname or ""
            if url_org is None and host.endswith(".sentry.io"):
                sub = host.removesuffix(".sentry.io")
                if sub not in ("us", "de", "www"):
                    url_org = sub
            if "issues" not in parts or parts.index("issues") + 1 >= len(parts):
                raise _ToolError(f"Invalid issueUrl '{issue_url}': it names no issue.")
            url_issue = parts[parts.index("issues") + 1]
            url_event = None
            if "events" in parts and parts.index("events") + 1 < len(parts):
                url_event = parts[parts.index("events") + 1]
            return self._check_org(url_org or org), url_issue, url_event
        if not issue_id:
            raise _ToolError("Invalid arguments: either `issueId` or `issueUrl` must be provided.")
        return self._check_org(org), issue_id, None

    # -- search_issues --------------------------------------------------------------------

    def _issue_filters(self, query: _Query) -> _IssueFilters:
        out = _IssueFilters()
        for key, raw, negated in query.filters:
            label = f"{'!' if negated else ''}{key}:{raw}"
            if key == "project":
                wanted = {v.lower() for v in _values_of(raw)}
                ours = bool(wanted & self._project_keys)
                check: Callable[[Json], bool] | None = _constant(ours)
            elif key in _ISSUE_KEYS:
                check = _issue_check(key, raw, self._until)
            else:
                # release, environment and other tags are read from the issue's events.
                out.event_checks.append((key, raw, negated))
                continue
            if check is None:
                out.ignored.append(label)
                continue
            out.used.append(label)
            out.issue_checks.append(_negate(check) if negated else check)
        return out

    async def _event_filter_hit(
        self, issue: Json, key: str, raw: str, since: datetime, until: datetime
    ) -> bool | None:
        """Does any event of the issue in the window match? None when no event has the key."""
        events = self._events_in(await self._events_of(issue), since, until)
        known = False
        for event in events:
            if key == "release":
                known = True
                if any(_release_hit(v, _release(event)) for v in _values_of(raw)):
                    return True
                continue
            tags = _tags(event)
            if key in tags:
                known = True
                if any(_glob(v, tags[key]) for v in _values_of(raw)):
                    return True
        return False if known else None

    async def _search_issues(self, args: Json) -> ToolResult:
        org = self._check_org(args["organizationSlug"])
        self._check_project(args["projectSlugOrId"])
        since, until = self._window(args["period"])
        query_text: str = args["query"] if args["query"] is not None else "is:unresolved"
        query = _parse_query(query_text)
        filters = self._issue_filters(query)

        candidates = [i for i in self._issues if self._in_window(i, since, until)]
        candidates = [i for i in candidates if all(c(i) for c in filters.issue_checks)]
        # Tag filters that no recorded event knows are ignored, like unknown syntax.
        for key, raw, negated in filters.event_checks:
            label = f"{'!' if negated else ''}{key}:{raw}"
            hits = {
                id(i): await self._event_filter_hit(i, key, raw, since, until) for i in candidates
            }
            if all(h is None for h in hits.values()) and key != "release":
                filters.ignored.append(label)
                continue
            filters.used.append(label)
            candidates = [i for i in candidates if bool(hits[id(i)]) is not negated]
        if query.words:
            candidates = [i for i in candidates if _issue_words_hit(i, query.words)]

        sort = args["sort"]
        if sort == "freq":
            candidates.sort(key=lambda i: _int(i.get("count")), reverse=True)
        elif sort == "new":
            candidates.sort(key=lambda i: _time_key(i.get("firstSeen")), reverse=True)
        elif sort == "user":
            candidates.sort(key=lambda i: _int(i.get("userCount")), reverse=True)
        else:  # date, and "recommended" which has no offline meaning
            candidates.sort(key=lambda i: _time_key(i.get("lastSeen")), reverse=True)
        issues = candidates[: args["limit"]]

        link = self._search_url(query_text)
        text = f"# Issues in **{org}/{args['projectSlugOrId'] or self._project}**\n\n"
        text += f"**View these results in Sentry**: {link}\n\n"
        text += (
            f"_Window: {_iso(since)} to {_iso(until)}; query: `{query_text}`; sort: {sort}._\n\n"
        )
        if args["includeExplanation"]:
            text += f"**Query interpretation**: {query.explain(filters.used, filters.ignored)}\n\n"
        if not issues:
            text += "No issues found matching your search criteria.\n\n"
            text += "Try adjusting your search criteria or time range."
        else:
            plural = "" if len(issues) == 1 else "s"
            text += f"Found **{len(issues)}** issue{plural}:\n\n"
            text += "".join(_issue_item(n, i) for n, i in enumerate(issues, 1))
            text += "## Next Steps\n\n- Get the stacktrace of an issue: get_issue_details with "
            text += "its Issue ID\n- List an issue's events: search_issue_events\n"
        return ToolResult(
            text=_cap(text),
            title=f"Sentry issues: {len(issues)} for '{query_text}'",
            source="sentry",
            link=link,
            data={"issues": issues},
        )

    def _search_url(self, query: str) -> str:
        host = f"{self._organization}.sentry.io"
        for issue in self._issues:
            netloc = urlparse(str(issue.get("permalink") or "")).netloc
            if netloc:
                host = netloc
                break
        return f"https://{host}/issues/?project={quote(self._project)}&query={quote(query)}"

    # -- get_issue_details --------------------------------------------------------------

    async def _find_event(self, event_id: str) -> tuple[Json, Json]:
        wanted = event_id.strip().lower().replace("-", "")
        for issue in self._issues:
            if not self._in_window(issue, self._since, self._until):
                continue
            for event in self._events_in(await self._events_of(issue), self._since, self._until):
                ids = {str(event.get(k, "")).lower().replace("-", "") for k in ("eventID", "id")}
                if wanted in ids:
                    return issue, event
        raise _ToolError(
            f"Event '{event_id}' not found in organization '{self._organization}' "
            f"between {_iso(self._since)} and {_iso(self._until)} (404)."
        )

    async def _get_issue_details(self, args: Json) -> ToolResult:
        event_id: str | None = args["eventId"]
        if event_id and not args["issueId"] and not args["issueUrl"]:
            org = self._check_org(args["organizationSlug"])
            issue, event = await self._find_event(event_id)
        else:
            org, issue_id, url_event = self._resolve_issue_ref(
                args["organizationSlug"], args["issueId"], args["issueUrl"]
            )
            issue = self._issue(issue_id or "")
            event_id = event_id or url_event
            if event_id:
                found_issue, event = await self._find_event(event_id)
                if found_issue is not issue:
                    raise _ToolError(
                        f"Event '{event_id}' does not belong to issue {issue.get('shortId')}."
                    )
            else:
                event = self._latest_event(await self._events_of(issue))

        text = _render_issue(issue, org)
        if event is None:
            text += f"No events recorded for this issue up to {_iso(self._until)}.\n"
        else:
            text += _render_event(event)
        text += (
            "# Using this information\n\n- The stacktrace shows application frames in full and "
            "collapses library frames; triage the application frames first.\n"
        )
        link = _event_link(issue, event) if (event is not None and args["eventId"]) else None
        return ToolResult(
            text=_cap(text),
            title=f"{issue.get('shortId')}: {issue.get('title')}"[:200],
            source="sentry",
            link=link or issue.get("permalink"),
            data={"issue": issue, "event": event},
        )

    def _latest_event(self, events: list[Json]) -> Json | None:
        dated = [(t, e) for e in events if (t := _event_time(e)) is not None and t <= self._until]
        if not dated:
            return None
        return max(dated, key=lambda pair: pair[0])[1]

    # -- events ---------------------------------------------------------------------------

    def _event_filter(
        self, pairs: list[tuple[Json, Json]], query: _Query
    ) -> tuple[list[tuple[Json, Json]], list[str], list[str]]:
        """Filter (issue, event) pairs; keys that no event carries are ignored."""
        used: list[str] = []
        ignored: list[str] = []
        tag_keys = {k for _, e in pairs for k in _tags(e)}
        for key, raw, negated in query.filters:
            label = f"{'!' if negated else ''}{key}:{raw}"
            check = _event_check(key, raw, self._until, tag_keys)
            if check is None:
                ignored.append(label)
                continue
            used.append(label)
            pairs = [(i, e) for i, e in pairs if check(i, e) is not negated]
        if query.words:
            pairs = [(i, e) for i, e in pairs if _event_words_hit(e, query.words)]
        return pairs, used, ignored

    async def _search_issue_events(self, args: Json) -> ToolResult:
        org, issue_id, _ = self._resolve_issue_ref(
            args["organizationSlug"], args["issueId"], args["issueUrl"]
        )
        self._check_project(args["projectSlug"])
        issue = self._issue(issue_id or "")
        since, until = self._window(args["period"])
        query_text: str = args["query"] or ""
        query = _parse_query(query_text)
        pairs = [(issue, e) for e in self._events_in(await self._events_of(issue), since, until)]
        pairs, used, ignored = self._event_filter(pairs, query)
        pairs = _sort_events(pairs, args["sort"])[: args["limit"]]
        events = [_event_summary(e) for _, e in pairs]

        text = f"# Events for issue {issue.get('shortId')} in **{org}**\n\n"
        text += f"**{issue.get('title')}**\n\n"
        text += f"_Window: {_iso(since)} to {_iso(until)}; query: `{query_text}`._\n\n"
        if args["includeExplanation"]:
            text += f"**Query interpretation**: {query.explain(used, ignored)}\n\n"
        if not pairs:
            text += "No events found matching your search criteria.\n"
        else:
            order = "oldest first" if args["sort"] == "timestamp" else "newest first"
            text += f"Found **{len(pairs)}** event{'s' if len(pairs) != 1 else ''} ({order}):\n\n"
            text += "".join(_event_item(n, e, None) for n, (_, e) in enumerate(pairs, 1))
        return ToolResult(
            text=_cap(text),
            title=f"{issue.get('shortId')}: {len(events)} events",
            source="sentry",
            link=issue.get("permalink"),
            data={"issue_id": str(issue["id"]), "events": events},
        )

    async def _search_events(self, args: Json) -> ToolResult:
        org = self._check_org(args["organizationSlug"])
        self._check_project(args["projectSlug"])
        since, until = self._window(args["period"])
        query_text: str = args["query"] or ""
        query = _parse_query(query_text)
        pairs: list[tuple[Json, Json]] = []
        if args["dataset"] == "errors":
            for issue in self._issues:
                if self._in_window(issue, since, until):
                    events = self._events_in(await self._events_of(issue), since, until)
                    pairs.extend((issue, e) for e in events)
        pairs, used, ignored = self._event_filter(pairs, query)
        pairs = _sort_events(pairs, args["sort"])[: args["limit"]]
        events = [{**_event_summary(e), "issue_id": str(i["id"])} for i, e in pairs]

        text = f"# Search Results in **{org}/{args['projectSlug'] or self._project}**\n\n"
        text += f"_Dataset: {args['dataset']}; window: {_iso(since)} to {_iso(until)}; "
        text += f"query: `{query_text}`._\n\n"
        if args["includeExplanation"]:
            text += f"**Query interpretation**: {query.explain(used, ignored)}\n\n"
        if not pairs:
            text += "No events found matching your search criteria.\n"
        else:
            text += f"Found **{len(pairs)}** event{'s' if len(pairs) != 1 else ''}:\n\n"
            text += "".join(_event_item(n, e, i) for n, (i, e) in enumerate(pairs, 1))
        return ToolResult(
            text=_cap(text),
            title=f"Sentry events: {len(events)} for '{query_text}'",
            source="sentry",
            link=self._search_url(query_text),
            data={"events": events},
        )

    async def _find_releases(self, args: Json) -> ToolResult:
        org = self._check_org(args["organizationSlug"])
        self._check_project(args["projectSlug"])
        wanted = (args["query"] or "").strip().lower()
        seen: dict[str, Json] = {}
        for issue in self._issues:
            for event in await self._events_of(issue):
                when, version = _event_time(event), _release(event)
                if when is None or version is None or when > self._until:
                    continue
                row = seen.setdefault(version, _release_row(version, event, when))
                row["firstEvent"] = _iso(min(_parse_time(row["firstEvent"]) or when, when))
                row["lastEvent"] = _iso(max(_parse_time(row["lastEvent"]) or when, when))
        rows = [r for r in seen.values() if not wanted or wanted in r["version"].lower()]
        rows.sort(key=lambda r: r["dateCreated"], reverse=True)
        more = len(rows) > RELEASES_LIMIT
        rows = rows[:RELEASES_LIMIT]
        text = f"# Releases in **{org}**\n\n"
        if not rows:
            text += "No releases found.\n"
        for r in rows:
            text += f"## {r['shortVersion']}\n\n**Created**: {r['dateCreated']}\n"
            if r["lastDeploy"]:
                text += f"**Deployed**: {r['lastDeploy']['dateFinished']}\n"
            text += f"**First event**: {r['firstEvent']}\n**Last event**: {r['lastEvent']}\n\n"
        return ToolResult(
            text=_cap(text),
            title=f"Sentry releases: {len(rows)}",
            source="sentry",
            data={"releases": rows, "hasMore": more},
        )


# -- small helpers -----------------------------------------------------------------------


def _int(value: Any) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0


def _time_key(value: Any) -> datetime:
    return _parse_time(value) or datetime.min.replace(tzinfo=UTC)


def _compare(op: str | None, left: Any, right: Any) -> bool:
    if op == ">":
        return bool(left > right)
    if op == ">=":
        return bool(left >= right)
    if op == "<":
        return bool(left < right)
    if op == "<=":
        return bool(left <= right)
    return bool(left == right)


def _split_operator(raw: str) -> tuple[str | None, str]:
    match = _OPERATORS.match(raw.strip())
    assert match is not None  # the pattern matches any string
    return match.group(1), match.group(2)


def _constant(result: bool) -> Callable[[Json], bool]:
    return lambda _issue: result


def _negate(check: Callable[[Json], bool]) -> Callable[[Json], bool]:
    return lambda issue: not check(issue)


_ISSUE_KEYS = _wordset(
    """is level issue issue.id firstseen lastseen age error.type error.value title culprit
    message times_seen timesseen"""
)


def _issue_check(key: str, raw: str, until: datetime) -> Callable[[Json], bool] | None:
    """A check over the issue itself, or None when the value isn't understood."""
    values = _values_of(raw)
    if key == "is":
        value = raw.lower()
        if value in ("unresolved", "resolved"):
            return lambda issue: str(issue.get("status", "")).lower() == value
        if value in ("ignored", "archived"):
            return lambda issue: str(issue.get("status", "")).lower() in ("ignored", "archived")
        if value in ("assigned", "unassigned"):
            return lambda issue: bool(issue.get("assignedTo")) is (value == "assigned")
        return None
    if key == "level":
        levels = {v.lower() for v in values}
        return lambda issue: str(issue.get("level", "")).lower() in levels
    if key in ("issue", "issue.id"):
        ids = {v.upper() for v in values}
        return lambda issue: _issue_named(issue, ids)
    if key in ("firstseen", "lastseen", "age"):
        if _time_hit(raw, until, until) is None:
            return None
        name = "lastSeen" if key == "lastseen" else "firstSeen"
        return lambda issue: bool(_time_hit(raw, _parse_time(issue.get(name)), until))
    if key in ("times_seen", "timesseen"):
        op, rest = _split_operator(raw)
        if not rest.isdigit():
            return None
        return lambda issue: _compare(op, _int(issue.get("count")), int(rest))
    return lambda issue: _field_glob(issue, key, raw)


def _issue_named(issue: Mapping[str, Any], ids: set[str]) -> bool:
    return str(issue.get("id")) in ids or str(issue.get("shortId", "")).upper() in ids


def _event_check(
    key: str, raw: str, until: datetime, tag_keys: set[str]
) -> Callable[[Json, Json], bool] | None:
    """A check over an (issue, event) pair, or None for a key this export can't answer."""
    values = _values_of(raw)
    if key == "release":
        return lambda _i, e: any(_release_hit(v, _release(e)) for v in values)
    if key in ("timestamp", "event.timestamp"):
        if _time_hit(raw, until, until) is None:
            return None
        return lambda _i, e: bool(_time_hit(raw, _event_time(e), until))
    if key in ("error.type", "error.value"):
        attr = "type" if key == "error.type" else "value"
        return lambda _i, e: any(
            _glob(f"*{v}*", getattr(x, attr) or "") for x in exceptions(e) for v in values
        )
    if key in ("issue", "issue.id"):
        ids = {v.upper() for v in values}
        return lambda i, _e: _issue_named(i, ids)
    if key == "is":
        check = _issue_check(key, raw, until)
        return None if check is None else (lambda i, _e: check(i))
    if key in ("title", "message", "culprit"):
        return lambda _i, e: _field_glob(e, key, raw)
    if key in tag_keys:
        return lambda _i, e: any(_glob(v, _tags(e).get(key, "\0")) for v in values)
    return None


def _field_glob(item: Mapping[str, Any], key: str, raw: str) -> bool:
    metadata = item.get("metadata") if isinstance(item.get("metadata"), Mapping) else {}
    value = {
        "error.type": (metadata or {}).get("type"),
        "error.value": (metadata or {}).get("value"),
    }.get(key, item.get(key))
    if key == "message" and not value:
        value = item.get("title")  # issues carry their message as the title
    text = "" if value is None else str(value)
    return any(_glob(v, text) or _glob(f"*{v}*", text) for v in _values_of(raw))


def _issue_words_hit(issue: Mapping[str, Any], words: list[str]) -> bool:
    metadata = issue.get("metadata") if isinstance(issue.get("metadata"), Mapping) else {}
    parts = [issue.get("title"), issue.get("culprit"), issue.get("shortId")]
    parts += [v for v in (metadata or {}).values() if isinstance(v, str)]
    haystack = " ".join(str(p) for p in parts if p).lower()
    return any(_word_hit(w, haystack) for w in words)


def _event_words_hit(event: Mapping[str, Any], words: list[str]) -> bool:
    parts: list[Any] = [event.get("title"), event.get("message"), event.get("culprit")]
    parts += [f"{x.type}: {x.value}" for x in exceptions(event)]
    parts.append(_tags(event).get("transaction"))
    haystack = " ".join(str(p) for p in parts if p).lower()
    return any(_word_hit(w, haystack) for w in words)


def _sort_events(pairs: list[tuple[Json, Json]], sort: str) -> list[tuple[Json, Json]]:
    oldest_first = sort.strip() in ("timestamp", "+timestamp")
    return sorted(pairs, key=lambda p: _time_key(p[1].get("dateCreated")), reverse=not oldest_first)


def _release_row(version: str, event: Mapping[str, Any], when: datetime) -> Json:
    """A release as the server's find_releases lists it, from what an event says of it."""
    release = event.get("release") if isinstance(event.get("release"), Mapping) else {}
    created = _parse_time(release.get("dateCreated")) or when
    deploy = release.get("lastDeploy") if isinstance(release.get("lastDeploy"), Mapping) else None
    return {
        "version": version,
        "shortVersion": version,
        "dateCreated": _iso(created),
        "dateReleased": None,
        "firstEvent": _iso(when),
        "lastEvent": _iso(when),
        "lastDeploy": dict(deploy) if deploy else None,
    }
