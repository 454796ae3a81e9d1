"""Sentry through the real @sentry/mcp-server, as one `McpToolset`.

The server (npm, 0.39.x) lists a few tools directly and reaches ~50 more only
through `search_sentry_tools` + `execute_sentry_tool`; the toolset resolves the
allowed ones itself (`CatalogExecute`), so the model asks for
`sentry__get_issue_details` by name. Only read tools are allowed; the
organization and project come from configuration (pinned), the region is
pinned or hidden, and an issue URL — from which the server would take its own
organization — becomes a bare issue id.

The server answers in Markdown. `annotate_sentry` keeps that text for the model
and reads it back into the REST shapes (`issues`; `issue` + `event` with its
exception entries) that the offline investigator and the surfaces read from
`ToolResult.data`, the same shapes the recorded export gives. What the
Markdown does not carry stays absent (the issue list shows no level and no
metadata beyond the title; frames carry no absPath). The list's first and last
seen are relative ("3 hours ago"; a date after 30 days): they are read back as
the middle of the span the server rounded them to.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from agent.domain import utcnow
from agent.ports import ToolResult
from agent.tools.mcp import CatalogExecute

Json = dict[str, Any]

# The read tools offered by default: direct (search_issues) or through the catalog.
SENTRY_READ_TOOLS = frozenset(
    {"search_issues", "get_issue_details", "search_issue_events", "find_releases"}
)
SENTRY_CATALOG = CatalogExecute(search="search_sentry_tools", execute="execute_sentry_tool")
# Never offered, whatever configuration says: the model may not name another place.
SENTRY_HIDDEN = frozenset({"issueUrl", "regionUrl", "url"})
# Where `npm ci` (make setup) installs the server, under the repository root.
PACKAGE_ENTRY = Path("node_modules/@sentry/mcp-server/dist/index.js")


def sentry_pins(organization: str, project: str, region_url: str | None = None) -> Json:
    """The scope arguments of every Sentry tool, from configuration."""
    return {
        "organizationSlug": organization,
        "projectSlugOrId": project,
        "projectSlug": project,
        "regionUrl": region_url,
    }


def issue_url_to_id(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """An issueUrl names its own organization; keep only the issue it points at."""
    url = arguments.pop("issueUrl", None)
    if isinstance(url, str) and not arguments.get("issueId"):
        parts = [p for p in urlparse(url if "://" in url else f"https://{url}").path.split("/")]
        if "issues" in parts and parts.index("issues") + 1 < len(parts):
            issue = parts[parts.index("issues") + 1]
            if issue:
                arguments["issueId"] = issue
    return arguments


# -- reading the server's Markdown back into REST shapes --------------------------------

_URL = re.compile(r"https?://[^\s)>\]]+")
_FIELD = re.compile(r"^\*\*(?P<key>[^*]+)\*\*:\s?(?P<value>.*)$")
_ITEM = re.compile(r"^- \*\*(?P<key>[^*]+)\*\*:\s?(?P<value>.*)$")
_LIST_HEAD = re.compile(r"^## \d+\. \[(?P<short>[^\]]+)\]\((?P<url>[^)]*)\)$")
_TITLE = re.compile(r"^(?P<type>[A-Za-z_$][\w.$<>\[\]:]*?): (?P<value>.*)$", re.DOTALL)


def annotate_sentry(
    name: str,
    arguments: dict[str, Any],
    result: ToolResult,
    clock: Callable[[], datetime] = utcnow,
) -> ToolResult:
    """Link, title and structured data for a Sentry tool's Markdown answer. `clock` is
    the server's: its list gives times relative to it."""
    if result.is_error:
        return result
    text = result.text
    if name == "search_issues":
        issues = parse_issue_list(text, clock())
        return result.model_copy(
            update={
                "data": {"issues": issues},
                "link": _search_link(text) or result.link,
                "title": f"Sentry issues: {len(issues)} for '{arguments.get('query', '')}'"[:200],
            }
        )
    if name == "get_issue_details":
        issue, event = parse_issue_details(text)
        title = f"{issue.get('shortId')}: {issue.get('title')}"[:200]
        return result.model_copy(
            update={
                "data": {"issue": issue, "event": event},
                "link": issue.get("permalink") or result.link,
                "title": title if issue.get("shortId") else result.title,
            }
        )
    urls = _URL.findall(text)
    return result.model_copy(update={"link": result.link or (urls[0] if urls else None)})


def _search_link(text: str) -> str | None:
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("**View these results in Sentry**"):
            found = _URL.findall(" ".join(lines[i : i + 2]))
            return found[0] if found else None
    return None


def _metadata(title: str | None) -> Json:
    match = _TITLE.match(title or "")
    if match is None or " " in match.group("type"):
        return {}
    return {"type": match.group("type"), "value": match.group("value")}


def _number(value: str | None) -> int | str | None:
    if value is None:
        return None
    value = value.strip()
    return int(value) if value.isdigit() else value


_AGO = re.compile(r"^(?P<n>\d+) (?P<unit>minute|hour|day)s? ago$")


def seen_at(value: str, now: datetime) -> str | None:
    """The server's "N units ago" (whole units, rounded down) or its date-only form, as
    an ISO time in the middle of the span it stands for; None for "N/A"."""
    ago = _AGO.match(value)
    if ago:
        unit = timedelta(**{f"{ago['unit']}s": 1})
        return (now - int(ago["n"]) * unit - unit / 2).isoformat()
    try:
        day = datetime.strptime(value, "%Y-%m-%d").replace(tzinfo=UTC)
    except ValueError:
        return None
    return (day + timedelta(hours=12)).isoformat()


def parse_issue_list(text: str, now: datetime) -> list[Json]:
    """search_issues' Markdown: `## n. [SHORT-ID](url)`, the bold title, `- **Key**: value`.

    `now` is when the answer was read: the server wrote its times relative to its own."""
    issues: list[Json] = []
    current: Json | None = None
    for line in text.splitlines():
        head = _LIST_HEAD.match(line.strip())
        if head:
            current = {
                "id": head.group("short"),
                "shortId": head.group("short"),
                "permalink": head.group("url"),
            }
            issues.append(current)
            continue
        if current is None:
            continue
        if line.startswith("## "):
            current = None  # "## Next Steps" and the like
            continue
        stripped = line.strip()
        if "title" not in current and stripped.startswith("**") and stripped.endswith("**"):
            current["title"] = stripped[2:-2]
            current["metadata"] = _metadata(current["title"])
            continue
        item = _ITEM.match(stripped)
        if item:
            key, value = item.group("key").lower(), item.group("value").strip()
            if key == "culprit":
                current["culprit"] = value.strip("`")
            elif key == "status":
                current["status"] = value
            elif key == "users":
                current["userCount"] = _number(value)
            elif key == "events":
                current["count"] = str(value)
            elif key in ("first seen", "last seen") and (at := seen_at(value, now)):
                current["firstSeen" if key == "first seen" else "lastSeen"] = at
    return issues


# Frame headers as @sentry/mcp-server's formatFrameHeader writes them, per language.
_FRAME_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    ("python", re.compile(r'^  File "(?P<file>.*)"(?:, line (?P<line>\d+))?, in (?P<func>.*)$')),
    (
        "ruby",
        re.compile(r"^    from (?P<file>.+?)(?::(?P<line>\d+):in)?(?: `(?P<func>.*)`)?$"),
    ),
    (
        "default",
        re.compile(
            r"^    at (?P<func>.+?) \((?P<file>.+?)(?::(?P<line>\d+))?(?::(?P<col>\d+))?\)$"
        ),
    ),
    ("java", re.compile(r"^at (?P<qual>.+)\((?P<src>[^()]*)\)$")),
    ("php", re.compile(r"^(?:#\d+ )?(?P<file>\S.*?)(?:\((?P<line>\d+)\))?: (?P<func>.*)\(\)$")),
    (
        "javascript",
        re.compile(r"^(?P<file>\S.*?):(?P<line>\d+)(?::(?P<col>\d+))?(?: \((?P<func>.*)\))?$"),
    ),
]


def parse_frame(header: str) -> Json | None:
    """One frame (REST field names) from its header line, or None if it is not one."""
    for language, pattern in _FRAME_PATTERNS:
        m = pattern.match(header)
        if m is None:
            continue
        if language == "ruby" and not (m.group("line") or m.group("func")):
            continue  # "    from x import y" is Python source, not a Ruby frame
        frame: Json = {}
        if language == "java":
            qual, src = m.group("qual"), m.group("src")
            module, _, function = qual.rpartition(".")
            filename, _, line = src.partition(":")
            frame |= {
                "module": None if module in ("", "UnknownClass") else module,
                "function": None if function == "<unknown>" else function,
                "filename": None if filename == "Unknown Source" else filename,
                "lineNo": int(line) if line.isdigit() else None,
            }
        else:
            file = m.group("file")
            func = m.groupdict().get("func")
            frame |= {
                "filename": None if file in ("<unknown>", None) else file,
                "function": None if func in (None, "<unknown>", "<module>") else func,
                "lineNo": int(m.group("line")) if m.group("line") else None,
            }
            if language == "python":
                if func == "<module>":
                    frame["function"] = "<module>"
                # The Python SDK's filename is the module's path under its sys.path entry.
                if file and file.endswith(".py") and not file.startswith(("/", "<")):
                    frame["module"] = file[:-3].removesuffix("/__init__").replace("/", ".")
            col = m.groupdict().get("col")
            if col:
                frame["colNo"] = int(col)
        frame["context"] = []
        return frame
    return None


def _frames(block: list[str]) -> list[tuple[str, Json]]:
    """(header, frame) pairs of a stacktrace code block; a frame's inline source line
    follows its header."""
    out: list[tuple[str, Json]] = []
    for line in block:
        frame = parse_frame(line)
        if frame is not None:
            out.append((line, frame))
        elif out and not out[-1][1]["context"] and out[-1][1].get("lineNo") is not None:
            out[-1][1]["context"] = [[out[-1][1]["lineNo"], line]]
    return out


_CONTEXT = re.compile(r"^\s*(?P<here>→)?\s*(?P<line>\d+) │ ?(?P<code>.*)$")


def _relevant(lines: list[str], start: int) -> tuple[str | None, list[list[Any]], int]:
    """The "Most Relevant Frame" block: its header, its context lines, where it ends."""
    i = start + 1
    while i < len(lines) and (not lines[i].strip() or set(lines[i].strip()) == {"─"}):
        i += 1
    header = lines[i] if i < len(lines) else None
    context: list[list[Any]] = []
    i += 1
    while i < len(lines) and not lines[i].startswith("**"):
        m = _CONTEXT.match(lines[i])
        if m:
            context.append([int(m.group("line")), m.group("code")])
        i += 1
    return header, context, i


def _code_block(lines: list[str], start: int) -> tuple[list[str], int]:
    """The lines of the first ``` block at or after `start`, and the index after it."""
    i = start
    while i < len(lines) and lines[i].strip() != "```":
        i += 1
    body: list[str] = []
    i += 1
    while i < len(lines) and lines[i].strip() != "```":
        body.append(lines[i])
        i += 1
    return body, i + 1


def _split_title(title: str) -> tuple[str | None, str | None]:
    kind, sep, value = title.partition(": ")
    if not sep:
        return (None if title == "undefined" else title), None
    return (None if kind == "undefined" else kind), value


def parse_issue_details(text: str) -> tuple[Json, Json | None]:
    """get_issue_details' Markdown → (issue, latest event) in REST field names."""
    lines = text.splitlines()
    issue: Json = {}
    event: Json = {}
    exceptions: list[Json] = []  # as shown: the exception finally raised first
    messages: list[str] = []  # an "### Error" without a stacktrace: a message event
    threads: list[Json] = []
    tags: list[Json] = []
    request: Json = {}
    section = "issue"
    current: Json | None = None  # the exception whose stacktrace comes next
    relevant: tuple[str | None, list[list[Any]]] = (None, [])
    head = re.match(r"^# Issue (\S+) in ", lines[0]) if lines else None
    if head:
        issue["id"] = issue["shortId"] = head.group(1)
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("## "):
            section = line[3:].strip().lower()
            current = None
            i += 1
            continue
        if line.startswith("### "):
            heading = line[4:].strip()
            section = heading.lower()
            current = None
            title = heading
            if heading == "Error":
                block, end = _code_block(lines, i + 1)
                title = "\n".join(block).strip()
                messages.append(title)
                i = end
            else:
                i += 1
            if section not in _EVENT_SECTIONS:
                # An exception, if a stacktrace follows before the next heading.
                kind, value = _split_title(title)
                current = {"type": kind, "value": value, "stacktrace": None}
            continue
        if line.startswith("**Most Relevant Frame:**"):
            header, context, i = _relevant(lines, i)
            relevant = (header, context)
            continue
        if line.startswith(("**Full Stacktrace:**", "**Stacktrace:**")):
            block, i = _code_block(lines, i + 1)
            pairs = _frames(block)
            header, context = relevant
            hits = [n for n, (h, _) in enumerate(pairs) if h == header]
            if hits:
                # Sentry's most relevant frame is the last in-app one: the ones after it are not.
                n = hits[-1]
                pairs[n][1]["context"] = context or pairs[n][1]["context"]
                pairs[n][1]["inApp"] = True
                for _, later in pairs[n + 1 :]:
                    later["inApp"] = False
            relevant = (None, [])
            frames = {"frames": [frame for _, frame in pairs]}
            if current is not None:
                current["stacktrace"] = frames
                exceptions.append(current)
                current = None
            else:
                threads.append({"crashed": True, "stacktrace": frames})
            continue
        field = _FIELD.match(line)
        if field:
            key, value = field.group("key").strip(), field.group("value").strip()
            if section == "issue":
                _issue_field(issue, key, value)
            elif section == "event details":
                _event_field(event, key, value)
                if key == "Message":
                    message: list[str] = []
                    while i + 1 < len(lines) and lines[i + 1].strip():
                        i += 1
                        message.append(lines[i])
                    event["message"] = "\n".join(message)
            elif section == "tags":
                tags.append({"key": key, "value": value})
        elif section == "http request" and line.startswith("**Method:**"):
            request["method"] = line.removeprefix("**Method:**").strip()
        elif section == "http request" and line.startswith("**URL:**"):
            request["url"] = line.removeprefix("**URL:**").strip()
        i += 1
    if not event.get("eventID"):
        return issue, None
    entries: list[Json] = []
    if exceptions:
        # Sentry stores a chain cause first, the exception finally raised last.
        entries.append({"type": "exception", "data": {"values": list(reversed(exceptions))}})
    elif messages:
        entries.append({"type": "message", "data": {"formatted": messages[0]}})
    if threads:
        entries.append({"type": "threads", "data": {"values": threads}})
    if request:
        entries.append({"type": "request", "data": request})
    release = next((t["value"] for t in tags if t["key"] == "release"), None)
    event |= {
        "groupID": issue.get("id"),
        "title": issue.get("title"),
        "culprit": issue.get("culprit"),
        "platform": issue.get("platform"),
        "tags": tags,
        "release": {"version": release} if release else None,
        "entries": entries,
    }
    return issue, event


_EVENT_SECTIONS = frozenset(
    {
        "http request",
        "tags",
        "user",
        "additional context",
        "extra data",
        "csp violation",
        "breadcrumbs",
        "threads",
    }
)


def _issue_field(issue: Json, key: str, value: str) -> None:
    if key == "Description":
        issue["title"] = value
        issue["metadata"] = _metadata(value)
    elif key == "Culprit":
        issue["culprit"] = value
    elif key == "First Seen":
        issue["firstSeen"] = value
    elif key == "Last Seen":
        issue["lastSeen"] = value
    elif key == "Occurrences":
        issue["count"] = value
    elif key == "Users Impacted":
        issue["userCount"] = _number(value)
    elif key == "Status":
        issue["status"] = value
    elif key == "Platform":
        issue["platform"] = None if value in ("undefined", "null") else value
    elif key == "Project":
        issue["project"] = {"name": value}
    elif key == "URL":
        issue["permalink"] = value
        short = value.rstrip("/").rsplit("/", 1)[-1]
        issue.setdefault("shortId", short)
        issue.setdefault("id", short)


def _event_field(event: Json, key: str, value: str) -> None:
    if key == "Event ID":
        event["eventID"] = event["id"] = value
    elif key == "Occurred At":
        event["dateCreated"] = value
    elif key == "Type":
        event["type"] = value
